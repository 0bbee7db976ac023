#!/usr/bin/env python3
"""End-to-end benchmark: emulated MetaWear sensors -> gyrogate (release) -> mosquitto -> subscriber.

    .venv/bin/python Tests/Benchmarks/E2E/e2e_bench.py [--sensors 4] [--odr 100] [--seconds 30]
        [--gateway PATH] [--skip-reference] [--json OUT] [--check] [--keep-temp] [--viewers N]
        [--peer-control HOST:PORT --transport SPEC] [--during CMD] [--run-as USER]
        [--store-from DIR [--max-store-bytes N]] [--chunk-size N]

One run, everything on 127.0.0.1, in a temporary directory that is removed afterwards:

1. a private mosquitto (free port, no persistence, unlimited queue) and an MQTT subscriber
   (paho, QoS 1) on `realtime_data/#`, `records/#`, `TitanUpUsers/#`;
2. phase "gyrogate": a fresh Tests/Peers/metawear_peer.py with N sensors, the release gateway
   with a generated config (`check-config` first), wait until every sensor streams and the
   store's background integrity check has ended (its seconds and thread CPU reported apart, as
   `store_check`), warm up 2 s, then measure S seconds; SIGTERM, wait for the exit, wait until the broker is quiet;
3. phase "reference": the same against reference_pipeline.py (plain Python: raw-socket central,
   sqlite3 WAL + synchronous=FULL, commit per second, outbox, paho QoS 1);
4. a table (and JSON with --json).

Measurements of the process under test (gateway or reference), both measured the same way:
CPU is the time on CPU summed over all its threads, /proc/PID/task/TID/schedstat field 1
(nanoseconds), with the voluntary/nonvoluntary context switches of /proc/PID/task/TID/status;
a background thread of the bench reads every thread every 0.25 s through the window, so that a
thread that starts inside the window counts from 0 and one that ends counts up to its last
reading. CPU-s per M samples, CPU-us per notification and the per-thread breakdown (grouped by
thread name) come from these. The tick-based figure, /proc/PID/stat utime+stime at the start and
end of the window (10 ms ticks: at 4 x 100 Hz a 60 s window holds about 12 of the gateway's),
is reported beside it. VmHWM, VmRSS, RssAnon from /proc/PID/status. The samples and notifications of the window come
from the peer's control `status` (`samples_sent`, `notifications_sent`, deltas over all
sensors). The peer's and the broker's CPU in the window are shown for context (2 cores shared).

Idle RSS: VmRSS polled every 50 ms from the start of the process; the value reported is the
last one read once the process is initialised (gateway: its admin socket exists; reference: it
logged `initialised` and pauses 1 s before connecting) while the peer had sent no sample yet
(sensors at most connecting/initialising; nothing captured). "-" if no such moment was seen. Peak RSS is VmHWM, read up to
the process's exit (so it includes the shutdown). The kernel keeps no peak of RssAnon (anonymous
memory: heap, stacks, private pages written to), so its peak is sampled over the same span: every
50-200 ms at start-up, every 0.25 s in the window (the thread poller), every 50 ms after SIGTERM;
a spike shorter than that can be missed.

--ext4: the data directory (the gateway's, and the reference's database) lives on a fresh
ext4 filesystem with a journal (mkfs.ext4 defaults, as on Raspberry Pi OS; inode tables and
journal initialised up front so no lazy-init thread writes in the window) in a 512 MiB image
loop-mounted under the temporary directory. Per phase it reports the device's sectors written
(field 7 of /sys/block/loopN/stat, 512 bytes each, journal and metadata included; `sync -f` on
the filesystem at both ends of the window so the window's writes are counted and nothing from
before it is) as bytes per sample and GB per day at that rate, and the process's own write_bytes
(/proc/PID/io: the bytes of pages it dirtied, no journal) per sample. Needs root and a free loop
device: without them the bench says so and runs without the option.

Live view (--viewers N, N > 0): the gateway's `web` listener on a free loopback port, and N
Server-Sent Events clients (threads of this script, reading and counting `/events`) connected
from when every sensor streams until the end of the window; their events and bytes per second
are reported. Compare the gateway's CPU per M samples with --viewers 0 in alternating runs.

Correctness (whole run of a phase): expected = the peer's final `samples_sent` over all sensors;
delivered = distinct (device, n) in the realtime_data documents received, where n is recovered
from x = int16(n) (gx * 16.4, unwrapped along each device's stream); y and z are checked
against the waveform (value mismatches); duplicates = points received more than once;
gaps = n missing between 0 and the largest n received; tail = samples sent after the last
delivered one. --check exits 1 if the gateway exits non-zero on SIGTERM, delivered/expected is
below 0.95, duplicates or value mismatches were seen (gyrogate phase only; no timing limits).
--exact (with --check) also requires every sample to arrive exactly once: for each device, every
n from 0 to the last one delivered, none twice (the tail, samples the peer sent after that one,
were in flight when the gateway stopped and are reported, not counted).

A running peer (--peer-control; Tests/VM/hcivm.py wires one to a VM's serial line, and runs
this inside the VM with --transport hci:0): no peer is started, its CPU is not measured, the
gyrogate phase only. --during runs a shell command when the window starts (a fault: e.g. the
controller's btattach killed and restarted), with GYROGATE_ADMIN_SOCKET and GYROGATE_BINARY in
its environment, and waits for it at the window's end. --run-as starts the gateway as that user
with only the capabilities of deploy/gyrogate.service (ambient, through setpriv).

--store-from DIR (a `store-filler fill` store, Tests/Benchmarks/StoreSize) is copied into the
gateway's data directory (the ext4 image grows to hold it) before it starts; --max-store-bytes
sets retention.maxStoreBytes; delivery then counts the peer's devices only. --chunk-size sets
capture.chunkSize. A store with an open session (`store-filler fill --open-session DEVICE`, a
peer's address, user bench-user) is continued with --backfill-commit-ms and
--max-session-minutes longer than its age. MQTT payload bytes per sample: payload bytes received in the window / samples.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from e2e_parts import Ext4Disk, Viewers, wait_for_store_check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PEER = os.path.join(REPO, "Tests", "Peers", "metawear_peer.py")
REFERENCE = os.path.join(HERE, "reference_pipeline.py")
CLK_TCK = os.sysconf("SC_CLK_TCK")
LSB_PER_DPS = 16.4

try:
    import paho.mqtt.client as mqtt
except ImportError:  # pragma: no cover
    sys.exit("paho-mqtt is missing: .venv/bin/pip install -r Tests/Benchmarks/E2E/requirements.txt")


def say(msg: str) -> None:
    print(f"[e2e {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def int16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


# -- processes -----------------------------------------------------------------------------

class Processes:
    """Every child in its own process group; stop() ends the group (TERM, then KILL)."""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []

    def start(self, argv, **kw) -> subprocess.Popen:
        p = subprocess.Popen(argv, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    @staticmethod
    def stop(p: subprocess.Popen, timeout: float = 5.0) -> None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:  # whatever is left in the group
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if p.poll() is None:
            p.wait(5)

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            self.stop(p)


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (ended threads included), in clock ticks (10 ms)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)


def status_fields(path: str) -> dict:
    out = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def kb(value: str) -> int:
    return int(value.split()[0]) if value else 0


def read_threads(pid: int) -> dict:
    """Per live thread id: (name, ns on CPU, voluntary, involuntary context switches).

    schedstat's first field is the scheduler's own runtime sum in nanoseconds; utime and stime
    come in 10 ms ticks, too coarse for a process that uses a few ms of CPU per second."""
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/schedstat") as f:
                ns = int(f.read().split()[0])
            st = status_fields(f"{task}/status")
        except (FileNotFoundError, ProcessLookupError):  # the thread ended after the glob
            continue
        out[os.path.basename(task)] = (st.get("Name", "?"), ns, int(st.get("voluntary_ctxt_switches", 0)),
                                       int(st.get("nonvoluntary_ctxt_switches", 0)))
    return out


class ThreadPoller:
    """CPU time and context switches of every thread of a process over a window.

    /proc keeps no per-thread figures for threads that ended (the global executor's workers come
    and go), so a background thread reads every thread every INTERVAL s: a thread seen at start()
    counts from that reading, one first seen later started inside the window and counts from 0,
    one that ends counts up to its last reading (at most INTERVAL s of its time is missed).
    Thread ids are not reused within a window: the kernel hands them out cyclically."""

    INTERVAL = 0.25

    def __init__(self, pid: int):
        self.pid = pid
        self.first: dict = {}
        self.last: dict = {}
        self.anon_peak_kb = 0  # RssAnon's largest reading, see anon_kb
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="thread-poller", daemon=True)

    def start(self) -> "ThreadPoller":
        self.first = read_threads(self.pid)
        self.last = dict(self.first)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._done.wait(self.INTERVAL):
            self.last.update(read_threads(self.pid))
            self.anon_peak_kb = max(self.anon_peak_kb, anon_kb(self.pid))

    def stop(self) -> dict:
        """Ends the window; per thread id: (name, CPU s, voluntary, involuntary) inside it."""
        self._done.set()
        self._thread.join()
        self.last.update(read_threads(self.pid))
        zero = ("", 0, 0, 0)
        out = {}
        for tid, (name, ns, vol, nonvol) in self.last.items():
            _, ns0, vol0, nonvol0 = self.first.get(tid, zero)
            out[tid] = (name, (ns - ns0) / 1e9, vol - vol0, nonvol - nonvol0)
        return out


def threads_by_name(window_threads: dict, window: float, samples: int) -> list[dict]:
    """Threads of the window grouped by name (workers of one pool share it), busiest first."""
    groups: dict[str, dict] = {}
    for name, cpu, vol, _ in window_threads.values():
        g = groups.setdefault(name, {"thread": name, "threads": 0, "cpu_s": 0.0, "vol": 0})
        g["threads"] += 1
        g["cpu_s"] += cpu
        g["vol"] += vol
    out = [{"thread": g["thread"], "threads": g["threads"], "cpu_s": g["cpu_s"],
            "cpu_s_per_M_samples": g["cpu_s"] / (samples / 1e6) if samples else None,
            "vol_per_s": g["vol"] / window} for g in groups.values()]
    return sorted(out, key=lambda g: -g["cpu_s"])


def proc_sample(pid: int) -> dict:
    st = status_fields(f"/proc/{pid}/status")
    return {"t": time.monotonic(), "cpu": cpu_seconds(pid),
            "threads": int(st.get("Threads", 0)), "hwm_kb": kb(st.get("VmHWM", "")),
            "rss_kb": kb(st.get("VmRSS", "")), "anon_kb": kb(st.get("RssAnon", ""))}


def anon_kb(pid: int) -> int:
    """RssAnon now (kB), 0 once the process is gone; the kernel keeps no peak of it."""
    try:
        return kb(status_fields(f"/proc/{pid}/status").get("RssAnon", ""))
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return 0


def io_write_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except (FileNotFoundError, PermissionError, ProcessLookupError):
        pass
    return None


class Peer:
    def __init__(self, procs: Processes, sensors: int, tmp: str, tag: str, control: str | None = None):
        self.proc = None
        if control:  # a running peer: only its control channel
            host, _, port = control.rpartition(":")
            self.hci, self.control_port = None, int(port)
            self.sock = socket.create_connection((host, self.control_port), timeout=30)
            self.file = self.sock.makefile("rwb")
            return
        self.stderr = open(os.path.join(tmp, f"peer-{tag}.log"), "wb")
        self.proc = procs.start([sys.executable, PEER, "--hci-port", "0", "--control-port", "0",
                                 "--sensors", str(sensors), "--exit-with-parent"],
                                stdout=subprocess.PIPE, stderr=self.stderr)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode().split() if ready else []
        if not line or line[0] != "READY":
            raise RuntimeError(f"peer did not start (got {line!r})")
        ports = dict(p.split("=") for p in line[1:])
        self.hci, self.control_port = int(ports["hci"]), int(ports["control"])
        self.sock = socket.create_connection(("127.0.0.1", self.control_port), timeout=10)
        self.file = self.sock.makefile("rwb")

    def call(self, **cmd) -> dict:
        self.file.write(json.dumps(cmd).encode() + b"\n")
        self.file.flush()
        reply = json.loads(self.file.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"peer {cmd}: {reply}")
        return reply

    def sensors(self) -> list[dict]:
        return self.call(cmd="status")["sensors"]

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc else 0.0

    def close(self, procs: Processes) -> None:
        if self.proc is None:
            self.sock.close()
            return
        try:
            self.call(cmd="stop")
            self.proc.wait(5)
        except Exception:
            pass
        try:
            self.sock.close()
        except Exception:
            pass
        procs.stop(self.proc)
        self.stderr.close()


def totals(sensors: list[dict]) -> dict:
    return {"samples": sum(s["samples_sent"] for s in sensors),
            "notifications": sum(s["notifications_sent"] for s in sensors)}


# -- broker and subscriber -------------------------------------------------------------------

def start_broker(procs: Processes, tmp: str, port: int | None = None) -> tuple[subprocess.Popen, int]:
    """mosquitto on 127.0.0.1 (a free port unless given): no persistence, unlimited queues."""
    port = port or free_port()
    conf = os.path.join(tmp, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n"
                f"persistence false\nlog_dest file {os.path.join(tmp, 'mosquitto.log')}\n")
    proc = procs.start(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mosquitto did not start on port {port}")
            time.sleep(0.05)


class Subscriber:
    TOPICS = ["realtime_data/#", "records/#", "TitanUpUsers/#"]

    def __init__(self, port: int):
        self.messages: list[tuple[float, str, bytes]] = []
        self.last = time.monotonic()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"e2e-sub-{os.getpid()}",
                                  protocol=mqtt.MQTTv311, clean_session=True)
        self.client.on_connect = self._connected
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port, keepalive=60)
        self.client.loop_start()
        if not self.subscribed.wait(10):
            raise RuntimeError("subscriber did not subscribe")

    def _connected(self, client, userdata, flags, rc, props):
        client.subscribe([(t, 1) for t in self.TOPICS])

    def _message(self, client, userdata, msg):
        self.last = time.monotonic()
        self.messages.append((self.last, msg.topic, msg.payload))

    def take(self) -> list:
        out, self.messages = self.messages, []
        return out

    def wait_quiet(self, quiet: float = 2.0, limit: float = 20.0) -> None:
        deadline = time.monotonic() + limit
        start = time.monotonic()
        while time.monotonic() < deadline:
            if time.monotonic() - max(self.last, start) >= quiet:
                return
            time.sleep(0.1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# -- analysis ------------------------------------------------------------------------------

def analyse(messages: list, peer_sensors: list[dict], odr: int, peer_devices_only: bool = False) -> dict:
    chunks: dict[str, list] = {}  # topic -> [doc, count]
    records: dict[str, dict] = {}
    daily = 0
    bad_json = 0
    for _t, topic, payload in messages:
        if topic.startswith("TitanUpUsers/"):
            daily += 1
            continue
        if not payload:
            continue
        try:
            doc = json.loads(payload)
        except ValueError:
            bad_json += 1
            continue
        if topic.startswith("realtime_data/"):
            if topic in chunks:
                chunks[topic][1] += 1
            else:
                chunks[topic] = [doc, 1]
        elif topic.startswith("records/"):
            records[topic] = doc
    by_device: dict[str, list] = {}
    duplicate_docs = duplicate_doc_points = 0
    sent = {s["address"][:17].upper(): s["samples_sent"] for s in peer_sensors}  # "C4:…:01/P" -> "C4:…:01"
    if peer_devices_only:
        chunks = {t: c for t, c in chunks.items() if str(c[0].get("device"))[:17].upper() in sent}
        records = {t: r for t, r in records.items() if str(r.get("device"))[:17].upper() in sent}
    for topic, (doc, count) in chunks.items():
        if doc.get("sensor", "gyro") != "gyro":
            continue
        by_device.setdefault(str(doc.get("device"))[:17].upper(), []).append(doc)
        if count > 1:
            duplicate_docs += count - 1
            duplicate_doc_points += (count - 1) * len(doc.get("data", []))
    points = duplicate_doc_points
    delivered = duplicates = mismatches = gaps = tail = 0
    per_device = {}
    for device, docs in by_device.items():
        docs.sort(key=lambda d: (d.get("start") or 0, str(d.get("record")), d.get("seq") or 0))
        seen: set[int] = set()
        prev_n = prev_x = None
        dup = mism = 0
        for doc in docs:
            for p in doc.get("data", []):
                points += 1
                x = int(round(p["gx"] * LSB_PER_DPS))
                n = x if prev_n is None else prev_n + int16(x - prev_x)
                prev_n, prev_x = n, x
                if n in seen:
                    dup += 1
                seen.add(n)
                y = round(10000 * math.sin(2 * math.pi * n / odr))
                if abs(p["gy"] * LSB_PER_DPS - y) > 1.0 or int(round(p["gz"] * LSB_PER_DPS)) != int16(-n):
                    mism += 1
        top = max(seen) + 1 if seen else 0
        dev_gaps = top - len([n for n in seen if n >= 0])
        dev_tail = sent.get(device, 0) - top
        per_device[device] = {"delivered": len(seen), "sent": sent.get(device, 0), "duplicates": dup,
                              "gaps": dev_gaps, "tail": dev_tail, "mismatches": mism, "chunks": len(docs)}
        delivered += len(seen)
        duplicates += dup
        mismatches += mism
        gaps += dev_gaps
        tail += dev_tail
    for device in sent:
        if device not in per_device:
            per_device[device] = {"delivered": 0, "sent": sent[device]}
            tail += sent[device]
    expected = sum(sent.values())
    rec_samples = sum(r.get("samples", 0) for r in records.values())
    rec_expected = sum(r.get("expected", 0) for r in records.values())
    rec_gaps = sum(len(r.get("gaps") or []) for r in records.values())
    return {"expected": expected, "delivered": delivered, "ratio": delivered / expected if expected else 0.0,
            "points_received": points, "duplicates": duplicates + duplicate_doc_points,
            "duplicate_documents": duplicate_docs, "gaps": gaps, "tail": tail, "mismatches": mismatches,
            "chunk_documents": sum(c for _d, c in chunks.values()), "records": len(records),
            "daily_messages": daily, "bad_json": bad_json, "records_samples": rec_samples,
            "records_expected": rec_expected, "records_gaps": rec_gaps, "per_device": per_device}


def log_summary(path: str, limit: int = 12) -> dict:
    counts: dict[str, int] = {}
    interesting: list[str] = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                words = line.split()
                level = next((w for w in words[:4] if w in ("trace", "debug", "info", "notice", "warning",
                                                             "error", "critical", "WARNING", "ERROR",
                                                             "CRITICAL", "INFO")), "other")
                level = level.lower()
                counts[level] = counts.get(level, 0) + 1
                if level in ("warning", "error", "critical", "other") and len(interesting) < limit:
                    interesting.append(line.rstrip()[:300])
    except FileNotFoundError:
        pass
    return {"levels": counts, "lines": interesting}


# -- a phase -------------------------------------------------------------------------------

def run_as(user: str, tmp: str) -> list[str]:
    """setpriv's prefix for `user` with only the unit's capabilities, ambient (as systemd gives them)."""
    unit = os.path.join(REPO, "deploy", "gyrogate.service")
    with open(unit) as f:
        caps = next(line.split("=", 1)[1].split() for line in f if line.startswith("AmbientCapabilities="))
    names = ",".join("+" + c.lower().removeprefix("cap_") for c in caps)
    import pwd
    entry = pwd.getpwnam(user)
    for root, dirs, files in os.walk(tmp):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.chown(name, entry.pw_uid, entry.pw_gid)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
            f"--inh-caps=-all,{names}", f"--ambient-caps=-all,{names}", f"--bounding-set=-all,{names}"]


def gateway_config(tmp: str, args, hci: int | None, mqtt_port: int, data_root: str) -> str:
    data = os.path.join(data_root, "gw-data")
    config = {
        "gatewayId": "e2e-bench",
        "dataDirectory": data,
        "timeZone": "UTC",
        "bluetooth": {"transport": args.transport or f"tcp:127.0.0.1:{hci}", "maxSensors": args.sensors},
        "sensors": [{"address": f"C4:BE:84:00:00:{i + 1:02X}", "userId": "bench-user",
                     **({"backfill": True} if args.backfill_commit_ms else {})} for i in range(args.sensors)],
        "gyro": {"odrHz": args.odr, "rangeDps": 2000},
        "accelerometer": {"enabled": False},
        "capture": {"chunkSize": args.chunk_size, "commitIntervalMs": 1000,
                    **({"backfillCommitIntervalMs": args.backfill_commit_ms} if args.backfill_commit_ms else {})},
        "sessions": {"autoStart": True, **({"maxDurationMinutes": args.max_session_minutes} if args.max_session_minutes else {})},
        "mqtt": {"host": "127.0.0.1", "port": mqtt_port, "clientId": f"e2e-gyrogate-{os.getpid()}-{int(time.time())}"},
        "admin": {"socketPath": os.path.join(tmp, "admin.sock"), "mode": "0600"},
    }
    if args.max_store_bytes:
        config["retention"] = {"maxStoreBytes": args.max_store_bytes}
    if args.fleet:  # a gateway in a fleet (of one): its coordination connection, reports and scans
        config["fleet"] = {}
    if args.viewers > 0:
        args.web_port = free_port()
        config["web"] = {"listen": f"127.0.0.1:{args.web_port}", "maxViewers": max(4, args.viewers)}
    path = os.path.join(tmp, "gyrogate.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    check = subprocess.run([args.gateway, "check-config", path], capture_output=True, text=True, timeout=30)
    if check.returncode != 0:
        raise RuntimeError(f"check-config failed ({check.returncode}): {check.stdout}{check.stderr}")
    return path


def store_bytes(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory)
               if os.path.isfile(os.path.join(directory, n)))


def copy_store(source: str, data: str) -> None:
    os.makedirs(data, exist_ok=True)
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isfile(path) and not name.endswith("-shm"):
            shutil.copyfile(path, os.path.join(data, name))
            # Out of the page cache, as a store is after a boot: a copy's large writes leave it in
            # large dirty folios, which a later 1 KiB write dirties (and the device writes) whole.
            with open(os.path.join(data, name), "rb+") as f:
                os.fsync(f.fileno())
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    say(f"copied {source} ({store_bytes(data) >> 20} MiB) to {data}")


def initialised(name: str, tmp: str, log_path: str) -> bool:
    """The gateway listens on its admin socket; the reference logged `initialised`."""
    if name == "gyrogate":
        return os.path.exists(os.path.join(tmp, "admin.sock"))
    with open(log_path, "rb") as f:
        return b"reference: initialised" in f.read()


def run_phase(name: str, args, procs: Processes, tmp: str, broker: subprocess.Popen, mqtt_port: int,
              sub: Subscriber, disk: Ext4Disk | None) -> dict:
    t_phase = time.monotonic()
    say(f"{name}: starting peer ({args.sensors} sensors)")
    peer = Peer(procs, args.sensors, tmp, name, args.peer_control)
    log_path = os.path.join(tmp, f"{name}.stderr.log")
    log_file = open(log_path, "wb")
    target = None
    try:
        sub.take()
        if name == "gyrogate":
            config = gateway_config(tmp, args, peer.hci, mqtt_port, disk.mount if disk else tmp)
            if args.store_from:
                copy_store(args.store_from, os.path.join(disk.mount if disk else tmp, "gw-data"))
            argv = [args.gateway, "run", "--config", config]
            if args.run_as:
                argv = run_as(args.run_as, tmp) + argv
        else:
            argv = [sys.executable, REFERENCE, "--hci-port", str(peer.hci), "--mqtt-port", str(mqtt_port),
                    "--sensors", str(args.sensors), "--odr", str(args.odr), "--db", os.path.join(disk.mount if disk else tmp, "reference.sqlite"),
                    "--client-id", f"e2e-reference-{os.getpid()}"]
        target = procs.start(argv, stdout=log_file, stderr=log_file, cwd=tmp)
        pid = target.pid
        say(f"{name}: pid {pid}, waiting for {args.sensors} sensors to stream")
        # idle RSS: last VmRSS read while the peer had sent no sample; then wait for all streaming
        idle_kb = None
        anon_peak = 0  # RssAnon's peak, sampled from here to the exit (docstring)
        t_start = time.monotonic()
        deadline = t_start + args.startup_timeout
        while True:
            if target.poll() is not None:
                raise RuntimeError(f"{name} exited with {target.returncode} during startup; see {log_path}")
            sample = proc_sample(pid)
            rss, anon_peak = sample["rss_kb"], max(anon_peak, sample["anon_kb"])
            ready = initialised(name, tmp, log_path)
            sensors = peer.sensors()
            if ready and sum(s["samples_sent"] for s in sensors) == 0:
                idle_kb = rss
            if all(s["streaming"] and s["samples_sent"] > 0 for s in sensors):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: not all sensors streaming after {args.startup_timeout} s: "
                                   + ", ".join(f"{s['address']} connected={s['connected']} streaming={s['streaming']}"
                                               for s in sensors))
            time.sleep(0.05 if idle_kb is None else 0.2)
        time_to_stream = time.monotonic() - t_start
        say(f"{name}: all streaming after {time_to_stream:.1f} s; warm-up {args.warmup} s, window {args.seconds} s")
        store_check = wait_for_store_check(os.path.join(tmp, "admin.sock"), pid, read_threads) if name == "gyrogate" else None
        if store_check:
            say(f"{name}: store check {store_check}")
        viewers = Viewers(args.web_port, args.viewers) if name == "gyrogate" and args.viewers > 0 else None
        time.sleep(args.warmup)
        v0 = viewers.counts() if viewers else (0, 0)
        poller = ThreadPoller(pid).start()
        sectors0 = disk.sectors_written() if disk else None
        io0 = io_write_bytes(pid)
        p0, s0 = proc_sample(pid), totals(peer.sensors())
        peer_cpu0, broker_cpu0 = peer.cpu(), cpu_seconds(broker.pid)
        during = None
        if args.during:
            env = dict(os.environ, GYROGATE_ADMIN_SOCKET=os.path.join(tmp, "admin.sock"), GYROGATE_BINARY=args.gateway)
            during = subprocess.Popen(["sh", "-c", args.during], env=env)
        profiler = None
        if args.profile and name == "gyrogate":
            # perf's own start-up lands in the window; its CPU is perf's, not the gateway's.
            profiler = subprocess.Popen(["perf", "record", "-F", "15000", "-g", "-q", "-o", args.profile, "-p", str(pid),
                                         "--", "sleep", str(args.seconds)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        w0 = time.monotonic()
        time.sleep(args.seconds)
        w1 = time.monotonic()
        if profiler is not None:
            profiler.wait(timeout=30)
        p1, s1 = proc_sample(pid), totals(peer.sensors())
        io1 = io_write_bytes(pid)
        sectors1 = disk.sectors_written() if disk else None
        peer_cpu1, broker_cpu1 = peer.cpu(), cpu_seconds(broker.pid)
        if during is not None:
            say(f"{name}: --during exited with {during.wait()}")
        window_threads = poller.stop()
        anon_peak = max(anon_peak, poller.anon_peak_kb, p1["anon_kb"])
        v1 = viewers.counts() if viewers else (0, 0)
        if viewers:
            viewers.stop()
        # stop: SIGTERM, follow VmHWM until the exit
        hwm = p1["hwm_kb"]
        t_term = time.monotonic()
        target.send_signal(signal.SIGTERM)
        while target.poll() is None and time.monotonic() - t_term < args.stop_timeout:
            try:
                sample = proc_sample(pid)
                hwm, anon_peak = max(hwm, sample["hwm_kb"]), max(anon_peak, sample["anon_kb"])
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
            time.sleep(0.05)
        if target.poll() is None:
            say(f"{name}: no exit {args.stop_timeout} s after SIGTERM, killing")
            Processes.stop(target)
            exit_code = None
        else:
            exit_code = target.returncode
        stop_seconds = time.monotonic() - t_term
        sub.wait_quiet(2.0)
        final = peer.sensors()
        messages = sub.take()
    finally:
        if target is not None:
            Processes.stop(target)
        log_file.close()
        peer.close(procs)
    window = p1["t"] - p0["t"]
    samples = s1["samples"] - s0["samples"]
    notifications = s1["notifications"] - s0["notifications"]
    cpu = sum(t[1] for t in window_threads.values())  # schedstat ns, see ThreadPoller
    tick_cpu = p1["cpu"] - p0["cpu"]
    result = {
        "window_s": window, "samples": samples, "notifications": notifications,
        "samples_per_notification": samples / notifications if notifications else None,
        "samples_per_s": samples / window, "cpu_s": cpu, "cpu_pct": 100 * cpu / window,
        "cpu_s_per_M_samples": cpu / (samples / 1e6) if samples else None,
        "cpu_us_per_notification": 1e6 * cpu / notifications if notifications else None,
        "tick_cpu_s": tick_cpu,
        "tick_cpu_s_per_M_samples": tick_cpu / (samples / 1e6) if samples else None,
        "tick_cpu_us_per_notification": 1e6 * tick_cpu / notifications if notifications else None,
        "vol_ctx_per_s": sum(t[2] for t in window_threads.values()) / window,
        "nonvol_ctx_per_s": sum(t[3] for t in window_threads.values()) / window,
        "threads": p1["threads"], "threads_in_window": len(window_threads), "idle_rss_mb": idle_kb / 1024 if idle_kb is not None else None,
        "peak_rss_mb": hwm / 1024, "rss_end_mb": p1["rss_kb"] / 1024, "rss_anon_end_mb": p1["anon_kb"] / 1024,
        "rss_anon_peak_mb": anon_peak / 1024,
        "peer_cpu_pct": 100 * (peer_cpu1 - peer_cpu0) / window if peer.proc else None, "broker_cpu_pct": 100 * (broker_cpu1 - broker_cpu0) / window,
        "time_to_stream_s": time_to_stream, "exit_code": exit_code, "stop_s": stop_seconds,
        "reconnects": sum(max(0, s.get("connections", 1) - 1) for s in final),
        "delivery": analyse(messages, final, args.odr, peer_devices_only=bool(args.store_from)),
        "viewers": args.viewers if name == "gyrogate" else 0,
        "viewers_refused": viewers.refused if viewers else 0,
        "viewer_events_per_s": (v1[0] - v0[0]) / window if viewers else None,
        "viewer_kb_per_s": (v1[1] - v0[1]) / 1024 / window if viewers else None,
        "thread_cpu": threads_by_name(window_threads, window, samples),  # where the CPU went
        "log": log_summary(log_path),
        "store_check": store_check,  # before the window, reported apart (e2e_parts.wait_for_store_check)
    }
    if io0 is not None and io1 is not None and samples:
        result["write_bytes_per_sample"] = (io1 - io0) / samples
    if samples:
        window_payload = sum(len(m[2]) for m in messages if w0 <= m[0] <= w1)
        result["mqtt_payload_bytes"] = window_payload
        result["mqtt_payload_bytes_per_sample"] = window_payload / samples
    if disk is not None and samples:
        device_bytes = (sectors1 - sectors0) * 512
        result["device_bytes"] = device_bytes
        result["device_bytes_per_sample"] = device_bytes / samples
        result["device_gb_per_day"] = device_bytes / window * 86400 / 1e9
    result["phase_s"] = time.monotonic() - t_phase
    say(f"{name}: done in {result['phase_s']:.1f} s (exit {exit_code})")
    return result


# -- live-view viewers -----------------------------------------------------------------------

# -- output --------------------------------------------------------------------------------

def fmt(v, spec="{:.2f}") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return spec.format(v)


ROWS = [
    ("window (s)", "window_s", "{:.1f}"),
    ("samples in window", "samples", None),
    ("notifications in window", "notifications", None),
    ("samples per notification", "samples_per_notification", "{:.2f}"),
    ("samples/s", "samples_per_s", "{:.0f}"),
    ("CPU in window (s)", "cpu_s", "{:.3f}"),
    ("CPU (% of one core)", "cpu_pct", "{:.2f}"),
    ("CPU-s per M samples", "cpu_s_per_M_samples", "{:.2f}"),
    ("CPU-us per notification", "cpu_us_per_notification", "{:.2f}"),
    ("tick-based CPU in window (s)", "tick_cpu_s", "{:.2f}"),
    ("tick-based CPU-s per M samples", "tick_cpu_s_per_M_samples", "{:.2f}"),
    ("tick-based CPU-us per notification", "tick_cpu_us_per_notification", "{:.1f}"),
    ("voluntary ctx switches/s", "vol_ctx_per_s", "{:.0f}"),
    ("involuntary ctx switches/s", "nonvol_ctx_per_s", "{:.0f}"),
    ("threads at window end", "threads", None),
    ("threads seen in window", "threads_in_window", None),
    ("process write_bytes per sample", "write_bytes_per_sample", "{:.1f}"),
    ("device bytes per sample (--ext4)", "device_bytes_per_sample", "{:.1f}"),
    ("device GB per day (--ext4)", "device_gb_per_day", "{:.2f}"),
    ("MQTT payload bytes per sample", "mqtt_payload_bytes_per_sample", "{:.1f}"),
    ("idle RSS (MB)", "idle_rss_mb", "{:.1f}"),
    ("peak RSS VmHWM (MB)", "peak_rss_mb", "{:.1f}"),
    ("RSS at window end (MB)", "rss_end_mb", "{:.1f}"),
    ("RssAnon at window end (MB)", "rss_anon_end_mb", "{:.1f}"),
    ("peak RssAnon, sampled (MB)", "rss_anon_peak_mb", "{:.1f}"),
    ("peer CPU (%)", "peer_cpu_pct", "{:.1f}"),
    ("broker CPU (%)", "broker_cpu_pct", "{:.1f}"),
    ("time to all streaming (s)", "time_to_stream_s", "{:.1f}"),
    ("exit code after SIGTERM", "exit_code", None),
    ("SIGTERM to exit (s)", "stop_s", "{:.2f}"),
    ("sensor reconnects", "reconnects", None),
    ("expected samples (peer sent)", "delivery.expected", None),
    ("delivered (distinct)", "delivery.delivered", None),
    ("delivered/expected", "delivery.ratio", "{:.4f}"),
    ("duplicates", "delivery.duplicates", None),
    ("gaps (missing inside)", "delivery.gaps", None),
    ("tail (sent after last delivered)", "delivery.tail", None),
    ("value mismatches", "delivery.mismatches", None),
    ("realtime_data documents", "delivery.chunk_documents", None),
    ("records documents (distinct)", "delivery.records", None),
    ("records: samples / expected", None, None),
    ("live-view viewers", "viewers", None),
    ("viewers refused", "viewers_refused", None),
    ("viewer events/s (all viewers)", "viewer_events_per_s", "{:.1f}"),
    ("viewer KB/s (all viewers)", "viewer_kb_per_s", "{:.1f}"),
    ("phase wall time (s)", "phase_s", "{:.1f}"),
]


def get(d: dict, key: str):
    for part in key.split("."):
        d = d.get(part) if isinstance(d, dict) else None
    return d


def table(results: dict) -> str:
    names = list(results)
    header = ["metric"] + names + (["ratio gg/ref"] if len(names) == 2 else [])
    lines = []
    for label, key, spec in ROWS:
        row = [label]
        for n in names:
            if key is None:
                dl = results[n]["delivery"]
                row.append(f"{dl['records_samples']:,} / {dl['records_expected']:,}" if dl["records"] else "-")
            else:
                row.append(fmt(get(results[n], key), spec or "{}"))
        if len(names) == 2:
            ratio = ""
            if key in ("cpu_s_per_M_samples", "cpu_us_per_notification", "tick_cpu_s_per_M_samples", "vol_ctx_per_s", "peak_rss_mb", "idle_rss_mb",
                       "rss_end_mb", "rss_anon_peak_mb", "cpu_pct", "write_bytes_per_sample", "device_bytes_per_sample",
                       "mqtt_payload_bytes_per_sample"):
                a, b = get(results[names[0]], key), get(results[names[1]], key)
                ratio = f"{a / b:.2f}" if a is not None and b else "-"
            row.append(ratio)
        lines.append(row)
    widths = [max(len(r[i]) for r in [header] + lines) for i in range(len(header))]
    out = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    out.append("  ".join("-" * w for w in widths))
    for r in lines:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sensors", type=int, default=4, choices=range(1, 9), metavar="1-8")
    p.add_argument("--odr", type=int, default=100, choices=[25, 50, 100, 200, 400, 800])
    p.add_argument("--seconds", type=float, default=30.0, help="measurement window per phase")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds between all streaming and the window")
    p.add_argument("--gateway", default=os.path.join(REPO, ".build", "release", "gyrogate"))
    p.add_argument("--skip-reference", action="store_true")
    p.add_argument("--fleet", action="store_true", help="the gateway with a fleet section (docs/fleet.md)")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--check", action="store_true", help="exit 1 on a failed correctness check (gyrogate phase)")
    p.add_argument("--exact", action="store_true", help="with --check: also fail on any gap (every sample exactly once)")
    p.add_argument("--profile", metavar="PERF_DATA", help="record the gateway with `perf record -g` during the window")
    p.add_argument("--ext4", action="store_true",
                   help="data directories on a loop-mounted journalled ext4 image; report device bytes per sample")
    p.add_argument("--backfill-commit-ms", type=int, metavar="MS",
                   help="backfill on for every sensor and capture.backfillCommitIntervalMs MS (the gateway commits that often)")
    p.add_argument("--keep-temp", action="store_true", help="keep the temporary directory (logs, stores)")
    p.add_argument("--startup-timeout", type=float, default=120.0)
    p.add_argument("--stop-timeout", type=float, default=60.0)
    p.add_argument("--peer-control", metavar="HOST:PORT", help="use this running peer (gyrogate phase only)")
    p.add_argument("--transport", metavar="SPEC", help="the gateway's bluetooth.transport (default: the peer's H4/TCP port)")
    p.add_argument("--during", metavar="CMD", help="shell command started when the window starts")
    p.add_argument("--run-as", metavar="USER", help="run the gateway as USER with the unit's capabilities only")
    p.add_argument("--viewers", type=int, default=0, metavar="N",
                   help="enable the live view and connect N Server-Sent Events clients through the window")
    p.add_argument("--store-from", metavar="DIR", help="a prefilled store for the gateway (docstring)")
    p.add_argument("--max-store-bytes", type=int, metavar="N", help="retention.maxStoreBytes")
    p.add_argument("--chunk-size", type=int, default=2000, metavar="N", help="capture.chunkSize")
    p.add_argument("--max-session-minutes", type=int, metavar="N", help="sessions.maxDurationMinutes (to continue a long open session)")
    args = p.parse_args()
    if args.store_from and not os.path.isfile(os.path.join(args.store_from, "store.sqlite")):
        sys.exit(f"--store-from {args.store_from}: no store.sqlite in it")
    if args.peer_control:
        args.skip_reference = True
    if not os.access(args.gateway, os.X_OK):
        sys.exit(f"no gateway binary at {args.gateway} (swift build -c release --product gyrogate)")

    t_run = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="gyrogate-e2e-")
    procs = Processes()
    sub = None
    results: dict[str, dict] = {}
    disk = None
    if args.ext4:
        why = Ext4Disk.unavailable()
        if why:
            say(f"--ext4 skipped: {why}; the data directories stay in {tmp}, no device figures")
        else:
            disk = Ext4Disk(tmp, Ext4Disk.SIZE + (int(store_bytes(args.store_from) * 1.25) if args.store_from else 0))
    try:
        if disk is not None:
            try:
                say(f"ext4 image mounted on {disk.setup()} ({disk.device})")
            except (subprocess.SubprocessError, OSError) as e:
                detail = getattr(e, "stderr", b"") or b""
                say(f"--ext4 skipped: could not set up the loop-mounted image ({e} {detail.decode(errors='replace').strip()})")
                disk.teardown()
                disk = None
        broker, mqtt_port = start_broker(procs, tmp)
        sub = Subscriber(mqtt_port)
        say(f"mosquitto on 127.0.0.1:{mqtt_port}, temp {tmp}")
        results["gyrogate"] = run_phase("gyrogate", args, procs, tmp, broker, mqtt_port, sub, disk)
        if not args.skip_reference:
            results["reference"] = run_phase("reference", args, procs, tmp, broker, mqtt_port, sub, disk)
    finally:
        if sub is not None:
            sub.close()
        procs.stop_all()
        if disk is not None:
            disk.teardown()
        if args.keep_temp:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    total = time.monotonic() - t_run
    print(f"\ne2e bench: {args.sensors} sensors x {args.odr} Hz gyro "
          f"({'packed: each side as it chooses, see samples per notification' if args.odr > 100 else 'unpacked'}), window {args.seconds:g} s, "
          f"gateway {args.gateway}")
    if disk is None and args.ext4:
        print("--ext4 was skipped (see above): no device figures")
    print(table(results))
    for name, r in results.items():
        log = r["log"]
        print(f"\n{name} threads by name (count, CPU-s per M samples, voluntary switches/s):")
        for t in r["thread_cpu"]:
            print(f"  {t['thread']:<18} {t['threads']:>3}  {fmt(t['cpu_s_per_M_samples'], '{:8.3f}'):>8}"
                  f"  {t['vol_per_s']:7.1f}/s")
        print(f"{name} log: {json.dumps(log['levels'], sort_keys=True)}")
        for line in log["lines"]:
            print(f"  {line}")
        bad = {d: v for d, v in r["delivery"]["per_device"].items()
               if v.get("gaps") or v.get("duplicates") or v.get("mismatches") or not v.get("delivered")}
        if bad:
            print(f"  devices with findings: {json.dumps(bad)}")
    print(f"\ntotal wall time {total:.1f} s")

    failures = []
    g = results.get("gyrogate")
    if g:
        if g["exit_code"] != 0:
            failures.append(f"gateway exit code after SIGTERM {g['exit_code']}")
        if g["delivery"]["ratio"] < 0.95:
            failures.append(f"delivered/expected {g['delivery']['ratio']:.4f} < 0.95")
        if g["delivery"]["duplicates"]:
            failures.append(f"{g['delivery']['duplicates']} duplicate samples")
        if g["delivery"]["mismatches"]:
            failures.append(f"{g['delivery']['mismatches']} samples do not match the waveform")
        if args.exact:
            for device, v in sorted(g["delivery"]["per_device"].items()):
                if not v.get("delivered"):
                    failures.append(f"{device}: no sample delivered")
                elif v.get("gaps"):
                    failures.append(f"{device}: {v['gaps']} samples missing before its last delivered one")
            print(f"exact: {g['delivery']['delivered']} samples delivered once each, "
                  f"{g['delivery']['tail']} sent after the last delivered ones (in flight at the stop)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sensors": args.sensors, "odr_hz": args.odr, "seconds": args.seconds, "gateway": args.gateway, "viewers": args.viewers,
                       "wall_s": total, "phases": results, "check_failures": failures}, f, indent=2)
    if args.check:
        print("CHECK " + ("PASSED" if not failures else "FAILED: " + "; ".join(failures)))
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
