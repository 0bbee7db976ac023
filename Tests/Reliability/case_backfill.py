"""backfill: link gaps and crash holes filled from the sensors' own logs (`sensors[].backfill`).

Two emulated sensors at 100 Hz with backfill on: a MetaMotion R (logging revision 2, flash
pages confirmed with `0b 0e`) and a MetaMotion S (revision 3: the newest entries wait in a RAM
page until a flush with logging stopped). Their u32 log ticks start close to the wrap, so it falls
inside the second outage. The peer logs every sample it produces (Tests/Peers/README.md). In
order, for both sensors at once:
- out of reach for 5 s, then 30 s across the tick's wrap (and 120 s in the full run);
- 20 s out of reach with a board reset after 10 s (`restart` without state, as real firmware:
  loggers and streams gone, the entries kept under the old reset_uid);
- the gateway SIGKILLed while it downloads after a 10 s outage, started again on the same store;
- the gateway SIGKILLed while streaming (20 times at random moments in the full run), started again.
After a SIGTERM, per sensor:
- every sample the board logged into its flash inside the sessions is stored, once, with the
  waveform's value (`gyro_runs` inside every run of the board's counter: stream index - n constant,
  and no gap left but what never reached the flash: a MetaMotion S RAM page lost to the reset);
- every stamp, streamed or backfilled, within one sample period of when the board produced it;
- no chunk document holds more than `capture.chunkSize` points;
- nothing was removed from a board's log that the store does not hold;
- the records' arithmetic (`expected - samples == sum of gaps`) and integrity hold.
"""

from __future__ import annotations

import json
import os
import time

import reliability as rel
from reliability import bench
from case_faults import _compare, _stored_samples

ODR = 100
SENSORS = 2
CHUNK = 1000
TICK_S = 48 / 32768
WRAP = 1 << 32


def _backfilled(gw: rel.Gateway) -> list[int]:
    """Samples backfilled so far, per sensor."""
    return [int(sensor.get("backfilledSamples") or 0) for sensor in sorted(gw.status()["sensors"], key=lambda s: s["address"])]


def _wait_backfilled(gw: rel.Gateway, before: list[int], limit: float) -> float:
    """Waits until every sensor backfilled more than `before`; returns how long that took."""
    back = time.monotonic()
    while time.monotonic() - back < limit:
        now = _backfilled(gw)
        if len(now) == len(before) and all(a > b for a, b in zip(now, before)):
            return time.monotonic() - back
        gw.run_for(0.2)
    raise RuntimeError(f"not every sensor backfilled within {limit:.0f} s of their return; see {gw.log_path}")


def _outage(peer: bench.Peer, gw: rel.Gateway, seconds: float, during=None) -> float:
    """Both sensors out of reach for `seconds` (`during` runs halfway); returns how long until
    both had backfilled after it."""
    before = _backfilled(gw)
    for i in range(SENSORS):
        peer.call(cmd="drop_link", sensor=i, away_s=seconds)
    if during:
        gw.run_for(seconds / 2)
        during()
        gw.run_for(seconds / 2)
    else:
        gw.run_for(seconds)
    return _wait_backfilled(gw, [0] * SENSORS if before is None else before, 60 + seconds)


def _reset_both(peer: bench.Peer) -> None:
    for i in range(SENSORS):
        peer.call(cmd="restart", sensor=i, keep_state=False)


def _log_statuses(peer: bench.Peer) -> list[dict]:
    return [peer.call(cmd="log_status", sensor=i)["log"] for i in range(SENSORS)]


def run(ctx) -> list[tuple[bool | None, str]]:
    tmp = ctx.tmpdir("backfill")
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "backfill")
    peer.call(cmd="set_model", sensor=1, model="MMS")
    # The wrap 60 s from now: after the gateway streams and the first outage, inside the second.
    for i in range(SENSORS):
        peer.call(cmd="set_tick", sensor=i, tick=WRAP - round(60 / TICK_S))
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=200, chunk_size=CHUNK)
    with open(config) as f:
        tree = json.load(f)
    for sensor in tree["sensors"]:
        sensor["backfill"] = True
    with open(config, "w") as f:
        json.dump(tree, f, indent=2)
    log = os.path.join(tmp, "gateway.log")
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, log)
    gateways = [gw]
    gw.wait_admin()
    rel.wait_streaming(peer, gw)
    gw.run_for(3)
    out: list[tuple[bool | None, str]] = []
    timings = [f"5 s: {_outage(peer, gw, 5):.1f} s"]
    gw.run_for(2)
    # The second outage starts ~10 s before the wrap.
    left = min((WRAP - s["tick"]) * TICK_S for s in peer.sensors())
    if left > 10:
        gw.run_for(left - 10)
    wrapped_before = [s["tick"] for s in peer.sensors()]
    timings.append(f"30 s across the tick's wrap: {_outage(peer, gw, 30):.1f} s")
    wrapped = all(s["tick"] < t for s, t in zip(peer.sensors(), wrapped_before))
    out.append((wrapped, f"both ticks wrapped during the 30 s outage ({wrapped_before} -> {[s['tick'] for s in peer.sensors()]})"))
    gw.run_for(2)
    if not ctx.quick:
        timings.append(f"120 s: {_outage(peer, gw, 120):.1f} s")
        gw.run_for(2)
    timings.append(f"20 s with a reset after 10 s: {_outage(peer, gw, 20, during=lambda: _reset_both(peer)):.1f} s")
    gw.run_for(2)

    # Killed while downloading: a slow readout, SIGKILL once both run.
    for i in range(SENSORS):
        peer.call(cmd="log_readout_rate", sensor=i, notifications_per_s=150)
        peer.call(cmd="drop_link", sensor=i, away_s=10)
    gw.run_for(10)
    deadline = time.monotonic() + 60
    while not all((s.get("readout") or {}).get("state") == "running" for s in _log_statuses(peer)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no log readout started after the outage; see {gw.log_path}")
        gw.run_for(0.1)
    gw.run_for(1)
    before_kill = _log_statuses(peer)
    gw.kill()
    for i in range(SENSORS):
        peer.call(cmd="log_readout_rate", sensor=i, notifications_per_s=2000)
    out.append((all(s["entries_removed"] <= s["entries_downloaded"] for s in before_kill),
                f"killed during downloads ({[s['readout']['sent'] for s in before_kill]} of "
                f"{[s['readout']['n'] for s in before_kill]} entries sent): nothing removed that was not downloaded first"))
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, log)
    gateways.append(gw)
    gw.wait_admin()
    timings.append(f"after the restart: {_wait_backfilled(gw, [0] * SENSORS, 90):.1f} s")
    gw.run_for(3)

    # Killed while streaming, at random moments; each restart continues the session and fills the hole.
    kills = 1 if ctx.quick else 20
    for k in range(kills):
        gw.run_for(ctx.rng.uniform(1.0, 6.0))
        gw.kill()
        gw = rel.Gateway(ctx.procs, ctx.gateway, config, log)
        gateways.append(gw)
        gw.wait_admin()
        rel.wait_streaming(peer, gw)
        if k == kills - 1:
            timings.append(f"after a kill while streaming: {_wait_backfilled(gw, [0] * SENSORS, 90):.1f} s")
    gw.run_for(3)
    code, _seconds = gw.terminate()
    out.append((code == 0, f"SIGTERM: exit {code}"))
    logs = _log_statuses(peer)

    path = rel.store_path(os.path.join(tmp, "data"))
    store = rel.read_store(ctx.gateway, path)
    sessions = [(s["device"], s["gaps"]) for s in store.sessions]
    over = [(c.id, c.count) for c in store.all_chunks if c.count > CHUNK]
    documents = store.chunk_documents()
    points = [(path_, len(data)) for path_, data, _filled in documents]
    filled_points = sum(filled for _path, _data, filled in documents)
    big = [p for p in points if p[1] > CHUNK]
    out.append((not over and not big, f"no chunk over chunkSize {CHUNK} ({len(points)} chunk documents, largest "
                                      f"{max((p[1] for p in points), default=0)} points)"))
    sensors = peer.sensors()
    for i, sensor in enumerate(sensors):
        device = sensor["address"][:17].upper()
        gaps = [g for d, gaps_ in sessions if d.upper() == device for g in gaps_
                if g["reason"] != "storeFull"]
        left = sum(g["missing"] for g in gaps)
        # The peer counts entries; a gyro sample is two (x/y and z), and one whose pair was split
        # by the reset is lost too.
        lost = (logs[i]["ram_page_lost"] + 1) // 2
        out.append((left <= lost, f"{sensor['model']} {device}: outages {', '.join(timings) if i == 0 else '(as above)'}: "
                                  f"{left} samples left in gaps, never in the board's flash {lost}"
                                  + (f" -- left: {[(g['reason'], g['missing']) for g in gaps][:5]}" if left > lost else "")))
        out += _compare(device, _stored_samples(store).get(device, []), sensor["gyro_runs"])
    out.append((filled_points > 0, f"{filled_points} points backfilled"))
    out += rel.invariants(ctx.gateway, path, odr=ODR)
    out.append(rel.rss_check(gateways))
    return out
