#!/usr/bin/env python3
"""Self-test of metawear_peer.py, using bumble itself as the HCI host over TCP.

Run:  .venv/bin/python Tests/Peers/selftest_peer.py [--sensors 2] [--verbose]
Exit status 0 when every check passes. The peer runs as a subprocess and is
always stopped (control "stop", then SIGTERM, then SIGKILL) before exiting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import signal
import struct
import sys
import time

from bumble import hci
from bumble.core import UUID, PhysicalTransport


import selftest_common as common
from selftest_common import (HERE, Board, Control, check, collect, contiguous, int16, make_host, parse_gyro_packed,
                             parse_gyro_unpacked, peer_cpu_seconds, results, scan)
from selftest_drift import phase_drift
from selftest_fleet import phase_fleet
from selftest_log import phase_log


async def phase_main(hci_port: int, ctl: Control, sensors: int) -> None:
    transport, device = await make_host(hci_port, "selftest-host")
    try:
        found = await scan(device, sensors)
        check(len(found) == sensors, f"scan found {len(found)}/{sensors} sensors: {sorted(found)}")
        check(all(name == "MetaWear" for _, name in found.values()), "advertised name MetaWear")
        addresses = sorted(found.values(), key=lambda item: str(item[0]))

        # sensor 1 (if any) becomes a MetaMotion S before connecting
        if sensors > 1:
            r = await ctl(cmd="set_model", sensor=1, model="MMS")
            check(r.get("ok") and r["model"] == "MMS", "set_model MMS on sensor 1")

        boards = []
        for i, (address, _) in enumerate(addresses):
            own = hci.OwnAddressType.PUBLIC if i == 0 else hci.OwnAddressType.RANDOM
            t0 = time.monotonic()
            conn = await device.connect(address, transport=PhysicalTransport.LE,
                                        own_address_type=own, timeout=5)
            check(True, f"connected to {address} with own address "
                        f"{'public' if own == hci.OwnAddressType.PUBLIC else 'random'} "
                        f"in {1000 * (time.monotonic() - t0):.0f} ms")
            board = Board(conn)
            await board.setup()
            boards.append(board)

        b0 = boards[0]
        # DIS
        for uuid, want in (("2A26", b"1.7.3"), ("2A24", b"5"), ("2A29", b"MbientLab Inc")):
            chars = await b0.peer.read_characteristics_by_uuid(UUID(uuid))
            check(chars and bytes(chars[0]) == want, f"DIS {uuid} = {want!r} (got {chars})")

        # module discovery (MMR)
        answers = {}
        for mod in ("01", "02", "03", "04", "0b", "11", "13", "14", "16", "19", "fe"):
            answers[mod] = (await b0.ask(mod + "80")).hex()
        check(answers["13"] == "13800001", f"gyro module info BMI160 {answers['13']}")
        check(answers["03"] == "03800101", f"acc module info {answers['03']}")
        check(answers["0b"] == "0b80000208802b0000", f"logging module info {answers['0b']}")
        check(answers["16"] == "1680" and answers["19"] == "1980", "absent modules answer [id,80]")
        check(answers["14"] == "14800000", "ambient light present (MetaMotion R)")
        tick = await b0.ask("0b84")
        check(len(tick) == 7, f"logging time 0b 84 -> {tick.hex()}")
        battery = await b0.ask("118c")
        check(battery.hex() == "118c633410", f"battery 11 8c -> {battery.hex()}")
        await b0.write("13032800")
        conf = await b0.ask("1383")
        check(conf.hex() == "13832800", f"gyro config read back {conf.hex()}")

        # stream 100 Hz unpacked, ~1 s
        b0.drain()
        for cmd in ("130501", "13020100", "130101"):
            await b0.write(cmd)
        values = await collect(b0, 1.0)
        samples = parse_gyro_unpacked(values)
        ok, first, gaps = contiguous(samples, 100.0, start=0)
        check(85 <= len(samples) <= 115, f"~100 samples in 1 s at 100 Hz: {len(samples)}")
        check(ok and gaps == 0, f"waveform/counter correct from n=0, gaps={gaps}")
        last_n = samples[-1][0] if samples else -1

        # drop_samples -> gap of exactly 5
        r = await ctl(cmd="drop_samples", sensor=0, count=5)
        values = await collect(b0, 0.3)
        samples = parse_gyro_unpacked(values)
        ns = [last_n] + [s[0] for s in samples]
        jumps = [b - a for a, b in zip(ns, ns[1:]) if b - a != 1]
        check(r.get("ok") and jumps == [6], f"drop_samples 5 -> one jump of 6 (got {jumps}, {r}, {ns[:3]}..{ns[-3:]})")

        # silent 0.3 s
        r = await ctl(cmd="silent", sensor=0, seconds=0.3)
        await asyncio.sleep(0.05)
        b0.drain()
        values = await collect(b0, 0.2)
        check(len(values) == 0, f"silent: no notifications ({len(values)})")
        values = await collect(b0, 0.4)
        check(len(values) > 10, f"notifications resume after silence ({len(values)})")

        # stop streaming
        for cmd in ("130100", "13020001", "130500"):
            await b0.write(cmd)
        await asyncio.sleep(0.1)
        b0.drain()
        values = await collect(b0, 0.2)
        check(len(values) == 0, "streaming stopped")

        # accelerometer (BMI160): 100 Hz, cos waveform on y
        await b0.write("03032803")
        b0.drain()
        for cmd in ("030401", "03020100", "030101"):
            await b0.write(cmd)
        values = await collect(b0, 0.5)
        for cmd in ("030100", "03020001", "030400"):
            await b0.write(cmd)
        acc = [struct.unpack("<hhh", v[2:8]) for v in values if v[:2] == b"\x03\x04"]
        acc_ok = bool(acc) and all(
            s == (int16(s[0]), round(10000 * math.cos(2 * math.pi * s[0] / 100)), int16(-s[0]))
            for s in acc) and [s[0] for s in acc] == list(range(len(acc)))
        check(35 <= len(acc) <= 60 and acc_ok, f"accelerometer 100 Hz stream ok ({len(acc)} samples)")
        await asyncio.sleep(0.1)
        b0.drain()

        # gyro through a time accounter: 09 03 <id> <tick u32> <x y z>, ticks on the log clock
        created = await b0.ask("09021305ffa0113103")
        pid = created[2] if len(created) == 3 else -1
        check(created[:2] == b"\x09\x02", f"accounter created: {created.hex()}")
        before = struct.unpack("<I", (await b0.ask("0b84"))[2:6])[0]
        for cmd in (f"0907{pid:02x}01", "090301", "13020100", "130101"):
            await b0.write(cmd)
        values = await collect(b0, 0.5)
        for cmd in ("130100", "13020001", "0908"):
            await b0.write(cmd)
        timed = [(struct.unpack("<I", v[3:7])[0], struct.unpack("<hhh", v[7:13]))
                 for v in values if v[:3] == bytes([0x09, 0x03, pid]) and len(v) == 13]
        ns = [t[1][0] for t in timed]
        spacing = [(b[0] - a[0]) * 48 / 32768 for a, b in zip(timed, timed[1:])]
        check(35 <= len(timed) <= 60 and ns == list(range(len(timed)))
              and all(0.0085 <= d <= 0.0115 for d in spacing) and before <= timed[0][0] <= before + 100,
              f"accounter output: {len(timed)} samples from n=0, ticks 10 ms apart (1 tick) after the clock read "
              f"({timed[:1]}, clock {before})")
        await asyncio.sleep(0.1)
        b0.drain()

        # The clock's answer made late (`delay_clock_reply`), as a link delivers it at a later
        # connection event (Bluetooth Core 5.4, Vol 6, Part B, 4.5.1): its tick is the one read when
        # the command came, so a host that stamps the reading at the answer, as MbientLab's SDK does
        # (logging.cpp: reference = host time at the answer - tick x 1.46 ms), carries that latency.
        await ctl(cmd="delay_clock_reply", sensor=0, delay_ms=80)
        asked = time.monotonic()
        late = struct.unpack("<I", (await b0.ask("0b84"))[2:6])[0]
        answered = time.monotonic()
        await ctl(cmd="delay_clock_reply", sensor=0, delay_ms=0)
        prompt = struct.unpack("<I", (await b0.ask("0b84"))[2:6])[0]
        waited = answered - asked
        check(waited >= 0.08 and (prompt - late) * 48 / 32768 >= 0.07,
              f"clock answer delayed {waited * 1000:.0f} ms carries the tick of the command "
              f"({(prompt - late) * 48 / 32768 * 1000:.0f} ms before the next prompt reading)")

        # 2 samples per notification: a packer chained to an accounter, 09 03 <id> <tick> <2 samples>
        packer = (await b0.ask("09021305ffa0100501"))[2]
        acc = (await b0.ask(f"09020903{packer:02x}a0113103"))[2]
        for cmd in (f"0907{acc:02x}01", "090301", "13020100", "130101"):
            await b0.write(cmd)
        values = await collect(b0, 0.5)
        for cmd in ("130100", "13020001", "0908"):
            await b0.write(cmd)
        pairs = [(struct.unpack("<I", v[3:7])[0], struct.unpack("<hhh", v[7:13])[0], struct.unpack("<hhh", v[13:19])[0])
                 for v in values if v[:3] == bytes([0x09, 0x03, acc]) and len(v) == 19]
        spacing = [(b[0] - a[0]) * 48 / 32768 for a, b in zip(pairs, pairs[1:])]
        check(18 <= len(pairs) <= 30 and [p[1] for p in pairs] == list(range(0, 2 * len(pairs), 2))
              and all(p[2] == p[1] + 1 for p in pairs) and all(0.0185 <= d <= 0.0215 for d in spacing),
              f"packer(2) + accounter: {len(pairs)} notifications of 2 consecutive samples, ticks 20 ms apart")
        await asyncio.sleep(0.1)
        b0.drain()

        # button
        await b0.write("010101")
        await asyncio.sleep(0.05)
        r = await ctl(cmd="press_button", sensor=0, hold_ms=50)
        values = await collect(b0, 0.3)
        check([v.hex() for v in values] == ["010101", "010100"], f"button press/release {[v.hex() for v in values]}")

        # connection parameter update: control and board command 11 09
        r = await ctl(cmd="conn_param_update", sensor=0, min=6, max=6, latency=0, timeout=600)
        check(r.get("ok") and r["request"]["result"] == "accepted", f"conn_param_update accepted: {r}")
        await b0.write("110906000600000058020000")
        await asyncio.sleep(0.3)
        st = await ctl(cmd="status")
        reqs = st["sensors"][0]["conn_param_requests"]
        check(reqs and reqs[-1]["source"] == "board 11 09" and reqs[-1]["result"] == "accepted",
              f"11 09 triggered an accepted L2CAP update: {reqs[-1] if reqs else None}")

        # fastest setting: 3200 Hz unpacked, measure rate
        b0.drain()
        await b0.write("13032d00")
        for cmd in ("130501", "13020100", "130101"):
            await b0.write(cmd)
        await asyncio.sleep(0.3)
        b0.drain()
        # Up to three windows of 2 s: a host busy with something else (CI's other work) can hold
        # the peer or this client back for part of one; one whole window at the rate shows the
        # peer keeps it, and every sample of all of them must be there, in order.
        values, rates, cpu = [], [], 0.0
        for _ in range(3):
            t = time.monotonic()
            cpu0 = peer_cpu_seconds()
            window = await collect(b0, 2.0)
            rates.append(len(window) / (time.monotonic() - t))
            cpu = (peer_cpu_seconds() - cpu0) / (time.monotonic() - t)
            values += window
            if rates[-1] > 2900:
                break
        rate = max(rates)
        print(f"INFO  peer CPU while streaming 3200 Hz unpacked: {100 * cpu:.0f} % of one core", flush=True)
        samples = parse_gyro_unpacked(values)
        ok, first, gaps = contiguous(samples, 3200.0)
        check(rate > 2900 and gaps == 0 and ok,
              f"3200 Hz unpacked: {rate:.0f} notifications/s (windows of 2 s: {', '.join(f'{r:.0f}' for r in rates)}),"
              f" gaps={gaps}, waveform ok={ok}")
        for cmd in ("130100", "13020001", "130500"):
            await b0.write(cmd)
        results_rate = {"unpacked_3200": rate}

        if len(boards) > 1:
            b1 = boards[1]
            info = (await b1.ask("1380")).hex()
            check(info == "13800100", f"MMS gyro module info BMI270 {info}")
            model = await b1.peer.read_characteristics_by_uuid(UUID("2A24"))
            check(model and bytes(model[0]) == b"8", f"MMS model number {model}")
            # packed BMI270 at 3200 Hz
            await b1.write("13032d00")
            b1.drain()
            for cmd in ("130501", "13020100", "130101"):
                await b1.write(cmd)
            await asyncio.sleep(0.3)
            b1.drain()
            t = time.monotonic()
            values = await collect(b1, 2.0)
            prate = len(values) / (time.monotonic() - t)
            samples = parse_gyro_packed(values, 0x05)
            ok, first, gaps = contiguous(samples, 3200.0)
            check(prate > 1000 and gaps == 0 and ok,
                  f"3200 Hz packed (BMI270 reg 05): {prate:.0f} notifications/s "
                  f"= {3 * prate:.0f} samples/s, gaps={gaps}")
            for cmd in ("130100", "13020001", "130500"):
                await b1.write(cmd)
            results_rate["packed_3200"] = prate

        # drop_link from the peripheral: the central sees reason 0x13
        r = await ctl(cmd="drop_link", sensor=0)
        reason = await asyncio.wait_for(b0.disconnected, 3)
        check(reason == 0x13, f"drop_link observed, reason 0x{int(reason):02x}")
        st = await ctl(cmd="status")
        s0 = st["sensors"][0]
        check(not s0["connected"], "status shows sensor 0 disconnected")
        check(s0["commands_received"] > 10 and "130501" in s0["commands"],
              f"commands recorded ({s0['commands_received']})")
        # it re-advertises and the board state survives
        found = await scan(device, 1)
        check(str(addresses[0][0]) in found, f"sensor 0 advertises again after drop_link {sorted(found)}")
        print(f"RATE {json.dumps(results_rate)}", flush=True)

        for board in boards[1:]:
            await board.connection.disconnect()
    finally:
        await transport.close()


async def read_event(reader, timeout=2.0) -> bytes:
    head = await asyncio.wait_for(reader.readexactly(3), timeout)
    if head[0] != 0x04:
        raise ValueError(f"expected an event, got {head.hex()}")
    return head + await asyncio.wait_for(reader.readexactly(head[2]), timeout)


async def phase_raw(hci_port: int, scan_reports: str) -> None:
    """Raw H4 over a socket, no bumble: framing, unknown commands, one client only."""
    reader, writer = await asyncio.open_connection("127.0.0.1", hci_port)
    try:
        writer.write(bytes.fromhex("01030c"))          # Reset, split across writes
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(bytes.fromhex("00"))
        ev = await read_event(reader)
        check(ev.hex() == "040e0401030c00", f"raw Reset (split H4 packet) -> {ev.hex()}")
        writer.write(bytes.fromhex("0101fc00" "0102200" "0"))   # vendor cmd + LE Read Buffer Size
        ev1, ev2 = await read_event(reader), await read_event(reader)
        check(ev1.hex() == "040f04010101fc", f"unknown opcode -> Command Status 0x01 ({ev1.hex()})")
        check(ev2.hex() == "040e07010220001b0040" , f"LE Read Buffer Size -> {ev2.hex()}")
        writer.write(bytes.fromhex("011d04024000"))   # Read Remote Version, bad handle
        ev = await read_event(reader)
        check(ev.hex() == "040f04020" "11d04", f"Read Remote Version on unknown handle -> {ev.hex()}")
        # legacy scan with duplicate filtering: one LE Advertising Report per sensor
        writer.write(bytes.fromhex("010b2007" "00" "1000" "1000" "00" "00"))
        ev = await read_event(reader)
        check(ev.hex() == "040e04010b2000", f"LE Set Scan Parameters -> {ev.hex()}")
        writer.write(bytes.fromhex("010c2002" "0101"))
        ev = await read_event(reader)
        check(ev.hex() == "040e04010c2000", f"LE Set Scan Enable -> {ev.hex()}")
        reports, subevents = {}, set()
        end = time.monotonic() + 0.6
        while (left := end - time.monotonic()) > 0:
            try:
                ev = await read_event(reader, left)
            except asyncio.TimeoutError:
                break
            if ev[1] == 0x3E:
                subevents.add(ev[3])
                if ev[3] == 0x02:
                    address = ev[7:13][::-1].hex(":")
                    reports[address] = reports.get(address, 0) + 1
                    event_type = ev[5]
        writer.write(bytes.fromhex("010c2002" "0000"))
        if scan_reports == "spec":
            check(subevents == {0x02} and event_type == 0x00 and len(reports) >= 1
                  and set(reports.values()) == {1},
                  f"legacy scan: only legacy ADV_IND reports, no duplicates ({reports})")
        while True:  # skip to the scan-disable Command Complete
            ev = await read_event(reader)
            if ev[1] == 0x0E:
                break
        r2, w2 = await asyncio.open_connection("127.0.0.1", hci_port)
        data = await asyncio.wait_for(r2.read(10), 2)
        check(data == b"", "second HCI client is refused while one is connected")
        w2.close()
    finally:
        writer.close()
    await asyncio.sleep(0.1)


async def phase_acl(hci_port: int, ctl: Control) -> None:
    r = await ctl(cmd="acl_buffer", size=27, credits=2, completion_delay_ms=20)
    check(r.get("ok"), f"acl_buffer 27/2/20ms: {r}")
    await ctl(cmd="set_dis", sensor=0, field="manufacturer",
              value="MbientLab Inc - a deliberately long manufacturer string for blob reads")
    transport, device = await make_host(hci_port, "selftest-host2")
    try:
        queue = device.host.le_acl_packet_queue
        check(queue.max_packet_size == 27 and queue.max_in_flight == 2,
              f"host read LE buffer 27 x 2 (got {queue.max_packet_size} x {queue.max_in_flight})")
        # Sensor 0, which the commands above configured: the first advertiser heard may be another
        # one (on a busy host the order varies; then every check below reads the wrong board).
        want = (await ctl(cmd="status"))["sensors"][0]["address"]
        found = await scan(device, 1, want=want)
        check(want in found, f"sensor 0 ({want}) heard: {sorted(found)}")
        address = found.get(want, next(iter(found.values()), (None,)))[0]
        conn = await device.connect(address, transport=PhysicalTransport.LE,
                                    own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
        board = Board(conn)
        t0 = time.monotonic()
        await board.setup()
        check(True, f"GATT discovery with 27/2/20 ms took {1000 * (time.monotonic() - t0):.0f} ms")
        long_value = b"MbientLab Inc - a deliberately long manufacturer string for blob reads"
        services = await board.peer.discover_services([UUID("180A")])
        await services[0].discover_characteristics()
        manuf = services[0].get_characteristics_by_uuid(UUID("2A29"))[0]
        value = await manuf.read_value()
        check(bytes(value) == long_value, f"long read (MTU 23, read blob) ok: {len(value)} bytes")
        mtu = await board.peer.request_mtu(185)
        before = (await ctl(cmd="status"))["controller"]["acl_to_host"]
        value = await manuf.read_value()
        after = (await ctl(cmd="status"))["controller"]["acl_to_host"]
        check(bytes(value) == long_value and after - before >= 3,
              f"MTU {mtu}: read of {len(value)} bytes arrived in {after - before} ACL fragments")
        # module discovery through the slow path still works
        info = (await board.ask("1380")).hex()
        check(info == "13800001", "module discovery with 2 credits and 20 ms completion delay")
        st = (await ctl(cmd="status"))["controller"]
        check(st["overruns"] == 0 and st["max_outstanding_seen"] <= 2,
              f"well-behaved host: overruns={st['overruns']}, max outstanding={st['max_outstanding_seen']}")
        # misbehave on purpose: let bumble's host ignore the credits
        queue.max_in_flight = 8
        for _ in range(6):
            await board.write("0280")
        await asyncio.sleep(0.2)
        st = await ctl(cmd="status")
        check(st["controller"]["overruns"] > 0 and st["sensors"][0]["buffer_overruns"] > 0,
              f"credit overrun detected: {st['controller']['overruns']} "
              f"({st['controller']['overrun_records'][:1]})")
        queue.max_in_flight = 2
        # slow discovery
        await ctl(cmd="slow_discovery", sensor=0, delay_ms=300)
        t0 = time.monotonic()
        info = (await board.ask("0380")).hex()
        dt = time.monotonic() - t0
        check(0.28 <= dt < 1.0 and info == "03800101", f"slow_discovery 300 ms -> answered in {dt * 1000:.0f} ms")
        await ctl(cmd="slow_discovery", sensor=0, delay_ms=0)
        # restart keeps streaming config: after reconnect the board streams at once
        await board.write("13032800")
        for cmd in ("130501", "13020100", "130101"):
            await board.write(cmd)
        await asyncio.sleep(0.2)
        r = await ctl(cmd="restart", sensor=0)
        reason = await asyncio.wait_for(board.disconnected, 3)
        check(reason == 0x08 and r["reset_uid"] == 1, f"restart: link lost (0x{int(reason):02x}), reset_uid {r['reset_uid']}")
        conn = await device.connect(address, transport=PhysicalTransport.LE,
                                    own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
        board = Board(conn)
        await board.setup()
        values = await collect(board, 0.5)
        samples = parse_gyro_unpacked(values)
        check(len(samples) > 20, f"stale streaming continues after restart+reconnect ({len(samples)} samples, n from {samples[0][0] if samples else None})")
        for cmd in ("130100", "13020001", "130500"):
            await board.write(cmd)
        tick = await board.ask("0b84")
        check(tick[6] == 1, f"0b 84 reports reset_uid 1 ({tick.hex()})")
    finally:
        await transport.close()
    await asyncio.sleep(0.2)
    st = await ctl(cmd="status")
    check(not st["controller"]["hci_client_connected"] and not st["sensors"][0]["connected"],
          "closing the HCI socket drops the links (quirk 5 handled)")


# -- logging (module 0x0b) ------------------------------------------------------------


async def main_async(args) -> int:
    cmd = [sys.executable, os.path.join(HERE, "metawear_peer.py"), "--exit-with-parent", "--sensors", str(args.sensors),
           "--adv-address", args.adv_address, "--scan-reports", args.scan_reports]
    if args.sensors > 1:
        cmd += ["--drift-ppm", "1=-20"]     # the MMS board drifts like a real one all along
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    common.PEER_PID = proc.pid  # peer_cpu_seconds reads it there
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        check(line.startswith("READY hci="), f"peer ready: {line}")
        fields = dict(part.split("=") for part in line.split()[1:])
        hci_port, control_port = int(fields["hci"]), int(fields["control"])
        ctl = Control(control_port)
        await ctl.open()
        bad = await ctl(cmd="nonsense")
        check(bad == {"ok": False, "error": "ValueError: no sensor 0" } or bad.get("ok") is False,
              f"unknown command rejected: {bad}")
        await asyncio.wait_for(phase_main(hci_port, ctl, args.sensors), 60)
        await asyncio.wait_for(phase_raw(hci_port, args.scan_reports), 20)
        await asyncio.wait_for(phase_acl(hci_port, ctl), 60)
        await asyncio.wait_for(phase_log(hci_port, ctl, args.sensors), 90)
        await asyncio.wait_for(phase_drift(hci_port, ctl, args.sensors), 60)
        await asyncio.wait_for(phase_fleet(), 60)
        r = await ctl(cmd="stop")
        check(r.get("ok"), "stop acknowledged")
        ctl.close()
        rc = await asyncio.wait_for(proc.wait(), 10)
        check(rc == 0, f"peer exited cleanly (rc={rc})")
    except Exception as error:
        check(False, f"exception: {type(error).__name__}: {error}")
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
    failed = [what for ok, what in results if not ok]
    print(f"{len(results) - len(failed)}/{len(results)} checks passed", flush=True)
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=2)
    parser.add_argument("--adv-address", choices=["public", "random"], default="public")
    parser.add_argument("--scan-reports", choices=["spec", "bumble"], default="spec")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
