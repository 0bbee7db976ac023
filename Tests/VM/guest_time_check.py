#!/usr/bin/env python3
"""Inside the VM (Tests/VM/hcivm.py, scenarios t, u, v): the gateway's time when the guest's
clock is wrong, steps, or is synchronised late (issue 38). True time is the peer's clock (this
VM's host): each sample n of a board's run was due at `t0_wall + n / odr` of that run in the
peer's status (`gyro_runs`, `segments` when the peer models crystal drift), n read from the
sample's x = int16(n) (Tests/Peers/README.md, "Waveform").

    guest_time_check.py --scenario t|u|v --peer-control HOST:PORT --gateway PATH
        [--sensors 2] [--odr 100] [--first 15] [--seconds 35] [--last 10] [--chunk-size 500]
        [--tolerance-ms 20] [--drift-ppm 50] [--strict-clock] [--json OUT]

The guest's clock is changed with Tests/VM/guest_clock.py (clock_settime, adjtimex) and its
offset from the peer's is measured NTP-style before and after every change; absolute times are
compared with the peer's clock, never the guest's (a monotonic anchor, peer time minus the
guest's CLOCK_MONOTONIC, dates every event and receipt here).

  t  forward step: before the gateway starts the clock is set 3 days behind true and
     unsynchronised; --first s into streaming it is stepped to true and synchronised; stop at
     --seconds s of streaming.
  u  backward step: true and synchronised at the start; --first s into streaming stepped back by
     one hour and synchronised again (the step sets STA_UNSYNC; an NTP client clears it at
     once). The synchronised clock is the truth a gateway can know, so here true time is the
     peer's clock minus 3600 s (--truth-shift): everything, before and after the step, is
     expected on the stepped clock.
  v  board time across a restart: --first s synchronised; SIGTERM; the clock set 3 days
     behind and unsynchronised; the gateway started again on the same store with the boards
     still streaming (not reset); --first s; synchronised (stepped to true); --last s; stop.

A private mosquitto; one subscriber on `records/+`, `realtime_data/+`, `TitanUpUsers/#` from
before the gateway starts to the end (the broker outlives the restart of v, so retained state
carries over), keeping every version of every document. At the end (SIGTERM: sessions closed,
the outbox published before the exit; then the broker quiet for 2 s), on the last version
of every document:

  (a) every sample once: per board and run, e2e_bench.analyse over the last versions of the
      chunks (duplicates, waveform mismatches, delivered/expected >= 0.95 as e2e's --check), and
      exactly: every n the board sent up to the last one delivered is there (samples the board
      could not send, its `undelivered_stretches`, are not expected), and at most a second's
      worth was sent after it (in flight at a stop);
  (b) every sample's `timestamp` within --tolerance-ms (20) of its true time; in v, samples due
      after the first gateway stopped and before the clock was synchronised (dated by the
      boards) within 20 ms + --drift-ppm x (time since the board's power cycle began), in the
      last versions and also in every chunk version published while the clock was unsynchronised;
  (c) no non-empty `records/{uid}___{start s}` or `TitanUpUsers/{uid}/DailySessions/{id}`
      remains whose start second is not within 1 s of the true time of its first sample; a
      record's `start` is that time (within the tolerance of (b)), its `samples` the points of its
      chunks, and it is closed; a daily session has its record, `date` = the true UTC date, and is
      closed; every chunk names a record that lists it;
  (d) `gyrogate sessions --range today --json --data-dir` lists exactly the sessions whose true
      start is on the true day (at the end); the medals (the retained document and `gyrogate
      medals --json`) are those the rules (Sources/Capture/Medals.swift) give for the true sessions;
  (e) the clock the gateway shows: `clock` of `gyrogate status --json` (`state`: synchronised,
      board, unsynchronised) is polled every second and printed per phase; with --strict-clock,
      from --settle (10) s into each phase on (counted from every board streaming: board time
      needs a board's clock read at its initialisation), it must be the phase's expected state
      (t: unsynchronised then synchronised; u: synchronised; v: synchronised, board,
      synchronised), and every record's `clock` field must say synchronised at the end.

Prints `ok`/`FAIL`/`info` lines and a JSON summary; exits 1 on a failed check.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Reliability"))
sys.path.insert(0, HERE)
import reliability as rel  # noqa: E402
from reliability import bench  # noqa: E402
import guest_clock as gc  # noqa: E402

DAY = 86400.0
TICK_S = 48 / 32768  # the MetaWear log clock (1.46484375 ms)
RECORD_FIELDS = {"user_id", "timestamp", "hazards", "gscope_data", "accel_data", "device", "start", "end",
                 "samples", "expected", "gaps"}
SHIFT = {"t": 0.0, "u": -3600.0, "v": 0.0}


def say(msg: str) -> None:
    print(f"[time {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(timespec="milliseconds")


def utc_date(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).date().isoformat()


def delta(ms: float) -> str:
    """A time error for people: milliseconds when small, days and hours otherwise."""
    if abs(ms) < 60_000:
        return f"{ms:+.1f} ms"
    s = abs(ms) / 1000
    d, s = divmod(s, DAY)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{'-' if ms < 0 else '+'}{int(d)} d {int(h):02}:{int(m):02}:{s:06.3f}"


class Recorder(bench.Subscriber):
    """Every message with its receipt time (guest CLOCK_MONOTONIC) and the phase it came in."""
    TOPICS = ["records/+", "realtime_data/+", "TitanUpUsers/#"]

    def __init__(self, port: int):
        self.phase = "before the gateway"
        super().__init__(port)

    def _message(self, client, userdata, msg):
        self.last = time.monotonic()
        self.messages.append((self.last, msg.topic, msg.payload, self.phase))


# -- the run ------------------------------------------------------------------------------------

class Run:
    def __init__(self, args):
        self.args = args
        self.control = args.peer_control
        self.tmp = tempfile.mkdtemp(prefix=f"gyrogate-time-{args.scenario}-")
        self.procs = bench.Processes()
        self.checks: list[tuple[bool | None, str]] = []
        self.offsets: list[dict] = []
        self.events: list[dict] = []
        self.phases: list[dict] = []
        self.polls: list[dict] = []
        self.cli_status: list[dict] = []
        self.gw: rel.Gateway | None = None
        self.gateway_log = os.path.join(self.tmp, "gateway.log")
        self.anchor = self.measure("start (as booted)")["monotonic_anchor_s"]

    def true_now(self) -> float:
        """The peer's clock now, from the guest's monotonic clock (no step moves it)."""
        return time.monotonic() + self.anchor

    def measure(self, label: str) -> dict:
        off = gc.offset(self.control)
        off["at"] = label
        off["clock"] = gc.state()
        self.offsets.append(off)
        say(f"offset guest - peer at {label}: {delta(off['offset_ms'])} (round trip {off['rtt_ms']} ms, "
            f"{off['clock']['adjtimex']})")
        return off

    def event(self, what: str, result: dict) -> None:
        self.events.append({"true": self.true_now(), "what": what, "result": result})
        print(json.dumps({"event": what, **result}), flush=True)
        self.measure(f"after: {what}")

    def setup(self) -> None:
        _broker, port = bench.start_broker(self.procs, self.tmp)
        self.sub = Recorder(port)
        self.peer = bench.Peer(self.procs, self.args.sensors, self.tmp, "time", control=self.control)
        self.config = rel.write_config(self.tmp, 0, port, sensors=self.args.sensors, odr=self.args.odr, commit_ms=200,
                                       chunk_size=self.args.chunk_size, user="clock-user", gateway_id="clock")
        with open(self.config) as f:
            data = json.load(f)
        data["bluetooth"]["transport"] = self.args.transport
        with open(self.config, "w") as f:
            json.dump(data, f, indent=2)
        self.data_dir = data["dataDirectory"]

    def start_gateway(self) -> None:
        since = [s["samples_sent"] for s in self.peer.sensors()]
        env = dict(os.environ, LOG_LEVEL=self.args.log_level) if self.args.log_level else None
        self.gw = rel.Gateway(self.procs, self.args.gateway, self.config, self.gateway_log, env=env)
        self.gw.wait_admin(120)
        waited = rel.wait_streaming(self.peer, self.gw, timeout=180, since=since)
        say(f"gateway pid {self.gw.pid}: every board streams after {waited:.1f} s")
        self.events.append({"true": self.true_now(), "what": "all boards streaming", "result": {"waited_s": round(waited, 1)}})

    def stop_gateway(self) -> float:
        """SIGTERM, the exit, the broker quiet for 2 s; returns the true time of the SIGTERM."""
        sent = self.true_now()
        self.events.append({"true": sent, "what": "SIGTERM", "result": {}})
        code, seconds = self.gw.terminate(timeout=60)
        self.sub.wait_quiet(2.0, 30)
        self.checks.append((code == 0, f"SIGTERM: the gateway exited with {code} after {seconds:.1f} s"))
        self.gw = None
        return sent

    def poll(self, phase: str) -> None:
        try:
            status = rel.admin_get(self.gw.socket_path)
        except (OSError, ValueError):
            return
        self.polls.append({"true": self.true_now(), "phase": phase, "clock": status.get("clock"),
                           "committed": (status.get("capture") or {}).get("committedSamples")})

    def phase(self, name: str, expect: str | None, seconds: float, board_dated: bool = False) -> None:
        """Streams for `seconds`, polling the status; `expect`: the clock state the gateway should show."""
        self.sub.phase = name
        p = {"name": name, "expect": expect, "start": self.true_now(), "board_dated": board_dated}
        self.phases.append(p)
        say(f"phase {name!r}: {seconds:g} s (expected clock state {expect})")
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.poll(name)
            self.gw.run_for(min(1.0, left))
        out = subprocess.run([self.args.gateway, "status", "--json", "--socket", self.gw.socket_path],
                             capture_output=True, text=True, timeout=30)
        try:
            clock = json.loads(out.stdout).get("clock", "absent")
        except ValueError:
            clock = f"unreadable (exit {out.returncode}: {out.stderr.strip()[:200]})"
        self.cli_status.append({"phase": name, "clock": clock})
        print(f"info `gyrogate status --json` at the end of phase {name!r}: clock = {json.dumps(clock)}", flush=True)

    def gap(self, name: str, start: float, board_dated: bool) -> None:
        """A time without a gateway from `start` (v's restart): samples due then belong to it."""
        self.sub.phase = name
        self.phases.append({"name": name, "expect": None, "start": start, "board_dated": board_dated})


def scenario(run: Run) -> None:
    a, ctl = run.args, run.control
    if a.scenario == "t":
        run.event("set 3 days behind true, unsynchronised", gc.set_true(ctl, -3 * DAY, then="unsync"))
        run.start_gateway()
        run.phase("unsynchronised", "unsynchronised", a.first)
        run.event("stepped to true, synchronised", gc.set_true(ctl, 0.0, then="sync"))
        run.phase("synchronised", "synchronised", a.seconds - a.first)
        run.stop_gateway()
    elif a.scenario == "u":
        run.event("set to true, synchronised", gc.set_true(ctl, 0.0, then="sync"))
        run.start_gateway()
        run.phase("synchronised", "synchronised", a.first)
        stepped = gc.step(-3600.0)
        stepped["clock"] = gc.sync()
        run.event("stepped back 1 h, synchronised", stepped)
        run.phase("stepped back 1 h", "synchronised", a.seconds - a.first)
        run.stop_gateway()
    else:
        run.event("set to true, synchronised", gc.set_true(ctl, 0.0, then="sync"))
        run.start_gateway()
        run.phase("run 1 synchronised", "synchronised", a.first)
        # Samples due from the SIGTERM on reach the second gateway (stale, once it connects).
        run.gap("restart (no gateway)", run.stop_gateway(), board_dated=True)
        run.event("set 3 days behind true, unsynchronised", gc.set_true(ctl, -3 * DAY, then="unsync"))
        run.start_gateway()
        run.phase("run 2 board time", "board", a.first, board_dated=True)
        run.event("stepped to true, synchronised", gc.set_true(ctl, 0.0, then="sync"))
        run.phase("run 2 synchronised", "synchronised", a.last)
        run.stop_gateway()
    run.sub.phase = "after the stop"
    run.measure("end")


# -- truth ------------------------------------------------------------------------------------

def due(run: dict, n: int) -> float:
    """Peer time at which sample n of a board run was due."""
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


def cli(args, *argv) -> tuple[int, object]:
    out = subprocess.run([args.gateway, *argv], capture_output=True, text=True, timeout=60)
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


def analyse(run: Run) -> dict:
    a = run.args
    shift = a.truth_shift
    checks = run.checks
    figures: dict = {}
    messages = run.sub.take()
    figures["messages"] = len(messages)
    final: dict[str, bytes] = {}
    first_seen: dict[str, float] = {}
    versions: dict[str, list] = {}
    for mono, topic, payload, phase in messages:
        first_seen.setdefault(topic, mono)
        final[topic] = payload
        versions.setdefault(topic, []).append((mono, phase, payload))
    docs = {t: json.loads(p) for t, p in final.items() if p}
    chunks = {t: d for t, d in docs.items() if t.startswith("realtime_data/") and d.get("sensor", "gyro") == "gyro"}
    records = {t: d for t, d in docs.items() if t.startswith("records/")}
    daily = {t: d for t, d in docs.items() if "/DailySessions/" in t}
    medals = {t.split("/")[1]: d for t, d in docs.items() if t.endswith("/MedalsAndTrophies/current")}
    deleted = sorted(t for t, p in final.items() if not p)
    figures["documents"] = {"chunks": len(chunks), "records": len(records), "daily_sessions": len(daily),
                            "deleted_at_the_end": len(deleted), "versions": sum(len(v) for v in versions.values())}

    before = run.peer.call(cmd="time")["time"]
    sensors = run.peer.sensors()
    peer_now = (before + run.peer.call(cmd="time")["time"]) / 2  # when the status read the ticks, about
    runs_of = {s["address"][:17].upper(): s["gyro_runs"] for s in sensors}
    # The true time of each board's tick 0 (its power cycle's start), to half a tick.
    reset_true = {s["address"][:17].upper(): peer_now - (s["tick"] + 0.5) * TICK_S for s in sensors}
    figures["board_reset_true"] = {d: iso(t) for d, t in reset_true.items()}
    readings = []
    for r in clock_readings(run.gateway_log):
        if r["sensor"] in reset_true:
            r["error_ms"] = round((r["resetTime"] - reset_true[r["sensor"]]) * 1000, 3)
            readings.append(r)
    figures["gateway_clock_readings"] = readings
    for r in readings:
        print(f"info the gateway placed {r['sensor']}'s tick 0 {delta(r['error_ms'])} from the peer's clock "
              f"(its log clock read: round trip {r['roundTripMs']:.1f} ms, bounds {r['boundsMs']:.1f} ms wide)", flush=True)
    stretches = {s["address"][:17].upper(): [x for x in s.get("undelivered_stretches", []) if x.get("stream") == "gyro"]
                 for s in sensors}

    # Number every point of the last versions (n from x, per device in the order the chunks were
    # first published), split where the board's counter restarts, and place each stored run on
    # the board run whose sample was due last before its first chunk arrived.
    by_device: dict[str, list[str]] = {}
    for topic, doc in chunks.items():
        by_device.setdefault(str(doc.get("device"))[:17].upper(), []).append(topic)
    points: list[dict] = []  # device, topic, i, n, stamp_ms, board run index, due s
    unmatched = []
    for device, topics in sorted(by_device.items()):
        topics.sort(key=lambda t: first_seen[t])
        stored: list[list[dict]] = []
        prev_n = prev_x = None
        for topic in topics:
            for i, p in enumerate(chunks[topic].get("data", [])):
                x = int(round(p["gx"] * bench.LSB_PER_DPS))
                d = bench.int16(x - prev_x) if prev_x is not None else 0
                if prev_n is None or d <= 0:
                    n = x if x >= 0 else x + 65536
                    stored.append([])
                else:
                    n = prev_n + d
                prev_n, prev_x = n, x
                stored[-1].append({"device": device, "topic": topic, "i": i, "n": n, "stamp_ms": p["timestamp"], "p": p})
        peer_runs = runs_of.get(device, [])
        for srun in stored:
            arrived = first_seen[srun[0]["topic"]] + run.anchor
            first_n, last_n = srun[0]["n"], max(q["n"] for q in srun)
            best = None
            for k, prun in enumerate(peer_runs):
                if prun["sent"] <= 0 or last_n >= prun["generated"]:
                    continue
                lag = arrived - due(prun, first_n)
                if lag >= -0.5 and (best is None or lag < best[0]):
                    best = (lag, k)
            if best is None:
                unmatched.append(f"{device}: {len(srun)} samples n {first_n}..{last_n} (first chunk arrived {iso(arrived)})")
                continue
            for q in srun:
                q["run"] = best[1]
                q["due"] = due(peer_runs[best[1]], q["n"])
                points.append(q)
    checks.append((not unmatched, "every sample published belongs to a run of its board (n below what it generated, "
                   "due before its chunk arrived)"
                   + (f" -- not: {'; '.join(unmatched[:3])}" if unmatched else "")))

    # (a) every sample once: e2e_bench.analyse per (board, run), over the last versions.
    synthetic, pseudo_peer = [], []
    keys = {}
    for q in points:
        key = keys.setdefault((q["device"], q["run"]), f"R{len(keys):02d}" + q["device"][3:])  # 17 characters
        synthetic.append((q["topic"], key, q))
    grouped: dict[tuple[str, str], list] = {}
    for topic, key, q in synthetic:
        grouped.setdefault((topic, key), []).append(q["p"])
    msgs = []
    for (topic, key), pts in grouped.items():
        doc = {k: v for k, v in chunks[topic].items() if k != "data"}
        doc.update(device=key, data=pts)
        msgs.append((0.0, f"{topic}#{key}", json.dumps(doc).encode()))
    for (device, k), key in keys.items():
        pseudo_peer.append({"address": key, "samples_sent": runs_of[device][k]["sent"]})
    e2e = bench.analyse(msgs, pseudo_peer, a.odr)
    total_sent = sum(s["samples_sent"] for s in sensors)
    ratio = e2e["delivered"] / total_sent if total_sent else 0.0
    lost_inside = []
    per_run = {}
    for (device, k), key in keys.items():
        v = e2e["per_device"].get(key, {})
        ns = {q["n"] for q in points if q["device"] == device and q["run"] == k}
        last = max(ns) if ns else -1
        unsent = set()
        for x in stretches.get(device, []):
            if x.get("run") == k:
                unsent.update(range(x["n"], x["n"] + x["samples"]))
        missing = [n for n in range(last + 1) if n not in ns and n not in unsent]
        if missing:
            lost_inside.append(f"{device} run {k}: {len(missing)} sent and not delivered, first n {missing[:5]}")
        # Sent after the last one delivered: in flight at a stop, a second's worth at most.
        tail = len([n for n in range(last + 1, runs_of[device][k]["generated"]) if n not in unsent])
        if tail > a.odr:
            lost_inside.append(f"{device} run {k}: {tail} samples sent after the last one delivered (n {last}), "
                               f"more than a second in flight")
        per_run[f"{device} run {k}"] = {"delivered": v.get("delivered"), "sent": runs_of[device][k]["sent"],
                                        "generated": runs_of[device][k]["generated"], "duplicates": v.get("duplicates"),
                                        "mismatches": v.get("mismatches"), "not_sent_inside": len([n for n in unsent if n <= last]),
                                        "lost_inside": len(missing), "sent_after_last_delivered": tail}
    figures["runs"] = per_run
    checks.append((ratio >= 0.95, f"(a) delivered {e2e['delivered']} of the {total_sent} samples the boards sent ({ratio:.4f}, at least 0.95)"))
    checks.append((e2e["duplicates"] == 0, f"(a) no sample twice in the last versions of the chunks ({e2e['duplicates']} duplicates)"))
    checks.append((e2e["mismatches"] == 0, f"(a) every sample matches the waveform of its n ({e2e['mismatches']} mismatches)"))
    checks.append((not lost_inside and bool(keys), "(a) every sample the boards sent is there, once (but for at most a second "
                   "in flight at a stop)"
                   + (f" -- {'; '.join(lost_inside[:3])}" if lost_inside else "" if keys else " -- no samples at all")))

    # (b) each sample's timestamp against its true time.
    board_windows = []
    for j, p in enumerate(run.phases):
        end = run.phases[j + 1]["start"] if j + 1 < len(run.phases) else math.inf
        if p["board_dated"]:
            board_windows.append((p["start"], end))

    def phase_of(t: float) -> dict:
        chosen = run.phases[0]
        for p in run.phases:
            if p["start"] <= t:
                chosen = p
        return chosen

    def tolerance_ms(q: dict) -> float:
        if any(s <= q["due"] < e for s, e in board_windows):
            return a.tolerance_ms + a.drift_ppm * 1e-6 * (q["due"] - reset_true[q["device"]]) * 1000
        return a.tolerance_ms

    errors: dict[str, dict] = {}
    bad_examples: dict[str, str] = {}
    for q in points:
        err = q["stamp_ms"] - (q["due"] + shift) * 1000
        q["err_ms"] = err
        name = phase_of(q["due"])["name"]
        e = errors.setdefault(name, {"samples": 0, "errors": [], "outside": 0, "tolerance_ms": 0.0, "by_device": {}})
        e["samples"] += 1
        e["errors"].append(err)
        e["by_device"].setdefault(q["device"], []).append(err)
        tol = tolerance_ms(q)
        e["tolerance_ms"] = max(e["tolerance_ms"], tol)
        if abs(err) > tol:
            e["outside"] += 1
            bad_examples.setdefault(name, f"{q['device']} n {q['n']} stamped {iso(q['stamp_ms'] / 1000)}, "
                                          f"true {iso(q['due'] + shift)} ({delta(err)})")
    figures["timestamps"] = {}
    for p in run.phases:
        e = errors.get(p["name"])
        if not e:
            continue
        med, worst = statistics.median(e["errors"]), max(e["errors"], key=abs)
        figures["timestamps"][p["name"]] = {"samples": e["samples"], "median_ms": round(med, 3), "worst_ms": round(worst, 3),
                                            "outside_tolerance": e["outside"], "tolerance_ms": round(e["tolerance_ms"], 2),
                                            "median_ms_by_device": {d: round(statistics.median(v), 3) for d, v in e["by_device"].items()}}
        checks.append((e["outside"] == 0,
                       f"(b) last versions, samples due in phase {p['name']!r}: {e['samples'] - e['outside']} of {e['samples']} "
                       f"within {e['tolerance_ms']:.1f} ms of their true time (median {delta(med)}, worst {delta(worst)})"
                       + (f" -- e.g. {bad_examples[p['name']]}" if p["name"] in bad_examples else "")))
    if not points:
        checks.append((False, "(b) no sample to check"))

    # (b, v) chunk versions published while the clock was unsynchronised: dated by the boards.
    if a.scenario == "v":
        by_key = {(q["topic"], q["i"]): q for q in points}
        seen = outside = 0
        worst = 0.0
        example = None
        for topic, vs in versions.items():
            if topic not in chunks:
                continue
            for _mono, phase, payload in vs:
                if phase != "run 2 board time" or not payload:
                    continue
                for i, p in enumerate(json.loads(payload).get("data", [])):
                    q = by_key.get((topic, i))
                    if q is None:
                        continue
                    err = p["timestamp"] - (q["due"] + shift) * 1000
                    seen += 1
                    worst = max(worst, abs(err))
                    if abs(err) > tolerance_ms(q):
                        outside += 1
                        example = example or f"{q['device']} n {q['n']} {delta(err)}"
        checks.append((seen > 0 and outside == 0,
                       f"(b) chunk versions published while unsynchronised (board time): {seen - outside} of {seen} samples "
                       f"within {a.tolerance_ms:g} ms + {a.drift_ppm:g} ppm of their true time (worst {delta(worst)})"
                       + (f" -- e.g. {example}" if example else "") + ("" if seen else " -- no chunk was published then")))

    # (c) records and daily sessions at the paths of their true times.
    by_topic_first: dict[str, dict] = {}  # chunk topic -> its first numbered point
    point_count: dict[str, int] = {}
    for q in points:
        if q["topic"] not in by_topic_first or q["i"] < by_topic_first[q["topic"]]["i"]:
            by_topic_first[q["topic"]] = q
        point_count[q["topic"]] = point_count.get(q["topic"], 0) + 1
    wrong_path, wrong_start, not_closed, wrong_count, empty = [], [], [], [], []
    true_sessions: dict[str, dict] = {}
    for topic, doc in sorted(records.items()):
        sid = topic.split("/", 1)[1]
        m = re.fullmatch(r"(.+)___(\d+)(?:_\d+)?", sid)
        firsts = [by_topic_first[f"realtime_data/{c}"] for c in doc.get("gscope_data") or [] if f"realtime_data/{c}" in by_topic_first]
        if not firsts:
            empty.append(sid)
            continue
        first = min(firsts, key=lambda q: q["due"])
        last = max((q for q in points if q["topic"] in {f"realtime_data/{c}" for c in doc.get("gscope_data") or []}),
                   key=lambda q: q["due"])
        true_start = first["due"] + shift
        true_sessions[sid] = {"user": doc.get("user_id"), "start": true_start, "end": last["due"] + shift,
                              "samples": sum(point_count.get(f"realtime_data/{c}", 0) for c in doc.get("gscope_data") or [])}
        if not m or abs(int(m.group(2)) - true_start) > 1.05:
            wrong_path.append(f"{topic} ({delta((int(m.group(2)) - true_start) * 1000) if m else 'no start in the id'}: "
                              f"its first sample was due {iso(true_start)})")
        if doc.get("start") is None or abs(doc["start"] - true_start * 1000) > tolerance_ms(first):
            wrong_start.append(f"{sid} start {delta(doc['start'] - true_start * 1000) if doc.get('start') is not None else None}")
        if doc.get("end") is None or doc.get("timestamp") is None:
            not_closed.append(sid)
        if doc.get("samples") != true_sessions[sid]["samples"]:
            wrong_count.append(f"{sid}: samples {doc.get('samples')}, its chunks hold {true_sessions[sid]['samples']}")
    checks.append((bool(records) and not wrong_path,
                   f"(c) {len(records) - len(wrong_path)} of {len(records)} non-empty records at the path of their true start second"
                   + (f" -- wrong: {'; '.join(wrong_path[:3])}" if wrong_path else "")))
    checks.append((not wrong_start, f"(c) every record's start is the true time of its first sample"
                   + (f" -- {len(wrong_start)} not: {'; '.join(wrong_start[:3])}" if wrong_start else "")))
    checks.append((not empty, "(c) no non-empty record without samples remains" + (f" -- {', '.join(empty[:4])}" if empty else "")))
    checks.append((not not_closed, "(c) every record is closed (end and timestamp set)"
                   + (f" -- open: {', '.join(not_closed[:4])}" if not_closed else "")))
    checks.append((not wrong_count, "(c) every record's samples are the points of its chunks"
                   + (f" -- {'; '.join(wrong_count[:3])}" if wrong_count else "")))
    listed = {c for d in records.values() for c in d.get("gscope_data") or []}
    orphans = [t for t, d in chunks.items() if t.split("/", 1)[1] not in listed or f"records/{d.get('record')}" not in records]
    checks.append((not orphans, f"(c) every chunk names a record that lists it ({len(orphans)} do not"
                   + (f", e.g. {orphans[0]} -> record {chunks[orphans[0]].get('record')}" if orphans else "") + ")"))
    bad_daily = []
    for topic, doc in sorted(daily.items()):
        sid = topic.rsplit("/", 1)[1]
        truth = true_sessions.get(sid)
        if truth is None:
            bad_daily.append(f"{topic}: no record with samples at records/{sid}")
        elif doc.get("date") != utc_date(truth["start"]) or doc.get("open") is not False:
            bad_daily.append(f"{topic}: date {doc.get('date')}, open {doc.get('open')}; true date {utc_date(truth['start'])}")
    missing_daily = [sid for sid in true_sessions
                     if f"TitanUpUsers/{true_sessions[sid]['user']}/DailySessions/{sid}" not in daily]
    checks.append((bool(daily) and not bad_daily and not missing_daily,
                   f"(c) {len(daily)} daily sessions, each beside its record, dated on the true day and closed"
                   + (f" -- {'; '.join(bad_daily[:3])}" if bad_daily else "")
                   + (f" -- records without one: {', '.join(missing_daily[:3])}" if missing_daily else "")))
    extra = sorted({k for d in records.values() for k in d} - RECORD_FIELDS)
    print(f"info records carry {('the added fields ' + ', '.join(extra)) if extra else 'no field beyond the documented ones'}"
          + (f": e.g. {json.dumps({k: next(iter(records.values())).get(k) for k in extra})}" if extra and records else ""), flush=True)
    figures["record_extra_fields"] = extra

    # (d) today's sessions and medals, from the store (the gateway is stopped) and the broker.
    today = utc_date(run.true_now() + shift)
    code, listing = cli(a, "sessions", "--range", "today", "--json", "--data-dir", run.data_dir, "--time-zone", "UTC")
    expected_today = {sid for sid, s in true_sessions.items() if utc_date(s["start"]) == today}
    if code == 0 and isinstance(listing, dict):
        got = {s["id"]: s for s in listing.get("sessions", [])}
        wrong = [f"{sid} dated {s.get('date')}, start {delta(s['startMs'] - true_sessions[sid]['start'] * 1000)}"
                 for sid, s in got.items() if sid in true_sessions
                 and (s.get("date") != utc_date(true_sessions[sid]["start"])
                      or abs(s["startMs"] - true_sessions[sid]["start"] * 1000) > 1000)]
        checks.append((bool(expected_today) and set(got) == expected_today and not wrong,
                       f"(d) `sessions --range today` ({today}, true) lists {len(got)} sessions, the true day has {len(expected_today)}"
                       + (f" -- listed but not of the true day: {sorted(set(got) - expected_today)[:3]}" if set(got) - expected_today else "")
                       + (f" -- of the true day but not listed: {sorted(expected_today - set(got))[:3]}" if expected_today - set(got) else "")
                       + (f" -- {'; '.join(wrong[:3])}" if wrong else "")))
    else:
        checks.append((False, f"(d) `gyrogate sessions --range today --json --data-dir` failed ({code}): {listing}"))
    code, everything = cli(a, "sessions", "--range", "all", "--json", "--data-dir", run.data_dir, "--time-zone", "UTC")
    if isinstance(everything, dict):
        stored = {s["id"]: s.get("date") for s in everything.get("sessions", [])}
        figures["store_sessions"] = stored
        checks.append((set(stored) == set(true_sessions),
                       f"(d) the store's sessions are the published records ({len(stored)} stored, {len(true_sessions)} published)"
                       + (f" -- only stored: {sorted(set(stored) - set(true_sessions))[:3]}" if set(stored) - set(true_sessions) else "")
                       + (f" -- only published: {sorted(set(true_sessions) - set(stored))[:3]}" if set(true_sessions) - set(stored) else "")))
    users = sorted({s["user"] for s in true_sessions.values()} | set(medals))
    for user in users:
        want = expected_medals([(s["start"], s["end"]) for s in true_sessions.values() if s["user"] == user])
        doc = medals.get(user)
        code, shown = cli(a, "medals", "--user", user, "--json", "--data-dir", run.data_dir)
        diff_doc = sorted(k for k in want if doc is None or bool(doc.get(k)) != want[k])
        diff_cli = sorted(k for k in want if not isinstance(shown, dict) or bool(shown.get(k)) != want[k])
        checks.append((not diff_doc and not diff_cli,
                       f"(d) {user}'s medals are those of the true sessions ({', '.join(k for k in want if want[k]) or 'none'})"
                       + (f" -- the retained document differs in {diff_doc}" if diff_doc else "")
                       + (f" -- `gyrogate medals` differs in {diff_cli}" if diff_cli else "")))

    # (e) the clock the gateway shows.
    shown_states: dict[str, list] = {}
    strict_bad = []
    for p in run.phases:
        polls = [x for x in run.polls if x["phase"] == p["name"]]
        states = []
        for x in polls:
            s = clock_state(x["clock"])
            if not states or states[-1][1] != s:
                states.append((round(x["true"] - p["start"], 1), s))
        shown_states[p["name"]] = states
        if p["expect"] is None:
            continue
        late = [x for x in polls if x["true"] - p["start"] >= a.settle]
        wrong = [x for x in late if clock_state(x["clock"]) != p["expect"]]
        if not late or wrong:
            strict_bad.append(f"phase {p['name']!r} expects {p['expect']}: showed {states or 'nothing'}")
    figures["clock_states"] = shown_states
    absent = all(x["clock"] is None for x in run.polls)
    text = ("(e) `gyrogate status` clock state per phase: "
            + "; ".join(f"{name}: {' -> '.join(f'{s} (+{t} s)' for t, s in st) or '-'}" for name, st in shown_states.items())
            + (" -- the status has no `clock` object" if absent else ""))
    # Every records document says how its times are dated (`clock`); at the end the clock is synchronised.
    said = {}
    for topic, doc in records.items():
        said.setdefault(str(doc.get("clock", "absent")), []).append(topic.split("/", 1)[1])
    figures["records_clock"] = {k: len(v) for k, v in said.items()}
    records_text = ("(e) the records' `clock` at the end: "
                    + (", ".join(f"{k} ({len(v)})" for k, v in sorted(said.items())) or "no records"))
    if a.strict_clock:
        checks.append((not strict_bad, text + (f" -- {'; '.join(strict_bad)}" if strict_bad else "")))
        checks.append((bool(said) and set(said) == {"synchronised"}, records_text + ", all synchronised expected"))
    else:
        checks.append((None, text + " (not enforced without --strict-clock)"))
        checks.append((None, records_text + " (not enforced without --strict-clock)"))
    return figures


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", choices=["t", "u", "v"], required=True)
    p.add_argument("--peer-control", required=True, metavar="HOST:PORT")
    p.add_argument("--gateway", required=True)
    p.add_argument("--transport", default="hci:0")
    p.add_argument("--sensors", type=int, default=2)
    p.add_argument("--odr", type=int, default=100)
    p.add_argument("--first", type=float, default=15.0, help="seconds of streaming before the clock changes (v: each run's first part)")
    p.add_argument("--seconds", type=float, default=35.0, help="t, u: seconds of streaming in all")
    p.add_argument("--last", type=float, default=10.0, help="v: seconds of streaming after the synchronisation")
    p.add_argument("--chunk-size", type=int, default=500,
                   help="points per chunk (500 = 5 s at 100 Hz: chunks are published before and after each change)")
    p.add_argument("--tolerance-ms", type=float, default=20.0)
    p.add_argument("--drift-ppm", type=float, default=50.0,
                   help="v: the boards' drift bound while they date samples (the gateway documents its figure)")
    p.add_argument("--truth-shift", type=float, help="seconds added to the peer's clock to make true time (default: u -3600, else 0)")
    p.add_argument("--strict-clock", action="store_true", help="(e) fail unless the status shows each phase's clock state")
    p.add_argument("--settle", type=float, default=10.0,
                   help="(e) seconds into a phase (from every board streaming) before its clock state must show: "
                        "board time needs the boards initialised")
    p.add_argument("--log-level", help="the gateway's LOG_LEVEL (debug: its log clock readings, with round trips)")
    p.add_argument("--json")
    args = p.parse_args()
    if args.truth_shift is None:
        args.truth_shift = SHIFT[args.scenario]
    run = Run(args)
    figures: dict = {"scenario": args.scenario, "truth_shift_s": args.truth_shift}
    try:
        run.setup()
        scenario(run)
        figures.update(analyse(run))
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        import traceback
        traceback.print_exc()
        run.checks.append((False, f"{type(error).__name__}: {error}"))
    finally:
        if run.gw is not None:
            run.gw.terminate(timeout=30)
        run.procs.stop_all()
        if os.path.isdir("/mnt/out") and os.path.exists(run.gateway_log):
            shutil.copy(run.gateway_log, f"/mnt/out/gateway-{args.scenario}.log")
    figures["offsets"] = [{k: o[k] for k in ("at", "offset_ms", "rtt_ms", "bound_ms")} | {"clock": o["clock"]["adjtimex"]}
                          for o in run.offsets]
    figures["events"] = [{"true": iso(e["true"]), "what": e["what"]} for e in run.events]
    figures["phases"] = [{"name": p["name"], "start": iso(p["start"]), "expect": p["expect"]} for p in run.phases]
    figures["status_clock"] = run.cli_status
    print(json.dumps(figures, indent=1, default=str))
    for o in figures["offsets"]:
        print(f"info offset guest - peer at {o['at']}: {delta(o['offset_ms'])} (round trip {o['rtt_ms']} ms, {o['clock']})")
    for ok, text in run.checks:
        print(("info " if ok is None else "ok   " if ok else "FAIL ") + text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"checks": [[ok, text] for ok, text in run.checks], "figures": figures}, f, indent=2, default=str)
    failed = [text for ok, text in run.checks if ok is False]
    print(f"guest_time_check {args.scenario}: " + ("PASSED" if not failed else f"FAILED ({len(failed)} checks)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
