"""Several gateways hearing the same boards: one host-facing controller (and H4 port) per
gateway on the one link, and which of them hear each board, at what signal (`set_range`).

A board out of range of a gateway's controller neither reaches it with advertising nor with a
connection; a board connected to a gateway that it moves out of range of loses the link by
supervision timeout (0x08) and advertises again, to the gateways still in range. A MetaWear
takes one central at a time: the second of two centrals that answer the same advertisement gets
no answer and its link fails to be established (0x3E, `HostFacingController.create_le_connection`).
"""

from __future__ import annotations

from bumble import hci

from peer_link import HostFacingController, RoutingLink

# The first gateway keeps the address the single-gateway peer always had.
CENTRAL_ADDRESSES = ["00:1A:7D:DA:71:0A"] + [f"00:1A:7D:DA:72:{i:02X}" for i in range(1, 8)]


def make_gateways(link: RoutingLink, count: int, scan_reports: str) -> list[HostFacingController]:
    gateways = []
    for i in range(count):
        controller = HostFacingController("A" if i == 0 else f"A{i}", link=link,
                                          public_address=CENTRAL_ADDRESSES[i])
        controller.scan_reports = scan_reports
        gateways.append(controller)
    return gateways


def connected_gateway(gateways: list[HostFacingController], sensor) -> int | None:
    """The index of the gateway whose controller holds a link to `sensor`, if any."""
    for index, gateway in enumerate(gateways):
        if any(c.peer_address == sensor.adv_address for c in gateway.le_connections.values()):
            return index
    return None


def set_range(link: RoutingLink, gateways: list[HostFacingController], sensor, request: dict) -> dict:
    """`{"cmd": "set_range", "sensor": I, "rssi": {"0": -45, "2": -80}}`: the gateways listed hear
    the board at that RSSI (dBm, -127..20), the others not at all; `"rssi": null` puts it back in
    range of every gateway at the default signal."""
    rssi = request.get("rssi")
    if rssi is None:
        link.reach.pop(sensor.controller, None)
    else:
        if not isinstance(rssi, dict):
            raise ValueError("rssi must be an object of gateway index -> dBm, or null")
        reach = {}
        for key, value in rssi.items():
            if not str(key).isdigit() or not 0 <= int(key) < len(gateways):
                raise ValueError(f"no gateway {key!r} (there are {len(gateways)})")
            if isinstance(value, bool) or not isinstance(value, int) or not -127 <= value <= 20:
                raise ValueError(f"rssi of gateway {key} must be an integer dBm, -127 to 20")
            reach[gateways[int(key)]] = value
        link.reach[sensor.controller] = reach
    holder = connected_gateway(gateways, sensor)
    dropped = False
    if holder is not None and not link.hears(gateways[holder], sensor.controller):
        # Walked out of that gateway's range: the link times out (supervision timeout).
        dropped = sensor.drop_link(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)
    return {"in_range": sorted(i for i, g in enumerate(gateways) if link.hears(g, sensor.controller)),
            "dropped_from": holder if dropped else None}


def gateways_status(gateways: list[HostFacingController], servers) -> list[dict]:
    return [{
        "index": i,
        "address": str(g.public_address),
        "hci_client_connected": server.writer is not None,
        "scanning": g.le_scan_enable,
        "connections": len(g.le_connections),
        "failed_establishments": g.failed_establishments,
    } for i, (g, server) in enumerate(zip(gateways, servers))]
