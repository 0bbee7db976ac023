"""power_cut: the store files as the gateway left them at random moments, opened as after a power cut.

2 sensors stream; K times (3 quick, 15 full), at a random moment, the gateway is frozen with
SIGSTOP, store.sqlite, -wal and -shm are copied to a new directory, and it goes on (SIGCONT).
Sessions are stopped over the admin API between cuts, so later copies hold closed records, and
chunks of 100 samples close every second. Each copy must be read by `gyrogate store dump` (read-only,
the WAL as a restart would replay it), pass integrity_check, and satisfy the record invariants for closed records (plus the
sample invariants). Then a gateway with a fresh peer runs a few seconds on one untouched copy
and is stopped with SIGTERM: the sessions the cut left open are closed honestly.
"""

from __future__ import annotations

import os
import shutil
import signal

import reliability as rel
from reliability import bench

ODR, COMMIT_MS, SENSORS, CHUNK = 100, 200, 2, 100


def run(ctx) -> list:
    cuts = 3 if ctx.quick else 15
    tmp = ctx.tmpdir("power-cut")
    data = os.path.join(tmp, "data")
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "cut")
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS,
                              chunk_size=CHUNK, data_dir=data, gateway_id="power-cut", user="cut")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
    copies = []
    try:
        rel.wait_streaming(peer, gw)
        for i in range(cuts):
            gw.run_for(ctx.rng.uniform(0.3, 2.0))
            gw.sample_memory()
            gw.signal(signal.SIGSTOP)
            try:
                copies.append(rel.copy_store(data, os.path.join(tmp, f"cut-{i}")))
            finally:
                gw.signal(signal.SIGCONT)
            gw.stop_session(rel.address(i % SENSORS))
        code, seconds = gw.terminate()
    finally:
        peer.close(ctx.procs)

    checks = [(code == 0, f"the gateway exits 0 on SIGTERM after {cuts} freezes (exit {code}, {seconds:.2f} s)"),
              rel.outbox_drained(rel.read_store(ctx.gateway, rel.store_path(data)))]
    failures, closed, samples = [], 0, 0
    for i, path in enumerate(copies):
        # Checked on a copy of the copy: the restart below must find the files as the cut left
        # them, -shm included (a reader may rebuild the WAL's index there).
        probe = rel.copy_store(os.path.dirname(path), os.path.join(tmp, f"probe-{i}"))
        results = rel.invariants(ctx.gateway, probe, ODR, closed_only=True)
        failures += [f"cut {i}: {text}" for ok, text in results if not ok]
        store = rel.read_store(ctx.gateway, probe)
        closed += sum(1 for s in store.sessions if not s["isOpen"])
        samples += rel.census(store, ODR).samples
    checks.append((not failures, f"{cuts} cuts: every copy reads, passes integrity_check and the invariants "
                                 f"({closed} closed records, {samples} samples checked in all)" + rel.examples(failures)))

    # A restart on one cut: its open sessions are closed at their last stored sample.
    restart = os.path.dirname(copies[ctx.rng.randrange(len(copies))])
    cut_open = [s["id"] for s in rel.read_store(ctx.gateway, rel.copy_store(restart, os.path.join(tmp, "probe-restart"))).sessions
                if s["isOpen"]]
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "cut-restart")
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS,
                              chunk_size=CHUNK, data_dir=restart, gateway_id="power-cut", user="cut")
    restarted = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway-restart.log"))
    try:
        rel.wait_streaming(peer, restarted)
        restarted.run_for(2.0)
        code, seconds = restarted.terminate()
    finally:
        peer.close(ctx.procs)
    store = rel.read_store(ctx.gateway, rel.store_path(restart))
    rows = {s["id"]: s for s in store.sessions}
    dishonest = [sid for sid in cut_open if sid in rows and
                 (rows[sid]["isOpen"] or rows[sid]["expected"] - rows[sid]["samples"] != rel.gaps_missing(rows[sid]["gaps"]))]
    withdrawn = [sid for sid in cut_open if sid not in rows]
    checks.append((not dishonest and code == 0,
                   f"restarted on {os.path.basename(restart)}: the {len(cut_open)} sessions the cut left open are closed "
                   f"with expected - samples == sum(gaps.missing) ({len(withdrawn)} withdrawn as empty; exit {code})"
                   + rel.examples(dishonest)))
    checks += rel.invariants(ctx.gateway, rel.store_path(restart), ODR)
    checks.append(rel.rss_check([gw, restarted]))
    for i in range(len(copies)):
        shutil.rmtree(os.path.join(tmp, f"probe-{i}"), ignore_errors=True)
    return checks
