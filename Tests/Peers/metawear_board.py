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
Streaming is paced by the wall clock: sample k is due at t0 + k/ODR and all due
samples are emitted on each wake-up (bursts if the loop fell behind; no drift).
"""

from __future__ import annotations

import asyncio
import math
import struct
import time
from typing import Callable

TICK_S = 48 / 32768  # logging tick, 1.46484375 ms

# Module-info answers. Values marked "doc" come from metawear-protocol.md 2.1;
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
            "gyro_impl": 0, "acc_impl": 1},
    "MMS": {"model_number": "8", "modules": MODULES_MMS, "hardware": "0.1",
            "gyro_impl": 1, "acc_impl": 4},
}


def int16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


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
        self.t0 = 0.0
        self.n = 0
        self.pending: list[bytes] = []
        # Wall-clock time of t0 (sample n is due at t0_wall + n / odr), for checking host stamps.
        self.t0_wall = 0.0
        # Samples of the current run (start command or reset to stop or reset) that went out.
        self.run_sent = 0

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
        return self.started and self.int_enabled and (self.sub_data or self.sub_packed)

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
            "streaming": self.active, "next_n": self.n,
            "data_reg": self.data_reg, "packed_reg": self.packed_reg,
        }


class Board:
    """State and behaviour of one emulated MetaWear board."""

    def __init__(self, name: str, model: str, mac_le: bytes,
                 send: Callable[[bytes], bool],
                 request_conn_params: Callable[[int, int, int, int, str], None],
                 disconnect: Callable[[int], None]):
        self.name = name
        self.mac_le = mac_le            # 6 address bytes, little-endian
        self.send = send
        self.request_conn_params = request_conn_params
        self.disconnect = disconnect
        self.gyro = Channel(0x13, "gyro")
        self.acc = Channel(0x03, "acc")
        self.model = ""
        self.set_model(model)
        self.battery_pct = 99
        self.battery_mv = 4148
        self.reset_uid = 0
        self.boot = time.monotonic()
        self.switch_subscribed = False
        self.switch_state = 0
        self.subscriptions: set[str] = set()
        self.commands: list[str] = []
        self.commands_received = 0
        self.led_commands = 0
        self.logging_enabled = False
        self.log_triggers: dict[int, bytes] = {}
        self.processors = 0
        self.events = 0
        self.discovery_delay = 0.0
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
        self.notifications_sent = 0
        self.notifications_undelivered = 0
        self._task: asyncio.Task | None = None

    # -- configuration --------------------------------------------------------
    def set_model(self, model: str) -> None:
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r} (MMR or MMS)")
        self.model = model
        spec = MODELS[model]
        self.gyro.impl = spec["gyro_impl"]
        self.acc.impl = spec["acc_impl"]
        self.acc.conf, self.acc.range = (0x28, 0x03) if model == "MMR" else (0xA8, 0x02)

    @property
    def model_number(self) -> str:
        return MODELS[self.model]["model_number"]

    @property
    def hardware_revision(self) -> str:
        return MODELS[self.model]["hardware"]

    def tick(self) -> int:
        return int((time.monotonic() - self.boot) / TICK_S) & 0xFFFFFFFF

    def reset(self, keep_state: bool) -> None:
        """Board reset: new reset_uid, tick restarts; optionally keep stale config."""
        self.reset_uid = (self.reset_uid + 1) & 0x7
        self.boot = time.monotonic()
        for ch in (self.gyro, self.acc):
            self._end_run(ch)
        if keep_state:
            now = asyncio.get_running_loop().time()
            for ch in (self.gyro, self.acc):
                if ch.started:
                    ch.t0, ch.n, ch.pending = now, 0, []
                    ch.t0_wall = time.time()
        else:
            model = self.model
            self.gyro = Channel(0x13, "gyro")
            self.acc = Channel(0x03, "acc")
            self.set_model(model)
            self.switch_subscribed = False
            self.subscriptions.clear()
            self.logging_enabled = False
            self.log_triggers.clear()
        self._update_streaming()

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
        if not self.switch_subscribed:
            return False
        self.switch_state = 1
        self.notify(b"\x01\x01\x01")

        def release():
            self.switch_state = 0
            if self.switch_subscribed:
                self.notify(b"\x01\x01\x00")

        asyncio.get_running_loop().call_later(hold, release)
        return True

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
                    ch.t0 = asyncio.get_running_loop().time()
                    ch.t0_wall = time.time()
                    ch.n = 0
                    ch.run_sent = 0
                    ch.pending = []
            else:
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
            self.reply(b"\x0b\x84" + struct.pack("<I", self.tick()) + bytes([self.reset_uid]))
        elif reg == 0x02 and len(args) >= 4:
            free = next((i for i in range(8) if i not in self.log_triggers), None)
            if free is not None:
                self.log_triggers[free] = bytes(args[:4])
                self.reply(bytes([0x0B, 0x02, free]))
        elif reg == 0x82 and args:
            trig = self.log_triggers.get(args[0])
            self.reply(b"\x0b\x82" + (trig or b""))
        elif reg == 0x03 and args:
            self.log_triggers.pop(args[0], None)
        elif reg == 0x0A:
            self.log_triggers.clear()
        elif reg == 0x01 and args:
            self.logging_enabled = bool(args[0])
        elif reg == 0x85:
            self.reply(b"\x0b\x85" + struct.pack("<I", 0))
        elif reg in (0x07, 0x08, 0x0D) and args:
            self._track_sub(f"0b:{reg:02x}", bool(args[0]))

    def _dataproc(self, module, reg, args):
        if reg == 0x02:
            self.reply(bytes([0x09, 0x02, self.processors & 0xFF]))
            self.processors += 1
        elif reg == 0x08:
            self.processors = 0

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

    def _end_run(self, ch: Channel) -> None:
        if ch.started:
            self.runs[ch.name].append({"generated": ch.n, "sent": ch.run_sent, "t0_wall": ch.t0_wall, "odr": ch.odr})
            ch.n, ch.run_sent = 0, 0

    def run_history(self, ch: Channel) -> list[dict]:
        """Every run of the stream, the current one last (`running`): samples generated and sent."""
        current = [{"generated": ch.n, "sent": ch.run_sent, "t0_wall": ch.t0_wall, "odr": ch.odr, "running": True}] if ch.started else []
        return self.runs[ch.name] + current

    def _emit(self, ch: Channel, n: int) -> None:
        self.samples_generated += 1
        if self.drop_remaining > 0:
            self.drop_remaining -= 1
            self.samples_dropped += 1
            return
        sample = ch.sample(n)
        if ch.sub_data:
            if self.notify(bytes([ch.module, ch.data_reg]) + sample):
                self.samples_sent += 1
                ch.run_sent += 1
                self.samples_undelivered_tail = 0
            else:
                self.samples_undelivered += 1
                self.samples_undelivered_tail += 1
        if ch.sub_packed:
            ch.pending.append(sample)
            if len(ch.pending) == 3:
                value = bytes([ch.module, ch.packed_reg]) + b"".join(ch.pending)
                ch.pending = []
                if self.notify(value):
                    self.samples_sent += 3
                    ch.run_sent += 3
                    self.samples_undelivered_tail = 0
                else:
                    self.samples_undelivered += 3
                    self.samples_undelivered_tail += 3

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
                    due = int((now - ch.t0) * odr) + 1
                    while ch.n < due:
                        self._emit(ch, ch.n)
                        ch.n += 1
                    t_next = ch.t0 + ch.n / odr
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
            "samples_generated": self.samples_generated,
            "samples_sent": self.samples_sent,
            "samples_dropped": self.samples_dropped,
            "samples_undelivered": self.samples_undelivered,
            "samples_undelivered_tail": self.samples_undelivered_tail,
            "drop_pending": self.drop_remaining,
            "notifications_sent": self.notifications_sent,
            "notifications_undelivered": self.notifications_undelivered,
            "commands_received": self.commands_received,
            "commands": self.commands[-200:],
            "led_commands": self.led_commands,
            "log_triggers": {str(k): v.hex() for k, v in self.log_triggers.items()},
            "logging_enabled": self.logging_enabled,
            "discovery_delay_ms": round(self.discovery_delay * 1000),
        }
