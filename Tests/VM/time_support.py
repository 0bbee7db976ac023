"""What the checks of Tests/VM/guest_time_check.py share: times for people, a board run's due
times (under the peer's drift), the gateway's log clock readings and CLI, the medals' rules."""

from __future__ import annotations

import datetime
import json
import re
import subprocess

DAY = 86400.0
TICK_S = 48 / 32768  # the MetaWear log clock (1.46484375 ms)
RECORD_FIELDS = {"user_id", "timestamp", "hazards", "gscope_data", "accel_data", "device", "start", "end",
                 "samples", "expected", "gaps"}


def iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(timespec="milliseconds")


def utc_date(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).date().isoformat()


def delta(ms: float) -> str:
    """A time error for people: milliseconds when small, days and hours otherwise."""
    if abs(ms) < 60_000:
        return f"{ms:+.1f} ms"
    s = round(abs(ms) / 1000, 3)  # so that 59.9996 s reads 01:00.000, not 00:60.000
    d, s = divmod(s, DAY)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{'-' if ms < 0 else '+'}{int(d)} d {int(h):02}:{int(m):02}:{s:06.3f}"


def due(run: dict, n: int) -> float:
    """Peer time at which sample n of a board run was due (`segments` when the peer models drift)."""
    segments = run.get("segments")
    if segments:
        seg = max((s for s in segments if s["n"] <= n), key=lambda s: s["n"], default=segments[0])
        return seg["t0_wall"] + n / seg["odr"]
    return run["t0_wall"] + n / run["odr"]


def clock_readings(path: str) -> list[dict]:
    """The gateway's `log clock read` debug lines (LOG_LEVEL=debug): where it placed each board's
    tick 0 on its clock, and the round trip and width of the bounds that placed it."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if "log clock read" not in line:
                    continue
                fields = dict(re.findall(r"(\w+)=(\S+)", line))
                try:
                    out.append({"sensor": fields["sensor"].upper(), "resetTime": float(fields["resetTime"]),
                                "roundTripMs": float(fields["roundTripMs"]), "boundsMs": float(fields["boundsMs"])})
                except (KeyError, ValueError):
                    continue
    except OSError:
        pass
    return out


def clock_state(clock) -> str | None:
    """The state of the status's `clock` (an object with `state`, or the word itself)."""
    return clock.get("state") if isinstance(clock, dict) else clock if isinstance(clock, str) else None


def cli(gateway: str, *argv) -> tuple[int, object]:
    out = subprocess.run([gateway, *argv], capture_output=True, text=True, timeout=60)
    try:
        return out.returncode, json.loads(out.stdout)
    except ValueError:
        return out.returncode, (out.stdout + out.stderr).strip()[:500]


def expected_medals(sessions: list[tuple[float, float]]) -> dict[str, bool]:
    """Sources/Capture/Medals.swift's rules over (true start s, true end s), in UTC, weeks from Monday."""
    days = sorted({datetime.datetime.fromtimestamp(s, datetime.timezone.utc).date() for s, _ in sessions})
    longest = run = 0
    for i, d in enumerate(days):
        run = run + 1 if i and (d - days[i - 1]).days == 1 else 1
        longest = max(longest, run)
    longest_s = max((e - s for s, e in sessions), default=0)
    weeks: dict = {}
    months: dict = {}
    for s, e in sessions:
        d = datetime.datetime.fromtimestamp(s, datetime.timezone.utc).date()
        weeks[d.isocalendar()[:2]] = weeks.get(d.isocalendar()[:2], 0) + 1
        months[(d.year, d.month)] = months.get((d.year, d.month), 0) + (e - s)
    count = len(sessions)
    return {"firstSession": count >= 1, "tenSessions": count >= 10, "fiftySessions": count >= 50,
            "hundredSessions": count >= 100, "threeDayStreak": longest >= 3, "sevenDayStreak": longest >= 7,
            "thirtyDayStreak": longest >= 30, "tenMinuteSession": longest_s >= 600,
            "thirtyMinuteSession": longest_s >= 1800, "hourSession": longest_s >= 3600,
            "fiveSessionsInAWeek": any(c >= 5 for c in weeks.values()),
            "tenHoursInAMonth": any(v >= 36000 for v in months.values())}


def info(text: str) -> None:
    print(f"info {text}", flush=True)
