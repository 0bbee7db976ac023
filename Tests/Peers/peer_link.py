"""Link-layer pieces of the MetaWear test peer (bumble 0.0.236).

* ``RoutingLink``: a ``LocalLink`` whose LE ACL routing uses the address each side
  actually used for the connection (works around bumble quirk 1: a central that
  connects with a *public* own address had every ACL packet dropped, because the
  stock link stamps LE data with the sender's *random* address).
* ``QuietController`` / ``QuietHost``: the stock classes minus the per-packet
  ``logger.debug(f'...{packet}')`` calls, which format every packet even when debug
  logging is off and halve throughput.
* ``HostFacingController``: controller "A", the one our HCI host talks to over H4.
  Adds: configurable LE ACL buffer (size/credits), controller->host fragmentation
  (quirk 7), host->controller credit/size enforcement with overrun records and
  delayed Number Of Completed Packets (quirk 8), a Reset that really drops links,
  scanning and pending connects (quirk 5), a Create Connection Cancel that really
  cancels (quirk 6), and Command Status "Unknown HCI Command" for commands bumble
  has no handler for (part of quirk 2).
* ``H4Server``: our own asyncio TCP server (TCP_NODELAY, one client at a time,
  one H4 parser per client) in front of controller A.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import time
from typing import Callable

from bumble import hci, ll
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.host import Host
from bumble.link import LocalLink

log = logging.getLogger("metawear_peer.link")


# ---------------------------------------------------------------------------
class RoutingLink(LocalLink):
    """LocalLink that routes LE ACL by the connection's own/peer addresses, and knows which
    host-facing controllers (gateways) hear each sensor, at what signal (control: set_range)."""

    def __init__(self):
        super().__init__()
        # sensor controller -> {host-facing controller: RSSI}; a sensor absent here is heard by
        # every host-facing controller at DEFAULT_RSSI.
        self.reach: dict[Controller, dict[Controller, int]] = {}

    DEFAULT_RSSI = -50

    def hears(self, host, sensor) -> bool:
        reach = self.reach.get(sensor)
        return reach is None or host in reach

    def rssi(self, host, advertiser_address) -> int:
        sensor = self.find_le_controller(advertiser_address)
        return self.reach.get(sensor, {}).get(host, self.DEFAULT_RSSI)

    def send_advertising_pdu(self, sender_controller, packet):
        """Advertising and CONNECT_IND reach only the controllers in range of each other."""
        loop = asyncio.get_running_loop()
        sender_hosts = isinstance(sender_controller, HostFacingController)
        for c in self.controllers:
            if c is sender_controller:
                continue
            if sender_hosts and isinstance(c, HostFacingController):
                continue  # gateways do not connect to each other
            host, sensor = (sender_controller, c) if sender_hosts else (c, sender_controller)
            if isinstance(host, HostFacingController) and not self.hears(host, sensor):
                continue
            loop.call_soon(c.on_ll_advertising_pdu, packet)

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(
                sender_controller, destination_address, transport, data
            )
        conn = sender_controller.le_connections.get(destination_address)
        source = conn.self_address if conn else sender_controller.random_address
        target = None
        for c in self.controllers:
            if c is sender_controller:
                continue
            peer_conn = c.le_connections.get(source)
            if peer_conn is not None and peer_conn.self_address == destination_address:
                target = c
                break
        if target is None:
            target = self.find_le_controller(destination_address)
        if target is None:
            return
        asyncio.get_running_loop().call_soon(
            target.on_link_acl_data, source, transport, data
        )


# ---------------------------------------------------------------------------
class QuietController(Controller):
    """Controller without eager per-packet debug formatting."""

    def on_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_Command):
            self.on_hci_command_packet(packet)
        elif isinstance(packet, hci.HCI_AclDataPacket):
            self.on_hci_acl_data_packet(packet)
        elif isinstance(packet, hci.HCI_Event):
            self.on_hci_event_packet(packet)

    def send_hci_packet(self, packet):
        if self.host:
            asyncio.get_running_loop().call_soon(self.host.on_packet, bytes(packet))

    def on_hci_acl_data_packet(self, packet):
        connection = self.find_connection_by_handle(packet.connection_handle)
        if connection is None:
            # Packets still queued by the host when a link dropped: count, don't log.
            self.stale_acl = getattr(self, "stale_acl", 0) + 1
            return
        connection.on_hci_acl_data_packet(packet)

    def send_raw_to_host(self, raw: bytes) -> None:
        if self.host:
            asyncio.get_running_loop().call_soon(self.host.on_packet, raw)


class QuietHost(Host):
    """Host without eager per-packet debug formatting."""

    def send_hci_packet(self, packet):
        if self.hci_sink:
            self.hci_sink.on_packet(bytes(packet))

    def on_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_Event):
            self.on_hci_event_packet(packet)
        elif isinstance(packet, hci.HCI_AclDataPacket):
            self.on_hci_acl_data_packet(packet)
        else:
            super().on_hci_packet(packet)


# ---------------------------------------------------------------------------
class HostFacingController(QuietController):
    """Controller A: the emulated controller exposed to the host under test."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.le_acl_data_packet_length = 27
        self.total_num_le_acl_data_packets = 64
        self.acl_data_packet_length = 27
        self.total_num_acl_data_packets = 64
        self.completion_delay = 0.0
        self.outstanding: dict[int, int] = {}  # handle -> ACL packets not completed
        self.max_outstanding_seen = 0
        self.overruns: list[dict] = []
        self.overrun_count = 0
        self.acl_from_host = 0
        self.acl_to_host = 0
        self.on_overrun: Callable[[int, dict], None] | None = None
        self.hci_resets = 0
        self.stale_acl_from_host = 0
        self.stale_acl_from_link = 0
        self.swallow_remaining = 0  # commands to drop without any answer (control: swallow_commands)
        self.swallow_opcode: int | None = None
        self.swallowed: list[int] = []
        self.failed_establishments = 0  # CONNECT_INDs no peripheral took (another central was first)

    # -- configuration -----------------------------------------------------
    def configure_acl_buffer(self, size: int, credits: int, delay_ms: float) -> None:
        self.le_acl_data_packet_length = size
        self.total_num_le_acl_data_packets = credits
        self.acl_data_packet_length = size
        self.total_num_acl_data_packets = credits
        self.completion_delay = max(0.0, delay_ms / 1000.0)

    def total_outstanding(self) -> int:
        return sum(self.outstanding.values())

    # -- host -> controller ACL: credits and size enforcement ---------------
    def on_hci_acl_data_packet(self, packet):
        handle = packet.connection_handle
        connection = self.find_connection_by_handle(handle)
        self.acl_from_host += 1
        if connection is None:
            # Sent before the host saw the Disconnection Complete; the host counts
            # it as flushed, so no Number Of Completed Packets for it.
            self.stale_acl_from_host += 1
            return
        count = self.outstanding.get(handle, 0) + 1
        self.outstanding[handle] = count
        total = self.total_outstanding()
        self.max_outstanding_seen = max(self.max_outstanding_seen, total)
        if total > self.total_num_le_acl_data_packets:
            self._overrun(handle, "credits", outstanding=total,
                          credits=self.total_num_le_acl_data_packets)
        if len(packet.data) > self.le_acl_data_packet_length:
            self._overrun(handle, "size", length=len(packet.data),
                          size=self.le_acl_data_packet_length)
        # The link delivers the data at once; only the completion is delayed.
        connection.assembler.feed_packet(packet)
        if self.completion_delay > 0:
            asyncio.get_running_loop().call_later(
                self.completion_delay, self._complete, handle
            )
        else:
            self._complete(handle)

    def _overrun(self, handle: int, kind: str, **details) -> None:
        self.overrun_count += 1
        record = {"handle": handle, "kind": kind, "t": round(time.time(), 3), **details}
        if len(self.overruns) < 50:
            self.overruns.append(record)
        if self.on_overrun:
            self.on_overrun(handle, record)

    def _complete(self, handle: int) -> None:
        count = self.outstanding.get(handle)
        if not count:
            return  # flushed by a disconnection or a reset
        self.outstanding[handle] = count - 1
        # HCI_Number_Of_Completed_Packets: event 0x13, 1 handle
        self.send_raw_to_host(struct.pack("<BBBBHH", 0x04, 0x13, 5, 1, handle, 1))

    # -- controller -> host ACL: fragmentation ------------------------------
    def on_link_acl_data(self, sender_address, transport, data):
        connection = self.le_connections.get(sender_address)
        if connection is None:
            self.stale_acl_from_link += 1  # in flight when the link dropped
            return
        size = max(1, self.le_acl_data_packet_length)
        handle = connection.handle
        for offset in range(0, len(data), size):
            chunk = data[offset:offset + size]
            pb = 0x2 if offset == 0 else 0x1
            self.acl_to_host += 1
            self.send_raw_to_host(
                struct.pack("<BHH", 0x02, handle | (pb << 12), len(chunk)) + chunk
            )

    # -- connections --------------------------------------------------------
    def create_le_connection(self, peer_address):
        """As a real initiator: CONNECT_IND goes out and Connection Complete is reported at once.
        A peripheral that did not take it (another central was first: a MetaWear accepts one at
        a time, and stops advertising) never answers; the link fails to be established (0x3E)
        after six connection intervals, as the Core spec has it (Vol 6, Part B, 4.5.2)."""
        super().create_le_connection(peer_address)
        connection = self.le_connections.get(peer_address)
        if connection is None:
            return
        asyncio.get_running_loop().call_later(0.05, self._confirm_established, connection)

    def _confirm_established(self, connection) -> None:
        if self.le_connections.get(connection.peer_address) is not connection:
            return  # already gone
        peripheral = self.link.find_le_controller(connection.peer_address)
        accepted = peripheral is not None and any(
            c.peer_address == connection.self_address for c in peripheral.le_connections.values())
        if not accepted:
            self.failed_establishments += 1
            self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_FAILED_TO_BE_ESTABLISHED_ERROR)

    def on_le_disconnected(self, connection, reason):
        self.outstanding.pop(connection.handle, None)
        super().on_le_disconnected(connection, reason)

    def drop_all_links(self, reason: int, notify_host: bool) -> None:
        """Terminate every LE link towards the peripherals."""
        for connection in list(self.le_connections.values()):
            connection.send_ll_control_pdu(ll.TerminateInd(reason))
            self.outstanding.pop(connection.handle, None)
            if notify_host:
                self.on_le_disconnected(connection, reason)
            else:
                self.le_connections.pop(connection.peer_address, None)

    def host_gone(self) -> None:
        """The TCP client went away: behave like a controller that lost power."""
        self.drop_all_links(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR, notify_host=False)
        self._reset_state()

    def _reset_state(self) -> None:
        self.le_scan_enable = False
        self.pending_le_connection = None
        self.le_legacy_advertiser.stop()
        for adv in self.advertising_sets.values():
            adv.stop()
        self.advertising_sets.clear()
        self.outstanding.clear()

    # -- HCI commands -------------------------------------------------------
    def on_hci_command_packet(self, command):
        if self.swallow_remaining > 0 and self.swallow_opcode in (None, command.op_code):
            # Test hook: behave like a controller that never answers (no status, no complete).
            self.swallow_remaining -= 1
            self.swallowed.append(command.op_code)
            return
        handler = getattr(self, f"on_{command.name.lower()}", None)
        if handler is None and not isinstance(command, hci.HCI_SyncCommand):
            self._send_hci_command_status(
                hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR, command.op_code
            )
            return
        super().on_hci_command_packet(command)

    def on_hci_reset_command(self, command):
        self.hci_resets += 1
        # A real reset drops links silently (no events to the host).
        self.drop_all_links(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR, notify_host=False)
        self._reset_state()
        return super().on_hci_reset_command(command)

    # -- scanning: spec-like advertising reports (quirk 4), unless "bumble" --------
    def on_hci_le_set_scan_enable_command(self, command):
        self.scan_legacy = True
        self.scan_seen = set()
        return super().on_hci_le_set_scan_enable_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.scan_legacy = False
        self.scan_seen = set()
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def on_advertising_pdu(self, pdu):
        if getattr(self, "scan_reports", "spec") != "spec":
            return super().on_advertising_pdu(pdu)
        address = pdu.advertiser_address
        if self.le_scan_enable:
            key = (bytes(address.address_bytes), address.address_type, bytes(pdu.data))
            if not (self.filter_duplicates and key in self.scan_seen):
                self.scan_seen.add(key)
                if getattr(self, "scan_legacy", True):
                    rssi = self.link.rssi(self, address)
                    report = hci.HCI_LE_Advertising_Report_Event.Report(
                        event_type=hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND,
                        address_type=address.address_type, address=address,
                        data=pdu.data, rssi=rssi)
                    self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
                else:
                    ext = hci.HCI_LE_Extended_Advertising_Report_Event
                    report = ext.Report(
                        event_type=0x13,  # connectable | scannable | legacy PDU (ADV_IND)
                        address_type=address.address_type, address=address,
                        primary_phy=hci.Phy.LE_1M, secondary_phy=0,
                        advertising_sid=0xFF, tx_power=0x7F, rssi=self.link.rssi(self, address),
                        periodic_advertising_interval=0, direct_address_type=0,
                        direct_address=hci.Address.ANY, data=pdu.data)
                    self.send_hci_packet(ext([report]))
        pending = self.pending_le_connection
        if pending is not None and pending.peer_address == address:
            self.create_le_connection(address)

    # Commands the stock emulator leaves unanswered or answers without a handle.
    def on_hci_read_remote_version_information_command(self, command):
        handle = command.connection_handle
        known = self.find_le_connection_by_handle(handle) is not None
        self._send_hci_command_status(
            hci.HCI_COMMAND_STATUS_PENDING if known
            else hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
        if known:
            self.send_hci_packet(hci.HCI_Read_Remote_Version_Information_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, connection_handle=handle,
                version=0x09, manufacturer_name=0x000D, subversion=0x0001))

    def on_hci_le_set_phy_command(self, command):
        handle = command.connection_handle
        known = self.find_le_connection_by_handle(handle) is not None
        self._send_hci_command_status(
            hci.HCI_COMMAND_STATUS_PENDING if known
            else hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
        if known:
            self.send_hci_packet(hci.HCI_LE_PHY_Update_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, connection_handle=handle,
                tx_phy=hci.Phy.LE_1M, rx_phy=hci.Phy.LE_1M))

    def on_hci_le_set_data_length_command(self, command):
        handle = command.connection_handle
        if self.find_le_connection_by_handle(handle) is None:
            return hci.HCI_StatusAndConnectionHandleReturnParameters(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=handle)
        octets = min(max(command.tx_octets, 27), 251)
        tx_time = min(max(command.tx_time, 328), 2120)
        asyncio.get_running_loop().call_soon(
            self.send_hci_packet,
            hci.HCI_LE_Data_Length_Change_Event(
                connection_handle=handle, max_tx_octets=octets, max_tx_time=tx_time,
                max_rx_octets=octets, max_rx_time=tx_time))
        return hci.HCI_StatusAndConnectionHandleReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=handle)

    def on_hci_read_rssi_command(self, command):
        known = self.find_connection_by_handle(command.handle) is not None
        return hci.HCI_Read_RSSI_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS if known
            else hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            handle=command.handle, rssi=-50 if known else 127)

    def on_hci_le_create_connection_cancel_command(self, command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(
                hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR
            )
        self.pending_le_connection = None
        result = hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

        def complete():
            self.send_hci_packet(
                hci.HCI_LE_Connection_Complete_Event(
                    status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                    connection_handle=0,
                    role=hci.Role.CENTRAL,
                    peer_address_type=pending.peer_address.address_type,
                    peer_address=pending.peer_address,
                    connection_interval=0,
                    peripheral_latency=0,
                    supervision_timeout=0,
                    central_clock_accuracy=0,
                )
            )

        # Command Complete first, then the LE Connection Complete (status 0x02).
        asyncio.get_running_loop().call_soon(complete)
        return result


# ---------------------------------------------------------------------------
_H4_HEADERS = {
    0x01: (3, lambda h: h[2]),                                   # command
    0x02: (4, lambda h: h[2] | (h[3] << 8)),                     # ACL
    0x03: (3, lambda h: h[2]),                                   # SCO
    0x04: (2, lambda h: h[1]),                                   # event
    0x05: (4, lambda h: (h[2] | (h[3] << 8)) & 0x3FFF),          # ISO
}


class H4Parser:
    """Incremental H4 framer: feed bytes, get whole packets (type byte included)."""

    def __init__(self, on_packet: Callable[[bytes], None]):
        self.on_packet = on_packet
        self.buffer = bytearray()

    def feed(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        while buf:
            spec = _H4_HEADERS.get(buf[0])
            if spec is None:
                raise ValueError(f"bad H4 packet type 0x{buf[0]:02x}")
            hdr_len, length_of = spec
            if len(buf) < 1 + hdr_len:
                return
            total = 1 + hdr_len + length_of(buf[1:1 + hdr_len])
            if len(buf) < total:
                return
            packet = bytes(buf[:total])
            del buf[:total]
            self.on_packet(packet)


class H4Server:
    """TCP server for controller A: one client at a time, TCP_NODELAY."""

    def __init__(self, controller: HostFacingController):
        self.controller = controller
        self.writer: asyncio.StreamWriter | None = None
        self.server: asyncio.base_events.Server | None = None
        self.clients_served = 0
        self.bad_packets = 0
        controller.host = self  # controller -> host packets land in on_packet

    async def start(self, port: int) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", port)
        return self.server.sockets[0].getsockname()[1]

    # Sink interface used by the controller (bytes include the H4 type byte).
    def on_packet(self, packet: bytes) -> None:
        writer = self.writer
        if writer is not None and not writer.is_closing():
            writer.write(packet)

    def _deliver(self, packet: bytes) -> None:
        try:
            parsed = hci.HCI_Packet.from_bytes(packet)
        except Exception as error:  # unparsable: answer commands anyway
            self.bad_packets += 1
            log.warning("unparsable packet from host %s: %s", packet.hex(), error)
            if packet[0] == 0x01:
                opcode = packet[1] | (packet[2] << 8)
                name = hci.HCI_Command.command_names.get(opcode, "")
                known = bool(name) and hasattr(self.controller, f"on_{name.lower()}")
                self.controller._send_hci_command_status(
                    hci.HCI_INVALID_HCI_COMMAND_PARAMETERS_ERROR if known
                    else hci.HCI_UNKNOWN_HCI_COMMAND_ERROR, opcode
                )
            return
        try:
            self.controller.on_hci_packet(parsed)
        except Exception:
            log.exception("controller failed on %s", packet.hex())
            if packet[0] == 0x01:
                opcode = packet[1] | (packet[2] << 8)
                self.controller._send_hci_command_status(
                    hci.HCI_UNSPECIFIED_ERROR_ERROR, opcode
                )

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        if self.writer is not None:
            log.warning("refusing a second HCI client")
            writer.close()
            return
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.writer = writer
        self.clients_served += 1
        parser = H4Parser(self._deliver)
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                parser.feed(data)
        except ConnectionError as error:
            log.info("HCI client went away: %s", error)
        except ValueError as error:
            log.warning("HCI client dropped (bad H4 stream): %s", error)
        except asyncio.CancelledError:
            pass  # shutting down
        except Exception:
            log.exception("HCI client handler failed")
        finally:
            self.writer = None
            writer.close()
            self.controller.host_gone()

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.server is not None:
            self.server.close()
