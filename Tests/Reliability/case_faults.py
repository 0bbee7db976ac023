"""faults: link drops, silence, board-side losses and board resets, against the peer's own record.

Two emulated sensors stream at 100 Hz. Through the peer's control channel: the link of each is
dropped several times, sensor 0 loses 9 samples on the board (`drop_samples`), falls silent for
2.5 s (longer than the watchdog) and resets (`restart` without keeping its streams, as real
firmware does); sensor 1 resets once. The gateway's status is polled every 100 ms throughout.
After a SIGTERM, the store is compared with what the peer says it produced (`gyro_runs`: per run of
the board's counter, samples generated and sent, and when sample 0 was due):
- inside every run, stream index - n is constant: every gap recorded there is exactly the samples
  lost there;
- at every restart of the counter, the indices skipped equal the samples the board produced and
  never delivered (the end of one run and the start of the next);
- every stored timestamp is within one sample period of when the board produced that sample;
- the status never showed more samples received than expected;
- and the store-wide invariants (integrity, records' arithmetic, each sample once).
"""

from __future__ import annotations

import os
import time

import reliability as rel
from reliability import bench

ODR = 100
SENSORS = 2


def _control(peer: bench.Peer, **cmd) -> None:
    reply = peer.call(**cmd)
    if not reply.get("ok"):
        raise RuntimeError(f"peer {cmd}: {reply}")


def _received_over_expected(gw: rel.Gateway) -> list[str]:
    """Sensors whose status shows more samples received than the board produced."""
    bad = []
    for sensor in gw.status()["sensors"]:
        received, expected = sensor.get("samplesReceived"), sensor.get("samplesExpected")
        if received is not None and expected is not None and received > expected:
            bad.append(f"{sensor['address']} {received}/{expected} samples")
    return bad


def _stored_samples(store: rel.Store) -> dict[str, list[tuple[int, int, float]]]:
    """Per device, (stream index, n, stamp in s) of every stored gyro sample, in index order.
    A chunk's samples take consecutive indices from its firstIndex, skipping the gaps inside it."""
    out: dict[str, list[tuple[int, int, float]]] = {}
    for session in store.sessions:
        samples = out.setdefault(session["device"].upper(), [])
        for chunk in store.chunks_of(session["id"]):
            index, gaps = chunk.first_index, sorted(chunk.gaps, key=lambda g: g["fromIndex"])
            for t, gx, _gy, _gz in chunk.points:
                while gaps and gaps[0]["fromIndex"] <= index:
                    index = max(index, gaps.pop(0)["toIndex"] + 1)
                samples.append((index, int(round(gx * rel.LSB_PER_DPS)), t / 1000))
                index += 1
    return out


def _runs_of(samples: list[tuple[int, int, float]]) -> list[list[tuple[int, int, float]]]:
    """Splits at every restart of the board's counter (n going down)."""
    runs: list[list] = []
    for s in samples:
        if not runs or s[1] <= runs[-1][-1][1]:
            runs.append([])
        runs[-1].append(s)
    return runs


def _compare(device: str, samples: list, peer_runs: list[dict]) -> list[tuple[bool, str]]:
    stored = _runs_of(samples)
    delivering = [r for r in peer_runs if r["sent"] > 0]
    if len(stored) != len(delivering):
        return [(False, f"{device}: {len(stored)} runs of the board's counter stored, the peer's runs that sent samples "
                        f"are {len(delivering)}")]
    inside, at_restarts, worst_ms, places = [], [], 0.0, 0
    for k, (run, truth) in enumerate(zip(stored, delivering)):
        offset = run[0][0] - run[0][1]
        for index, n, stamp in run:
            if index - n != offset:
                inside.append(f"index {index} carries n = {n}: {index - n - offset} off")
                offset = index - n
            worst_ms = max(worst_ms, abs(stamp - (truth["t0_wall"] + n / truth["odr"])) * 1000)
        # A new gateway process numbers a new session from 0: nothing links the two there.
        if k + 1 < len(stored) and stored[k + 1][0][0] > run[-1][0]:
            places += 1
            between = peer_runs[peer_runs.index(truth) + 1:peer_runs.index(delivering[k + 1])]
            lost = (truth["generated"] - 1 - run[-1][1]) + sum(r["generated"] for r in between) + stored[k + 1][0][1]
            recorded = stored[k + 1][0][0] - run[-1][0] - 1
            if lost != recorded:
                at_restarts.append(f"after index {run[-1][0]}: {recorded} recorded, the board lost {lost}")
    first = stored[0][0] if stored else None
    return [
        (not inside and first is not None and first[0] == first[1],
         f"{device}: inside {len(stored)} runs of the board's counter, every gap is what the board lost there"
         + (f" -- {inside[0]}" if inside else "")),
        (not at_restarts, f"{device}: at {places} restarts of the counter, the gap is what the board lost"
         + (f" -- {at_restarts[0]}" if at_restarts else "")),
        (worst_ms <= 1000 / ODR, f"{device}: every stamp within one period of the board's production time (worst {worst_ms:.2f} ms)"),
    ]


def run(ctx) -> list[tuple[bool | None, str]]:
    tmp = ctx.tmpdir("faults")
    drops = 3 if ctx.quick else 10
    peer = bench.Peer(ctx.procs, SENSORS, tmp, "faults")
    config = rel.write_config(tmp, peer.hci, ctx.broker_port, sensors=SENSORS, odr=ODR, commit_ms=200)
    gw = rel.Gateway(ctx.procs, ctx.gateway, config, os.path.join(tmp, "gateway.log"))
    gw.wait_admin()
    rel.wait_streaming(peer, gw)
    over: list[str] = []
    polls = 0

    def wait(seconds: float) -> None:
        nonlocal polls
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            over.extend(_received_over_expected(gw))
            polls += 1
            gw.run_for(0.1)

    wait(2)
    for i in range(drops):
        _control(peer, cmd="drop_link", sensor=i % SENSORS)
        wait(2)
    _control(peer, cmd="drop_samples", sensor=0, count=9)
    wait(1.5)
    _control(peer, cmd="silent", sensor=0, seconds=2.5)
    wait(5)
    for sensor in range(SENSORS):
        _control(peer, cmd="restart", sensor=sensor, keep_state=False)
        wait(3)
    rel.wait_streaming(peer, gw, since=[s["samples_sent"] for s in peer.sensors()])
    wait(2)
    code, seconds = gw.terminate()
    out: list[tuple[bool | None, str]] = [(code == 0, f"SIGTERM: exit {code} after {seconds:.1f} s")]
    out.append((not over, f"{polls} status polls: received never above expected" + (f" -- {over[0]}" if over else "")))
    path = rel.store_path(os.path.join(tmp, "data"))
    stored = _stored_samples(rel.read_store(ctx.gateway, path))
    for sensor in peer.sensors():
        device = sensor["address"][:17].upper()
        out += _compare(device, stored.get(device, []), sensor["gyro_runs"])
    out += rel.invariants(ctx.gateway, path, odr=ODR)
    out.append(rel.rss_check([gw]))
    return out
