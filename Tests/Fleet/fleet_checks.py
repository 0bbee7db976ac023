"""The fleet test's checks of what the gateways stored, read from every gateway's store
(`gyrogate store dump`) together: a session that crossed gateways has its chunks in several."""

from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Reliability"))
import reliability as rel  # noqa: E402
import case_faults  # noqa: E402  (the comparison with the board's own record)


def fleet_chunks(stores: list) -> list:
    """Every chunk of the fleet once. A chunk the hand-off carried (it listed a gap a backfill
    could fill) is in the releasing gateway's store and the adopter's; the adopter's copy, where
    a backfill may have filled it since, is the later version: the one with the most points."""
    chunks: dict = {}
    for store in stores:
        for chunk in store.chunks:
            kept = chunks.get(chunk.id)
            if kept is None or (len(chunk.points), chunk.count) > (len(kept.points), kept.count):
                chunks[chunk.id] = chunk
    return list(chunks.values())


def fleet_store(stores: list):
    """The fleet's stores as one: each session once (its rows' last), each chunk once."""
    unique = {s["id"]: s for st in stores for s in st.sessions}
    return rel.Store(integrity="ok", sessions=sorted(unique.values(), key=lambda s: s["startMs"]),
                     records={}, chunks=fleet_chunks(stores))


def record_checks(stores: list, victim: int) -> list[tuple[bool, str]]:
    """Point 6 in the stores: a session that crossed gateways has a row in each; the last (the
    one still open or closed, not released) counts the samples all its chunks hold."""
    rows: dict[str, list[tuple[int, dict]]] = {}
    for g, store in enumerate(stores):
        for s in store.sessions:
            rows.setdefault(s["id"], []).append((g, s))
    bad_rows, bad_counts, crossed = [], [], 0
    fleet = fleet_store(stores)
    for sid, holders in rows.items():
        for g, s in holders:
            if s["expected"] - s["samples"] != rel.gaps_missing(s["gaps"]):
                bad_rows.append(f"gw-{g} {sid}: {s['expected']} - {s['samples']} != {rel.gaps_missing(s['gaps'])}")
        if len(holders) > 1:
            crossed += 1
        current = [(g, s) for g, s in holders if s["isOpen"] or s.get("endMs") is not None]
        if not current:
            continue  # released last and not taken (the killed gateway's)
        g, last = max(current, key=lambda held: held[1]["samples"])
        if last["isOpen"] and g == victim:
            continue  # left open by the kill: completed at its next start
        held = sum(c.count if c.pruned else len(c.points) for c in fleet.chunks_of(sid))
        if held != last["samples"]:
            bad_counts.append(f"{sid}: gw-{g}'s row says {last['samples']}, the fleet's chunks hold {held}")
    return [(not bad_rows, f"{len(rows)} sessions in the fleet's stores: expected - samples == sum(gaps.missing) in every row"
                        + rel.examples(bad_rows)),
            (not bad_counts, f"{len(rows)} sessions ({crossed} crossed gateways): each session's last row counts the samples"
                          " of its chunks in all the stores" + rel.examples(bad_counts))]


def board_checks(stores: list, peer_sensors: list[dict]) -> list[tuple[bool, str]]:
    """Each outage recorded exactly: every board's stored samples, its sessions' chunks from all
    the stores in order, against the peer's record of what the board produced (`gyro_runs`),
    with the reliability `faults` case's comparison (case_faults._compare): inside each run of
    the board's counter, the gaps of the session's stream index are the samples lost there; where
    a gateway started the board's stream again, the indexes skipped are the samples the board
    produced and never delivered (the end of the one run, the start of the next)."""
    stored = case_faults._stored_samples(fleet_store(stores))
    inside, restarts, failures = 0, 0, []
    for sensor in peer_sensors:
        device = sensor["address"][:17].upper()
        for ok, what in case_faults._compare(device, stored.get(device, []), sensor["gyro_runs"]):
            if "every stamp within" in what:
                continue  # the stamps are the VM's clock scenarios' to check; here the counts
            counted = re.search(r"inside (\d+) runs|at (\d+) restarts", what)
            if counted:
                inside += int(counted[1] or 0)
                restarts += int(counted[2] or 0)
            if not ok:
                failures.append(what)
                print(f"  {what}", flush=True)
    return [(not failures, f"each outage recorded exactly, by the boards' own record: {len(peer_sensors)} boards, inside"
                           f" {inside} runs of their counters every gap is the samples the board produced there and no"
                           f" gateway stored, and at {restarts} restarts of a board's stream by the next gateway the"
                           f" indexes skipped are the samples it produced and never delivered" + rel.examples(failures))]
