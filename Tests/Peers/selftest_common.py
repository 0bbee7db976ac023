"""What the parts of the peer's self-test (selftest_peer.py) share: the checks' record, the
control channel, a bumble host connected to one emulated board, and the waveform's truth."""

from __future__ import annotations

import asyncio
import json
import math
import os
import struct
import time

from bumble import hci
from bumble.core import UUID
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
