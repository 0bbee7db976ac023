#!/usr/bin/env python3
"""Reliability suite: faults injected from outside the gateway process, invariants checked after.

    .venv/bin/python Tests/Reliability/suite.py --gateway .build/debug/gyrogate [--quick]
        [--cases kills,power_cut] [--seed N] [--keep-temp] [--jobs N]

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

`--jobs N` runs N cases at a time, each in a child process of its own (this script with
`--cases NAME`, its own mosquitto and temporary directory), and prints a case's lines when it
ends. The cases mostly wait (on the disk filling, on a broker away, on the board's log), so two
at a time nearly halve the suite on 2 cores. Longer cases start first (`EXPECTED_SECONDS`).

Adding a case is its module plus its name in CASES.
The invariants are in reliability.py; README.md in this folder has the figures of the last runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import bench  # noqa: E402  (also puts e2e_bench on the path)

CASES = ["kills", "crash_start", "broker_outage", "broker_silent", "power_cut", "diskfull", "nearfull", "faults", "backfill"]
LABEL = {True: "PASS", False: "FAIL", None: "SKIP"}
# Seconds per case in --quick on a quiet 2-core machine, for --jobs' order only (longest first).
EXPECTED_SECONDS = {"diskfull": 173, "nearfull": 167, "backfill": 139, "faults": 26, "broker_outage": 25,
                    "broker_silent": 22, "kills": 20, "power_cut": 12, "crash_start": 6}


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
    parser.add_argument("--jobs", type=int, default=1, help="cases run at a time, each in its own process")
    args = parser.parse_args()
    gateway = os.path.abspath(args.gateway)
    if not os.access(gateway, os.X_OK):
        sys.exit(f"no gateway binary at {gateway}")
    names = [n.strip() for n in args.cases.split(",") if n.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    print(f"reliability suite: {'quick' if args.quick else 'full'}, seed {seed}, cases {', '.join(names)}"
          + (f", {args.jobs} at a time" if args.jobs > 1 else ""), flush=True)
    if args.jobs > 1 and len(names) > 1:
        return run_children(args, gateway, names, seed)
    return run_here(args, gateway, names, seed)


def run_here(args: argparse.Namespace, gateway: str, names: list[str], seed: int) -> int:
    """The cases one after another in this process, on one shared mosquitto."""
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


def run_children(args: argparse.Namespace, gateway: str, names: list[str], seed: int) -> int:
    """Each case in a child process (`--cases NAME`, same seed, so its rng is the one it gets
    inline), at most `--jobs` at once. A child writes to a file of its own, printed whole when
    it ends; the counts are summed from the children's last lines."""
    order = sorted(names, key=lambda n: -EXPECTED_SECONDS.get(n, 60))
    outputs = tempfile.mkdtemp(prefix="gyrogate-reliability-jobs-")
    started = time.monotonic()
    running: dict[int, tuple[str, float]] = {}
    totals = [0, 0, 0]
    failed_cases: list[str] = []
    while order or running:
        while order and len(running) < args.jobs:
            name = order.pop(0)
            command = [sys.executable, os.path.abspath(__file__), "--gateway", gateway, "--cases", name,
                       "--seed", str(seed)] + (["--quick"] if args.quick else []) + (["--keep-temp"] if args.keep_temp else [])
            with open(os.path.join(outputs, name), "w") as out:
                child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
            running[child.pid] = (name, time.monotonic())
            print(f"-- {name}: started", flush=True)
        pid, status = os.wait()  # the next child to end; this process starts no others
        if pid not in running:
            continue
        name, t0 = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        with open(os.path.join(outputs, name)) as f:
            output = f.read()
        counts = child_counts(output)
        if counts is None:  # it ended before its summary line: one failed check
            counts = (0, 1, 0)
            output += f"FAIL [{name}] the case's process ended (exit {code}) without its summary\n"
        if code != 0 or counts[1]:
            failed_cases.append(name)
        totals = [a + b for a, b in zip(totals, counts)]
        print(f"== {name}: {time.monotonic() - t0:.1f} s, exit {code}\n{output.rstrip()}", flush=True)
    shutil.rmtree(outputs, ignore_errors=True)
    print(f"-- total: {time.monotonic() - started:.1f} s", flush=True)
    if failed_cases:
        print(f"failed cases: {', '.join(failed_cases)}", flush=True)
    summary = f"{totals[0]} passed, {totals[1]} failed"
    print(summary + (f", {totals[2]} skipped" if totals[2] else ""))
    return 1 if failed_cases else 0


def child_counts(output: str) -> tuple[int, int, int] | None:
    """(passed, failed, skipped) from a child's last line, `N passed, N failed[, N skipped]`."""
    match = re.search(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*\Z", output, re.MULTILINE)
    if not match:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


if __name__ == "__main__":
    sys.exit(main())
