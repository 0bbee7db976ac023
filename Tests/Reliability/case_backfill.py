"""backfill: link gaps filled from the sensor's own log (`sensors[].backfill`).

One emulated sensor streams at 100 Hz with backfill on; the peer logs every sample it produces
(Tests/Peers/README.md, logging). The sensor walks out of reach (`drop_link` with `away_s`) for
5 s and 30 s (and 120 s in the full run); then it resets while out of reach (a new reset_uid,
its streams and loggers kept, so the log holds entries of both power cycles); then the gateway is
killed with SIGKILL while it downloads the log after an outage, and started again on the same
store. After a SIGTERM:
- no gap is left that the board's log covered (every `disconnected` gap filled);
- every stored sample equals the peer's waveform, none twice;
- inside every run of the board's counter, stream index - n is constant (each backfilled sample
  took the index the board gave it), and every stamp, streamed or backfilled, is within one
  sample period of when the board produced the sample;
- nothing was removed from the board's log that the store does not hold (the log's removals
  never exceed the entries downloaded by completed, committed backfills);
- the records' arithmetic and integrity hold.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time

import reliability as rel
from reliability import bench
from case_faults import _compare, _stored_samples

ODR = 100


def _backfilled(gw: rel.Gateway) -> int:
    for sensor in gw.status()["sensors"]:
        m = re.search(r"(\d+) samples backfilled", str(sensor.get("connection", "")))
        if m:
            return int(m.group(1))
    return 0


def _streaming(peer: bench.Peer) -> bool:
    s = peer.sensors()[0]
    return s["connected"] and s["notify_enabled"]


def _outage(peer: bench.Peer, gw: rel.Gateway, seconds: float, during=None) -> float:
    """Sensor 0 out of reach for `seconds`; returns how long until the gateway had backfilled after it."""
    before = _backfilled(gw)
    peer.call(cmd="drop_link", sensor=0, away_s=seconds)
    if during:
        gw.run_for(min(2.0, seconds / 2))
        during()
    gw.run_for(seconds)
    back = time.monotonic()
    while time.monotonic() - back < 60 + seconds:
        if _backfilled(gw) > before:
            return time.monotonic() - back
        gw.run_for(0.2)
    raise RuntimeError(f"nothing was backfilled within {60 + seconds:.0f} s of the sensor's return; see {gw.log_path}")


def run(ctx) -> list[tuple[bool | None, str]]:
    tmp = ctx.tmpdir("backfill")
    peer = bench.Peer(ctx.procs, 1, tmp, "backfill")
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=1, odr=ODR, commit_ms=200)
    with open(config) as f:
        tree = json.load(f)
    tree["sensors"][0]["backfill"] = True
    with open(config, "w") as f:
        json.dump(tree, f, indent=2)
    log = os.path.join(tmp, "gateway.log")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, log)
    gw.wait_admin()
    rel.wait_streaming(peer, gw)
    gw.run_for(3)
    out: list[tuple[bool | None, str]] = []
    timings = []
    for seconds in [5, 30] + ([] if ctx.quick else [120]):
        timings.append(f"{seconds} s: {_outage(peer, gw, seconds):.1f} s")
        gw.run_for(2)
    timings.append(f"reset while away: {_outage(peer, gw, 6, during=lambda: peer.call(cmd='restart', sensor=0, keep_state=True)):.1f} s")
    gw.run_for(2)

    # Killed while downloading: a slow readout, SIGKILL once it runs.
    peer.call(cmd="log_readout_rate", sensor=0, notifications_per_s=150)
    peer.call(cmd="drop_link", sensor=0, away_s=10)
    gw.run_for(10)
    deadline = time.monotonic() + 60
    while peer.call(cmd="log_status", sensor=0)["log"].get("readout", {}).get("state") != "running":
        if time.monotonic() > deadline:
            raise RuntimeError(f"no log readout started after the outage; see {gw.log_path}")
        gw.run_for(0.1)
    gw.run_for(1)
    log_before_kill = peer.call(cmd="log_status", sensor=0)["log"]
    gw.kill()
    peer.call(cmd="log_readout_rate", sensor=0, notifications_per_s=0)
    out.append((log_before_kill["entries_removed"] <= log_before_kill["entries_downloaded"],
                f"killed during a download ({log_before_kill['readout']['sent']} of {log_before_kill['readout']['n']} entries sent): "
                f"nothing removed from the board's log that was not downloaded first"))
    gw2 = rel.Gateway(ctx.procs, ctx.gateway, config, log)
    gw2.wait_admin()
    back = time.monotonic()
    while _backfilled(gw2) == 0 and time.monotonic() - back < 90:
        gw2.run_for(0.2)
    timings.append(f"after the restart: {time.monotonic() - back:.1f} s")
    gw2.run_for(3)
    code, _seconds = gw2.terminate()
    out.append((code == 0, f"SIGTERM: exit {code}"))

    path = rel.store_path(os.path.join(tmp, "data"))
    db = sqlite3.connect(path)
    gaps = [g for (text,) in db.execute("SELECT gaps FROM session") for g in json.loads(text or "[]")]
    filled_points = sum(1 for (body,) in db.execute("SELECT body FROM document WHERE collection = 'realtime_data'")
                        for p in json.loads(body)["data"] if p.get("backfilled"))
    db.close()
    left = [g for g in gaps if g["reason"].startswith("disconnected") or g["reason"] == "board reset"]
    out.append((not left, f"outages {', '.join(timings)}: no gap left that the log covered; {filled_points} points backfilled"
                + (f" -- left: {[(g['reason'], g['missing']) for g in left]}" if left else "")))
    sensor = peer.sensors()[0]
    stored = _stored_samples(path)
    out += _compare(sensor["address"][:17].upper(), stored.get(sensor["address"][:17].upper(), []), sensor["gyro_runs"])
    out += rel.invariants(path, odr=ODR)
    out.append(rel.rss_check([gw, gw2]))
    return out
