"""The peer's self-test, its drift part: the boards' crystals off by a set ppm, the log tick
and the samples' due times following them."""

from __future__ import annotations

import asyncio
import math
import struct
import time

from bumble import hci
from bumble.core import PhysicalTransport


from selftest_common import Board, Control, check, expected_gyro, make_host, parse_gyro_unpacked, scan
from selftest_log import TICK_MS

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
        # Wall times near 1.8e9 s are doubles 0.24 us apart, so each truth time is rounded by up
        # to that much (CI once saw a step 0.25 us under the fast period): 1 us of slack.
        slack = 1e-6
        check([s["drift_ppm"] for s in segments] == [DRIFT_PPM, -DRIFT_PPM] and run["drift_ppm"] == -DRIFT_PPM
              and 1 / (DRIFT_ODR * (1 + DRIFT_PPM * 1e-6)) - slack <= step <= 1 / (DRIFT_ODR * (1 - DRIFT_PPM * 1e-6)) + slack,
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
