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
from bumble.device import Device, Peer
from bumble.transport import open_transport

HERE = os.path.dirname(os.path.abspath(__file__))
SERVICE = UUID("326a9000-85cb-9195-d9dd-464cfbbae75a")
CMD = UUID("326a9001-85cb-9195-d9dd-464cfbbae75a")
NOTIFY = UUID("326a9006-85cb-9195-d9dd-464cfbbae75a")

results: list[tuple[bool, str]] = []


def check(ok: bool, what: str) -> bool:
    results.append((bool(ok), what))
    print(f"{'PASS' if ok else 'FAIL'}  {what}", flush=True)
    return bool(ok)


PEER_PID = 0


def peer_cpu_seconds() -> float:
    """utime+stime of the peer process (Linux /proc), 0 if unavailable."""
    try:
        with open(f"/proc/{PEER_PID}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def int16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


def expected_gyro(n: int, odr: float) -> tuple[int, int, int]:
    return int16(n), round(10000 * math.sin(2 * math.pi * n / odr)), int16(-n)


class Control:
    def __init__(self, port: int):
        self.port = port

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def __call__(self, **request) -> dict:
        self.writer.write((json.dumps(request) + "\n").encode())
        await self.writer.drain()
        return json.loads(await asyncio.wait_for(self.reader.readline(), 15))

    def close(self):
        self.writer.close()


class Board:
    """Central-side view of one emulated MetaWear."""

    def __init__(self, connection):
        self.connection = connection
        self.peer = Peer(connection)
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        # When a list: every notification with its arrival (time.time()), kept even when `ask`
        # skips it, for checking arrivals against the peer's truth.
        self.stamps: list[tuple[float, bytes]] | None = None
        self.disconnected = asyncio.get_running_loop().create_future()
        connection.on("disconnection", self._on_disc)

    def _on_disc(self, reason):
        if not self.disconnected.done():
            self.disconnected.set_result(reason)

    async def setup(self):
        await self.peer.discover_services([SERVICE])
        services = self.peer.get_services_by_uuid(SERVICE)
        check(len(services) == 1, "MetaWear service discovered")
        await services[0].discover_characteristics()
        self.cmd = services[0].get_characteristics_by_uuid(CMD)[0]
        self.notify = services[0].get_characteristics_by_uuid(NOTIFY)[0]
        await self.peer.subscribe(self.notify, self._received)

    def _received(self, value) -> None:
        value = bytes(value)
        if self.stamps is not None:
            self.stamps.append((time.time(), value))
        self.queue.put_nowait(value)

    async def write(self, hexstr: str):
        await self.peer.write_value(self.cmd, bytes.fromhex(hexstr), with_response=False)

    async def ask(self, hexstr: str, header: bytes | None = None, timeout=2.0) -> bytes:
        await self.write(hexstr)
        want = header or bytes.fromhex(hexstr)[:2]
        while True:
            value = await asyncio.wait_for(self.queue.get(), timeout)
            if value[:len(want)] == want:
                return value

    def drain(self) -> list[bytes]:
        items = []
        while not self.queue.empty():
            items.append(self.queue.get_nowait())
        return items


async def collect(board: Board, seconds: float) -> list[bytes]:
    items = []
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            items.append(await asyncio.wait_for(board.queue.get(), left))
        except asyncio.TimeoutError:
            break
    return items


async def make_host(hci_port: int, name: str):
    transport = await open_transport(f"tcp-client:127.0.0.1:{hci_port}")
    device = Device.with_hci(name, hci.Address("F0:F0:F0:F0:F0:F0"), transport.source,
                             transport.sink)
    await device.power_on()
    return transport, device


async def scan(device: Device, count: int, seconds=3.0, want: str | None = None) -> dict:
    """MetaWear advertisers by address; done at `count` found (or when `want` is found)."""
    found = {}
    done = asyncio.Event()

    def on_adv(adv):
        data = adv.data
        uuids = data.get(data.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS) or []
        if SERVICE in uuids:
            found[str(adv.address)] = (adv.address, data.get(data.COMPLETE_LOCAL_NAME))
            if (want in found) if want else len(found) >= count:
                done.set()

    device.on("advertisement", on_adv)
    await device.start_scanning(filter_duplicates=False)
    try:
        await asyncio.wait_for(done.wait(), seconds)
    except asyncio.TimeoutError:
        pass
    await device.stop_scanning()
    device.remove_listener("advertisement", on_adv)
    return found


def parse_gyro_unpacked(values, reg=0x05):
    return [struct.unpack("<hhh", v[2:8]) for v in values if v[0] == 0x13 and v[1] == reg]


def parse_gyro_packed(values, reg):
    out = []
    for v in values:
        if v[0] == 0x13 and v[1] == reg and len(v) == 20:
            for i in range(3):
                out.append(struct.unpack_from("<hhh", v, 2 + 6 * i))
    return out


def contiguous(samples, odr, start=None) -> tuple[bool, int, int]:
    """Samples carry n in x; check waveform and contiguity. Returns (ok, first, gaps)."""
    if not samples:
        return False, -1, 0
    gaps = 0
    ok = True
    first = samples[0][0]
    prev = None
    for s in samples:
        n = s[0]
        if s != expected_gyro(n, odr):
            ok = False
        if prev is not None and n != prev + 1:
            gaps += 1
        prev = n
    if start is not None and first != start:
        ok = False
    return ok, first, gaps


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
        t = time.monotonic()
        cpu0 = peer_cpu_seconds()
        values = await collect(b0, 2.0)
        rate = len(values) / (time.monotonic() - t)
        cpu = (peer_cpu_seconds() - cpu0) / (time.monotonic() - t)
        print(f"INFO  peer CPU while streaming 3200 Hz unpacked: {100 * cpu:.0f} % of one core", flush=True)
        samples = parse_gyro_unpacked(values)
        ok, first, gaps = contiguous(samples, 3200.0)
        check(rate > 2900 and gaps == 0 and ok,
              f"3200 Hz unpacked: {rate:.0f} notifications/s, gaps={gaps}, waveform ok={ok}")
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
        found = await scan(device, 1)
        address = next(iter(found.values()))[0]
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

TICK_MS = 48 / 32768 * 1000  # 1.46484375 ms


def parse_log_entries(value: bytes) -> list[tuple[int, int, int, bytes]]:
    """0b 07 notification -> [(entry_id, reset_uid, tick, 4 data bytes)]."""
    return [(value[o] & 0x1F, value[o] >> 5, struct.unpack_from("<I", value, o + 1)[0],
             value[o + 5:o + 9]) for o in range(2, len(value), 9)]


def reassemble_gyro(entries, id_xy=0, id_z=1):
    """SDK-style re-assembly (one FIFO per id; either order): [(x, y, z, tick, uid)]."""
    fifo = {id_xy: [], id_z: []}
    out = []
    for entry in entries:
        if entry[0] not in fifo:
            continue
        fifo[entry[0]].append(entry)
        if fifo[id_xy] and fifo[id_z]:
            a, b = fifo[id_xy].pop(0), fifo[id_z].pop(0)
            x, y = struct.unpack("<hh", a[3])
            z = struct.unpack("<h", b[3][:2])[0]
            out.append((x, y, z, max(a[2], b[2]), a[1] if a[1] == b[1] else None))
    return out


async def download(board: Board, ctl: Control, n: int, every: int, hold_page: float = 0.0,
                   limit: int | None = None) -> dict:
    """0b 06 readout; answers every 0b 0d with 0b 0e (the first one after `hold_page` s).
    With `limit`, returns after that many 0b 07 notifications (readout left running)."""
    entries, progress, lengths, pages, after_page, others = [], [], [], 0, [], []
    split_before_page, stalled, waiting, page_seen = 0, None, None, False
    await board.write("0b06" + struct.pack("<II", n, every).hex())
    t0 = time.monotonic()
    while True:
        value = await asyncio.wait_for(board.queue.get(), 5)
        if value[:2] == b"\x0b\x07":
            entries += parse_log_entries(value)
            lengths.append(len(value))
            if page_seen:
                after_page.append(value[2] & 0x1F)
                page_seen = False
            if limit is not None and len(lengths) >= limit:
                break
        elif value[:2] == b"\x0b\x08":
            progress.append(struct.unpack("<I", value[2:6])[0])
            if progress[-1] == 0:
                break
        elif value == b"\x0b\x0d":
            pages += 1
            page_seen = True
            split_before_page += lengths[-1] == 11 if lengths else 0
            if hold_page and stalled is None:
                await asyncio.sleep(hold_page)
                waiting = (await ctl(cmd="log_status"))["log"]["readout"]["state"]
                held = board.drain()
                stalled = not any(v[:2] == b"\x0b\x07" for v in held)
                others += [v for v in held if v[:2] != b"\x0b\x07"]
            await board.write("0b0e")
        else:
            others.append(value)
    elapsed = time.monotonic() - t0 - hold_page * (stalled is not None)
    return {"entries": entries, "progress": progress, "lengths": lengths, "pages": pages,
            "after_page": after_page, "others": others,
            "split_before_page": split_before_page, "stalled": stalled, "waiting": waiting,
            "elapsed": elapsed, "rate": len(lengths) / elapsed if elapsed > 0 else 0.0}


def page_boundaries(first_seq: int, n: int) -> int:
    """Page ends a readout of n entries from first_seq pauses at (not the readout's end)."""
    return sum(1 for m in range(first_seq + 1, first_seq + n) if m % 512 == 0)


async def phase_log(hci_port: int, ctl: Control, sensors: int) -> None:
    await ctl(cmd="acl_buffer", size=27, credits=64, completion_delay_ms=0)
    await ctl(cmd="log_readout_rate", sensor=0, notifications_per_s=2000)
    transport, device = await make_host(hci_port, "selftest-host3")
    try:
        want = (await ctl(cmd="status"))["sensors"][0]["address"]
        found = await scan(device, 1, want=want)
        check(want in found, f"log: sensor 0 ({want}) found")
        address = found[want][0]

        async def connect() -> Board:
            conn = await device.connect(address, transport=PhysicalTransport.LE,
                                        own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
            b = Board(conn)
            await b.setup()
            return b

        async def log_count(b: Board) -> int:
            return struct.unpack("<I", (await b.ask("0b85"))[2:6])[0]

        async def log_status() -> dict:
            return (await ctl(cmd="log_status", sensor=0))["log"]

        board = await connect()
        uid = (await board.ask("0b84"))[6]
        await board.write("0b0a")
        await board.write("0b09ffffffff")
        check(await log_count(board) == 0, "log: 0b 0a + 0b 09 ffffffff -> 0b 85 00 00 00 00")

        # triggers: ids from 0, 8 slots, 9th refused (no answer), read back, remove
        ids = [(await board.ask(t)).hex() for t in ("0b021305ff60", "0b021305ff24", "0b020101ff00")]
        check(ids == ["0b0200", "0b0201", "0b0202"], f"log: gyro x/y, gyro z, switch loggers -> {ids}")
        more = [(await board.ask("0b020101ff00")).hex() for _ in range(5)]
        refused0 = (await log_status())["triggers_refused"]
        try:
            extra = (await board.ask("0b020101ff00", timeout=0.5)).hex()
        except asyncio.TimeoutError:
            extra = None
        refused = (await log_status())["triggers_refused"] - refused0
        check(more == [f"0b02{i:02x}" for i in range(3, 8)] and extra is None and refused == 1,
              f"log: 8 slots, the 9th trigger gets no answer ({more}, {extra}, refused {refused})")
        for i in range(3, 8):
            await board.write(f"0b03{i:02x}")
        slots = [(await board.ask(f"0b82{i:02x}")).hex() for i in range(4)]
        check(slots == ["0b821305ff60", "0b821305ff24", "0b820101ff00", "0b82"],
              f"log: 0b 82 reads the triggers back, empty slot -> 0b 82 ({slots})")

        # A. 3200 Hz, logging only (not subscribed), then one logged button press
        await board.write("0b0b00")
        await board.write("0b0101")
        await board.write("13032d00")
        board.drain()
        for cmd in ("13020100", "130101"):
            await board.write(cmd)
        await asyncio.sleep(1.0)
        for cmd in ("130100", "13020001"):
            await board.write(cmd)
        await asyncio.sleep(0.1)                # the writes reach the board before the press
        await ctl(cmd="press_button", sensor=0, hold_ms=400)
        await asyncio.sleep(0.15)
        await board.write("0b0100")             # stop logging before the release
        await asyncio.sleep(0.05)
        streamed = [v for v in board.drain() if v[0] == 0x13]
        st = await ctl(cmd="status")
        generated = st["sensors"][0]["gyro_runs"][-1]["generated"]
        count = await log_count(board)
        check(count == 2 * generated + 1 and not streamed and generated > 2900,
              f"log: 3200 Hz logged without a subscription: 0b 85 -> {count} = 2 x {generated} + 1 press, "
              f"{len(streamed)} gyro notifications")

        # readout cancelled by a dropped link: the entries stay
        for cmd in ("0b0801", "0b0d01", "0b0701"):
            await board.write(cmd)
        part = await download(board, ctl, count, count // 20, limit=200)
        await ctl(cmd="drop_link", sensor=0)
        await asyncio.wait_for(board.disconnected, 3)
        await asyncio.sleep(0.1)
        ro = (await log_status())["readout"]
        board = await connect()
        count2 = await log_count(board)
        check(ro["state"] == "cancelled" and ro["cancel_reason"] == "link lost" and count2 == count
              and len(part["entries"]) >= 390,
              f"log: readout cancelled by the link drop after {ro['sent']} entries, 0b 85 still {count2}")

        # full readout (rev 2 page handshake; the first confirm withheld for 0.3 s)
        first_seq = (await log_status())["first_seq"]
        confirms0 = (await log_status())["page_confirms"]
        for cmd in ("0b0801", "0b0d01", "0b0701"):
            await board.write(cmd)
        await board.write("13032800")           # a live 100 Hz stream alongside (not logged)
        for cmd in ("130501", "13020100", "130101"):
            await board.write(cmd)
        await asyncio.sleep(0.1)
        board.drain()
        cpu0, t_cpu = peer_cpu_seconds(), time.monotonic()
        d = await download(board, ctl, count, count // 20, hold_page=0.3)
        cpu = (peer_cpu_seconds() - cpu0) / (time.monotonic() - t_cpu)
        for cmd in ("130100", "13020001", "130500"):
            await board.write(cmd)
        await asyncio.sleep(0.1)
        live = parse_gyro_unpacked(d["others"] + board.drain())
        ok, _, gaps = contiguous(live, 100.0)
        check(ok and gaps == 0 and len(live) >= 100 * (d["elapsed"] + 0.3) - 10,
              f"log: live 100 Hz stream during the readout: {len(live)} samples in "
              f"{d['elapsed'] + 0.3:.2f} s, gaps={gaps}")
        log = await log_status()
        samples = reassemble_gyro(d["entries"])
        exact = [s[:3] for s in samples] == [expected_gyro(n, 3200.0) for n in range(generated)]
        ticks = [s[3] for s in samples]
        span_ms = (ticks[-1] - ticks[0]) * TICK_MS if ticks else 0
        switch = [e for e in d["entries"] if e[0] == 2]
        check(len(d["entries"]) == count and exact and all(s[4] == uid for s in samples),
              f"log: downloaded {len(d['entries'])} entries -> {len(samples)} samples n=0..{generated - 1} "
              f"exact, reset_uid {uid}")
        check(ticks == sorted(ticks) and abs(span_ms - (generated - 1) / 3.2) < 3,
              f"log: ticks rise with the samples: span {span_ms:.1f} ms for {generated - 1} periods of 0.3125 ms")
        check(len(switch) == 1 and switch[0][3] == b"\x01\x00\x00\x00" and d["entries"][-1][0] == 2,
              f"log: the button press is the last entry (id 2, data 01 00 00 00): {switch}")
        pages = page_boundaries(first_seq, count)
        check(d["pages"] == pages and log["page_confirms"] - confirms0 == pages and pages >= 10,
              f"log: {d['pages']} page-completed 0b 0d (expected {pages}), each confirmed with 0b 0e")
        check(d["stalled"] is True and d["waiting"] == "waiting_page_confirm",
              f"log: without 0b 0e the readout stalls (state {d['waiting']})")
        prog = d["progress"]
        check(prog and prog[-1] == 0 and prog == sorted(prog, reverse=True) and len(prog) >= 20,
              f"log: progress 0b 08 every {count // 20} entries, down to 0 ({len(prog)} updates)")
        check(log["readout"]["state"] == "completed" and log["stored"] == count,
              f"log: readout completed, entries kept ({log['stored']})")
        print(f"INFO  readout at 2000/s pacing: {d['rate']:.0f} notifications/s "
              f"= {2 * d['rate']:.0f} entries/s, peer CPU {100 * cpu:.0f} % of one core", flush=True)
        check(d["rate"] > 1000, f"log: readout rate {d['rate']:.0f} notifications/s > 1000")
        await ctl(cmd="log_readout_rate", sensor=0, notifications_per_s=0)
        d0 = await download(board, ctl, count, 0)
        await ctl(cmd="log_readout_rate", sensor=0, notifications_per_s=2000)
        print(f"INFO  readout unpaced: {d0['rate']:.0f} notifications/s = {2 * d0['rate']:.0f} entries/s "
              f"({len(d0['entries'])} entries, {d0['pages']} pages)", flush=True)
        check(len(d0["entries"]) == count and d0["progress"] == [0],
              f"log: unpaced readout, notify_every 0 -> only the final 0b 08 00000000")
        await board.write("0b09ffffffff")
        check(await log_count(board) == 0, "log: 0b 09 ffffffff removes everything at once")

        # B. 100 Hz streamed and logged; silent and a dropped link on the way; odd page alignment
        seq_b = (await log_status())["next_seq"]
        await board.write("13032800")
        await board.write("0b0b01")
        await board.write("0b0101")
        board.drain()
        for cmd in ("130501", "13020100", "130101"):
            await board.write(cmd)
        received = await collect(board, 0.8)
        await ctl(cmd="silent", sensor=0, seconds=0.5)
        received += await collect(board, 0.8)
        await ctl(cmd="drop_link", sensor=0)
        await asyncio.wait_for(board.disconnected, 3)
        received += board.drain()
        board = await connect()
        received += await collect(board, 1.0)
        for cmd in ("130100", "13020001", "130500", "0b0100"):
            await board.write(cmd)
        await asyncio.sleep(0.05)
        received += board.drain()
        streamed = [s[0] for s in parse_gyro_unpacked(received)]
        generated = (await ctl(cmd="status"))["sensors"][0]["gyro_runs"][-1]["generated"]
        count = await log_count(board)
        check(count == 2 * generated and len(streamed) < generated - 40,
              f"log: 100 Hz: 0b 85 -> {count} = 2 x {generated} produced; {len(streamed)} streamed "
              f"(the rest lost to silent and the dropped link)")
        # A notification exists only on a connected ATT bearer (Bluetooth Core 5.4, Vol 3, Part F,
        # 3.4.7.1); a MetaWear goes on sampling without a link and what it streams meanwhile is
        # gone (MbientLab cppdocs, "Data Processor"/"Logging": log to keep it). So the samples a run
        # counts as sent are exactly those the central received.
        sent = (await ctl(cmd="status"))["sensors"][0]["gyro_runs"][-1]["sent"]
        check(sent == len(streamed), f"delivery accounting: {sent} samples counted as sent, {len(streamed)} received "
                                     f"(a dropped link stops delivery at once, as on a board)")
        confirms0 = (await log_status())["page_confirms"]
        for cmd in ("0b0801", "0b0d01", "0b0701"):
            await board.write(cmd)
        d = await download(board, ctl, count, 50)
        samples = reassemble_gyro(d["entries"])
        now_tick = struct.unpack("<I", (await board.ask("0b84"))[2:6])[0]
        exact = [s[:3] for s in samples] == [expected_gyro(n, 100.0) for n in range(generated)]
        steps = {b[3] - a[3] for a, b in zip(samples, samples[1:])}
        check(exact and len(samples) == generated and set(streamed) <= set(range(generated)),
              f"log: 100 Hz samples n=0..{generated - 1} consecutive with the exact waveform "
              f"(streamed ones a subset)")
        check(steps <= {6, 7} and all(s[4] == uid for s in samples) and samples[-1][3] < now_tick,
              f"log: ticks step {sorted(steps)} (10 ms = 6.83 ticks), reset_uid {uid}, before now ({now_tick})")
        pages = page_boundaries(seq_b, count)
        log = await log_status()
        check(pages >= 1 and d["pages"] == pages and d["split_before_page"] == pages
              and log["page_confirms"] - confirms0 == pages and set(d["after_page"]) == {1},
              f"log: {d['pages']} page ends at odd positions: an 11-byte notification before each 0b 0d, "
              f"other id first after it (SDK FIFO re-assembly copes)")
        prog = d["progress"]
        check(prog[-1] == 0 and prog == sorted(prog, reverse=True)
              and all(l in (11, 20) for l in d["lengths"]),
              f"log: progress {prog[:3]}..{prog[-2:]}, notifications of 11/20 bytes")
        # removal: the oldest 100 entries go at once; a readout starts at sample 50
        removed0 = log["entries_removed"]
        await board.write("0b09" + struct.pack("<I", 100).hex())
        left = await log_count(board)
        d = await download(board, ctl, 10, 0)
        first = reassemble_gyro(d["entries"])
        log = await log_status()
        check(left == count - 100 and log["entries_removed"] - removed0 == 100
              and first and first[0][0] == 50,
              f"log: 0b 09 100 -> 0b 85 {left}; the next readout starts at n={first[0][0] if first else None}")
        await board.write("0b09ffffffff")

        # C. resets: entries survive; keep_state keeps triggers and logging (new reset_uid)
        await board.write("0b0101")
        for cmd in ("13020100", "130101"):
            await board.write(cmd)
        await asyncio.sleep(0.3)
        r = await ctl(cmd="restart", sensor=0, keep_state=True)
        await asyncio.wait_for(board.disconnected, 3)
        board = await connect()
        await asyncio.sleep(0.3)
        tick = await board.ask("0b84")
        trig = (await board.ask("0b8200")).hex()
        for cmd in ("130100", "13020001", "0b0100"):
            await board.write(cmd)
        count = await log_count(board)
        d = await download(board, ctl, count, 0)
        uids = [e[1] for e in d["entries"]]
        new = [e for e in d["entries"] if e[1] == tick[6]]
        check(tick[6] == (uid + 1) % 8 and trig == "0b821305ff60" and uids == sorted(uids)
              and uids and uids[0] == uid and new and new[0][2] < 0.1 / TICK_MS * 1000
              and reassemble_gyro(new)[0][0] == 0,
              f"log: restart keep_state: reset_uid {uid}->{tick[6]}, trigger kept, logging continued "
              f"({len(d['entries']) - len(new)} + {len(new)} entries, new ticks from {new[0][2] if new else None})")
        await ctl(cmd="restart", sensor=0, keep_state=False)
        await asyncio.wait_for(board.disconnected, 3)
        board = await connect()
        trig = (await board.ask("0b8200")).hex()
        log = await log_status()
        count2 = await log_count(board)
        check(trig == "0b82" and not log["enabled"] and count2 == count,
              f"log: restart keep_state=false: triggers cleared, logging off, {count2} entries kept")
        await board.write("0b09ffffffff")

        # F. the u32 tick wraps (protocol reference 9.6: 2^32 ticks of 48/32768 s; the Android SDK
        # reads a decreasing tick within one reset_uid as the rollover): started 0.4 s before it
        start = (1 << 32) - round(400 / TICK_MS)
        r = await ctl(cmd="set_tick", sensor=0, tick=start)
        uid_f = (await board.ask("0b84"))[6]
        ids = [(await board.ask(t)).hex() for t in ("0b021305ff60", "0b021305ff24")]
        await board.write("13032800")
        for cmd in ("0b0101", "13020100", "130101"):
            await board.write(cmd)
        await asyncio.sleep(1.0)
        for cmd in ("130100", "13020001", "0b0100"):
            await board.write(cmd)
        await asyncio.sleep(0.05)
        after = struct.unpack("<I", (await board.ask("0b84"))[2:6])[0]
        generated = (await ctl(cmd="status"))["sensors"][0]["gyro_runs"][-1]["generated"]
        count = await log_count(board)
        for cmd in ("0b0801", "0b0d01", "0b0701"):
            await board.write(cmd)
        d = await download(board, ctl, count, 0)
        samples = reassemble_gyro(d["entries"])
        ticks = [t[3] for t in samples]
        drops = [i for i in range(1, len(ticks)) if ticks[i] < ticks[i - 1]]
        steps = {(b - a) % (1 << 32) for a, b in zip(ticks, ticks[1:])}
        exact = [t[:3] for t in samples] == [expected_gyro(n, 100.0) for n in range(generated)]
        check(ids == ["0b0200", "0b0201"] and r["tick"] >= start and exact and len(drops) == 1
              and steps <= {6, 7} and ticks[0] >= start and ticks[-1] < 1200 / TICK_MS and after < 1500 / TICK_MS
              and all(t[4] == uid_f for t in samples),
              f"log: tick set to 2^32 - {(1 << 32) - start}: {len(samples)} samples, ticks {ticks[0]}.."
              f"{ticks[drops[0] - 1] if drops else None} then {ticks[drops[0]] if drops else None}..{ticks[-1]} "
              f"(one wrap, steps {sorted(steps)} across it), 0b 84 after: {after}")
        await board.write("0b09ffffffff")

        # G. fe 01 (debug reset): loggers and processors gone, logged entries kept under the old
        # reset_uid, the tick from 0 (protocol reference 9.6 and 12; the SDK re-creates loggers)
        await board.write("0b0101")
        for cmd in ("13020100", "130101"):
            await board.write(cmd)
        await board.write("0908")
        pid = (await board.ask("09021305ffa0113103")).hex()
        await asyncio.sleep(0.5)
        await board.write("fe01")
        await asyncio.wait_for(board.disconnected, 3)
        board = await connect()
        clock = await board.ask("0b84")
        trig = (await board.ask("0b8200")).hex()
        pid2 = (await board.ask("09021305ffa0113103")).hex()
        count = await log_count(board)
        for cmd in ("0b0801", "0b0d01", "0b0701"):
            await board.write(cmd)
        d = await download(board, ctl, count, 0)
        log = await log_status()
        check(trig == "0b82" and pid == pid2 == "090200" and not log["enabled"] and count >= 80
              and {e[1] for e in d["entries"]} == {uid_f} and clock[6] == (uid_f + 1) % 8
              and struct.unpack("<I", clock[2:6])[0] < 2000 / TICK_MS,
              f"log: fe 01: triggers cleared ({trig}), processor ids from 0 again ({pid2}), "
              f"{count} entries kept under reset_uid {uid_f}, new reset_uid {clock[6]}, tick from 0")
        await board.write("0908")
        await board.write("0b09ffffffff")
        check(await log_count(board) == 0, "log: cleared at the end")
        await board.connection.disconnect()

        if sensors > 1:
            # D. MetaMotion S (sensor 1, logging rev 3): BMI270 register 13 04, no page handshake
            want = (await ctl(cmd="status"))["sensors"][1]["address"]
            found = await scan(device, 1, want=want)
            conn = await device.connect(found[want][0], transport=PhysicalTransport.LE,
                                        own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
            b1 = Board(conn)
            await b1.setup()
            info = (await b1.ask("0b80")).hex()
            uid1 = (await b1.ask("0b84"))[6]
            ids = [(await b1.ask(t)).hex() for t in ("0b021304ff60", "0b021304ff24")]
            await b1.write("13032a00")          # 400 Hz
            for cmd in ("0b0b01", "0b0101", "13020100", "130101"):
                await b1.write(cmd)
            await asyncio.sleep(1.0)
            for cmd in ("130100", "13020001", "0b0100", "0b1001"):
                await b1.write(cmd)
            await asyncio.sleep(0.1)
            generated = (await ctl(cmd="status"))["sensors"][1]["gyro_runs"][-1]["generated"]
            count = struct.unpack("<I", (await b1.ask("0b85"))[2:6])[0]
            for cmd in ("0b0801", "0b0701"):
                await b1.write(cmd)
            d = await download(b1, ctl, count, 0)
            samples = reassemble_gyro(d["entries"])
            log1 = (await ctl(cmd="log_status", sensor=1))["log"]
            exact = [s[:3] for s in samples] == [expected_gyro(n, 400.0) for n in range(generated)]
            check(info == "0b800003080000fb030002" and ids == ["0b0200", "0b0201"]
                  and count == 2 * generated > 512 and d["pages"] == 0 and exact
                  and all(s[4] == uid1 for s in samples) and log1["page_flushes"] == 1,
                  f"log: MMS (rev 3) {info}: {count} entries of 13 04 (2 x {generated}) read out with "
                  f"{d['pages']} page pauses, exact {exact}, 0b 10 01 accepted ({log1['page_flushes']})")
            await b1.write("0b09ffffffff")

            # E. the MMS RAM page: 512 entries reach the NAND at a time; the rest only with a
            # flush (0b 10 01), which MbientLab's docs say to send with logging stopped
            await b1.write("13032800")          # 100 Hz
            for cmd in ("0b0101", "13020100", "130101"):
                await b1.write(cmd)
            await asyncio.sleep(3.2)
            await b1.write("130100")
            await asyncio.sleep(0.05)
            in_flash = struct.unpack("<I", (await b1.ask("0b85"))[2:6])[0]
            await b1.write("0b1001")            # while logging: ignored
            refused = struct.unpack("<I", (await b1.ask("0b85"))[2:6])[0]
            log1 = (await ctl(cmd="log_status", sensor=1))["log"]
            for cmd in ("13020001", "0b0100", "0b1001"):
                await b1.write(cmd)
            flushed = struct.unpack("<I", (await b1.ask("0b85"))[2:6])[0]
            generated = (await ctl(cmd="status"))["sensors"][1]["gyro_runs"][-1]["generated"]
            d = await download(b1, ctl, flushed, 0)
            samples = reassemble_gyro(d["entries"])
            exact = [s[:3] for s in samples] == [expected_gyro(n, 100.0) for n in range(generated)]
            check(in_flash == 512 and refused == 512 and log1["page_flushes_refused"] == 1
                  and log1["ram_page"] == 2 * generated - 512 and flushed == 2 * generated and exact,
                  f"log: MMS RAM page: {in_flash} of {2 * generated} entries readable while logging, "
                  f"a flush while logging ignored, {flushed} after stop + 0b 10 01, exact {exact}")
            await b1.write("0b09ffffffff")
            await b1.write("0b0a")
            await b1.connection.disconnect()
    finally:
        await transport.close()
    await asyncio.sleep(0.2)


# -- crystal drift ----------------------------------------------------------------------------
#
# Why boards drift: a MetaWear's nRF52832 keeps time with its 32.768 kHz crystal oscillator (LFXO,
# Nordic's nRF52832 Product Specification, "32.768 kHz crystal oscillator"), and such crystals are
# made to a tolerance of typically ±20 ppm (before temperature and ageing). MbientLab's log tick is
# 48 periods of that clock (logging.cpp: TICK_TIME_STEP = 48/32768 s), so log entries, accounter
# ticks and the 0b 84 reference all drift with it: tens of ppm against the host's clock.
#
# The checks below exaggerate the drift to ±1 %: the emulation is linear in e, and they have to
# tell (1+e) from 1 through a few ms of emulated-BLE latency within seconds (at ±200 ppm the
# difference stays under one tick, 1.46 ms, for 7 s; at ±20 ppm for over a minute).

DRIFT_PPM = 10_000
DRIFT_ODR = 400.0           # gyro conf 0x2a
DRIFT_WINDOW_S = 2.0
LATENCY_MAX_S = 0.5         # slowest delivery accepted on a busy shared machine
PROMPT_S = 0.015            # some sample of the last 0.5 s arrives within this of its truth time
CLOCK_READ_S = 0.0005       # allowance for reading time.time() in two processes


async def read_tick(board: Board) -> tuple[int, float, float]:
    """0b 84 -> (tick, host monotonic time before the write, at the answer): the board read its
    clock in between. The queue is drained first so the answer is not found late."""
    board.drain()
    before = time.monotonic()
    answer = await board.ask("0b84")
    return struct.unpack("<I", answer[2:6])[0], before, time.monotonic()


async def narrow_tick(board: Board, tries: int = 3) -> tuple[int, float, float]:
    """The most tightly bracketed of a few 0b 84 readings."""
    readings = [await read_tick(board) for _ in range(tries)]
    return min(readings, key=lambda r: r[2] - r[1])


def advance_bounds(a, b, rate: float, per_s: float) -> tuple[float, float]:
    """What a count running at `per_s` x `rate` per host second may advance between two bracketed
    events a and b ((value, before, after) each); +-1 for the counts' rounding down."""
    return rate * per_s * (b[1] - a[2]) - 1, rate * per_s * (b[2] - a[1]) + 1


def truth_wall(run: dict, n: int) -> float:
    """Host wall-clock time at which sample n of the run was due, by the segment it falls in."""
    segment = [s for s in run["segments"] if s["n"] <= n][-1]
    return segment["t0_wall"] + n / segment["odr"]


async def start_gyro(board: Board) -> tuple[int, float, float]:
    """Starts the 400 Hz gyro stream (unpacked, stamped). Returns a 0b 84 reading taken after the
    start was processed (commands are handled in order): the start lies within its bracket."""
    board.stamps = []
    for cmd in ("13032a00", "130501", "13020100"):
        await board.write(cmd)
    board.drain()
    before = time.monotonic()
    await board.write("130101")
    tick, _, after = await read_tick(board)
    return tick, before, after


async def stop_gyro(board: Board) -> tuple[int, float, float]:
    """Stops the stream; the stop lies within the returned 0b 84 reading's bracket, and every
    sample produced before it has arrived with the answer."""
    board.drain()
    before = time.monotonic()
    await board.write("130100")
    tick, _, after = await read_tick(board)
    for cmd in ("13020001", "130500"):
        await board.write(cmd)
    return tick, before, after


def latencies(board: Board, run: dict) -> list[tuple[int, float]]:
    """(n, arrival - truth time) of every gyro sample that arrived, in arrival order (n < 32768
    is the sample's x)."""
    ns = [(stamp, struct.unpack_from("<h", v, 2)[0]) for stamp, v in board.stamps or [] if v[:2] == b"\x13\x05"]
    return [(n, stamp - truth_wall(run, n)) for stamp, n in ns]


def prompt_at_end(lat: list[tuple[int, float]], until_n: int) -> float:
    """The quickest arrival among the samples of the last 0.5 s before sample `until_n`: a
    truth whose rate is wrong by 1 % would be 20 ms off there after 2 s."""
    tail = [l for n, l in lat if until_n - DRIFT_ODR / 2 <= n < until_n]
    return min(tail) if tail else float("inf")


async def phase_drift(hci_port: int, ctl: Control, sensors: int) -> None:
    # The time query: the peer's CLOCK_REALTIME and monotonic clock, read while the request was
    # out (this test shares the machine, so its own clocks bracket them; a VM guest with a wrong
    # clock would take time - (sent + received) / 2 as its offset, within +-(round trip) / 2).
    sent_wall, sent_mono = time.time(), time.monotonic()
    r = await ctl(cmd="time")
    got_wall, got_mono = time.time(), time.monotonic()
    offset = r.get("time", 0) - (sent_wall + got_wall) / 2
    check(r.get("ok") and isinstance(r.get("time"), float) and isinstance(r.get("monotonic"), float)
          and sent_wall <= r["time"] <= got_wall and sent_mono <= r["monotonic"] <= got_mono,
          f"time: the peer's clocks read during the request (round trip {1000 * (got_wall - sent_wall):.2f} ms, "
          f"offset {1e6 * offset:+.0f} µs)")

    st = await ctl(cmd="status")
    want = [0.0, -20.0] + [0.0] * (sensors - 2) if sensors > 1 else [0.0]
    bad = await ctl(cmd="set_drift", sensor=0, ppm=200_000)
    check([s["drift_ppm"] for s in st["sensors"]] == want and bad.get("ok") is False,
          f"drift: --drift-ppm 1=-20 in status {[s['drift_ppm'] for s in st['sensors']]}, "
          f"200000 ppm refused ({bad.get('error')})")

    transport, device = await make_host(hci_port, "selftest-host4")
    try:
        address = (await ctl(cmd="status"))["sensors"][0]["address"]
        found = await scan(device, 1, want=address)
        conn = await device.connect(found[address][0], transport=PhysicalTransport.LE,
                                    own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
        board = Board(conn)
        await board.setup()
        wall_minus_mono = time.time() - time.monotonic()

        # A steady drift each way: the log clock, the samples produced and their arrival.
        for ppm in (DRIFT_PPM, -DRIFT_PPM):
            rate = 1 + ppm * 1e-6
            r = await ctl(cmd="set_drift", sensor=0, ppm=ppm)
            first = await narrow_tick(board)
            start = await start_gyro(board)
            await asyncio.sleep(DRIFT_WINDOW_S)
            stop = await stop_gyro(board)
            last = await narrow_tick(board)
            run = (await ctl(cmd="status"))["sensors"][0]["gyro_runs"][-1]

            ticks = (last[0] - first[0]) % (1 << 32)
            lo, hi = advance_bounds(first, last, rate, 1000 / TICK_MS)
            lo0, hi0 = advance_bounds(first, last, 1.0, 1000 / TICK_MS)
            span = (last[1] + last[2] - first[1] - first[2]) / 2
            check(r.get("drift_ppm") == ppm and lo <= ticks <= hi and not lo0 <= ticks <= hi0,
                  f"drift {ppm:+} ppm: 0b 84 advanced {ticks} ticks in {span:.3f} s, within "
                  f"[{lo:.1f}, {hi:.1f}] for (1+e) and outside [{lo0:.1f}, {hi0:.1f}] at nominal")

            generated = run["generated"]
            lo, hi = advance_bounds(start, stop, rate, DRIFT_ODR)
            lo0, hi0 = advance_bounds(start, stop, 1.0, DRIFT_ODR)
            check(lo <= generated <= hi and not lo0 <= generated <= hi0
                  and math.isclose(run["odr"], DRIFT_ODR * rate, rel_tol=1e-12)
                  and run["odr_nominal"] == DRIFT_ODR and run["drift_ppm"] == ppm and len(run["segments"]) == 1
                  and start[1] - 0.001 <= run["t0_wall"] - wall_minus_mono <= start[2] + 0.001,
                  f"drift {ppm:+} ppm: {generated} samples between start and stop, within [{lo:.1f}, {hi:.1f}] "
                  f"for {DRIFT_ODR:.0f} Hz x (1+e) and outside [{lo0:.1f}, {hi0:.1f}]; truth odr {run['odr']:.6f} "
                  f"from the start command on")

            lat = latencies(board, run)
            ns = [n for n, _ in lat]
            earliest = min(l for _, l in lat) if lat else None
            check(ns == list(range(generated)) and run["sent"] == generated
                  and -CLOCK_READ_S <= earliest and max(l for _, l in lat) <= LATENCY_MAX_S
                  and prompt_at_end(lat, generated) <= PROMPT_S,
                  f"drift {ppm:+} ppm: each of {len(ns)} samples arrived after its truth time t0_wall + n / odr "
                  f"(earliest {1000 * earliest:+.2f} ms, latest {1000 * max(l for _, l in lat):.1f} ms; "
                  f"quickest of the last 0.5 s {1000 * prompt_at_end(lat, generated):.2f} ms)" if lat else
                  f"drift {ppm:+} ppm: no samples arrived")

        # A change mid-run (+1 % then -1 %): the counter and the tick go on without a jump, and the
        # truth's second segment takes over where the first ends.
        await ctl(cmd="set_drift", sensor=0, ppm=DRIFT_PPM)
        start = await start_gyro(board)
        await asyncio.sleep(DRIFT_WINDOW_S / 2)
        before = await read_tick(board)
        r = await ctl(cmd="set_drift", sensor=0, ppm=-DRIFT_PPM)
        after = await read_tick(board)
        await asyncio.sleep(DRIFT_WINDOW_S / 2)
        stop = await stop_gyro(board)
        run = (await ctl(cmd="status"))["sensors"][0]["gyro_runs"][-1]
        await ctl(cmd="set_drift", sensor=0, ppm=0)

        values = [v for _, v in board.stamps if v[:2] == b"\x13\x05"]
        samples = parse_gyro_unpacked(values)
        generated = run["generated"]
        check(r.get("ok") and samples == [expected_gyro(n, DRIFT_ODR) for n in range(generated)],
              f"drift changed mid-run: samples n = 0..{generated - 1} each once, in order, exact waveform")

        ticks = (after[0] - before[0]) % (1 << 32)
        lo = advance_bounds(before, after, 1 - DRIFT_PPM * 1e-6, 1000 / TICK_MS)[0]
        hi = advance_bounds(before, after, 1 + DRIFT_PPM * 1e-6, 1000 / TICK_MS)[1]
        check(lo <= ticks <= hi, f"drift changed mid-run: the tick went on by {ticks} (within [{lo:.1f}, {hi:.1f}])")

        segments = run["segments"]
        n1 = segments[-1]["n"] if len(segments) == 2 else 0
        step = truth_wall(run, n1) - truth_wall(run, n1 - 1) if 0 < n1 < generated else 0
        check([s["drift_ppm"] for s in segments] == [DRIFT_PPM, -DRIFT_PPM] and run["drift_ppm"] == -DRIFT_PPM
              and 1 / (DRIFT_ODR * (1 + DRIFT_PPM * 1e-6)) - 1e-9 <= step <= 1 / (DRIFT_ODR * (1 - DRIFT_PPM * 1e-6)) + 1e-9,
              f"drift changed mid-run: truth in 2 segments, the second from n = {n1}, samples {1e3 * step:.4f} ms "
              f"apart across the change (one period at either rate)")

        lat = latencies(board, run)
        check(lat and min(l for _, l in lat) >= -CLOCK_READ_S and max(l for _, l in lat) <= LATENCY_MAX_S
              and prompt_at_end(lat, n1) <= PROMPT_S and prompt_at_end(lat, generated) <= PROMPT_S,
              f"drift changed mid-run: every sample arrived after its segment's truth time, some within "
              f"{1000 * prompt_at_end(lat, n1):.2f} / {1000 * prompt_at_end(lat, generated):.2f} ms before / after "
              f"the change")
        board.stamps = None
        await board.connection.disconnect()
    finally:
        await transport.close()
    await asyncio.sleep(0.2)


async def main_async(args) -> int:
    cmd = [sys.executable, os.path.join(HERE, "metawear_peer.py"), "--exit-with-parent", "--sensors", str(args.sensors),
           "--adv-address", args.adv_address, "--scan-reports", args.scan_reports]
    if args.sensors > 1:
        cmd += ["--drift-ppm", "1=-20"]     # the MMS board drifts like a real one all along
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    global PEER_PID
    PEER_PID = proc.pid
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
