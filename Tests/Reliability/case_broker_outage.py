"""broker_outage: mosquitto stopped for 10 s (quick) or 60 s while 2 sensors stream, then started again.

The case's own mosquitto (no persistence, unlimited queue, as bench.start_broker) on a fixed
port, and a subscriber connected throughout that reconnects by itself. Before the outage one
session is stopped over the admin API, so its record is closed and acknowledged, and only a
resync can bring it back to the restarted (empty) broker. While the broker is down the status
says so and the outbox grows; once it is back the gateway reconnects and drains its outbox.
After a SIGTERM: the subscriber got every chunk the store holds (bar rows still in the
outbox), each at least once, with the stored samples, in order; no record or daily session went
backwards; the broker holds every record retained, as stored; the store invariants hold.
"""

from __future__ import annotations

import json
import os
import signal
import time

import reliability as rel
from reliability import bench

ODR, COMMIT_MS, SENSORS, CHUNK = 100, 200, 2, 200


def wait_status(gw: rel.Gateway, ok, timeout: float) -> tuple[bool, dict, float]:
    started = time.monotonic()
    while True:
        status = gw.status()
        if ok(status):
            return True, status, time.monotonic() - started
        if time.monotonic() - started > timeout:
            return False, status, time.monotonic() - started
        gw.run_for(0.2)


def run(ctx) -> list:
    outage = 10 if ctx.quick else 60
    tmp = ctx.tmpdir("broker-outage")
    port = bench.free_port()
    broker = bench.start_broker(ctx.procs, ctx.tmpdir("broker-outage-mosquitto"), port)[0]
    sub = bench.Subscriber(port)
    sub.client.reconnect_delay_set(min_delay=1, max_delay=1)  # paho's default backs off to 2 min
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "outage")
    config = rel.write_config(tmp, peer.hci, port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS, chunk_size=CHUNK,
                              gateway_id="outage", user="outage")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
    checks = []
    try:
        rel.wait_streaming(peer, gw)
        gw.run_for(2.5)
        closed = gw.stop_session(rel.address(0))
        drained, _s, _t = wait_status(gw, lambda s: s["outbox"]["depth"] == 0, 10)
        checks.append((closed is not None and drained, f"session {closed} stopped before the outage, outbox drained"))

        bench.Processes.stop(broker)
        ctx.say(f"broker_outage: mosquitto stopped for {outage} s")
        gw.run_for(outage)
        status = gw.status()
        state, detail, depth = status["broker"]["state"], status["broker"].get("detail"), status["outbox"]["depth"]
        checks.append((state != "connected" and bool(detail) and depth > 0,
                       f"after {outage} s without a broker the status says {state!r} ({detail}), outbox depth {depth}"))

        # Paused while mosquitto starts and the subscriber resubscribes: the restarted broker has
        # no sessions, so chunks the gateway published before the subscriber is back would reach
        # no one. That would be MQTT's loss, not the gateway's, and is not what is measured here.
        gw.signal(signal.SIGSTOP)
        try:
            sub.subscribed.clear()
            bench.start_broker(ctx.procs, ctx.tmpdir("broker-outage-mosquitto"), port)[0]
            resubscribed = sub.subscribed.wait(15)
        finally:
            gw.signal(signal.SIGCONT)
        back, status, seconds = wait_status(
            gw, lambda s: s["broker"]["state"] == "connected" and s["outbox"]["depth"] == 0, 45)
        checks.append((resubscribed and back, f"the gateway reconnected and drained its outbox {seconds:.1f} s after "
                                              f"the broker came back (state {status['broker']['state']!r}, "
                                              f"depth {status['outbox']['depth']})"))
        gw.run_for(2.0)
        code, stop_seconds = gw.terminate()
        checks.append((code == 0, f"the gateway exits 0 on SIGTERM (exit {code}, {stop_seconds:.2f} s)"))
        sub.wait_quiet(1.5, 15.0)
        kept = rel.retained(port, ["records/#"])
    finally:
        sub.close()
        peer.close(ctx.procs)

    path = rel.store_path(os.path.join(tmp, "data"))
    store = rel.read_store(ctx.gateway, path)
    checks += delivery_checks(store, sub.messages)
    checks.append(rel.versions_forward(sub.messages))
    checks.append(rel.outbox_drained(store))
    # Records still in the outbox are the outbox check's finding; the rest must be on the broker.
    current = {sid: doc for sid, doc in store.records.items()
               if doc is not None and f"records/{sid}" not in store.outbox_paths}
    stale = [sid for sid, doc in current.items()
             if f"records/{sid}" not in kept or json.loads(kept[f"records/{sid}"]) != doc]
    checks.append((not stale and f"records/{closed}" in kept,
                   f"the restarted broker holds {len(current)} of {len(store.records)} records retained as stored "
                   f"({len(store.records) - len(current)} still in the outbox), including {closed}, closed before "
                   "the outage (re-published by the resync)" + rel.examples(stale)))
    checks += rel.invariants(ctx.gateway, path, ODR)
    checks.append(rel.rss_check([gw]))
    return checks


def delivery_checks(store: rel.Store, messages: list) -> list:
    """Every stored chunk (not still in the outbox) reached the subscriber with the stored samples,
    at least once, and each session's chunks first arrived in their order."""
    received = rel.received_chunks(messages)
    first_seen = {}
    for i, (_t, topic, payload) in enumerate(messages):
        if payload and topic not in first_seen:
            first_seen[topic] = i
    missing, different, out_of_order, pending = [], [], [], 0
    samples = repeated = 0
    for s in store.sessions:
        arrivals = []
        for chunk in store.chunks_of(s["id"]):
            topic = f"realtime_data/{chunk.id}"
            if topic in store.outbox_paths or chunk.is_open:
                pending += 1
                continue
            if topic not in received:
                missing.append(f"{s['id']} chunk {chunk.seq}")
                continue
            count, doc = received[topic]
            repeated += count - 1
            points = [(p["timestamp"], p["gx"], p["gy"], p["gz"]) for p in doc["data"]]
            if points != chunk.points:
                different.append(f"{s['id']} chunk {chunk.seq}")
            samples += len(points)
            arrivals.append(first_seen[topic])
        if arrivals != sorted(arrivals):
            out_of_order.append(s["id"])
    return [
        (not missing and not different,
         f"the subscriber got every stored chunk with its samples: {samples} samples, {repeated} chunk resends, "
         f"{pending} chunks still pending" + rel.examples(missing + different)),
        (not out_of_order, "each session's chunks first arrived in order" + rel.examples(out_of_order)),
    ]
