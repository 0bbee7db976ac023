#!/usr/bin/env python3
"""Socket-only HCI central for metawear_peer.py: no bumble on the host side.

Starts the peer, connects to every sensor with a *public* own address (the case
bumble's stock link drops, quirk 1), finds the MetaWear handles with ATT Read By
Type, enables notifications, starts the gyro at the given ODR and counts
notifications per second. Used to measure the peer's own capacity without a
Python host stack in the way.

    .venv/bin/python Tests/Peers/rawhost_bench.py --sensors 4 --odr-code 0x2d [--packed]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CMD_UUID = bytes.fromhex("326a900185cb9195d9dd464cfbbae75a")[::-1]
NOTIFY_UUID = bytes.fromhex("326a900685cb9195d9dd464cfbbae75a")[::-1]


class RawHost:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.events: asyncio.Queue = asyncio.Queue()
        self.att: dict[int, asyncio.Queue] = {}
        self.notifications: dict[int, int] = {}
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self):
        r = self.reader
        while True:
            kind = (await r.readexactly(1))[0]
            if kind == 0x04:
                head = await r.readexactly(2)
                body = await r.readexactly(head[1])
                if head[0] != 0x13:  # ignore Number Of Completed Packets
                    self.events.put_nowait(head + body)
            elif kind == 0x02:
                h, length = struct.unpack("<HH", await r.readexactly(4))
                data = await r.readexactly(length)
                handle = h & 0x0FFF
                # default 27-byte buffer: every PDU used here fits in one fragment
                if data[4] == 0x1B:
                    self.notifications[handle] = self.notifications.get(handle, 0) + 1
                else:
                    self.att.setdefault(handle, asyncio.Queue()).put_nowait(data[4:])
            else:
                raise ValueError(f"unexpected H4 type {kind}")

    async def command(self, opcode: int, params: bytes = b"") -> bytes:
        self.writer.write(struct.pack("<BHB", 1, opcode, len(params)) + params)
        while True:
            ev = await asyncio.wait_for(self.events.get(), 5)
            if ev[0] == 0x0E and struct.unpack_from("<H", ev, 3)[0] == opcode:
                return ev
            if ev[0] == 0x0F and struct.unpack_from("<H", ev, 4)[0] == opcode:
                return ev

    async def wait_event(self, predicate, timeout=5.0) -> bytes:
        while True:
            ev = await asyncio.wait_for(self.events.get(), timeout)
            if predicate(ev):
                return ev

    def acl(self, handle: int, att_pdu: bytes) -> None:
        l2cap = struct.pack("<HH", len(att_pdu), 4) + att_pdu
        self.writer.write(struct.pack("<BHH", 2, handle | (0 << 12), len(l2cap)) + l2cap)

    async def att_request(self, handle: int, pdu: bytes) -> bytes:
        self.acl(handle, pdu)
        return await asyncio.wait_for(self.att.setdefault(handle, asyncio.Queue()).get(), 5)

    async def connect(self, address: str) -> int:
        peer = bytes.fromhex(address.replace(":", ""))[::-1]
        params = struct.pack("<HHBB6sBHHHHHH", 0x10, 0x10, 0, 0, peer, 0, 6, 6, 0, 200, 0, 0)
        ev = await self.command(0x200D, params)
        assert ev[0] == 0x0F and ev[2] == 0, f"create connection refused {ev.hex()}"
        ev = await self.wait_event(lambda e: e[0] == 0x3E and e[2] in (0x01, 0x0A))
        assert ev[3] == 0, f"connection failed {ev.hex()}"
        return struct.unpack_from("<H", ev, 4)[0]

    async def find_handles(self, handle: int) -> tuple[int, int]:
        start, found = 1, {}
        while start < 0xFFFF:
            rsp = await self.att_request(handle, struct.pack("<BHHH", 0x08, start, 0xFFFF, 0x2803))
            if rsp[0] != 0x09:
                break
            size = rsp[1]
            for off in range(2, len(rsp), size):
                entry = rsp[off:off + size]
                decl, _props, value_handle = struct.unpack_from("<HBH", entry)
                found[entry[5:]] = value_handle
                start = decl + 1
        return found[CMD_UUID], found[NOTIFY_UUID]


async def main_async(args) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, os.path.join(HERE, "metawear_peer.py"), "--exit-with-parent", "--sensors", str(args.sensors),
        stdout=asyncio.subprocess.PIPE)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().split()
        ports = dict(p.split("=") for p in line[1:])
        reader, writer = await asyncio.open_connection("127.0.0.1", int(ports["hci"]))
        host = RawHost(reader, writer)
        await host.command(0x0C03)
        handles = []
        for i in range(args.sensors):
            t0 = time.monotonic()
            h = await host.connect(f"C4:BE:84:00:00:{i + 1:02X}")
            cmd, notify = await host.find_handles(h)
            rsp = await host.att_request(h, struct.pack("<BHH", 0x12, notify + 1, 1))
            assert rsp[0] == 0x13, rsp.hex()
            print(f"sensor {i}: handle 0x{h:03x}, cmd 0x{cmd:04x}, notify 0x{notify:04x}, "
                  f"ready in {1000 * (time.monotonic() - t0):.0f} ms (own address public)")
            handles.append((h, cmd))
        sub = "1307" if args.packed else "1305"
        for h, cmd in handles:
            for c in (f"1303{args.odr_code:02x}00", sub + "01", "13020100", "130101"):
                host.acl(h, struct.pack("<BH", 0x52, cmd) + bytes.fromhex(c))
        await asyncio.sleep(0.5)
        base = sum(host.notifications.values())
        t = time.monotonic()
        await asyncio.sleep(args.seconds)
        total = sum(host.notifications.values()) - base
        rate = total / (time.monotonic() - t)
        odr = 25 * 2 ** ((args.odr_code & 0x0F) - 6)
        expect = args.sensors * odr / (3 if args.packed else 1)
        print(f"RESULT sensors={args.sensors} odr={odr} Hz packed={args.packed}: "
              f"{rate:.0f} notifications/s (expected {expect:.0f})")
        cr, cw = await asyncio.open_connection("127.0.0.1", int(ports["control"]))
        cw.write(b'{"cmd":"stop"}\n')
        print(json.loads(await cr.readline()))
        host.task.cancel()
        writer.close()
        await asyncio.wait_for(proc.wait(), 10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=1)
    parser.add_argument("--odr-code", type=lambda s: int(s, 0), default=0x2D)
    parser.add_argument("--packed", action="store_true")
    parser.add_argument("--seconds", type=float, default=3.0)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
