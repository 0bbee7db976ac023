#!/usr/bin/env python3
"""Reliability suite: faults injected from outside the gateway process, invariants checked after.

    .venv/bin/python Tests/Reliability/suite.py --gateway .build/debug/gyrogate [--quick]
        [--cases kills,power_cut] [--seed N] [--keep-temp]

Everything runs on 127.0.0.1: the emulated MetaWear peer (Tests/Peers/metawear_peer.py), a real
mosquitto, and the gateway binary as its own process. One line per check, `PASS …`, `FAIL …` or
`SKIP …`; the last line is `N passed, N failed` (`, N skipped` when some were skipped); exit 1
on any failure. `--quick` is the reduced form CI runs (under ~3 minutes on 2 cores).

Cases, one module each (`case_<name>.py`, `run(ctx) -> [(ok, text)]`, ok None = skipped):

    kills          SIGKILL at random moments while 2 sensors stream, restarting on the same store
    crash_start    SIGKILL right after a stream starts (crash_window_test.py)
    broker_outage  mosquitto stopped for 10 s / 60 s, then started again on the same port
    broker_silent  the MQTT port accepts and never answers
    power_cut      snapshots of the store files taken with the gateway stopped (SIGSTOP)

    diskfull       a full filesystem under the store (its module's docstring)
    nearfull       a nearly full ext4 under the store, the broker away (its module's docstring)
    faults         sensor link faults through the peer's control channel (its module's docstring)

Adding a case is its module plus its name in CASES.
The invariants are in reliability.py; README.md in this folder has the figures of the last runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import bench  # noqa: E402  (also puts e2e_bench on the path)

CASES = ["kills", "crash_start", "broker_outage", "broker_silent", "power_cut", "diskfull", "nearfull", "faults", "backfill"]
LABEL = {True: "PASS", False: "FAIL", None: "SKIP"}


@dataclass
class Context:
    """What a case gets: its own Processes (stopped by the runner after the case), a shared
    mosquitto for cases that do not stop theirs, and a temporary directory per use."""
    gateway: str
    quick: bool
    rng: random.Random
    procs: bench.Processes
    broker_port: int
    root: str

    def tmpdir(self, name: str) -> str:
        return tempfile.mkdtemp(prefix=f"{name}-", dir=self.root)

    @staticmethod
    def say(msg: str) -> None:
        print(f"[suite {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {', '.join(CASES)}")
    parser.add_argument("--quick", action="store_true", help="the reduced form CI runs")
    parser.add_argument("--seed", type=int, default=None, help="random moments of the faults (default: from the clock)")
    parser.add_argument("--keep-temp", action="store_true", help="keep stores and logs even when everything passes")
    args = parser.parse_args()
    gateway = os.path.abspath(args.gateway)
    if not os.access(gateway, os.X_OK):
        sys.exit(f"no gateway binary at {gateway}")
    names = [n.strip() for n in args.cases.split(",") if n.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    print(f"reliability suite: {'quick' if args.quick else 'full'}, seed {seed}, cases {', '.join(names)}", flush=True)

    root = tempfile.mkdtemp(prefix="gyrogate-reliability-")
    counts = {True: 0, False: 0, None: 0}
    shared = bench.Processes()
    started = time.monotonic()
    try:
        _broker, port = bench.start_broker(shared, root)
        for name in names:
            t0 = time.monotonic()
            # Each case its own rng from the seed, so a case reruns alike with --cases alone.
            ctx = Context(gateway, args.quick, random.Random(f"{seed}-{name}"), bench.Processes(), port, root)
            try:
                results = importlib.import_module(f"case_{name}").run(ctx)
            except Exception as e:  # a harness or gateway failure the case did not turn into checks
                traceback.print_exc()
                results = [(False, f"the case stopped: {type(e).__name__}: {e}")]
            finally:
                ctx.procs.stop_all()
            for ok, text in results:
                counts[ok] += 1
                print(f"{LABEL[ok]} [{name}] {text}", flush=True)
            print(f"-- {name}: {time.monotonic() - t0:.1f} s", flush=True)
    finally:
        shared.stop_all()
        if counts[False] or args.keep_temp:
            print(f"stores and logs kept in {root}", flush=True)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"-- total: {time.monotonic() - started:.1f} s", flush=True)
    summary = f"{counts[True]} passed, {counts[False]} failed"
    print(summary + (f", {counts[None]} skipped" if counts[None] else ""))
    return 1 if counts[False] else 0


if __name__ == "__main__":
    sys.exit(main())
