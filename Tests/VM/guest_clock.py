#!/usr/bin/env python3
"""Inside the VM (Tests/VM/hcivm.py): the guest's clock, measured against the peer's and changed
as a time-sync client would change it. Standard library and ctypes only.

    guest_clock.py offset --peer-control HOST:PORT [--rounds 16]
    guest_clock.py set --true --peer-control HOST:PORT [--plus SECONDS] [--sync | --unsync]
    guest_clock.py step --by SECONDS [--sync | --unsync]
    guest_clock.py sync [--maxerror-us N] [--esterror-us N]
    guest_clock.py unsync
    guest_clock.py state

Each command prints one JSON object: what it measured or did.

- `offset`: the guest's CLOCK_REALTIME minus the peer's `time.time()` (its control channel's
  `{"cmd": "time"}`), NTP-style: per round trip the guest's clock at the midpoint of the
  request and the answer against the peer's reading; the round with the shortest trip wins
  (its half trip bounds the error, asymmetry aside). `monotonic_anchor_s` is the peer's time
  minus the guest's CLOCK_MONOTONIC in that round: the true time of a guest monotonic reading,
  which no step of CLOCK_REALTIME moves.
- `set --true`: steps CLOCK_REALTIME (adjtimex ADJ_SETOFFSET, see `step`) so that it reads the peer's time, plus
  `--plus` seconds (`--plus -259200`: 3 days behind), then measures the offset again.
- `step --by`: steps CLOCK_REALTIME by that many seconds (negative: back).
- `sync` / `unsync`: adjtimex(ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR) as an NTP client does
  once it trusts the clock (systemd-timesyncd: STA_UNSYNC cleared, maxerror and esterror 0), or
  as the kernel does when it gives up on it (STA_UNSYNC set, both errors at NTP_PHASE_LIMIT,
  16 s). adjtimex returns TIME_ERROR while STA_UNSYNC is set. A step sets STA_UNSYNC
  by itself (the kernel's ntp_clear), so a step of a synchronised clock is followed by `sync`
  at once (`--sync`, in the same process, as timesyncd does after its own step).
- `state`: adjtimex's return (TIME_OK … TIME_ERROR), status flags, maxerror and esterror.

Changing the clock is refused unless /proc/cmdline carries `gyrogate.vm=1` (hcivm.py boots the
guest with it): this must never step the clock of the machine that runs the VM.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import socket
import sys
import time

VM_MARK = "gyrogate.vm=1"

# <linux/timex.h>
ADJ_OFFSET, ADJ_FREQUENCY, ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS = 0x0001, 0x0002, 0x0004, 0x0008, 0x0010
ADJ_SETOFFSET, ADJ_NANO = 0x0100, 0x2000
STA_FLAGS = {0x0001: "STA_PLL", 0x0002: "STA_PPSFREQ", 0x0004: "STA_PPSTIME", 0x0008: "STA_FLL", 0x0010: "STA_INS",
             0x0020: "STA_DEL", 0x0040: "STA_UNSYNC", 0x0080: "STA_FREQHOLD", 0x0100: "STA_PPSSIGNAL",
             0x0200: "STA_PPSJITTER", 0x0400: "STA_PPSWANDER", 0x0800: "STA_PPSERROR", 0x1000: "STA_CLOCKERR",
             0x2000: "STA_NANO", 0x4000: "STA_MODE", 0x8000: "STA_CLK"}
STA_UNSYNC = 0x0040
TIME_STATES = {0: "TIME_OK", 1: "TIME_INS", 2: "TIME_DEL", 3: "TIME_OOP", 4: "TIME_WAIT", 5: "TIME_ERROR"}
TIME_ERROR = 5
NTP_PHASE_LIMIT_US = 16_000_000  # the kernel's (MAXPHASE / NSEC_PER_USEC) << 5


class Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class Timex(ctypes.Structure):
    """struct timex (64-bit Linux): ctypes lays it out as the C compiler does."""
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time", Timeval), ("tick", ctypes.c_long), ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long),
                ("shift", ctypes.c_int), ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long),
                ("calcnt", ctypes.c_long), ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long),
                ("tai", ctypes.c_int), ("_padding", ctypes.c_int * 11)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.adjtimex.argtypes = [ctypes.POINTER(Timex)]
_libc.adjtimex.restype = ctypes.c_int


def _adjtimex(tx: Timex) -> int:
    rc = _libc.adjtimex(ctypes.byref(tx))
    if rc < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"adjtimex: {__import__('os').strerror(errno)}")
    return rc


def _describe(rc: int, tx: Timex) -> dict:
    return {"adjtimex": TIME_STATES.get(rc, rc), "synchronised": rc != TIME_ERROR, "status": f"0x{tx.status:04x}",
            "flags": [name for bit, name in STA_FLAGS.items() if tx.status & bit],
            "maxerror_us": tx.maxerror, "esterror_us": tx.esterror}


def state() -> dict:
    tx = Timex()
    return _describe(_adjtimex(tx), tx)


def _guard() -> None:
    try:
        cmdline = open("/proc/cmdline").read().split()
    except OSError:
        cmdline = []
    if VM_MARK not in cmdline:
        raise SystemExit(f"guest_clock: refusing to change the clock: /proc/cmdline has no {VM_MARK} "
                         "(this is not the hcivm.py guest; never step the host's clock)")


def _set_status(unsync: bool, maxerror_us: int, esterror_us: int) -> dict:
    _guard()
    tx = Timex()
    _adjtimex(tx)  # read, to change only STA_UNSYNC among the status bits
    status = (tx.status | STA_UNSYNC) if unsync else (tx.status & ~STA_UNSYNC)
    tx = Timex(modes=ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR, status=status, maxerror=maxerror_us, esterror=esterror_us)
    _adjtimex(tx)
    return state()


def sync(maxerror_us: int = 0, esterror_us: int = 0) -> dict:
    """STA_UNSYNC cleared, as systemd-timesyncd leaves it after it has set the clock."""
    return _set_status(False, maxerror_us, esterror_us)


def unsync() -> dict:
    """STA_UNSYNC set, maxerror and esterror at the kernel's limit: how a guest boots."""
    return _set_status(True, NTP_PHASE_LIMIT_US, NTP_PHASE_LIMIT_US)


def step(by: float) -> dict:
    """Steps CLOCK_REALTIME by `by` seconds (negative: back) in the kernel, in one call.

    adjtimex(ADJ_SETOFFSET) adds the offset inside the kernel. A clock_gettime followed by a
    clock_settime loses whatever time passes between the two, which under TCG on a loaded host
    can be milliseconds or more, and every check of the scenarios measures against the clock as
    set. The kernel treats both alike otherwise
    (timekeeping_inject_offset, like do_settimeofday64, clears NTP state: STA_UNSYNC set)."""
    _guard()
    before = time.clock_gettime_ns(time.CLOCK_REALTIME)
    total_ns = round(by * 1e9)
    sec, nsec = divmod(total_ns, 1_000_000_000)  # the kernel wants 0 <= nsec < 1e9, sec signed
    _adjtimex(Timex(modes=ADJ_SETOFFSET | ADJ_NANO, time=Timeval(tv_sec=sec, tv_usec=nsec)))
    return {"stepped_by_s": by, "from": before / 1e9, "to": time.time()}


def _peer(control: str) -> tuple[socket.socket, "object"]:
    host, _, port = control.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock, sock.makefile("rwb")


def offset(control: str, rounds: int = 16) -> dict:
    """The guest's CLOCK_REALTIME minus the peer's clock (s), from the round with the shortest trip."""
    sock, f = _peer(control)
    best = None
    samples = []
    try:
        for _ in range(rounds):
            m0, w0 = time.monotonic(), time.time()
            f.write(b'{"cmd": "time"}\n')
            f.flush()
            reply = json.loads(f.readline())
            rtt = time.monotonic() - m0
            if not reply.get("ok") or "time" not in reply:
                raise RuntimeError(f"the peer has no time command: {reply}")
            off = w0 + rtt / 2 - reply["time"]
            samples.append(off)
            if best is None or rtt < best[0]:
                best = (rtt, off, reply["time"] - (m0 + rtt / 2))
    finally:
        sock.close()
    rtt, off, anchor = best
    return {"offset_s": off, "offset_ms": round(off * 1000, 3), "rtt_ms": round(rtt * 1000, 3),
            "bound_ms": round(rtt * 500, 3), "rounds": rounds,
            "spread_ms": round((max(samples) - min(samples)) * 1000, 3),
            "monotonic_anchor_s": anchor}


def set_true(control: str, plus: float = 0.0, then: str | None = None) -> dict:
    """Steps the clock to the peer's time + `plus` s; `then` "sync" or "unsync" right after."""
    _guard()
    before = offset(control)
    stepped = step(plus - before["offset_s"])
    status = sync() if then == "sync" else unsync() if then == "unsync" else state()
    after = offset(control)
    return {"set_to": "true" + (f" {plus:+g} s" if plus else ""), "stepped_by_s": stepped["stepped_by_s"],
            "offset_before": before, "offset_after": after, "clock": status}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("offset")
    o.add_argument("--peer-control", required=True, metavar="HOST:PORT")
    o.add_argument("--rounds", type=int, default=16)
    s = sub.add_parser("set")
    s.add_argument("--true", action="store_true", required=True, help="to the peer's time")
    s.add_argument("--peer-control", required=True, metavar="HOST:PORT")
    s.add_argument("--plus", type=float, default=0.0, help="seconds added to the peer's time")
    for q in (s, st := sub.add_parser("step")):
        g = q.add_mutually_exclusive_group()
        g.add_argument("--sync", action="store_const", const="sync", dest="then")
        g.add_argument("--unsync", action="store_const", const="unsync", dest="then")
    st.add_argument("--by", type=float, required=True)
    y = sub.add_parser("sync")
    y.add_argument("--maxerror-us", type=int, default=0)
    y.add_argument("--esterror-us", type=int, default=0)
    sub.add_parser("unsync")
    sub.add_parser("state")
    args = p.parse_args()
    if args.command == "offset":
        out = offset(args.peer_control, args.rounds)
    elif args.command == "set":
        out = set_true(args.peer_control, args.plus, args.then)
    elif args.command == "step":
        out = step(args.by)
        out["clock"] = sync() if args.then == "sync" else unsync() if args.then == "unsync" else state()
    elif args.command == "sync":
        out = sync(args.maxerror_us, args.esterror_us)
    elif args.command == "unsync":
        out = unsync()
    else:
        out = state()
    print(json.dumps({"cmd": args.command, **out}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
