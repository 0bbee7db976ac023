"""kills: SIGKILL at random moments while 2 sensors stream, the gateway restarting on the same store.

4 cycles (quick) or 20: start the gateway, wait until both sensors stream again, let it run a
random 0.2-3 s, SIGKILL. The peer outlives the gateways (a board keeps streaming across a lost
link, and its counter restarts at 0 when the gateway re-initialises it). After each kill the
store's files, copied as the kill left them, pass `PRAGMA integrity_check`. After the last cycle
one more run ends with SIGTERM, then the invariants hold on the whole store, and the samples the
peer sent that the store does not have are at most one commit interval plus the stream
tracker's 0.5 s confirmation window per kill and sensor, plus the samples recorded as gaps.
Chunks of 100 samples (1 s) so kills also land around chunk closes.
"""

from __future__ import annotations

import os

import reliability as rel
from reliability import bench

ODR, COMMIT_MS, SENSORS, CHUNK = 100, 200, 2, 100
CONFIRMATION_S = 0.5  # the stream tracker holds a suspected gap's samples this long (durability.md)
STOP_SLACK_S = 0.1  # samples in flight when the clean stop closes the sessions


def run(ctx) -> list:
    cycles = 4 if ctx.quick else 20
    tmp = ctx.tmpdir("kills")
    data = os.path.join(tmp, "data")
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "kills")
    # One client id for every gateway of the case, as one installation has.
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS,
                              chunk_size=CHUNK, data_dir=data, gateway_id="kills", user="kills",
                              client_id=f"kills-{os.getpid()}")
    sub = bench.Subscriber(ctx.broker_port)
    gateways, bad_integrity, delays, losses, previous = [], [], [], [], 0
    try:
        for cycle in range(cycles):
            since = [s["samples_sent"] for s in peer.sensors()]
            gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
            gateways.append(gw)
            rel.wait_streaming(peer, gw, since=since)
            delays.append(ctx.rng.uniform(0.2, 3.0))
            gw.run_for(delays[-1])
            gw.kill()
            # Checked on a copy: opening the store itself would replay and checkpoint its WAL
            # before the next gateway gets to recover it.
            store = rel.read_store(ctx.gateway, rel.copy_store(data, os.path.join(tmp, f"after-kill-{cycle}")))
            if store.integrity != "ok":
                bad_integrity.append(f"cycle {cycle}: {store.integrity}")
            # This kill's loss: what the peer sent and the store lacks, minus the same before it.
            unstored = sum(rel.sent_per_device(peer).values()) - rel.census(store, ODR).samples
            gaps = sum(rel.gaps_missing(s["gaps"]) for s in store.sessions)
            losses.append(unstored - gaps - previous)
            previous = unstored - gaps
            ctx.say(f"kills: cycle {cycle + 1}/{cycles}, killed after {delays[-1]:.2f} s, "
                    f"integrity {store.integrity}, lost {losses[-1]}")
        since = [s["samples_sent"] for s in peer.sensors()]
        gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
        gateways.append(gw)
        rel.wait_streaming(peer, gw, since=since)
        gw.run_for(2.0)
        code, seconds = gw.terminate()
        sent = rel.sent_per_device(peer)
        sub.wait_quiet(1.0, 10.0)
    finally:
        sub.close()
        peer.close(ctx.procs)

    checks = [(not bad_integrity, f"{cycles} SIGKILLs (after {min(delays):.2f}-{max(delays):.2f} s of streaming): "
                                  "integrity_check ok after each" + rel.examples(bad_integrity)),
              (code == 0, f"the last gateway exits 0 on SIGTERM (exit {code}, {seconds:.2f} s)")]
    path = rel.store_path(data)
    checks += rel.invariants(ctx.gateway, path, ODR)
    store = rel.read_store(ctx.gateway, path)
    census = rel.census(store, ODR)
    stored = census.samples
    total_sent = sum(sent.values())
    gaps = sum(rel.gaps_missing(s["gaps"]) for s in store.sessions)
    lost = total_sent - stored
    per_kill = SENSORS * (COMMIT_MS / 1000 + CONFIRMATION_S) * ODR
    checks.append((max(losses) <= per_kill, f"each SIGKILL lost at most {per_kill:.0f} samples beyond recorded gaps "
                                            f"(commit interval + 0.5 s, 2 sensors): {losses}"))
    window = cycles * per_kill
    allowed = window + gaps + SENSORS * STOP_SLACK_S * ODR
    checks.append((lost <= allowed,
                   f"{cycles} cycles: {total_sent} samples sent, {stored} stored and checked, lost {lost} "
                   f"(at most {allowed:.0f}: {window:.0f} for the kills' windows + {gaps} recorded as gaps + stop), "
                   f"{census.duplicates} duplicated, {len(store.sessions)} sessions"))
    checks.append(rel.outbox_drained(store))
    checks.append(rel.versions_forward(sub.messages))
    checks.append(rel.rss_check(gateways))
    return checks
