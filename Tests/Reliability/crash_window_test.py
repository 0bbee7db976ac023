#!/usr/bin/env python3
"""SIGKILL right after a stream starts loses at most one commit interval of samples.

    .venv/bin/python Tests/Reliability/crash_window_test.py --gateway PATH [--delays 0.3,0.45]
        [--commit-ms 200] [--odr 100] [--cycles 2]   (default delays: 0.3,0.45)

For each delay and cycle: a fresh emulated MetaWear (one sensor), a real mosquitto, and the
gateway as its own process with `capture.commitIntervalMs` = --commit-ms, on a store of its
own. Once the sensor's first sample is sent, the gateway is killed with SIGKILL `delay` seconds
after it. The peer's count of samples sent by then is compared with what the store kept (the
samples its chunks hold, read with `gyrogate store dump` after the kill): at most
commit-ms worth of samples (plus one notification in flight) may be lost, and the store must
pass `PRAGMA integrity_check`. A last check restarts the gateway on one of those stores: the
session left open is closed (or withdrawn if it stored nothing), with `expected - samples`
equal to the missing samples its gaps list. The last line is `N passed, N failed`.

Known limit: samples held while the stream tracker confirms a suspected gap (up to its
confirmation window, 0.5 s) are not in the store yet; a kill then can lose up to that window
plus one commit interval (seen at 0.6 s after a start with a 100 ms warm-up).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import shutil
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks", "E2E"))
import e2e_bench as bench  # noqa: E402  (the broker, the peer and the process helpers)
import reliability as rel  # noqa: E402  (reading the store as the invariants do)


def config(tmp: str, hci: int, mqtt_port: int, odr: int, commit_ms: int) -> str:
    path = os.path.join(tmp, "gyrogate.json")
    with open(path, "w") as f:
        json.dump({
            "gatewayId": "crash-window",
            "dataDirectory": os.path.join(tmp, "data"),
            "timeZone": "UTC",
            "bluetooth": {"transport": f"tcp:127.0.0.1:{hci}", "maxSensors": 1},
            "sensors": [{"address": "C4:BE:84:00:00:01", "userId": "crash-user"}],
            "gyro": {"odrHz": odr, "rangeDps": 2000},
            "capture": {"chunkSize": 2000, "commitIntervalMs": commit_ms},
            "sessions": {"autoStart": True},
            "mqtt": {"host": "127.0.0.1", "port": mqtt_port, "clientId": f"crash-window-{os.getpid()}-{time.time_ns()}"},
            "admin": {"socketPath": os.path.join(tmp, "admin.sock"), "mode": "0600"},
        }, f)
    return path


def stored(gateway: str, tmp: str) -> tuple[int, int, str]:
    """(samples the store holds, sessions, integrity_check) after a kill. An open session's row
    holds its counts as of its last full write; its samples are in its chunks (closed: their
    counts; open: their samples in the sample ring), as the gateway counts them at its restart."""
    store = rel.read_store(gateway, os.path.join(tmp, "data", "store.sqlite"))
    held = sum(len(c.points) if c.is_open else c.count for c in store.chunks)
    return held, len(store.sessions), store.integrity


def run_cycles(gateway: str, delays: list[float], commit_ms: int, odr: int, cycles: int,
               procs: bench.Processes, mqtt_port: int, check) -> None:
    """The kills and the restart check; `check(ok, text)` gets each result as it is known.
    The suite (suite.py, case crash_start) calls this with its own processes and broker."""
    allowed = commit_ms / 1000 * odr + (3 if odr > 100 else 1)
    kept = None
    try:
        for delay in delays:
            for cycle in range(cycles):
                tmp = tempfile.mkdtemp(prefix="gyrogate-crash-")
                peer = bench.Peer(procs, 1, tmp, f"crash-{delay}-{cycle}")
                log = open(os.path.join(tmp, "gateway.log"), "wb")
                gw = procs.start([gateway, "run", "--config", config(tmp, peer.hci, mqtt_port, odr, commit_ms)],
                                 stdout=log, stderr=log)
                # The first sample: the peer counts it when it sends it (control round trips are
                # ~1 ms, far below the delays measured here).
                deadline = time.monotonic() + 60
                while True:
                    sent = peer.sensors()[0]["samples_sent"]
                    if sent > 0:
                        break
                    if time.monotonic() > deadline or gw.poll() is not None:
                        raise RuntimeError("the sensor never streamed")
                    time.sleep(0.005)
                started = time.monotonic() - sent / odr
                time.sleep(max(0.0, started + delay - time.monotonic()))
                os.killpg(gw.pid, signal.SIGKILL)
                gw.wait()
                sent = peer.sensors()[0]["samples_sent"]
                log.close()
                committed, sessions, integrity = stored(gateway, tmp)
                lost = sent - committed
                ok = integrity == "ok" and lost <= allowed
                check(ok, f"SIGKILL {delay:.2f} s after the stream started: {sent} sent, {committed} stored, "
                          f"lost {lost} (at most {allowed:.0f}), {sessions} session(s), integrity {integrity}"
                          + ("" if ok else f"; store and log kept in {tmp}"))
                peer.close(procs)
                if kept is None and committed > 0:
                    kept = tmp
                elif ok:
                    shutil.rmtree(tmp, ignore_errors=True)
        if kept:
            # A restart closes the session the kill left open, honestly.
            peer = bench.Peer(procs, 1, kept, "restart")
            log = open(os.path.join(kept, "gateway-restart.log"), "wb")
            gw = procs.start([gateway, "run", "--config", config(kept, peer.hci, mqtt_port, odr, commit_ms)],
                             stdout=log, stderr=log)
            time.sleep(2)
            os.killpg(gw.pid, signal.SIGTERM)
            gw.wait(30)
            log.close()
            rows = sorted(rel.read_store(gateway, os.path.join(kept, "data", "store.sqlite")).sessions, key=lambda s: s["startMs"])
            first = rows[0] if rows else None
            honest = first is not None and not first["isOpen"] and \
                first["expected"] - first["samples"] == sum(g.get("missing", 0) for g in first["gaps"])
            shown = first and (first["id"], first["isOpen"], first["samples"], first["expected"], first["gaps"])
            check(honest, f"after a restart the killed session is closed with expected - samples = sum(gaps.missing): {shown}")
            peer.close(procs)
    finally:
        if kept:
            shutil.rmtree(kept, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--delays", default="0.3,0.45")
    parser.add_argument("--commit-ms", type=int, default=200)
    parser.add_argument("--odr", type=int, default=100)
    parser.add_argument("--cycles", type=int, default=2)
    args = parser.parse_args()
    results: list[bool] = []

    def check(ok: bool, text: str) -> None:
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {text}", flush=True)

    procs = bench.Processes()
    broker_tmp = tempfile.mkdtemp(prefix="gyrogate-crash-broker-")
    try:
        _broker, mqtt_port = bench.start_broker(procs, broker_tmp)
        run_cycles(os.path.abspath(args.gateway), [float(d) for d in args.delays.split(",")], args.commit_ms,
                   args.odr, args.cycles, procs, mqtt_port, check)
    finally:
        procs.stop_all()
        shutil.rmtree(broker_tmp, ignore_errors=True)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
