#!/usr/bin/env python3
"""Reference pipeline for the end-to-end benchmark: the gateway's job in plain Python.

A deliberately simple, unoptimised program that does what `gyrogate run` does for the
benchmark, so that e2e_bench.py can put the gateway's CPU cost next to it:

* a socket-only BLE central over H4/TCP (no bumble): HCI Reset, LE Create Connection to each
  known address (public), ATT Read By Type for the MetaWear command/notify characteristics
  (326a9001 / 326a9006), CCCD on, then the gateway's start order: `13 03 conf range`,
  subscribe (`13 05 01`, or packed `13 07 01` above 100 Hz), `13 02 01 00`, `13 01 01`, and
  `11 09` 7.5 ms when the notification rate is above 40/s (the L2CAP parameter update request
  the sensor sends is accepted and followed by LE Connection Update);
* notifications decoded with struct; every sample inserted into sqlite3 (WAL,
  synchronous=FULL), committed once per commit interval;
* every `chunk-size` samples of a sensor: the chunk's rows are read back, rendered as a JSON
  document shaped like the gateway's `realtime_data` chunk (`data` points with `timestamp`,
  `gx gy gz` in deg/s), written to an outbox table and the rows deleted, in the same transaction;
* after each commit the outbox is published with paho-mqtt at QoS 1 (20 in flight); a row is
  deleted once its PUBACK arrived;
* after HCI Reset and the MQTT connection it logs `initialised` and waits `--idle-pause` s
  (the benchmark reads the idle RSS there), then connects the sensors;
* SIGTERM: stop the gyro on every board, wait briefly for the last samples, close the partial
  chunks, commit, drain the outbox, disconnect, exit 0.

No module discovery, no gap detection, no sessions/records documents, no reconnects.

    reference_pipeline.py --hci-port P --mqtt-port M --sensors N --odr HZ --db FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import struct
import sys
import threading
import time
import uuid

import paho.mqtt.client as mqtt

CMD_UUID = bytes.fromhex("326a900185cb9195d9dd464cfbbae75a")[::-1]
NOTIFY_UUID = bytes.fromhex("326a900685cb9195d9dd464cfbbae75a")[::-1]
GYRO_LSB_PER_DPS = 16.4  # +-2000 deg/s
ODR_CODES = {25: 0x06, 50: 0x07, 100: 0x08, 200: 0x09, 400: 0x0A, 800: 0x0B, 1600: 0x0C, 3200: 0x0D}


def log(msg: str) -> None:
    print(f"reference: {msg}", file=sys.stderr, flush=True)


class RawHost:
    """Minimal HCI/L2CAP/ATT central over H4/TCP."""

    def __init__(self, reader, writer, on_notification):
        self.reader, self.writer = reader, writer
        self.events: asyncio.Queue = asyncio.Queue()
        self.att: dict[int, asyncio.Queue] = {}
        self.partial: dict[int, bytearray] = {}
        self.on_notification = on_notification
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self):
        r = self.reader
        while True:
            kind = (await r.readexactly(1))[0]
            if kind == 0x04:
                head = await r.readexactly(2)
                body = await r.readexactly(head[1])
                if head[0] != 0x13:  # Number Of Completed Packets: not tracked (few writes)
                    self.events.put_nowait(head + body)
            elif kind == 0x02:
                h, length = struct.unpack("<HH", await r.readexactly(4))
                data = await r.readexactly(length)
                handle, pb = h & 0x0FFF, (h >> 12) & 0x3
                if pb == 0x1:  # continuation
                    buf = self.partial.get(handle)
                    if buf is None:
                        continue
                    buf += data
                else:
                    buf = self.partial[handle] = bytearray(data)
                if len(buf) < 4 or len(buf) < 4 + struct.unpack_from("<H", buf)[0]:
                    continue
                del self.partial[handle]
                self._l2cap(handle, bytes(buf))
            else:
                raise ValueError(f"unexpected H4 type {kind}")

    def _l2cap(self, handle: int, frame: bytes) -> None:
        length, cid = struct.unpack_from("<HH", frame)
        pdu = frame[4:4 + length]
        if cid == 0x0004:
            if pdu[0] == 0x1B:
                self.on_notification(handle, struct.unpack_from("<H", pdu, 1)[0], pdu[3:])
            else:
                self.att.setdefault(handle, asyncio.Queue()).put_nowait(pdu)
        elif cid == 0x0005 and pdu and pdu[0] == 0x12:  # LE connection parameter update request
            ident = pdu[1]
            mn, mx, lat, to = struct.unpack_from("<HHHH", pdu, 4)
            self.l2cap_signal(handle, struct.pack("<BBHH", 0x13, ident, 2, 0))  # accepted
            params = struct.pack("<HHHHHHH", handle, mn, mx, lat, to, 0, 0)
            self.writer.write(struct.pack("<BHB", 1, 0x2013, len(params)) + params)

    def l2cap_signal(self, handle: int, pdu: bytes) -> None:
        l2cap = struct.pack("<HH", len(pdu), 5) + pdu
        self.writer.write(struct.pack("<BHH", 2, handle, len(l2cap)) + l2cap)

    async def command(self, opcode: int, params: bytes = b"") -> bytes:
        self.writer.write(struct.pack("<BHB", 1, opcode, len(params)) + params)
        while True:
            ev = await asyncio.wait_for(self.events.get(), 5)
            if ev[0] == 0x0E and struct.unpack_from("<H", ev, 3)[0] == opcode:
                return ev
            if ev[0] == 0x0F and struct.unpack_from("<H", ev, 4)[0] == opcode:
                return ev

    async def wait_event(self, predicate, timeout=10.0) -> bytes:
        while True:
            ev = await asyncio.wait_for(self.events.get(), timeout)
            if predicate(ev):
                return ev

    def acl(self, handle: int, att_pdu: bytes) -> None:
        l2cap = struct.pack("<HH", len(att_pdu), 4) + att_pdu
        self.writer.write(struct.pack("<BHH", 2, handle, len(l2cap)) + l2cap)

    async def att_request(self, handle: int, pdu: bytes) -> bytes:
        self.acl(handle, pdu)
        return await asyncio.wait_for(self.att.setdefault(handle, asyncio.Queue()).get(), 10)

    async def connect(self, address: str) -> int:
        peer = bytes.fromhex(address.replace(":", ""))[::-1]
        params = struct.pack("<HHBB6sBHHHHHH", 0x10, 0x10, 0, 0, peer, 0, 6, 6, 0, 200, 0, 0)
        ev = await self.command(0x200D, params)
        if not (ev[0] == 0x0F and ev[2] == 0):
            raise RuntimeError(f"create connection refused {ev.hex()}")
        ev = await self.wait_event(lambda e: e[0] == 0x3E and e[2] in (0x01, 0x0A))
        if ev[3] != 0:
            raise RuntimeError(f"connection to {address} failed {ev.hex()}")
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


class Sensor:
    def __init__(self, address: str):
        self.address = address
        self.handle = 0
        self.cmd = 0
        self.notify = 0
        self.index = 0          # samples received so far (stream index)
        self.chunk_first = 0    # index of the first sample of the open chunk
        self.seq = 0
        self.record = f"{address.replace(':', '')}___{int(time.time())}"


class Pipeline:
    def __init__(self, args):
        self.args = args
        self.odr = args.odr
        self.packed = args.odr > 100
        self.db = sqlite3.connect(args.db, isolation_level="DEFERRED", check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript("""
            CREATE TABLE IF NOT EXISTS samples (sensor TEXT, idx INTEGER, t REAL, x INTEGER, y INTEGER, z INTEGER);
            CREATE INDEX IF NOT EXISTS samples_sensor_idx ON samples (sensor, idx);
            CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT, payload BLOB);
        """)
        self.db.commit()
        self.sensors = [Sensor(f"C4:BE:84:00:00:{i + 1:02X}") for i in range(args.sensors)]
        self.by_handle: dict[int, Sensor] = {}
        self.accepting = True
        self.samples = 0
        self.last_published = 0
        self.inflight: dict[int, int] = {}  # mid -> outbox row id
        self.acked: list[int] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=args.client_id,
                                  protocol=mqtt.MQTTv311, clean_session=True)
        self.client.max_inflight_messages_set(20)
        self.client.max_queued_messages_set(0)
        self.client.on_connect = lambda c, u, f, rc, p: self.connected.set()
        self.client.on_publish = self._on_publish

    def _on_publish(self, client, userdata, mid, reason_code, properties):
        with self.lock:
            self.acked.append(mid)

    # -- samples --------------------------------------------------------------
    def on_notification(self, handle: int, attr: int, value: bytes) -> None:
        sensor = self.by_handle.get(handle)
        if sensor is None or attr != sensor.notify or not self.accepting or len(value) < 8 or value[0] != 0x13:
            return
        now = time.time()
        if value[1] == 0x07 and len(value) == 20:
            v = struct.unpack_from("<9h", value, 2)
            triples = [(now - 2 / self.odr, v[0], v[1], v[2]), (now - 1 / self.odr, v[3], v[4], v[5]),
                       (now, v[6], v[7], v[8])]
        elif value[1] == 0x05:
            triples = [(now,) + struct.unpack_from("<3h", value, 2)]
        else:
            return
        for t, x, y, z in triples:
            self.db.execute("INSERT INTO samples (sensor, idx, t, x, y, z) VALUES (?, ?, ?, ?, ?, ?)",
                            (sensor.address, sensor.index, t, x, y, z))
            sensor.index += 1
            self.samples += 1
            if sensor.index - sensor.chunk_first >= self.args.chunk_size:
                self.close_chunk(sensor)

    def close_chunk(self, sensor: Sensor) -> None:
        first, last = sensor.chunk_first, sensor.index - 1
        if last < first:
            return
        rows = self.db.execute("SELECT t, x, y, z FROM samples WHERE sensor = ? AND idx BETWEEN ? AND ? ORDER BY idx",
                               (sensor.address, first, last)).fetchall()
        k = 1 / GYRO_LSB_PER_DPS
        data = [{"timestamp": round(t * 1000, 3), "gx": round(x * k, 5), "gy": round(y * k, 5), "gz": round(z * k, 5)}
                for t, x, y, z in rows]
        doc = {"user_id": self.args.user, "device": sensor.address, "record": sensor.record, "seq": sensor.seq,
               "sensor": "gyro", "odr_hz": float(self.odr), "range_dps": 2000.0,
               "start": data[0]["timestamp"] if data else None, "end": data[-1]["timestamp"] if data else None,
               "gaps": [], "data": data}
        self.db.execute("INSERT INTO outbox (topic, payload) VALUES (?, ?)",
                        (f"realtime_data/{uuid.uuid4()}", json.dumps(doc, separators=(",", ":")).encode()))
        self.db.execute("DELETE FROM samples WHERE sensor = ? AND idx BETWEEN ? AND ?", (sensor.address, first, last))
        sensor.seq += 1
        sensor.chunk_first = sensor.index

    # -- store and outbox -------------------------------------------------------
    def commit_and_drain(self) -> None:
        with self.lock:
            acked, self.acked = self.acked, []
        rows = [self.inflight.pop(mid) for mid in acked if mid in self.inflight]
        if rows:
            self.db.executemany("DELETE FROM outbox WHERE id = ?", [(r,) for r in rows])
        self.db.commit()
        if not self.connected.is_set():
            return
        for rowid, topic, payload in self.db.execute(
                "SELECT id, topic, payload FROM outbox WHERE id > ? ORDER BY id", (self.last_published,)).fetchall():
            info = self.client.publish(topic, payload, qos=1)
            self.inflight[info.mid] = rowid
            self.last_published = rowid

    def outbox_depth(self) -> int:
        return self.db.execute("SELECT count(*) FROM outbox").fetchone()[0]

    async def committer(self, stop: asyncio.Event) -> None:
        interval = self.args.commit_interval_ms / 1000
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), interval)
            except asyncio.TimeoutError:
                pass
            self.commit_and_drain()

    # -- run --------------------------------------------------------------------
    async def run(self) -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        self.client.connect("127.0.0.1", self.args.mqtt_port, keepalive=30)
        self.client.loop_start()
        reader, writer = await asyncio.open_connection("127.0.0.1", self.args.hci_port)
        host = RawHost(reader, writer, self.on_notification)
        await host.command(0x0C03)
        self.connected.wait(10)
        log("initialised")  # e2e_bench.py reads the idle RSS during this pause
        await asyncio.sleep(self.args.idle_pause)
        conf = 0x20 | ODR_CODES[self.odr]
        sub = "1307" if self.packed else "1305"
        rate = self.odr / (3 if self.packed else 1)
        for s in self.sensors:
            s.handle = await host.connect(s.address)
            s.cmd, s.notify = await host.find_handles(s.handle)
            rsp = await host.att_request(s.handle, struct.pack("<BHH", 0x12, s.notify + 1, 1))
            if rsp[0] != 0x13:
                raise RuntimeError(f"CCCD write failed {rsp.hex()}")
            self.by_handle[s.handle] = s
            cmds = [f"1303{conf:02x}00", sub + "01", "13020100", "130101"]
            if rate > 40:
                cmds.append("1109" + struct.pack("<HHHH", 6, 6, 0, 600).hex())
            for c in cmds:
                host.acl(s.handle, struct.pack("<BH", 0x52, s.cmd) + bytes.fromhex(c))
            log(f"{s.address} streaming (handle 0x{s.handle:03x})")
        committer = loop.create_task(self.committer(stop))
        await stop.wait()
        await committer
        # graceful stop: the SDK stop order, then the last samples in flight
        for s in self.sensors:
            for c in ("130100", "13020001", sub + "00"):
                host.acl(s.handle, struct.pack("<BH", 0x52, s.cmd) + bytes.fromhex(c))
        await asyncio.sleep(0.3)
        self.accepting = False
        for s in self.sensors:
            self.close_chunk(s)
        deadline = time.monotonic() + 10
        self.commit_and_drain()
        while time.monotonic() < deadline and self.outbox_depth() > 0:
            await asyncio.sleep(0.05)
            self.commit_and_drain()
        depth = self.outbox_depth()
        host.task.cancel()
        writer.close()
        self.client.disconnect()
        self.client.loop_stop()
        self.db.close()
        log(f"stopped: {self.samples} samples, outbox depth {depth}")
        return 0 if depth == 0 else 2


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hci-port", type=int, required=True)
    p.add_argument("--mqtt-port", type=int, required=True)
    p.add_argument("--sensors", type=int, default=1)
    p.add_argument("--odr", type=int, default=100, choices=sorted(ODR_CODES))
    p.add_argument("--db", required=True)
    p.add_argument("--client-id", default=f"e2e-reference-{os.getpid()}")
    p.add_argument("--user", default="bench-user")
    p.add_argument("--chunk-size", type=int, default=2000)
    p.add_argument("--commit-interval-ms", type=int, default=1000)
    p.add_argument("--idle-pause", type=float, default=1.0,
                   help="seconds to wait, initialised, before connecting the sensors (idle RSS)")
    args = p.parse_args()
    return asyncio.run(Pipeline(args).run())


if __name__ == "__main__":
    sys.exit(main())
