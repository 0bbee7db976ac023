"""The peer's self-test, its log part: the MetaWear logging module as the SDK drives it
(loggers, the log clock, downloads with and without the page buffer, resets, the flash full)."""

from __future__ import annotations

import asyncio
import struct
import time

from bumble import hci
from bumble.core import PhysicalTransport


from selftest_common import (Board, Control, check, collect, contiguous, expected_gyro, make_host, parse_gyro_unpacked, peer_cpu_seconds, scan)

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
