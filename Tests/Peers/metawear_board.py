"""MetaWear board emulation (protocol logic only, no Bluetooth).

A ``Board`` receives the bytes written to the command characteristic (326a9001) and
produces notifications (326a9006) through ``send(value) -> bool`` (False when the
notification could not be delivered: not connected, CCCD off, or silenced).

Waveform (gyro and accelerometer alike; n = per-channel sample counter, 0 at every
start command ``13 01 01`` / ``03 01 01|02``, +1 per sample, dropped or undeliverable
samples included; ODR = configured output data rate in Hz):

    int16(v) = ((v + 32768) mod 65536) - 32768
    x = int16(n)                                   # 0, 1, 2, ... 32767, -32768, ...
    y = round(10000 * sin(2*pi*n / ODR))           # gyro: one period per second
    y = round(10000 * cos(2*pi*n / ODR))           # accelerometer
    z = int16(-n)

Unpacked: one notification ``[mod, data_reg, x, y, z]`` (int16 LE) per sample.
Packed: ``[mod, packed_reg, s(n), s(n+1), s(n+2)]`` per 3 delivered samples, oldest
first (a dropped sample is skipped, so a packet can straddle a gap).
Streaming is paced by the board's own clock: sample k is due at board time b0 + k/ODR and
all due samples are emitted on each wake-up (bursts if the loop fell behind).

Clock drift (``Oscillator``): the board times everything (the log tick, sample due times) from
its 32.768 kHz crystal, which runs ``drift_ppm`` fast (positive) or slow against the host's clock:
a board second lasts 1/(1+e) host seconds, e = ppm * 1e-6. The truth in host wall-clock time is
kept per run (``run_history``: ``t0_wall`` and ``odr`` = nominal ODR * (1+e), per drift setting).

Logging (module 0x0b): while logging is enabled, every sample a stream produces is
written to the emulated flash (``LogStore``) once per trigger whose source is that
stream's data register: entry = ``[id | reset_uid<<5] [tick u32 LE] [4 data bytes]``,
tick = the sample's due time since the last board reset / TICK_S. A readout (``0b 06``)
sends the oldest entries as ``0b 07`` notifications (2 entries, or 1), progress ``0b 08``
and, on logging revision 2, pauses at the end of every 512-entry flash page (``0b 0d``)
until the host confirms with ``0b 0e``. On revision 3 (MetaMotion S) entries first fill a RAM
page of 512 that reaches the flash when full, or on ``0b 10 01`` with logging stopped. The
tick is a u32 that wraps; ``set_tick`` starts it anywhere. See README.md, "Logging".
"""

from __future__ import annotations

import asyncio
import math
import struct
import time
from typing import Callable

TICK_S = 48 / 32768  # logging tick, 1.46484375 ms
LOG_ENTRY = 9        # bytes per log entry on the wire and in LogStore
LOG_PAGE = 512       # entries per flash page (rev 2: page-completed handshake)
LOG_SLOTS = 8        # trigger slots, module-info extra[0] on both models
LOG_CAPACITY = 1_000_000
LOG_READOUT_RATE = 2000.0  # readout notifications per second (0 = unpaced)
TICK_WRAP = 1 << 32        # the log tick is a u32
DRIFT_PPM_LIMIT = 100_000  # |drift| accepted: 10 %, far beyond any crystal, keeps the rate positive

# Module-info answers. Values marked "doc" come from docs/metawear-protocol.md 2.1;
# the others are plausible placeholders (impl 0, rev 0) for modules a gateway
# only needs to see as present.
MODULES_MMR = {
    0x01: "01800000",
    0x02: "02800000",                 # doc
    0x03: "03800101",                 # doc: BMI160 rev 1
    0x09: "09800000",
    0x0A: "0a800000",
    0x0B: "0b800002 08802b0000",      # doc
    0x0C: "0c800000",
    0x11: "11800003",                 # doc
    0x13: "13800001",                 # doc: BMI160 rev 1 (packed 0x07)
    0x14: "14800000",                 # doc: ambient light -> MetaMotion R
    0xFE: "fe800000",
}
MODULES_MMS = {
    0x01: "01800000",
    0x02: "0280000103 00",            # doc
    0x03: "03800400",                 # doc: BMI270
    0x09: "09800000",
    0x0A: "0a800000",
    0x0B: "0b800003 0800 00fb030002", # doc
    0x0C: "0c800000",
    0x11: "1180000a 0700",            # doc
    0x13: "13800100",                 # doc: BMI270
    0xFE: "fe800000",
}
MODELS = {
    "MMR": {"model_number": "5", "modules": MODULES_MMR, "hardware": "0.4",
            "gyro_impl": 0, "acc_impl": 1, "log_revision": 2},
    "MMS": {"model_number": "8", "modules": MODULES_MMS, "hardware": "0.1",
            "gyro_impl": 1, "acc_impl": 4, "log_revision": 3},
}


def int16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


class Oscillator:
    """The board's 32.768 kHz crystal (the nRF52's LFXO) against the host's monotonic clock.

    Board time is what the board's oscillator has counted since the board object was made, in
    nominal seconds: it advances (1+e) times as fast as host time, e = ppm * 1e-6. A new drift
    re-anchors the line at the current instant, so board time stays continuous (no tick jumps,
    no sample skipped or repeated) and only its slope changes."""

    def __init__(self, ppm: float = 0.0):
        self.host_anchor = time.monotonic()
        self.board_anchor = 0.0
        self.ppm = 0.0
        self.rate = 1.0
        self.set_ppm(ppm, self.host_anchor)

    def set_ppm(self, ppm: float, now: float) -> None:
        """Drift `ppm` from host monotonic time `now` on."""
        ppm = float(ppm)
        if not abs(ppm) <= DRIFT_PPM_LIMIT:   # also refuses NaN
            raise ValueError(f"drift must be within ±{DRIFT_PPM_LIMIT} ppm, not {ppm}")
        self.board_anchor = self.board_time(now)
        self.host_anchor = now
        self.ppm = ppm
        self.rate = 1.0 + ppm * 1e-6

    def board_time(self, host_t: float) -> float:
        """Board time at host monotonic time `host_t`."""
        return self.board_anchor + (host_t - self.host_anchor) * self.rate

    def host_time(self, board_t: float) -> float:
        """Host monotonic time at which the board's clock reads `board_t` (under the current drift:
        exact from the last re-anchoring on, an extrapolation before it)."""
        return self.host_anchor + (board_t - self.board_anchor) / self.rate


class LogStore:
    """The board's log flash: 9-byte entries, oldest first, in one bytearray.

    Every entry ever written has a sequence number (its flash position, counted since the
    peer started; never reused): the oldest stored entry is ``first_seq``, the next one to
    be written ``next_seq``. Flash page = seq // LOG_PAGE. Entries survive board resets.
    """

    def __init__(self, capacity: int = LOG_CAPACITY):
        self.buf = bytearray()
        self.start = 0              # index (in entries) of the oldest stored entry in buf
        self.first_seq = 0
        self.capacity = capacity
        self.circular = False
        self.logged = 0             # entries written
        self.overwritten = 0        # oldest entries dropped by circular mode (or a smaller capacity)
        self.discarded_full = 0     # entries not written: full, stop-when-full mode
        self.removed = 0            # removed by 0b 09

    def __len__(self) -> int:
        return len(self.buf) // LOG_ENTRY - self.start

    @property
    def next_seq(self) -> int:
        return self.first_seq + len(self)

    def append(self, entry: bytes) -> None:
        if len(self) >= self.capacity:
            if not self.circular:
                self.discarded_full += 1
                return
            self.overwritten += 1
            self._drop(len(self) - self.capacity + 1)
        self.buf += entry
        self.logged += 1

    def _drop(self, count: int) -> int:
        count = max(0, min(count, len(self)))
        self.start += count
        self.first_seq += count
        if self.start >= 4096 and 2 * self.start >= len(self.buf) // LOG_ENTRY:
            del self.buf[:self.start * LOG_ENTRY]
            self.start = 0
        return count

    def remove(self, count: int) -> int:
        """Remove the `count` oldest entries (0b 09); returns how many were removed."""
        removed = self._drop(count)
        self.removed += removed
        return removed

    def set_capacity(self, capacity: int) -> int:
        """New capacity; the oldest entries beyond it are dropped (returned)."""
        self.capacity = capacity
        trimmed = self._drop(len(self) - capacity) if len(self) > capacity else 0
        self.overwritten += trimmed
        return trimmed

    def read(self, seq: int, count: int) -> bytes:
        offset = (self.start + seq - self.first_seq) * LOG_ENTRY
        return bytes(self.buf[offset:offset + count * LOG_ENTRY])


class Readout:
    """One log readout (0b 06): the `n` oldest entries from `next_seq` on."""

    def __init__(self, requested: int, n: int, notify_every: int, first_seq: int):
        self.requested = requested
        self.n = n
        self.notify_every = notify_every
        self.next_seq = first_seq
        self.left = n
        self.sent = 0                # entries put in 0b 07 notifications
        self.delivered = 0           # of those, in notifications that went out
        self.skipped = 0             # removed/overwritten before they could be read
        self.notifications = 0
        self.pages = 0               # page-completed pauses (rev 2)
        self.next_progress = notify_every
        self.state = "running"
        self.cancel_reason = None
        self.started_wall = time.time()
        self.started = time.monotonic()
        self.ended: float | None = None

    def status(self) -> dict:
        duration = (self.ended or time.monotonic()) - self.started
        return {
            "requested": self.requested, "n": self.n, "notify_every": self.notify_every,
            "sent": self.sent, "delivered": self.delivered, "skipped": self.skipped,
            "left": self.left, "notifications": self.notifications, "pages": self.pages,
            "state": self.state, "cancel_reason": self.cancel_reason,
            "started_t": round(self.started_wall, 3), "duration_s": round(duration, 3),
            "entries_per_s": round(self.sent / duration, 1) if duration > 0 else None,
        }


class Channel:
    """One Bosch motion sensor stream (gyro 0x13 or accelerometer 0x03)."""

    def __init__(self, module: int, name: str):
        self.module = module
        self.name = name
        self.impl = 0
        self.conf = 0x28
        self.range = 0x00
        self.started = False
        self.int_enabled = False
        self.sub_data = False
        self.sub_packed = False
        # Accounters on the data register whose output is notified: (id, time mode, bytes);
        # packers on it chained to such an accounter: (packer id, count, accounter id, time mode,
        # bytes), with the samples each packer holds.
        self.accounters: list[tuple[int, bool, int]] = []
        self.packed_accounters: list[tuple[int, int, int, bool, int]] = []
        self.packer_pending: dict[int, list[bytes]] = {}
        # Sample n of the current run is due at board time b0 + n / odr (Oscillator).
        self.b0 = 0.0
        self.n = 0
        self.pending: list[bytes] = []
        # The run's truth in host wall-clock time, for checking host stamps: one segment per drift
        # setting the run went through, {"n": its first sample, "t0_wall", "odr" (host-time rate),
        # "drift_ppm"}; sample m of the segment was due at t0_wall + m / odr. See Board._segment.
        self.segments: list[dict] = []
        # time.time() - time.monotonic() when the run began: the truth's wall-clock offset.
        self.wall_offset = 0.0
        # Samples of the current run (start command or reset to stop or reset) that went out.
        self.run_sent = 0
        # Loggers on the data register while logging is enabled: (id, offset, length, since),
        # since = board time from which produced samples are logged. Set by Board._refresh_loggers.
        self.log_slices: list[tuple[int, int, int, float]] = []

    # register map per implementation
    @property
    def data_reg(self) -> int:
        if self.module == 0x13:
            return 0x05 if self.impl == 0 else 0x04
        return 0x04

    @property
    def packed_reg(self) -> int:
        if self.module == 0x13:
            return 0x07 if self.impl == 0 else 0x05
        return 0x1C if self.impl == 1 else 0x05

    @property
    def odr(self) -> float:
        code = self.conf & 0x0F
        if self.module == 0x13:
            return 25.0 * 2.0 ** (code - 6)
        return 0.78125 * 2.0 ** (code - 1)

    @property
    def active(self) -> bool:
        return self.started and self.int_enabled and (
            self.sub_data or self.sub_packed or bool(self.log_slices) or bool(self.accounters)
            or bool(self.packed_accounters))

    def sample(self, n: int) -> bytes:
        phase = 2 * math.pi * n / self.odr
        wave = math.sin(phase) if self.module == 0x13 else math.cos(phase)
        return struct.pack("<hhh", int16(n), round(10000 * wave), int16(-n))

    def status(self) -> dict:
        return {
            "impl": self.impl, "conf": self.conf, "range": self.range,
            "odr_hz": self.odr, "started": self.started,
            "interrupt_enabled": self.int_enabled,
            "subscribed": self.sub_data, "subscribed_packed": self.sub_packed,
            "accounters": [a[0] for a in self.accounters] + [a[2] for a in self.packed_accounters],
            "streaming": self.active, "next_n": self.n,
            "data_reg": self.data_reg, "packed_reg": self.packed_reg,
            "logged": bool(self.log_slices),
        }


class Board:
    """State and behaviour of one emulated MetaWear board."""

    def __init__(self, name: str, model: str, mac_le: bytes,
                 send: Callable[[bytes], bool],
                 request_conn_params: Callable[[int, int, int, int, str], None],
                 disconnect: Callable[[int], None],
                 delivering: Callable[[], bool] = lambda: False,
                 drift_ppm: float = 0.0):
        self.name = name
        # The crystal everything below is timed by; it survives resets (it is hardware).
        self.osc = Oscillator(drift_ppm)
        self.mac_le = mac_le            # 6 address bytes, little-endian
        self.send = send
        self.delivering = delivering    # whether `send` would reach a host now
        self.request_conn_params = request_conn_params
        self.disconnect = disconnect
        self.gyro = Channel(0x13, "gyro")
        self.acc = Channel(0x03, "acc")
        # logging module: triggers {id: src_mod, src_reg, src_data_id, info} with creation
        # (board) time, the flash (survives resets) and the current/last readout
        self.logging_enabled = False
        self.log_enabled_since = 0.0
        self.log_triggers: dict[int, bytes] = {}
        self.log_trigger_since: dict[int, float] = {}
        self.log_triggers_refused = 0
        self.log = LogStore()
        self.readout_rate = LOG_READOUT_RATE
        self.readout: Readout | None = None
        self.readouts_started = 0
        self.readouts_completed = 0
        self.readouts_cancelled = 0
        self.entries_downloaded = 0
        self.entries_readout_undelivered = 0
        self.pages_completed = 0
        self.page_confirms = 0
        self.page_confirms_unexpected = 0
        self.page_flushes = 0
        self.page_flushes_refused = 0     # 0b 10 01 while logging (the vendor says not to)
        # MetaMotion S (revision 3): the RAM page the NAND flash is written from, 512 entries at a
        # time (MbientLab cppdocs, logging.html, "Note for the MMS"); lost on a reset.
        self.log_page: list[bytes] = []
        self.log_page_lost = 0
        self._readout_task: asyncio.Task | None = None
        self._page_confirmed = asyncio.Event()
        # data processors: {id: creation args (src_mod src_reg src_data_id src_info type config…)},
        # which of them notify (`09 07 id 01`), and the output subscription (`09 03 01`)
        self.processors = 0
        self.processor_defs: dict[int, bytes] = {}
        self.processor_notify: set[int] = set()
        self.processor_output = False
        self.model = ""
        self.set_model(model)
        self.battery_pct = 99
        self.battery_mv = 4148
        self.reset_uid = 0
        self.boot = self.board_now()      # board time of the last reset: the tick counts from it
        self.tick_base = 0                # the tick at `boot` (set_tick), 0 after every reset
        self.switch_subscribed = False
        self.switch_state = 0
        self.subscriptions: set[str] = set()
        self.commands: list[str] = []
        self.commands_received = 0
        self.led_commands = 0
        self.events = 0
        self.discovery_delay = 0.0
        # Latency of the 0b 84 answer: the tick is read when the command arrives, the answer goes
        # out later (a connection event or more; see the control command `delay_clock_reply`).
        self.clock_reply_delay = 0.0
        self.drop_remaining = 0
        self.samples_generated = 0
        # Finished runs of each stream: {"generated": n, "sent": delivered}; see run_history().
        self.runs: dict[str, list[dict]] = {"gyro": [], "acc": []}
        self.samples_sent = 0
        self.samples_dropped = 0
        self.samples_undelivered = 0
        # Undelivered since the last notification that went out: a loss after the last sample
        # the gateway received, outside anything it recorded (the tail of a session).
        self.samples_undelivered_tail = 0
        # Each stretch of undelivered samples (a run of failed sends between two that went out):
        # the samples it held and the stream counter of its first, so a test can put every gap
        # the gateway recorded beside what the board lost there.
        self.undelivered_stretches: list[dict] = []
        self.notifications_sent = 0
        self.notifications_undelivered = 0
        self._task: asyncio.Task | None = None

    # -- configuration --------------------------------------------------------
    def set_model(self, model: str) -> None:
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r} (MMR or MMS)")
        if self.model and self.log_page and MODELS[model]["log_revision"] != 3:
            self._write_log_page()
        self.model = model
        spec = MODELS[model]
        self.gyro.impl = spec["gyro_impl"]
        self.acc.impl = spec["acc_impl"]
        self.acc.conf, self.acc.range = (0x28, 0x03) if model == "MMR" else (0xA8, 0x02)
        self._refresh_loggers()  # the data registers depend on the implementation
        self._refresh_processors()

    @property
    def log_revision(self) -> int:
        return MODELS[self.model]["log_revision"]

    @property
    def model_number(self) -> str:
        return MODELS[self.model]["model_number"]

    @property
    def hardware_revision(self) -> str:
        return MODELS[self.model]["hardware"]

    def board_now(self) -> float:
        """The board's clock now (loop time and time.monotonic() are the same clock)."""
        return self.osc.board_time(time.monotonic())

    def tick(self) -> int:
        return self.tick_of(self.board_now())

    def tick_of(self, board_t: float) -> int:
        """The log clock's tick at board time `board_t` (a u32: it wraps after 2^32 ticks)."""
        return (self.tick_base + max(0, int((board_t - self.boot) / TICK_S))) % TICK_WRAP

    def set_tick(self, tick: int) -> None:
        """Moves the log clock so that it reads `tick` now, as if the board had been up that long
        (with a tick close to 2^32 a test meets the wrap in seconds instead of 72.8 days)."""
        self.tick_base = (tick - int((self.board_now() - self.boot) / TICK_S)) % TICK_WRAP

    def set_drift(self, ppm: float) -> None:
        """The crystal runs `ppm` off nominal from now on. Samples due under the old rate are
        produced first; then the clock is re-anchored (board time continuous, so the tick and the
        sample counter go on without a jump) and each running stream starts a truth segment."""
        now = asyncio.get_running_loop().time()
        for ch in (self.gyro, self.acc):
            if ch.active:
                self._produce_due(ch, now)
        self.osc.set_ppm(ppm, now)
        board_now = self.osc.board_time(now)
        for ch in (self.gyro, self.acc):
            if ch.started:
                # The first sample due after the change (a started stream that is not active has
                # not produced its due samples yet: they belong to the old segment all the same).
                ch.segments.append(self._segment(ch, int((board_now - ch.b0) * ch.odr) + 1))

    def reset(self, keep_state: bool) -> None:
        """Board reset: new reset_uid, tick restarts; optionally keep stale config.

        Log entries always survive (flash). keep_state keeps triggers and logging on (new
        entries carry the new reset_uid, ticks from 0); otherwise both are cleared.

        A real board produces every sample due before the reset on time; the emulator's loop may
        be late (a busy machine). Out of reach, those samples are logged first, as they would have
        been. On a live link they are not made now: sent this late, they would be lost with the
        link the reset drops, where a board on time would have delivered them."""
        if not self.delivering():
            loop_now = asyncio.get_running_loop().time()
            for ch in (self.gyro, self.acc):
                if ch.active:
                    self._produce_due(ch, loop_now)
        self.reset_uid = (self.reset_uid + 1) & 0x7
        self.boot = self.board_now()
        self.tick_base = 0
        self.log_page_lost += len(self.log_page)   # RAM: gone with the power cycle
        self.log_page = []
        self._cancel_readout("board reset")
        for ch in (self.gyro, self.acc):
            self._end_run(ch)
        if keep_state:
            now = asyncio.get_running_loop().time()
            for ch in (self.gyro, self.acc):
                if ch.started:
                    self._begin_run(ch, now)
        else:
            model = self.model
            self.gyro = Channel(0x13, "gyro")
            self.acc = Channel(0x03, "acc")
            self.set_model(model)
            self.switch_subscribed = False
            self.subscriptions.clear()
            self.logging_enabled = False
            self.log_triggers.clear()
            self.log_trigger_since.clear()
            self.log.circular = False
            self.processors = 0
            self.processor_defs.clear()
            self.processor_notify.clear()
            self.processor_output = False
        self._refresh_loggers()
        self._refresh_processors()
        self._update_streaming()

    def on_disconnect(self) -> None:
        """The link went down: a readout in progress is abandoned (entries stay)."""
        self._cancel_readout("link lost")

    # -- output ---------------------------------------------------------------
    def notify(self, value: bytes) -> bool:
        if self.send(value):
            self.notifications_sent += 1
            return True
        self.notifications_undelivered += 1
        return False

    def reply(self, value: bytes, delay: float = 0.0) -> None:
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, self.notify, value)
        else:
            self.notify(value)

    # -- command input ----------------------------------------------------------
    def on_command(self, data: bytes) -> None:
        self.commands_received += 1
        self.commands.append(data.hex())
        if len(self.commands) > 400:
            del self.commands[:-200]
        if len(data) < 2:
            return
        module, reg = data[0], data[1]
        args = data[2:]
        if reg == 0x80 and not args:
            self._module_info(module)
            return
        handler = {
            0x01: self._switch, 0x02: self._led, 0x03: self._motion,
            0x13: self._motion, 0x11: self._settings, 0x0B: self._logging,
            0x09: self._dataproc, 0x0A: self._event, 0xFE: self._debug,
        }.get(module)
        if handler:
            handler(module, reg, args)
        # anything else: recorded above, otherwise ignored (like the firmware)

    def _module_info(self, module: int) -> None:
        info = MODELS[self.model]["modules"].get(module)
        value = bytes.fromhex(info.replace(" ", "")) if info else bytes([module, 0x80])
        self.reply(value, self.discovery_delay)

    def _switch(self, module, reg, args):
        if reg == 0x01 and args:
            self.switch_subscribed = bool(args[0])
            self._track_sub("01:01", self.switch_subscribed)
        elif reg == 0x81:
            self.reply(bytes([0x01, 0x81, self.switch_state]))

    def press_button(self, hold: float) -> bool:
        """Press (and release after `hold` s). Logged by switch loggers (01 01) either way;
        notified only if subscribed (returns whether it was)."""
        subscribed = self.switch_subscribed
        self.switch_state = 1
        self._log_switch(1)
        if subscribed:
            self.notify(b"\x01\x01\x01")

        def release():
            self.switch_state = 0
            self._log_switch(0)
            if self.switch_subscribed:
                self.notify(b"\x01\x01\x00")

        asyncio.get_running_loop().call_later(hold, release)
        return subscribed

    def _led(self, module, reg, args):
        self.led_commands += 1

    def _motion(self, module, reg, args):
        ch = self.gyro if module == 0x13 else self.acc
        if reg == 0x03 and len(args) >= 2:
            ch.conf, ch.range = args[0], args[1]
        elif reg == 0x83:
            self.reply(bytes([module, 0x83, ch.conf, ch.range]))
        elif reg == 0x02 and len(args) >= 2:
            # [enable mask, disable mask]
            if args[0] & 0x01:
                ch.int_enabled = True
            if args[1] & 0x01:
                ch.int_enabled = False
        elif reg == 0x01 and args:
            if args[0]:
                if not ch.started:
                    ch.started = True
                    self._begin_run(ch, asyncio.get_running_loop().time())
            else:
                if ch.active:  # what was due before the stop, even if this loop is late
                    self._produce_due(ch, asyncio.get_running_loop().time())
                self._end_run(ch)
                ch.started = False
        elif reg == ch.data_reg and args:
            ch.sub_data = bool(args[0])
            self._track_sub(f"{module:02x}:{reg:02x}", ch.sub_data)
        elif reg == ch.packed_reg and args:
            ch.sub_packed = bool(args[0])
            self._track_sub(f"{module:02x}:{reg:02x}", ch.sub_packed)
        self._update_streaming()

    def _settings(self, module, reg, args):
        if reg == 0x8C or reg == 0xCC:
            self.reply(bytes([0x11, reg, self.battery_pct]) + struct.pack("<H", self.battery_mv))
        elif reg == 0x8B:
            self.reply(bytes([0x11, 0x8B, 0x00]) + self.mac_le)
        elif reg in (0x91, 0x92):
            self.reply(bytes([0x11, reg, 0x00]))
        elif reg == 0x09 and len(args) >= 8:
            mn, mx, lat, to = struct.unpack_from("<HHHH", args)
            self.request_conn_params(mn, mx, lat, to, "board 11 09")
        elif reg in (0x0C, 0x11, 0x12, 0x0A) and args:
            self._track_sub(f"11:{reg:02x}", bool(args[0]))

    def _logging(self, module, reg, args):
        if reg == 0x84:
            self.reply(b"\x0b\x84" + struct.pack("<I", self.tick()) + bytes([self.reset_uid]), self.clock_reply_delay)
        elif reg == 0x02 and len(args) >= 4:
            # create a logger slice; no free slot -> no answer (the SDK times out)
            free = next((i for i in range(LOG_SLOTS) if i not in self.log_triggers), None)
            if free is None:
                self.log_triggers_refused += 1
                return
            self.log_triggers[free] = bytes(args[:4])
            self.log_trigger_since[free] = self.board_now()
            self._refresh_loggers()
            self.reply(bytes([0x0B, 0x02, free]))
        elif reg == 0x82 and args:
            trig = self.log_triggers.get(args[0])
            self.reply(b"\x0b\x82" + (trig or b""))
        elif reg == 0x03 and args:
            self.log_triggers.pop(args[0], None)
            self._refresh_loggers()
        elif reg == 0x0A:
            self.log_triggers.clear()
            self._refresh_loggers()
        elif reg == 0x01 and args:
            enable = bool(args[0])
            if enable and not self.logging_enabled:
                self.log_enabled_since = self.board_now()
            self.logging_enabled = enable
            self._refresh_loggers()
        elif reg == 0x0B and args:
            self.log.circular = bool(args[0])
        elif reg == 0x85:                 # flash only: a revision 3 RAM page is not readable
            self.reply(b"\x0b\x85" + struct.pack("<I", len(self.log)))
        elif reg == 0x06 and len(args) >= 4:
            n = struct.unpack_from("<I", args)[0]
            every = struct.unpack_from("<I", args, 4)[0] if len(args) >= 8 else 0
            self._start_readout(n, every)
        elif reg == 0x09 and len(args) >= 4:
            count = struct.unpack_from("<I", args)[0]
            self.log.remove(len(self.log) if count == 0xFFFFFFFF else count)
        elif reg == 0x0E:
            self.page_confirms += 1
            if self.readout is not None and self.readout.state == "waiting_page_confirm":
                self._page_confirmed.set()
            else:
                self.page_confirms_unexpected += 1
        elif reg == 0x10 and args and args[0]:
            if self.logging_enabled:
                self.page_flushes_refused += 1    # "should not be called if you are still logging"
            else:
                self.page_flushes += 1
                self._write_log_page()
        elif reg in (0x07, 0x08, 0x0D) and args:
            self._track_sub(f"0b:{reg:02x}", bool(args[0]))
        self._update_streaming()

    # -- logging ------------------------------------------------------------------
    def _refresh_loggers(self) -> None:
        """Recompute each stream's logger slices (after triggers, logging or model changed)."""
        for ch in (self.gyro, self.acc):
            slices = []
            if self.logging_enabled:
                for i, trig in sorted(self.log_triggers.items()):
                    if trig[0] == ch.module and trig[1] == ch.data_reg:
                        since = max(self.log_enabled_since, self.log_trigger_since.get(i, 0.0))
                        slices.append((i, trig[3] & 0x1F, ((trig[3] >> 5) & 0x3) + 1, since))
            ch.log_slices = slices

    def _log_entry(self, entry_id: int, tick: int, data: bytes) -> None:
        entry = (bytes([entry_id | (self.reset_uid << 5)])
                 + struct.pack("<I", tick % TICK_WRAP) + data.ljust(4, b"\0")[:4])
        if self.log_revision != 3:
            self.log.append(entry)
            return
        self.log_page.append(entry)
        if len(self.log_page) >= LOG_PAGE:
            self._write_log_page()

    def _write_log_page(self) -> None:
        for entry in self.log_page:
            self.log.append(entry)
        self.log_page = []

    def _log_sample(self, ch: Channel, n: int, sample: bytes) -> None:
        due = ch.b0 + n / ch.odr                 # board time, as `since`
        tick = self.tick_of(due)
        for entry_id, offset, length, since in ch.log_slices:
            if due >= since:
                self._log_entry(entry_id, tick, sample[offset:offset + length])

    def _log_switch(self, state: int) -> None:
        if not self.logging_enabled:
            return
        for i, trig in sorted(self.log_triggers.items()):
            if trig[0] == 0x01 and trig[1] == 0x01:
                offset, length = trig[3] & 0x1F, ((trig[3] >> 5) & 0x3) + 1
                self._log_entry(i, self.tick(), bytes([state])[offset:offset + length])

    def _start_readout(self, n: int, notify_every: int) -> None:
        self._cancel_readout("new readout")
        ro = Readout(n, min(n, len(self.log)), notify_every, self.log.first_seq)
        self.readout = ro
        self.readouts_started += 1
        self._page_confirmed = asyncio.Event()
        self._readout_task = asyncio.get_running_loop().create_task(self._run_readout(ro))

    def _cancel_readout(self, reason: str) -> None:
        ro = self.readout
        if ro is not None and ro.state in ("running", "waiting_page_confirm"):
            ro.state, ro.cancel_reason, ro.ended = "cancelled", reason, time.monotonic()
            self.readouts_cancelled += 1
        if self._readout_task is not None:
            self._readout_task.cancel()
            self._readout_task = None

    def _readout_step(self, ro: Readout) -> bool:
        """Send one 0b 07 notification (1 or 2 entries) and any progress due.
        Returns True when it ended a flash page and the board must wait for 0b 0e."""
        log = self.log
        seq = ro.next_seq
        if seq < log.first_seq:                  # removed or overwritten meanwhile
            skip = min(ro.left, log.first_seq - seq)
            ro.skipped += skip
            ro.left -= skip
            seq = ro.next_seq = seq + skip
        available = log.next_seq - seq
        if ro.left <= 0 or available <= 0:
            ro.left = 0
            return False
        count = min(2, ro.left, available)
        paged = self.log_revision == 2
        if paged:
            count = min(count, LOG_PAGE - seq % LOG_PAGE)   # never straddle a page
        ro.next_seq = seq + count
        ro.left -= count
        ro.sent += count
        ro.notifications += 1
        if "0b:07" in self.subscriptions and self.notify(b"\x0b\x07" + log.read(seq, count)):
            ro.delivered += count
            self.entries_downloaded += count
        else:
            self.entries_readout_undelivered += count
        if ro.notify_every and ro.left > 0 and ro.sent >= ro.next_progress:
            while ro.next_progress <= ro.sent:
                ro.next_progress += ro.notify_every
            if "0b:08" in self.subscriptions:
                self.notify(b"\x0b\x08" + struct.pack("<I", ro.left))
        return paged and ro.left > 0 and ro.next_seq % LOG_PAGE == 0

    async def _run_readout(self, ro: Readout) -> None:
        loop = asyncio.get_running_loop()
        try:
            t0, k, rate = loop.time(), 0, self.readout_rate
            while ro.left > 0:
                if self.readout_rate != rate:            # changed by the control channel
                    t0, k, rate = loop.time(), 0, self.readout_rate
                if rate > 0:
                    now = loop.time()
                    due = t0 + k / rate
                    if due > now:
                        await asyncio.sleep(due - now)
                    elif now - due > 0.05:               # fell far behind: no catch-up burst
                        t0, k = now, 0
                    elif k % 16 == 0:
                        await asyncio.sleep(0)
                elif k % 4 == 0:
                    await asyncio.sleep(0)
                if ro.state != "running":
                    return
                page_end = self._readout_step(ro)
                k += 1
                if page_end:
                    ro.pages += 1
                    self.pages_completed += 1
                    ro.state = "waiting_page_confirm"
                    self._page_confirmed.clear()
                    if "0b:0d" in self.subscriptions:
                        self.notify(b"\x0b\x0d")
                    await self._page_confirmed.wait()
                    ro.state = "running"
                    t0, k = loop.time(), 0
            if "0b:08" in self.subscriptions:
                self.notify(b"\x0b\x08\x00\x00\x00\x00")
            ro.state, ro.ended = "completed", time.monotonic()
            self.readouts_completed += 1
        finally:
            if self._readout_task is asyncio.current_task():
                self._readout_task = None

    def log_status(self) -> dict:
        return {
            "revision": self.log_revision, "slots": LOG_SLOTS,
            "enabled": self.logging_enabled, "circular": self.log.circular,
            "capacity": self.log.capacity, "stored": len(self.log),
            "first_seq": self.log.first_seq, "next_seq": self.log.next_seq,
            "triggers": {str(k): v.hex() for k, v in sorted(self.log_triggers.items())},
            "triggers_refused": self.log_triggers_refused,
            "entries_logged": self.log.logged, "entries_overwritten": self.log.overwritten,
            "entries_discarded_full": self.log.discarded_full,
            "entries_removed": self.log.removed,
            "entries_downloaded": self.entries_downloaded,
            "entries_readout_undelivered": self.entries_readout_undelivered,
            "readouts_started": self.readouts_started,
            "readouts_completed": self.readouts_completed,
            "readouts_cancelled": self.readouts_cancelled,
            "pages_completed": self.pages_completed, "page_confirms": self.page_confirms,
            "page_confirms_unexpected": self.page_confirms_unexpected,
            "page_flushes": self.page_flushes,
            "page_flushes_refused": self.page_flushes_refused,
            "ram_page": len(self.log_page), "ram_page_lost": self.log_page_lost,
            "readout_rate": self.readout_rate,
            "notify": {"readout": "0b:07" in self.subscriptions,
                       "progress": "0b:08" in self.subscriptions,
                       "page_completed": "0b:0d" in self.subscriptions},
            "readout": self.readout.status() if self.readout else None,
        }

    def _dataproc(self, module, reg, args):
        if reg == 0x02:
            pid = self.processors & 0xFF
            self.processor_defs[pid] = bytes(args)
            self.reply(bytes([0x09, 0x02, pid]))
            self.processors += 1
        elif reg == 0x03 and args:
            self.processor_output = bool(args[0])
            self._track_sub("09:03", self.processor_output)
        elif reg == 0x06 and args:
            self.processor_defs.pop(args[0], None)
            self.processor_notify.discard(args[0])
        elif reg == 0x07 and len(args) >= 2:
            if args[1]:
                self.processor_notify.add(args[0])
            else:
                self.processor_notify.discard(args[0])
        elif reg == 0x08:
            self.processors = 0
            self.processor_defs.clear()
            self.processor_notify.clear()
        self._refresh_processors()
        self._update_streaming()

    def _refresh_processors(self) -> None:
        """Recompute each stream's notifying accounters (type 0x11 on its data register), and its
        packers (type 0x10 on its data register) whose output feeds a notifying accounter."""
        for ch in (self.gyro, self.acc):
            found, chained = [], []
            if self.processor_output:
                defs = sorted(self.processor_defs.items())
                for pid, d in defs:
                    if len(d) < 7 or pid not in self.processor_notify or d[4] != 0x11:
                        continue
                    mode = ((d[5] & 0x0F) == 1, (d[5] >> 4) + 1)
                    if d[0] == ch.module and d[1] == ch.data_reg:
                        found.append((pid,) + mode)
                    elif d[0] == 0x09 and d[1] == 0x03:
                        packer = self.processor_defs.get(d[2])
                        if (packer and len(packer) >= 7 and packer[0] == ch.module and packer[1] == ch.data_reg
                                and packer[4] == 0x10):
                            chained.append((d[2], packer[6] + 1, pid) + mode)
            ch.accounters = found
            ch.packed_accounters = chained
            ch.packer_pending = {p[0]: ch.packer_pending.get(p[0], []) for p in chained}

    def _event(self, module, reg, args):
        if reg == 0x02:
            self.reply(bytes([0x0A, 0x02, self.events & 0xFF]))
            self.events += 1
        elif reg == 0x05:
            self.events = 0

    def _debug(self, module, reg, args):
        if reg in (0x01, 0x02, 0x05):      # reset / bootloader / reset after GC
            self.reset(keep_state=False)
            self.disconnect(0x08)
        elif reg == 0x06:                 # disconnect
            self.disconnect(0x13)

    def _track_sub(self, key: str, on: bool) -> None:
        if on:
            self.subscriptions.add(key)
        else:
            self.subscriptions.discard(key)

    # -- streaming --------------------------------------------------------------
    def _update_streaming(self) -> None:
        if (self.gyro.active or self.acc.active) and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._stream())

    def stop(self) -> None:
        if self._task:
            self._task.cancel()
            self._task = None
        self._cancel_readout("peer stopping")

    def _begin_run(self, ch: Channel, now: float) -> None:
        """A run of the stream begins at loop time `now` (start command, or a reset keeping it)."""
        ch.b0 = self.osc.board_time(now)
        ch.n, ch.run_sent, ch.pending, ch.packer_pending = 0, 0, [], {}
        ch.wall_offset = time.time() - now
        ch.segments = [self._segment(ch, 0)]

    def _segment(self, ch: Channel, first_n: int) -> dict:
        """The truth of `ch`'s run from sample `first_n` on, under the current drift: sample m is
        due at host wall-clock time t0_wall + m / odr (t0_wall extrapolated back to m = 0, so one
        formula serves every segment)."""
        return {"n": first_n, "t0_wall": self.osc.host_time(ch.b0) + ch.wall_offset,
                "odr": ch.odr * self.osc.rate, "drift_ppm": self.osc.ppm}

    def _run_record(self, ch: Channel) -> dict:
        """Samples generated and sent, and the truth: the last segment's `t0_wall`, `odr` (host
        time) and `drift_ppm` (exact for the whole run unless the drift changed during it), the
        board's `odr_nominal`, and every segment."""
        last = ch.segments[-1]
        return {"generated": ch.n, "sent": ch.run_sent, "t0_wall": last["t0_wall"], "odr": last["odr"],
                "odr_nominal": ch.odr, "drift_ppm": last["drift_ppm"],
                "segments": [dict(s) for s in ch.segments]}

    def _end_run(self, ch: Channel) -> None:
        if ch.started:
            self.runs[ch.name].append(self._run_record(ch))
            ch.n, ch.run_sent = 0, 0

    def run_history(self, ch: Channel) -> list[dict]:
        """Every run of the stream, the current one last (`running`): samples generated and sent."""
        current = [{**self._run_record(ch), "running": True}] if ch.started else []
        return self.runs[ch.name] + current

    def _emit(self, ch: Channel, n: int) -> None:
        self.samples_generated += 1
        if self.drop_remaining > 0:               # never produced: neither sent nor logged
            self.drop_remaining -= 1
            self.samples_dropped += 1
            return
        sample = ch.sample(n)
        if ch.log_slices:
            self._log_sample(ch, n, sample)
        if ch.sub_data:
            self._send_samples(ch, bytes([ch.module, ch.data_reg]) + sample, 1)
        for pid, timed, length in ch.accounters:
            # Time mode: the log clock's tick when the sample was produced; count mode: n.
            value = self.tick_of(ch.b0 + n / ch.odr) if timed else n
            self._send_samples(ch, bytes([0x09, 0x03, pid]) + struct.pack("<I", value & 0xFFFFFFFF)[:length] + sample, 1)
        for packer, count, pid, timed, length in ch.packed_accounters:
            # The accounter stamps the packer's output: the tick of its last sample.
            held = ch.packer_pending.setdefault(packer, [])
            held.append(sample)
            if len(held) < count:
                continue
            ch.packer_pending[packer] = []
            value = self.tick_of(ch.b0 + n / ch.odr) if timed else n
            self._send_samples(ch, bytes([0x09, 0x03, pid]) + struct.pack("<I", value & 0xFFFFFFFF)[:length]
                               + b"".join(held), count)
        if ch.sub_packed:
            ch.pending.append(sample)
            if len(ch.pending) == 3:
                value = bytes([ch.module, ch.packed_reg]) + b"".join(ch.pending)
                ch.pending = []
                self._send_samples(ch, value, 3)

    def _send_samples(self, ch: Channel, value: bytes, count: int) -> None:
        """One notification carrying `count` samples, counted as sent or undelivered."""
        if self.notify(value):
            self.samples_sent += count
            ch.run_sent += count
            self.samples_undelivered_tail = 0
        else:
            run = len(self.runs[ch.name])  # the current run's index in run_history
            last = self.undelivered_stretches[-1] if self.undelivered_stretches else None
            if self.samples_undelivered_tail == 0 or (last["stream"], last["run"]) != (ch.name, run):
                self.undelivered_stretches.append({"stream": ch.name, "run": run, "n": ch.n, "samples": 0})
                del self.undelivered_stretches[:-100]
            self.undelivered_stretches[-1]["samples"] += count
            self.samples_undelivered += count
            self.samples_undelivered_tail += count

    def _produce_due(self, ch: Channel, now: float) -> None:
        """Emits every sample of `ch` due by `now` (loop time): a late wake-up emits a burst."""
        due = int((self.osc.board_time(now) - ch.b0) * ch.odr) + 1
        while ch.n < due:
            self._emit(ch, ch.n)
            ch.n += 1

    async def _stream(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                channels = [ch for ch in (self.gyro, self.acc) if ch.active]
                if not channels:
                    break
                now = loop.time()
                next_due = None
                for ch in channels:
                    odr = ch.odr
                    self._produce_due(ch, now)
                    t_next = self.osc.host_time(ch.b0 + ch.n / odr)
                    next_due = t_next if next_due is None else min(next_due, t_next)
                await asyncio.sleep(max(0.0005, next_due - loop.time()))
        finally:
            self._task = None

    def status(self) -> dict:
        return {
            "model": self.model,
            "model_number": self.model_number,
            "gyro": self.gyro.status(),
            "acc": self.acc.status(),
            "gyro_runs": self.run_history(self.gyro),
            "acc_runs": self.run_history(self.acc),
            "streaming": self.gyro.active or self.acc.active,
            "switch_subscribed": self.switch_subscribed,
            "subscriptions": sorted(self.subscriptions),
            "battery": {"percent": self.battery_pct, "mv": self.battery_mv},
            "reset_uid": self.reset_uid,
            "tick": self.tick(),
            "drift_ppm": self.osc.ppm,
            "samples_generated": self.samples_generated,
            "samples_sent": self.samples_sent,
            "samples_dropped": self.samples_dropped,
            "samples_undelivered": self.samples_undelivered,
            "samples_undelivered_tail": self.samples_undelivered_tail,
            "undelivered_stretches": self.undelivered_stretches,
            "drop_pending": self.drop_remaining,
            "notifications_sent": self.notifications_sent,
            "notifications_undelivered": self.notifications_undelivered,
            "commands_received": self.commands_received,
            "commands": self.commands[-200:],
            "led_commands": self.led_commands,
            "log_triggers": {str(k): v.hex() for k, v in self.log_triggers.items()},
            "logging_enabled": self.logging_enabled,
            "log": self.log_status(),
            "discovery_delay_ms": round(self.discovery_delay * 1000),
            "clock_reply_delay_ms": round(self.clock_reply_delay * 1000),
        }
