"""Parts of e2e_bench.py that stand on their own: the loop-mounted ext4 disk whose device
counters give the device bytes a sample, and the live view's Server-Sent Events viewers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading


class Ext4Disk:
    """A journalled ext4 filesystem in a loop-mounted image; counts what reaches the device."""

    SIZE = 512 << 20

    def __init__(self, tmp: str, size: int = SIZE, reserved_percent: int | None = None):
        self.size = size
        # mkfs's -m: the blocks kept for root (5 % by default); 0 for a small disk meant to fill.
        self.reserved_percent = reserved_percent
        self.image = os.path.join(tmp, "ext4.img")
        self.mount = os.path.join(tmp, "ext4")
        self.device: str | None = None
        self.mounted = False

    @staticmethod
    def unavailable() -> str | None:
        """Why the option cannot run here, or None."""
        if os.geteuid() != 0:
            return "needs root (losetup, mount)"
        for tool in ("mkfs.ext4", "losetup", "mount", "umount"):
            if shutil.which(tool) is None:
                return f"{tool} is missing"
        if not os.path.exists("/dev/loop-control"):
            return "no /dev/loop-control (loop devices unavailable)"
        return None

    def setup(self) -> str:
        with open(self.image, "wb") as f:
            f.truncate(self.size)
        reserved = [] if self.reserved_percent is None else ["-m", str(self.reserved_percent)]
        subprocess.run(["mkfs.ext4", "-q", "-F", *reserved, "-E", "lazy_itable_init=0,lazy_journal_init=0", self.image],
                       check=True, capture_output=True, timeout=120)
        self.device = subprocess.run(["losetup", "-f", "--show", self.image], check=True, capture_output=True,
                                     text=True, timeout=30).stdout.strip()
        os.makedirs(self.mount, exist_ok=True)
        subprocess.run(["mount", "-t", "ext4", self.device, self.mount], check=True, capture_output=True, timeout=30)
        self.mounted = True
        return self.mount

    def sectors_written(self) -> int:
        """sync -f first, so what the window wrote is on the device when it is counted."""
        subprocess.run(["sync", "-f", self.mount], check=True, timeout=60)
        with open(f"/sys/block/{os.path.basename(self.device)}/stat") as f:
            return int(f.read().split()[6])

    def teardown(self) -> None:
        if self.mounted:
            subprocess.run(["umount", self.mount], capture_output=True, timeout=60)
            self.mounted = False
        if self.device:
            subprocess.run(["losetup", "-d", self.device], capture_output=True, timeout=30)
            self.device = None


# -- peer ----------------------------------------------------------------------------------


class Viewers:
    """N Server-Sent Events clients of the gateway's live view, each a thread that reads and
    counts `/events` until stopped (or the gateway closes the stream)."""

    def __init__(self, port: int, count: int):
        self.port, self.stopping = port, threading.Event()
        self.events = [0] * count
        self.bytes = [0] * count
        self.refused = 0
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(count)]
        for t in self.threads:
            t.start()

    def _run(self, i: int) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                sock.settimeout(0.5)
                while not self.stopping.is_set():
                    try:
                        data = sock.recv(65536)
                    except socket.timeout:
                        continue
                    if not data:
                        return
                    if self.bytes[i] == 0 and b" 503 " in data.split(b"\r\n", 1)[0]:
                        self.refused += 1
                        return
                    self.bytes[i] += len(data)
                    self.events[i] += data.count(b"\n\n")
        except OSError:
            pass

    def counts(self) -> tuple[int, int]:
        return sum(self.events), sum(self.bytes)

    def stop(self) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(2)


def admin_status(sock_path: str) -> dict:
    """GET /v1/status over the gateway's admin socket (http.client: it reads chunked bodies)."""
    import http.client
    import json

    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(30)
            self.sock.connect(sock_path)

    connection = UnixConnection("localhost")
    try:
        connection.request("GET", "/v1/status")
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


def wait_for_store_check(sock_path: str, pid: int, read_threads, timeout: float = 900.0) -> dict:
    """Waits until the gateway's full integrity check in the background has ended
    (`store.integrity.state` verified or damaged), so that the window measures the steady state
    and not a once-per-boot read of the whole file (docs/durability.md, "Corruption"). Returns
    the state, the check's own `seconds` (from the status: of this run's check, or of the one
    this boot remembered) and its cost, reported apart: the CPU of the thread `store-check`, read
    every 0.25 s while it runs (up to 0.25 s of its last CPU can be missed)."""
    import time
    start, check_ns, integrity = time.monotonic(), {}, {}
    while time.monotonic() - start < timeout:
        for tid, (name, ns, _, _) in read_threads(pid).items():
            if name == "store-check":
                check_ns[tid] = ns
        store = admin_status(sock_path).get("store", {})
        if store and "integrity" not in store:
            # An older build, benchmarked beside this one: it has no background check to wait for.
            integrity = {"state": "none (no background check in this build)"}
            break
        integrity = store.get("integrity", {})
        if integrity.get("state") in ("verified", "damaged"):
            break
        time.sleep(0.25)
    else:
        raise RuntimeError(f"the store's integrity check had not ended after {timeout} s: {integrity}")
    return {"state": integrity.get("state"), "seconds": integrity.get("seconds"), "waited_s": time.monotonic() - start,
            "thread_cpu_s": sum(check_ns.values()) / 1e9, "ran_in_this_run": bool(check_ns)}
