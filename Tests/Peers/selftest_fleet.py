"""The self-test's fleet phase: one board heard by two gateways' controllers (`--gateways 2`),
moved between them with `set_range`, and taken by one central at a time."""

from __future__ import annotations

import asyncio
import os
import sys

from bumble import hci
from bumble.core import PhysicalTransport

from selftest_common import HERE, SERVICE, Board, Control, check, make_host

FAILED_TO_ESTABLISH = hci.HCI_ErrorCode.CONNECTION_FAILED_TO_BE_ESTABLISHED_ERROR
SUPERVISION_TIMEOUT = hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR


async def heard(device, seconds=1.5) -> dict:
    """The MetaWear advertisers a host hears within `seconds`, with the RSSI of the last report."""
    found = {}

    def on_adv(adv):
        uuids = adv.data.get(adv.data.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS) or []
        if SERVICE in uuids:
            found[str(adv.address)] = adv.rssi

    device.on("advertisement", on_adv)
    await device.start_scanning(filter_duplicates=False)
    await asyncio.sleep(seconds)  # an absence is what is checked: the whole window is needed
    await device.stop_scanning()
    device.remove_listener("advertisement", on_adv)
    return found


async def connect(device, address, timeout=5):
    return await device.connect(address, transport=PhysicalTransport.LE,
                                own_address_type=hci.OwnAddressType.PUBLIC, timeout=timeout)


async def phase_fleet() -> None:
    cmd = [sys.executable, os.path.join(HERE, "metawear_peer.py"), "--exit-with-parent", "--sensors", "1", "--gateways", "2"]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    hosts = []
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        fields = dict(part.split("=") for part in line.split()[1:])
        ports = [int(p) for p in fields.get("hci_ports", "").split(",") if p]
        check(len(ports) == 2 and ports[0] == int(fields["hci"]), f"fleet: two gateway ports in READY: {line}")
        ctl = Control(int(fields["control"]))
        await ctl.open()
        hosts = [await make_host(port, f"gateway-{i}") for i, port in enumerate(ports)]
        (_, g0), (_, g1) = hosts
        st = await ctl(cmd="status")
        address = st["sensors"][0]["address"]
        gateways = st["gateways"]
        check(len(gateways) == 2 and gateways[0]["address"] != gateways[1]["address"]
              and all(g["hci_client_connected"] for g in gateways), f"fleet: two gateways, own addresses: {gateways}")

        # Heard by both, each at its own signal.
        await ctl(cmd="set_range", sensor=0, rssi={"0": -45, "1": -80})
        h0, h1 = await heard(g0), await heard(g1)
        check(h0.get(address) == -45 and h1.get(address) == -80, f"fleet: heard by both at -45 / -80 dBm: {h0} {h1}")
        bad = await ctl(cmd="set_range", sensor=0, rssi={"2": -40})
        check(bad.get("ok") is False and "no gateway" in bad.get("error", ""), f"fleet: a gateway out of bounds refused: {bad}")

        # Out of range of gateway 0: it neither hears nor reaches the board; gateway 1 does.
        await ctl(cmd="set_range", sensor=0, rssi={"1": -60})
        h0, h1 = await heard(g0), await heard(g1)
        check(address not in h0 and h1.get(address) == -60, f"fleet: in range of gateway 1 only: {h0} {h1}")
        try:
            await connect(g0, address, timeout=1)
            check(False, "fleet: gateway 0 connected to a board out of its range")
        except Exception as error:  # the connection attempt times out
            check(True, f"fleet: gateway 0 cannot connect out of range ({type(error).__name__})")

        # Connected to gateway 1; back in range of both: a connected MetaWear does not advertise.
        conn1 = await connect(g1, address)
        board1 = Board(conn1)
        await board1.setup()
        await ctl(cmd="set_range", sensor=0, rssi=None)
        h0 = await heard(g0, 1.0)
        st = await ctl(cmd="status")
        check(address not in h0 and st["sensors"][0]["gateway"] == 1,
              f"fleet: held by gateway 1, not advertising to gateway 0: {h0}, gateway {st['sensors'][0]['gateway']}")

        # Walks out of gateway 1's range: that link times out, gateway 0 hears it and connects.
        r = await ctl(cmd="set_range", sensor=0, rssi={"0": -50})
        reason = await asyncio.wait_for(board1.disconnected, 5)
        check(r.get("dropped_from") == 1 and reason == SUPERVISION_TIMEOUT,
              f"fleet: moving out of range drops gateway 1's link by supervision timeout: {r}, reason 0x{reason:02x}")
        conn0 = await connect(g0, address)
        board0 = Board(conn0)
        await board0.setup()
        reply = await board0.ask("0080")  # module discovery of the switch module works on the new link
        check(reply[:2] == bytes.fromhex("0080"), "fleet: the board answers on gateway 0's link")
        await conn0.disconnect()
        await asyncio.wait_for(board0.disconnected, 5)

        # Both answer the same advertisement: the board takes the first, the other's link fails
        # to be established (0x3E) and only one central holds it.
        await ctl(cmd="set_range", sensor=0, rssi={})
        async def outcome(device):
            """The link's disconnection reason within a second of its completion, None if it holds."""
            board = Board(await connect(device, address, timeout=5))  # listening from completion on
            try:
                return await asyncio.wait_for(board.disconnected, 1.0)
            except asyncio.TimeoutError:
                return None

        tries = [asyncio.ensure_future(outcome(g)) for g in (g0, g1)]
        await asyncio.sleep(0.1)  # both initiators pending before the board comes into range
        await ctl(cmd="set_range", sensor=0, rssi={"0": -50, "1": -50})
        reasons = [r for r in await asyncio.gather(*tries, return_exceptions=True) if not isinstance(r, Exception)]
        st = await ctl(cmd="status")
        failed = sum(g["failed_establishments"] for g in st["gateways"])
        check(sorted(reasons, key=str) == sorted([FAILED_TO_ESTABLISH, None], key=str) and failed == 1
              and st["sensors"][0]["gateway"] in (0, 1),
              f"fleet: one central at a time; the second's link fails to be established: {reasons}, {failed} failed")
        await ctl(cmd="stop")
        ctl.close()
    finally:
        for transport, _ in hosts:
            await transport.close()
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
