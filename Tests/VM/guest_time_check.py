#!/usr/bin/env python3
"""Inside the VM (Tests/VM/hcivm.py, scenarios t, u, v): the gateway's time when the guest's
clock is wrong, steps, or is synchronised late (issue 38). True time is the peer's clock (this
VM's host): each sample n of a board's run was due at `t0_wall + n / odr` of that run in the
peer's status (`gyro_runs`, `segments` when the peer models crystal drift), n read from the
sample's x = int16(n) (Tests/Peers/README.md, "Waveform").

    guest_time_check.py --scenario t|u|v --peer-control HOST:PORT --gateway PATH
        [--sensors 2] [--odr 100] [--first 15] [--seconds 35] [--last 10] [--chunk-size 500]
        [--tolerance-ms 20] [--drift-ppm 50] [--strict-clock] [--json OUT]

The guest's clock is changed with Tests/VM/guest_clock.py (adjtimex: ADJ_SETOFFSET, ADJ_STATUS) and its
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
  w  a kill during the re-dating: 3 days behind and unsynchronised; --first s; stepped to true
     and synchronised; SIGKILL --kill-after s later (while the re-dating runs); the gateway
     started again on the same store (the clock true); --last s; stop. Each session of the
     killed run must be wholly before its re-dating (3 days behind, `clock` unsynchronised) or
     wholly after it (true), and every other check holds in that session's frame.

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
      from --settle (10) s into each phase on (its last poll in a shorter phase; counted from
      every board streaming: board time needs a board's clock read at its initialisation), it
      must be the phase's expected state (t: unsynchronised then synchronised; u: synchronised;
      v: synchronised, board, synchronised), and every record's `clock` must say synchronised.

Prints `ok`/`FAIL`/`info` lines and a JSON summary; exits 1 on a failed check.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
from time_checks import DAY, Analysis, delta, iso  # noqa: E402

SHIFT = {"t": 0.0, "u": -3600.0, "v": 0.0, "w": 0.0}


def say(msg: str) -> None:
    print(f"[time {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


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

    def kill_gateway(self) -> float:
        """SIGKILL; returns its true time."""
        killed = self.true_now()
        self.events.append({"true": killed, "what": "SIGKILL", "result": {}})
        self.gw.kill()
        self.gw = None
        return killed

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
    elif a.scenario == "v":
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
    elif a.scenario == "w":
        run.event("set 3 days behind true, unsynchronised", gc.set_true(ctl, -3 * DAY, then="unsync"))
        run.start_gateway()
        run.phase("unsynchronised, then killed", "unsynchronised", a.first)
        stepped_at = time.monotonic()
        stepped = gc.set_true(ctl, 0.0, then="sync")
        run.gw.run_for(max(0.0, a.kill_after - (time.monotonic() - stepped_at)))
        killed = run.kill_gateway()
        stepped["killed_after_s"] = round(time.monotonic() - stepped_at, 3)
        run.event("stepped to true, synchronised; SIGKILL", stepped)
        run.gap("restart (no gateway)", killed, board_dated=False)
        run.start_gateway()
        run.phase("run 2 synchronised", "synchronised", a.last)
        run.stop_gateway()
    run.sub.phase = "after the stop"
    run.measure("end")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", choices=["t", "u", "v", "w"], required=True)
    p.add_argument("--peer-control", required=True, metavar="HOST:PORT")
    p.add_argument("--gateway", required=True)
    p.add_argument("--transport", default="hci:0")
    p.add_argument("--sensors", type=int, default=2)
    p.add_argument("--odr", type=int, default=100)
    p.add_argument("--first", type=float, default=15.0, help="seconds of streaming before the clock changes (v: each run's first part)")
    p.add_argument("--seconds", type=float, default=35.0, help="t, u: seconds of streaming in all")
    p.add_argument("--last", type=float, default=10.0, help="v: seconds of streaming after the synchronisation")
    p.add_argument("--kill-after", type=float, default=0.3,
                   help="w: seconds from the step's return to the SIGKILL (the re-dating takes about a second here)")
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
        figures.update(Analysis(run).all())
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
    # The kernel's side of the hci:0 path: on a loaded machine hci_uart can lose the H4 framing
    # ("Frame reassembly failed"), after which nothing reaches the gateway (not a time matter).
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True, errors="replace").stdout.splitlines()
    figures["kernel_bluetooth_log"] = [line for line in dmesg if "Bluetooth" in line or "hci" in line][-20:]
    reassembly = sum("Frame reassembly failed" in line for line in dmesg)
    if reassembly:
        run.checks.append((None, f"the kernel logged {reassembly} H4 frame reassembly failures on hci0 (the serial line lost "
                                 "bytes: a loaded host; samples lost there are the VM's, not the gateway's)"))
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
