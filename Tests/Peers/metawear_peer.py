#!/usr/bin/env python3
"""Emulated MetaWear peripherals behind an emulated HCI controller (bumble 0.0.236).

    host under test --H4/TCP--> controller A ==RoutingLink== sensor controllers 1..N
                                                               + bumble Device (GATT)
                                                               + metawear_board.Board

Usage:
    metawear_peer.py [--hci-port 0] [--control-port 0] [--sensors 1] [--gateways 1]
                     [--model MMR|MMS] [--name MetaWear] [--adv-address public|random]
                     [--scan-reports spec|bumble] [--drift-ppm P | --drift-ppm I=P ...]
                     [--exit-with-parent] [--log-level WARNING]

Prints exactly one line on stdout when ready: ``READY hci=<port> control=<port>``.
The control channel takes newline-delimited JSON, one JSON reply line per command;
see README.md in this folder. The sample waveform is documented in metawear_board.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import struct
import sys
import time

from bumble import hci, ll
from bumble.device import Device, DeviceConfiguration
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.transport.common import AsyncPipeSink

import peer_fleet
from metawear_board import DRIFT_PPM_LIMIT, Board
from peer_link import H4Server, HostFacingController, QuietController, QuietHost, RoutingLink

log = logging.getLogger("metawear_peer")

METAWEAR_SERVICE = "326a9000-85cb-9195-d9dd-464cfbbae75a"
COMMAND_CHAR = "326a9001-85cb-9195-d9dd-464cfbbae75a"
NOTIFY_CHAR = "326a9006-85cb-9195-d9dd-464cfbbae75a"
ATT_CID = 0x0004


def uuid128_le(uuid: str) -> bytes:
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


def advertising_data(name: str) -> bytes:
    name_bytes = name.encode()[:10]
    return (
        bytes([2, 0x01, 0x06])
        + bytes([17, 0x07]) + uuid128_le(METAWEAR_SERVICE)
        + bytes([len(name_bytes) + 1, 0x09]) + name_bytes
    )


class Sensor:
    """One emulated MetaWear: its own controller, bumble host/Device and Board."""

    def __init__(self, index: int, link: RoutingLink, model: str, adv_public: bool,
                 name: str, drift_ppm: float = 0.0):
        self.index = index
        self.name = name
        self.public_address = hci.Address(
            f"C4:BE:84:00:00:{index + 1:02X}", hci.Address.PUBLIC_DEVICE_ADDRESS)
        self.static_address = hci.Address(
            f"F4:BE:84:00:00:{index + 1:02X}", hci.Address.RANDOM_DEVICE_ADDRESS)
        self.adv_public = adv_public
        self.adv_address = self.public_address if adv_public else self.static_address
        self.controller = QuietController(f"sensor{index}", link=link,
                                          public_address=self.public_address)
        self.host = QuietHost(self.controller, AsyncPipeSink(self.controller))
        config = DeviceConfiguration(name=name, address=self.static_address)
        config.advertising_interval_min = config.advertising_interval_max = 100
        self.device = Device(config=config, host=self.host)
        self.connection = None
        self.notify_enabled = False
        self.silent_until: float | None = None  # loop time; inf = until resumed
        self.away_until: float | None = None  # wall time until which the sensor stays out of reach
        self.overruns = 0
        self.conn_param_requests: list[dict] = []
        self.connections = 0
        self.disconnections: list[dict] = []
        self.serial = f"{0x0C1A00 + index:06X}"
        self.manufacturer = "MbientLab Inc"
        self.firmware = "1.7.3"
        self.board = Board(name, model, bytes(self.public_address.address_bytes),
                           self._send, self.request_conn_params, self.drop_link, self._delivering,
                           drift_ppm=drift_ppm)
        self._build_gatt()
        self.device.on("connection", self._on_connection)

    # -- GATT -------------------------------------------------------------------
    def _build_gatt(self) -> None:
        self.command_char = Characteristic(
            COMMAND_CHAR,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.WRITEABLE,
            CharacteristicValue(write=lambda conn, value: self._on_write(bytes(value))),
        )
        self.notify_char = Characteristic(
            NOTIFY_CHAR, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
        self.notify_char.on("subscription", self._on_subscription)

        def dis(uuid, getter):
            return Characteristic(uuid, Characteristic.Properties.READ,
                                  Characteristic.READABLE,
                                  CharacteristicValue(read=lambda conn: getter().encode()))

        self.device.add_service(Service(METAWEAR_SERVICE, [self.command_char, self.notify_char]))
        self.device.add_service(Service("180A", [
            dis("2A26", lambda: self.firmware),
            dis("2A24", lambda: self.board.model_number),
            dis("2A27", lambda: self.board.hardware_revision),
            dis("2A29", lambda: self.manufacturer),
            dis("2A25", lambda: self.serial),
        ]))

    def _on_write(self, value: bytes) -> None:
        try:
            self.board.on_command(value)
        except Exception:  # a bad command must not break the GATT server
            log.exception("sensor %d: command %s failed", self.index, value.hex())

    async def start(self) -> None:
        await self.device.power_on()
        await self.advertise()

    async def advertise(self) -> None:
        await self.device.start_advertising(
            own_address_type=(hci.OwnAddressType.PUBLIC if self.adv_public
                              else hci.OwnAddressType.RANDOM),
            auto_restart=True,
            advertising_data=advertising_data(self.name),
        )

    # -- connection events ------------------------------------------------------
    def _on_connection(self, connection) -> None:
        self.connection = connection
        self.notify_enabled = False
        self.connections += 1
        connection.on("disconnection", lambda reason: self._on_disconnection(connection, reason))

    def _on_disconnection(self, connection, reason) -> None:
        if self.connection is connection:
            self.connection = None
            self.notify_enabled = False
        self.disconnections.append({"reason": int(reason), "t": round(time.time(), 3)})
        del self.disconnections[:-20]
        self.board.on_disconnect()

    def _on_subscription(self, bearer, notify_enabled, indicate_enabled) -> None:
        self.notify_enabled = bool(notify_enabled)

    # -- output used by the board ---------------------------------------------------
    def is_silent(self) -> bool:
        if self.silent_until is None:
            return False
        if asyncio.get_running_loop().time() >= self.silent_until:
            self.silent_until = None
            return False
        return True

    def _delivering(self) -> bool:
        return self.connection is not None and self.notify_enabled and not self.is_silent()

    def _send(self, value: bytes) -> bool:
        conn = self.connection
        if conn is None or not self.notify_enabled or self.is_silent():
            return False
        pdu = struct.pack("<BH", 0x1B, self.notify_char.handle) + value
        self.host.send_l2cap_pdu(conn.handle, ATT_CID, pdu)
        return True

    def request_conn_params(self, interval_min, interval_max, latency, timeout, source):
        record = {"source": source, "min": interval_min, "max": interval_max,
                  "latency": latency, "timeout": timeout, "result": "pending"}
        self.conn_param_requests.append(record)
        del self.conn_param_requests[:-20]
        conn = self.connection
        if conn is None:
            record["result"] = "not connected"
            return record
        asyncio.get_running_loop().create_task(self._conn_param_request(conn, record))
        return record

    async def _conn_param_request(self, conn, record) -> None:
        manager = self.device.l2cap_channel_manager
        try:
            result = await asyncio.wait_for(
                manager.update_connection_parameters(
                    conn, record["min"], record["max"], record["latency"], record["timeout"]),
                timeout=10.0)
            record["result"] = "accepted" if result == 0 else "rejected"
            record["code"] = int(result)
        except asyncio.TimeoutError:
            manager.connection_parameters_update_response = None
            record["result"] = "timeout"
        except Exception as error:  # e.g. a request already pending
            record["result"] = f"error: {error}"

    def drop_link(self, reason: int = 0x13, away: float = 0.0) -> bool:
        """Peripheral-side disconnection, done at the link layer (any reason code). With `away`
        (seconds), the sensor then stays out of reach that long: it does not advertise, so no host
        can connect (a walk out of range); its board goes on producing and logging samples."""
        conn = self.connection
        if conn is None:
            return False
        ctrl_conn = self.controller.find_le_connection_by_handle(conn.handle)
        if ctrl_conn is None:
            return False
        # The controller advertises through a legacy advertising set (extended advertising) or a
        # legacy advertiser, depending on what it supports.
        advertiser = getattr(self.device, "legacy_advertising_set", None) or self.device.legacy_advertiser
        if away > 0 and advertiser is not None:
            # bumble restarts advertising on disconnection through this method: not while away.
            async def stay_quiet() -> None:
                return None
            advertiser.start = stay_quiet
            self.away_until = time.time() + away
            asyncio.get_running_loop().create_task(self._come_back(away))
        ctrl_conn.send_ll_control_pdu(ll.TerminateInd(reason))
        self.controller.on_le_disconnected(ctrl_conn, reason)
        # The host hears of it a loop iteration later; a notification sent meanwhile would reach a
        # controller without the link and vanish, yet count as delivered.
        self.connection = None
        self.notify_enabled = False
        return True

    async def _come_back(self, away: float) -> None:
        await asyncio.sleep(away)
        try:
            await self.device.stop_advertising()
        except Exception:  # not advertising: nothing to stop
            pass
        self.device.legacy_advertiser = None
        if hasattr(self.device, "legacy_advertising_set"):
            self.device.legacy_advertising_set = None
        self.away_until = None
        await self.advertise()

    def status(self, gateways: list[HostFacingController]) -> dict:
        conn = self.connection
        a_handle = None
        holder = peer_fleet.connected_gateway(gateways, self)
        if holder is not None:
            for c in gateways[holder].le_connections.values():
                if c.peer_address == self.adv_address:
                    a_handle = c.handle
        params = None
        if conn is not None and getattr(conn, "parameters", None) is not None:
            p = conn.parameters
            params = {"interval_ms": p.connection_interval,
                      "latency": p.peripheral_latency,
                      "timeout_ms": p.supervision_timeout}
        return {
            "index": self.index,
            "name": self.name,
            "address": str(self.adv_address),
            "address_type": "public" if self.adv_public else "random",
            "connected": conn is not None,
            "host_handle": a_handle,
            "gateway": holder,
            "connection_parameters": params,
            "notify_enabled": self.notify_enabled,
            "silent": self.is_silent(),
            "away_until": self.away_until,
            "connections": self.connections,
            "disconnections": self.disconnections,
            "conn_param_requests": self.conn_param_requests,
            "buffer_overruns": self.overruns,
            "firmware": self.firmware,
            **self.board.status(),
        }


class Peer:
    def __init__(self, args):
        self.args = args
        self.link = RoutingLink()
        self.gateways = peer_fleet.make_gateways(self.link, args.gateways, args.scan_reports)
        self.controller_a = self.gateways[0]
        self.controller_a.on_overrun = self._on_overrun
        self.h4s = [H4Server(g) for g in self.gateways]
        self.h4 = self.h4s[0]
        self.sensors = [
            Sensor(i, self.link, args.model, args.adv_address == "public", args.name,
                   args.drift_ppm[i])
            for i in range(args.sensors)
        ]
        self.stopped = asyncio.Event()
        self.control_server = None

    def _on_overrun(self, handle: int, record: dict) -> None:
        for c in self.controller_a.le_connections.values():
            if c.handle == handle:
                for s in self.sensors:
                    if s.adv_address == c.peer_address:
                        s.overruns += 1

    async def run(self) -> None:
        for sensor in self.sensors:
            await sensor.start()
        hci_port = await self.h4.start(self.args.hci_port)
        hci_ports = [hci_port] + [await server.start(0) for server in self.h4s[1:]]
        self.control_server = await asyncio.start_server(
            self._control_client, "127.0.0.1", self.args.control_port)
        control_port = self.control_server.sockets[0].getsockname()[1]
        sys.stdout.write(f"READY hci={hci_port} control={control_port} hci_ports={','.join(map(str, hci_ports))}\n")
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stopped.set)
        if self.args.exit_with_parent:
            loop.create_task(self._watch_parent(os.getppid()))
        await self.stopped.wait()
        for sensor in self.sensors:
            sensor.board.stop()
        self.control_server.close()
        for server in self.h4s:
            await server.close()

    async def _watch_parent(self, parent: int) -> None:
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
        log.warning("parent process %d went away, stopping", parent)
        self.stopped.set()

    # -- control channel ----------------------------------------------------------
    async def _control_client(self, reader, writer) -> None:
        try:
            while not reader.at_eof():
                line = await reader.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    request = json.loads(line)
                    if not isinstance(request, dict):
                        raise ValueError("request must be a JSON object")
                    reply = {"ok": True, **(await self.execute(request) or {})}
                except Exception as error:
                    reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
                writer.write((json.dumps(reply) + "\n").encode())
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass  # client gone, or shutting down
        finally:
            writer.close()

    def _sensor(self, request) -> Sensor:
        index = request.get("sensor", 0)
        if not isinstance(index, int) or not 0 <= index < len(self.sensors):
            raise ValueError(f"no sensor {index!r}")
        return self.sensors[index]

    async def execute(self, request: dict) -> dict | None:
        cmd = request.get("cmd")
        a = self.controller_a
        if cmd == "status":
            return {
                "controller": {
                    "le_acl_size": a.le_acl_data_packet_length,
                    "le_acl_credits": a.total_num_le_acl_data_packets,
                    "completion_delay_ms": round(a.completion_delay * 1000, 3),
                    "outstanding": a.total_outstanding(),
                    "max_outstanding_seen": a.max_outstanding_seen,
                    "overruns": a.overrun_count,
                    "overrun_records": a.overruns,
                    "acl_from_host": a.acl_from_host,
                    "acl_to_host": a.acl_to_host,
                    "hci_client_connected": self.h4.writer is not None,
                    "hci_clients_served": self.h4.clients_served,
                    "hci_resets": a.hci_resets,
                    "commands_swallowed": [f"0x{o:04x}" for o in a.swallowed[-20:]],
                    "swallow_remaining": a.swallow_remaining,
                    "scanning": a.le_scan_enable,
                    "stale_acl_from_host": a.stale_acl_from_host,
                    "stale_acl_from_link": a.stale_acl_from_link,
                    "hci_write_buffer_bytes": (
                        self.h4.writer.transport.get_write_buffer_size()
                        if self.h4.writer is not None else 0),
                },
                "sensors": [s.status(self.gateways) for s in self.sensors],
                "gateways": peer_fleet.gateways_status(self.gateways, self.h4s),
            }
        if cmd == "set_range":
            return peer_fleet.set_range(self.link, self.gateways, self._sensor(request), request)
        if cmd == "acl_buffer":
            size = int(request.get("size", 27))
            credits = int(request.get("credits", 64))
            delay = float(request.get("completion_delay_ms", 0))
            if not 1 <= size <= 65535 or not 1 <= credits <= 65535 or delay < 0:
                raise ValueError("size and credits must be 1..65535, delay >= 0")
            a.configure_acl_buffer(size, credits, delay)
            return {"size": size, "credits": credits, "completion_delay_ms": delay}
        if cmd == "swallow_commands":
            count = int(request.get("count", 1))
            opcode = request.get("opcode")
            if count < 0:
                raise ValueError("count must be >= 0")
            a.swallow_remaining = count
            a.swallow_opcode = int(opcode, 0) if isinstance(opcode, str) else opcode
            return {"count": count, "opcode": a.swallow_opcode, "swallowed": [f"0x{o:04x}" for o in a.swallowed[-20:]]}
        if cmd == "stop":
            asyncio.get_running_loop().call_later(0.05, self.stopped.set)
            return {}
        if cmd == "time":
            # This machine's clocks, read as late as possible: a client whose own clock is off (a VM
            # guest) takes its offset as time - (sent + received) / 2, within +-(round trip) / 2.
            return {"time": time.time(), "monotonic": time.monotonic()}
        sensor = self._sensor(request)
        board = sensor.board
        if cmd == "conn_param_update":
            record = sensor.request_conn_params(
                int(request.get("min", 6)), int(request.get("max", 6)),
                int(request.get("latency", 0)), int(request.get("timeout", 600)), "control")
            if record["result"] == "not connected":
                raise RuntimeError("sensor not connected")
            if request.get("wait", True):
                for _ in range(110):
                    if record["result"] != "pending":
                        break
                    await asyncio.sleep(0.1)
            return {"request": record}
        if cmd == "drop_link":
            reason = int(request.get("reason", 0x13))
            if reason not in (0x08, 0x13, 0x16, 0x3B, 0x3D):
                raise ValueError("reason must be one of 0x08, 0x13, 0x16, 0x3b, 0x3d")
            away = float(request.get("away_s", 0))
            if not 0 <= away <= 3600:
                raise ValueError("away_s must be 0 to 3600 seconds")
            if not sensor.drop_link(reason, away):
                raise RuntimeError("sensor not connected")
            return {"reason": reason, "away_s": away}
        if cmd == "silent":
            seconds = float(request.get("seconds", 0))
            loop_now = asyncio.get_running_loop().time()
            if seconds < 0:
                sensor.silent_until = None
            elif seconds == 0:
                sensor.silent_until = float("inf")
            else:
                sensor.silent_until = loop_now + seconds
            return {"silent": sensor.is_silent()}
        if cmd == "press_button":
            hold = float(request.get("hold_ms", 100)) / 1000
            return {"sent": board.press_button(hold)}
        if cmd == "set_model":
            board.set_model(str(request.get("model")))
            return {"model": board.model}
        if cmd == "set_battery":
            board.battery_pct = int(request.get("percent", board.battery_pct)) & 0xFF
            board.battery_mv = int(request.get("mv", board.battery_mv)) & 0xFFFF
            return {"percent": board.battery_pct, "mv": board.battery_mv}
        if cmd == "drop_samples":
            count = int(request.get("count", 1))
            if count < 0:
                raise ValueError("count must be >= 0")
            board.drop_remaining += count
            return {"drop_pending": board.drop_remaining}
        if cmd == "restart":
            keep = bool(request.get("keep_state", True))
            board.reset(keep_state=keep)
            dropped = sensor.drop_link(0x08)
            return {"reset_uid": board.reset_uid, "link_dropped": dropped}
        if cmd == "log_capacity":
            entries = int(request.get("entries", 1_000_000))
            if entries < 1:
                raise ValueError("entries must be >= 1")
            trimmed = board.log.set_capacity(entries)
            return {"capacity": entries, "stored": len(board.log), "trimmed": trimmed}
        if cmd == "log_readout_rate":
            rate = float(request.get("notifications_per_s", 2000))
            if rate < 0:
                raise ValueError("notifications_per_s must be >= 0 (0 = unpaced)")
            board.readout_rate = rate
            return {"notifications_per_s": rate}
        if cmd == "set_tick":
            tick = int(request.get("tick", 0))
            if not 0 <= tick < 1 << 32:
                raise ValueError("tick must be 0 to 2^32 - 1 (a u32)")
            board.set_tick(tick)
            return {"tick": board.tick(), "reset_uid": board.reset_uid}
        if cmd == "log_status":
            return {"log": board.log_status()}
        if cmd == "set_drift":
            ppm = request.get("ppm")
            if isinstance(ppm, bool) or not isinstance(ppm, (int, float)):
                raise ValueError("ppm must be a number (positive: the board's clock runs fast)")
            board.set_drift(ppm)
            return {"drift_ppm": board.osc.ppm}
        if cmd == "slow_discovery":
            board.discovery_delay = max(0.0, float(request.get("delay_ms", 0)) / 1000)
            return {"delay_ms": board.discovery_delay * 1000}
        if cmd == "delay_clock_reply":
            board.clock_reply_delay = max(0.0, float(request.get("delay_ms", 0)) / 1000)
            return {"delay_ms": board.clock_reply_delay * 1000}
        if cmd == "set_dis":
            field = request.get("field")
            value = str(request.get("value", ""))
            if field not in ("firmware", "manufacturer", "serial"):
                raise ValueError("field must be firmware, manufacturer or serial")
            setattr(sensor, field, value)
            return {field: value}
        raise ValueError(f"unknown command {cmd!r}")


def drift_per_sensor(specs: list[str], sensors: int) -> list[float]:
    """--drift-ppm values, in order: `P` sets every sensor, `I=P` sensor I (0-based)."""
    drift = [0.0] * sensors
    for spec in specs:
        index, _, ppm = spec.rpartition("=")
        value = float(ppm)
        if not abs(value) <= DRIFT_PPM_LIMIT:
            raise ValueError(f"{spec}: drift must be within ±{DRIFT_PPM_LIMIT} ppm")
        if not index:
            drift = [value] * sensors
        elif 0 <= int(index) < sensors:
            drift[int(index)] = value
        else:
            raise ValueError(f"{spec}: no sensor {index}")
    return drift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hci-port", type=int, default=0)
    parser.add_argument("--control-port", type=int, default=0)
    parser.add_argument("--sensors", type=int, default=1)
    parser.add_argument("--gateways", type=int, default=1,
                        help="host-facing controllers, one H4 port each (hci_ports= in READY)")
    parser.add_argument("--model", choices=["MMR", "MMS"], default="MMR")
    parser.add_argument("--name", default="MetaWear")
    parser.add_argument("--adv-address", choices=["public", "random"], default="public",
                        help="own address type the sensors advertise with")
    parser.add_argument("--scan-reports", choices=["spec", "bumble"], default="spec",
                        help="spec: one legacy report per ADV for a legacy scan (extended "
                             "reports with the legacy bit for an extended scan), duplicate "
                             "filtering honoured; bumble: the stock emulator's reports")
    parser.add_argument("--drift-ppm", action="append", default=[], metavar="[I=]P",
                        help="crystal drift of the boards' clocks in ppm (positive: fast): P for "
                             "every sensor, I=P for sensor I; repeatable, later ones win")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="stop when the parent process dies (no orphans from killed tests)")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args()
    if not 1 <= args.sensors <= 200:
        parser.error("--sensors must be 1..200")
    if not 1 <= args.gateways <= len(peer_fleet.CENTRAL_ADDRESSES):
        parser.error(f"--gateways must be 1..{len(peer_fleet.CENTRAL_ADDRESSES)}")
    try:
        args.drift_ppm = drift_per_sensor(args.drift_ppm, args.sensors)
    except ValueError as error:
        parser.error(f"--drift-ppm {error}")
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")

    async def run():
        await Peer(args).run()

    asyncio.run(run())


if __name__ == "__main__":
    main()
