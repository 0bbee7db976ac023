"""broker_silent: the gateway's MQTT port accepts connections and never answers (no CONNACK).

A Python listener in a thread accepts and holds every connection without reading or writing.
The gateway abandons a connection attempt after 15 s without CONNACK, so the case runs past
that: capture goes on (samples committed, sessions open), the status reports the broker as
not connected with a reason, SIGTERM still ends the gateway within 10 s, and the store
invariants hold.
"""

from __future__ import annotations

import os
import socket
import threading

import reliability as rel
from reliability import bench

ODR, COMMIT_MS, SENSORS = 100, 200, 2


class SilentListener:
    """Accepts and holds connections; never sends a byte."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def run(ctx) -> list:
    seconds = 20 if ctx.quick else 45
    tmp = ctx.tmpdir("broker-silent")
    listener = SilentListener()
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "silent")
    config = rel.write_config(tmp, peer.hci, listener.port, sensors=SENSORS, odr=ODR, commit_ms=COMMIT_MS,
                              gateway_id="silent", user="silent")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
    try:
        rel.wait_streaming(peer, gw)
        first = gw.status()
        gw.run_for(seconds)
        last = gw.status()
        code, stop_seconds = gw.terminate(timeout=10)
    finally:
        peer.close(ctx.procs)
        listener.close()

    broker = last["broker"]
    grew = last["capture"]["committedSamples"] - first["capture"]["committedSamples"]
    open_sessions = [s["session"]["id"] for s in last["sensors"] if s.get("session")]
    checks = [
        (grew >= 0.8 * seconds * ODR * SENSORS,
         f"capture went on: {grew} samples committed in {seconds} s, {len(open_sessions)} sessions open"),
        (len(open_sessions) == SENSORS, f"a session open per sensor: {open_sessions}"),
        (broker["state"] != "connected" and bool(broker.get("detail")),
         f"the status reports the broker {broker['state']!r}: {broker.get('detail')} "
         f"({len(listener.held)} connections accepted by the silent listener)"),
        (code is not None and stop_seconds <= 10,
         f"SIGTERM ends the gateway in {stop_seconds:.2f} s (exit {code}; at most 10 s)"),
    ]
    checks += rel.invariants(ctx.gateway, rel.store_path(os.path.join(tmp, "data")), ODR)
    checks.append(rel.rss_check([gw]))
    return checks
