"""A fleet of gateways sharing boards (issue #42): gateway processes, each on its own
host-facing controller of one emulated peer (`metawear_peer.py --gateways N`), one mosquitto,
every gateway configured with the same boards and a `fleet` section.

Checks, each printed PASS/FAIL:
1. Exclusive capture: every board is held by one gateway; the others show it `heldElsewhere`
   with the holder named; no board was captured by two gateways (each gateway's sessions, read
   through `gyrogate sessions`/the admin socket, name disjoint boards).
2. A board that walks out of its holder's range (set_range) drops its link and is captured by
   a gateway that hears it, within a bound of one scan plus a connection.
3. A gateway SIGKILLed: the broker sends its last will and the others take its boards within
   the will's delay (1.5 x keepalive) plus one scan plus a connection.
4. Each gateway's status names the fleet: coordinated, the gateways, who should hold each board.
5. With --moves K: every --move-every seconds each board walks out of its holder's range into
   another's, K times, while a subscriber takes every chunk: each board is captured again within
   the bound after each move, a board is never streaming to two gateways, and no sample (board,
   timestamp) is in the chunks of two gateways.
6. Sessions across gateways (docs/fleet.md, "Sessions across gateways"): a board's open
   session continues at the gateway that captures it next, as the same records document for the
   same user; over MQTT each board has one records document through all its moves, listing every
   chunk published for it, and its samples between two gateways a `handed over` gap; across the
   fleet's stores (read with `gyrogate store dump`) every session's last row counts exactly the
   samples its chunks hold, wherever they are, and `expected - samples == sum(gaps)` in every row.
   With --backfill the gateways fill those gaps from the boards' logs, the adopting one also
   those an earlier gateway left (its link ended during the download; the hand-off carries the
   chunk that lists the gap): at the end of the moves no sample is missing from any record.
7. Each outage recorded exactly, against the emulated boards' own record (`gyro_runs`, as the
   reliability `faults` case does; fleet_checks.py): across the fleet's stores, inside every run
   of a board's counter each gap is the samples the board produced there and no gateway stored,
   and where the next gateway started the board's stream again the skipped indexes are the
   samples the board produced and never delivered.

Usage: fleet_test.py --gateway .build/debug/gyrogate [--gateways 3] [--sensors 6] [--moves 9 --move-every 20] [--backfill] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Reliability"))
import reliability as rel  # noqa: E402
from reliability import bench  # noqa: E402
import fleet_checks  # noqa: E402

KEEPALIVE_S = 5
SCAN_EVERY_S = 2
SCAN_FOR_MS = 700
# A connection and a MetaWear's initialisation on the emulated link, generously.
CONNECT_S = 6.0

results: list[tuple[bool, str]] = []


def check(ok: bool, what: str) -> None:
    results.append((ok, what))
    print(f"{'PASS' if ok else 'FAIL'} {what}", flush=True)


class FleetPeer:
    """metawear_peer.py with several host-facing controllers; its control channel."""

    def __init__(self, procs: bench.Processes, tmp: str, sensors: int, gateways: int):
        self.stderr = open(os.path.join(tmp, "peer.log"), "wb")
        self.proc = procs.start([sys.executable, bench.PEER, "--hci-port", "0", "--control-port", "0", "--sensors", str(sensors),
                                 "--gateways", str(gateways), "--exit-with-parent"], stdout=subprocess.PIPE, stderr=self.stderr)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode().split() if ready else []
        if not line or line[0] != "READY":
            raise RuntimeError(f"peer did not start (got {line!r})")
        ports = dict(p.split("=") for p in line[1:])
        self.hci_ports = [int(p) for p in ports["hci_ports"].split(",")]
        control = bench.Peer(procs, 0, tmp, "fleet", control=f"127.0.0.1:{ports['control']}")
        self.call = control.call

    def holders(self) -> list[int | None]:
        return [s["gateway"] for s in self.call(cmd="status")["sensors"]]

    def streaming_holders(self) -> list[int | None]:
        return [s["gateway"] if s["notify_enabled"] else None for s in self.call(cmd="status")["sensors"]]


def write_config(tmp: str, index: int, hci: int, mqtt_port: int, sensors: int, backfill: bool = False) -> str:
    folder = os.path.join(tmp, f"gw{index}")
    os.makedirs(folder, exist_ok=True)
    path = rel.write_config(folder, hci, mqtt_port, sensors=sensors, gateway_id=f"gw-{index}", user="fleet-user")
    with open(path) as f:
        config = json.load(f)
    config["fleet"] = {"keepAliveSeconds": KEEPALIVE_S, "scanEverySeconds": SCAN_EVERY_S, "scanForMs": SCAN_FOR_MS}
    for sensor in config["sensors"]:
        sensor["backfill"] = backfill
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def wait_for(condition, timeout: float, poll: float = 0.1):
    """Polls `condition` until it returns something truthy; returns (value, seconds) or (None, timeout)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        value = condition()
        if value:
            return value, time.monotonic() - started
        time.sleep(poll)
    return None, timeout


def sensor_states(gateway: rel.Gateway) -> dict[str, dict]:
    return {s["address"]: s for s in gateway.status()["sensors"]}


def captured_devices(gateway: rel.Gateway) -> set[str]:
    """Boards this gateway has a session of, through its admin socket."""
    sessions = rel.admin_get(gateway.socket_path, "/v1/sessions?range=all")
    items = sessions.get("sessions", sessions) if isinstance(sessions, dict) else sessions
    return {s["device"].upper() for s in items if s.get("samples", 0) > 0}


def moving_phase(peer: FleetPeer, gateways: list, addresses: list[str], args, mqtt_port: int) -> None:
    """Every board walks to the next gateway's range, args.moves times; see the module's point 5."""
    subscriber = bench.Subscriber(mqtt_port)
    slowest = 0.0
    missed = []
    both_since: dict[str, float] = {}  # board -> when two gateways first both said "streaming"
    longest_both = 0.0
    doubled_open = 0
    for move in range(args.moves):
        before = peer.holders()
        for i in range(args.sensors):
            home = ((before[i] if before[i] is not None else i) + 1) % args.gateways
            # The new home hears it loud, the one after it faintly; the old holder not at all.
            rssi = {str(home): -55}
            if args.gateways > 2:
                rssi[str((home + 1) % args.gateways)] = -85
            peer.call(cmd="set_range", sensor=i, rssi=rssi)
        started = time.monotonic()
        captured_at = None
        while time.monotonic() - started < args.move_every:
            now = time.monotonic()
            streaming = peer.streaming_holders()
            if captured_at is None and all(streaming[i] not in (None, before[i]) for i in range(args.sensors)):
                captured_at = now - started
            # What the gateways themselves say: two "streaming" for one board is a double capture.
            claimed: dict[str, int] = {}
            for gateway in gateways:
                if gateway.alive():
                    for address, sensor in sensor_states(gateway).items():
                        if sensor.get("state") == "streaming":
                            claimed[address] = claimed.get(address, 0) + 1
            for address in addresses:
                if claimed.get(address, 0) > 1:
                    both_since.setdefault(address, now)
                    longest_both = max(longest_both, now - both_since[address])
                else:
                    both_since.pop(address, None)
            time.sleep(0.1)
        opened = {a: sum(1 for g in gateways if g.alive() and sensor_states(g).get(a, {}).get("session")) for a in addresses}
        doubled_open = max(doubled_open, max(opened.values()))
        if captured_at is None:
            missed.append((move, peer.streaming_holders()))
        else:
            slowest = max(slowest, captured_at)
    bound = SCAN_EVERY_S + CONNECT_S + 10
    check(not missed, f"{args.moves} moves of {args.sensors} boards every {args.move_every:.0f} s: every board captured again after each,"
                      f" the slowest in {slowest:.1f} s (bound {bound:.0f} s){'; missed ' + str(missed) if missed else ''}")
    subscriber.wait_quiet(quiet=2.0, limit=20.0)
    messages = subscriber.take()
    subscriber.close()
    # Which gateway published a chunk is not in the document; a point published by two gateways
    # would be two chunks (different session ids) holding the same (board, timestamp).
    points: dict[tuple[str, float], str] = {}
    doubled = 0
    for _t, topic, payload in messages:
        if not topic.startswith("realtime_data/") or not payload:
            continue
        doc = json.loads(payload)
        device = str(doc.get("device", ""))[:17].upper()
        for point in doc.get("data", []):
            key = (device, round(float(point["timestamp"]), 3))
            if points.setdefault(key, topic) != topic:
                doubled += 1
    check(doubled == 0, f"no sample in the chunks of two sessions: {len(points)} points, {doubled} doubled")
    session_documents(messages, args)
    check(doubled_open <= 1, f"at the end of each move a board has at most one open session in the fleet (most seen: {doubled_open})")
    check(longest_both <= CONNECT_S, f"two gateways said streaming for one board for at most {longest_both:.1f} s"
                                     f" (one connection attempt: {CONNECT_S:.0f} s)")


def session_documents(messages, args) -> None:
    """Point 6 over MQTT: one records document per board through the moves, its last version
    listing every chunk published for it, the hand-overs its gaps, its arithmetic whole."""
    records, chunk_documents = rel.published(messages)
    chunks: dict[str, set[str]] = {}  # session id -> chunk ids published for it
    for chunk_id, doc in chunk_documents.items():
        chunks.setdefault(str(doc.get("record")), set()).add(chunk_id)
    per_board: dict[str, list[str]] = {}
    for sid, doc in records.items():
        per_board.setdefault(str(doc.get("device", "")).upper(), []).append(sid)
    several = {board: sids for board, sids in per_board.items() if len(sids) > 1}
    check(len(per_board) == args.sensors and not several,
          f"one records document per board through {args.moves} moves ({len(per_board)} boards; several: {several or 'none'})")
    unlisted, handed, bad = [], 0, []
    for sid, doc in records.items():
        listed = set(doc.get("gscope_data", [])) | set(doc.get("accel_data", []))
        if chunks.get(sid, set()) - listed:
            unlisted.append(f"{sid}: {len(chunks[sid] - listed)} of {len(chunks[sid])} chunks not in the record")
        handed += sum(1 for gap in doc.get("gaps", []) if gap.get("reason") == "handed over")
        if doc.get("expected", 0) - doc.get("samples", 0) != rel.gaps_missing(doc.get("gaps")):
            bad.append(f"{sid}: {doc.get('expected')} - {doc.get('samples')} != {rel.gaps_missing(doc.get('gaps'))}")
    check(not unlisted, f"each record lists every chunk published for it, whichever gateway published it" + rel.examples(unlisted))
    missing = sum(doc.get("expected", 0) - doc.get("samples", 0) for doc in records.values())
    if args.backfill:  # the gaps filled from the boards' logs by the gateway that adopted the session
        check(missing == 0, f"with backfill, no sample missing from any record after the moves ({handed} `handed over`"
                            f" gaps left, {missing} samples missing in all)")
    else:
        check(handed >= args.moves, f"the samples between two gateways are `handed over` gaps of the session ({handed} in all,"
                                    f" {missing} samples)")
    check(not bad, f"expected - samples == sum(gaps.missing) in every last records document" + rel.examples(bad))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", required=True, help="the gyrogate binary")
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--sensors", type=int, default=2)
    parser.add_argument("--moves", type=int, default=0, help="times every board walks to another gateway")
    parser.add_argument("--move-every", type=float, default=20.0, help="seconds between moves")
    parser.add_argument("--backfill", action="store_true", help="the boards' logs fill the samples between two gateways")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="gyrogate-fleet-")
    procs = bench.Processes()
    try:
        _broker, mqtt_port = bench.start_broker(procs, tmp)
        peer = FleetPeer(procs, tmp, args.sensors, args.gateways)
        addresses = [rel.address(i) for i in range(args.sensors)]
        # Each board is heard by every gateway, loudest at "its" gateway (i mod N).
        for i in range(args.sensors):
            peer.call(cmd="set_range", sensor=i, rssi={str(g): (-50 if g == i % args.gateways else -75) for g in range(args.gateways)})
        gateways = [rel.Gateway(procs, args.gateway, write_config(tmp, g, peer.hci_ports[g], mqtt_port, args.sensors, args.backfill),
                                os.path.join(tmp, f"gw{g}.log")) for g in range(args.gateways)]
        for gateway in gateways:
            gateway.wait_admin()

        # 1. Every board streaming, each to one gateway; the others leave it alone.
        everyone, seconds = wait_for(lambda: all(h is not None for h in peer.streaming_holders()), 60)
        check(bool(everyone), f"every board streams to a gateway ({seconds:.1f} s after start)")
        holders_seen: list[set[int]] = [set() for _ in addresses]
        for _ in range(30):  # 3 s of the steady state
            for i, holder in enumerate(peer.holders()):
                if holder is not None:
                    holders_seen[i].add(holder)
            time.sleep(0.1)
        check(all(len(seen) == 1 for seen in holders_seen), f"each board held by one gateway throughout: {holders_seen}")
        holders = peer.holders()
        waiting_ok = True
        for g, gateway in enumerate(gateways):
            states = sensor_states(gateway)
            for i, address in enumerate(addresses):
                sensor = states.get(address, {})
                expected = "streaming" if holders[i] == g else "heldElsewhere"
                if sensor.get("state") != expected or (expected == "heldElsewhere" and f"gw-{holders[i]}" not in (sensor.get("fleet") or "")):
                    waiting_ok = False
                    print(f"  gw-{g} {address}: state {sensor.get('state')}, fleet {sensor.get('fleet')!r} (held by gw-{holders[i]})")
        check(waiting_ok, "each gateway streams the boards it holds and shows the others heldElsewhere, naming the holder")
        fleet = gateways[0].status().get("fleet", {})
        check(fleet.get("coordinated") is True and len(fleet.get("gateways", [])) == args.gateways
              and all(fleet["sensors"][a]["owner"] == f"gw-{holders[i]}" for i, a in enumerate(addresses)),
              f"the status's fleet object: coordinated, {len(fleet.get('gateways', []))} gateways, each board's owner")

        cli = subprocess.run([args.gateway, "status", "--socket", gateways[0].socket_path], capture_output=True, text=True, timeout=30)
        fleet_line = next((line for line in cli.stdout.splitlines() if line.strip().startswith("fleet")), "")
        check(f"{args.gateways} of {args.gateways} gateways online" in fleet_line, f"`gyrogate status` names the fleet: {fleet_line.strip()!r}")

        # 2. Board 0 walks out of its holder's range, into another's.
        first = holders[0]
        target = (first + 1) % args.gateways
        session_before = (sensor_states(gateways[first]).get(addresses[0], {}).get("session") or {}).get("id")
        peer.call(cmd="set_range", sensor=0, rssi={str(target): -60})
        moved, seconds = wait_for(lambda: peer.streaming_holders()[0] == target, SCAN_EVERY_S + CONNECT_S + 10)
        check(bool(moved), f"board 0 out of gw-{first}'s range is captured by gw-{target} in {seconds:.1f} s"
                           f" (bound {SCAN_EVERY_S + CONNECT_S + 10:.0f} s)")
        def open_session(g: int, address: str):
            return (sensor_states(gateways[g]).get(address, {}).get("session") or {}).get("id")
        # Streaming there, not only adopted: the moves below begin at once, and a link that ends
        # while the adopter is still initialising the board is another case (docs/fleet.md).
        continued, seconds = wait_for(lambda: open_session(target, addresses[0]) == session_before
                                      and open_session(first, addresses[0]) is None
                                      and sensor_states(gateways[target]).get(addresses[0], {}).get("state") == "streaming", 15)
        check(bool(continued) and session_before is not None,
              f"gw-{target} continues board 0's session {session_before} and gw-{first} holds it open no more ({seconds:.1f} s):"
              f" one open session a board, at the gateway that captures it")
        for i in range(args.sensors):  # back in everyone's range, loudest at its gateway
            peer.call(cmd="set_range", sensor=i, rssi={str(g): (-50 if g == i % args.gateways else -75) for g in range(args.gateways)})

        if args.moves:
            moving_phase(peer, gateways, addresses, args, mqtt_port)

        # 3. The holder of board 1 is SIGKILLed.
        victim = peer.holders()[1]
        theirs = [i for i, h in enumerate(peer.holders()) if h == victim]
        gateways[victim].kill()
        bound = 1.5 * KEEPALIVE_S + SCAN_EVERY_S + CONNECT_S
        taken, seconds = wait_for(lambda: all(peer.streaming_holders()[i] not in (None, victim) for i in theirs), bound + 10)
        check(bool(taken), f"gw-{victim} killed: its boards {theirs} captured by the others in {seconds:.1f} s"
                           f" (the will's delay {1.5 * KEEPALIVE_S:.0f} s + one scan {SCAN_EVERY_S} s + connecting {CONNECT_S:.0f} s = {bound:.0f} s)")
        survivors = [g for g in range(args.gateways) if g != victim]
        statuses = {g: gateways[g].status().get("fleet", {}) for g in survivors}
        offline = all(any(r["gateway"] == f"gw-{victim}" and not r["online"] for r in s.get("gateways", [])) for s in statuses.values())
        check(offline, f"the survivors see gw-{victim} offline (its last will)")

        # No board captured by two gateways at once: sessions of a board on two gateways are
        # expected only for the boards that moved (0) or were handed on (theirs).
        moved_boards = {addresses[0].upper()} | {addresses[i].upper() for i in theirs}
        if args.moves:  # every board moved on purpose
            moved_boards = {a.upper() for a in addresses}
        per_gateway = {g: captured_devices(gateways[g]) for g in survivors}
        overlap = set()
        for a in survivors:
            for b in survivors:
                if a < b:
                    overlap |= (per_gateway[a] & per_gateway[b]) - moved_boards
        check(not overlap, f"no other board has sessions on two gateways ({sorted(overlap) or 'none'})")
        for g in survivors:
            gateways[g].terminate()
        # Every gateway's store, the killed one's too (its sessions still open: their rows are
        # completed at its next start, so only closed ones are summed): each session's arithmetic
        # (expected - samples == the sum of its gaps), every sample once and equal to the waveform.
        # A board's stream goes on from gateway to gateway (its sample number does not start
        # again), so the census that finds a sample stored twice walks the fleet's stores together.
        stores = []
        for g in range(args.gateways):
            store = rel.read_store(args.gateway, rel.store_path(os.path.join(tmp, f"gw{g}", "data")))
            stores.append(store)
            check(store.integrity == "ok", f"gw-{g}'s store: PRAGMA integrity_check: {store.integrity}")
        boards = peer.call(cmd="status")["sensors"]
        with open(os.path.join(tmp, "peer-status.json"), "w") as f:  # the boards' own record, kept with the stores
            json.dump(boards, f)
        for ok, what in fleet_checks.record_checks(stores, victim) + fleet_checks.board_checks(stores, boards):
            check(ok, what)
        # A session that crossed gateways has a row in each of their stores, and a chunk the
        # hand-off carried is in two: each walked once.
        census = rel.census(fleet_checks.fleet_store(stores), 100)
        check(census.duplicates == 0 and census.mismatches == 0 and census.backwards_time == 0,
              f"the fleet's stores together: {census.samples} samples in {census.streams} board streams, none stored twice"
              f" ({census.duplicates}), all the waveform's ({census.mismatches} not), times increasing per board"
              f" ({census.backwards_time} not)" + rel.examples(census.first_problems))
    except Exception as error:  # a harness failure is a failure, with its reason
        check(False, f"the fleet test ran to its end: {error!r}")
    finally:
        procs.stop_all()
        if args.keep or not all(ok for ok, _ in results):
            print(f"(files kept in {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    passed = sum(ok for ok, _ in results)
    print(f"fleet: {passed}/{len(results)} passed")
    return 0 if results and passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
