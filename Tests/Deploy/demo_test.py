#!/usr/bin/env python3
"""The README's demo, headless: `bash deploy/demo.sh` with the shipped config.json's sensors.

    .venv/bin/python Tests/Deploy/demo_test.py [--binary PATH] [--timeout 120]

It copies config.json into a temporary directory with free loopback ports for the broker and
the emulated controller (so it never meets a mosquitto or a peer already running) and a data
directory of its own, then runs deploy/demo.sh exactly as a user would, with GYROGATE_CONFIG
(and GYROGATE_BINARY to skip the release build when --binary is given). The demo starts the
broker and the two emulated MetaWear boards itself. A subscriber then must receive, within the
timeout: a `records/…` document per sensor, `realtime_data/…` chunk documents of both sensors
whose samples equal the emulated boards' waveform, and `TitanUpUsers/…/DailySessions/…`
documents; `gyrogate status` must show both sensors streaming. Ctrl-C (SIGINT) must stop the
demo with exit status 0. The last line is `N passed, N failed`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import paho.mqtt.client as mqtt
except ImportError:
    sys.exit("paho-mqtt is missing: .venv/bin/pip install -r Tests/Benchmarks/E2E/requirements.txt")

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests", "Benchmarks", "E2E"))
from e2e_bench import LSB_PER_DPS, free_port, int16  # noqa: E402  (2000 dps range, as the shipped config)


class Subscriber:
    """Every message on the demo's topics, as (topic, payload); connects once the broker is up."""

    def __init__(self, port: int):
        self.messages: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"demo-test-{os.getpid()}")
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(
            [("records/#", 1), ("realtime_data/#", 1), ("TitanUpUsers/#", 1)])
        self.client.on_message = self._message
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self.client.connect_async("127.0.0.1", port)
        self.client.loop_start()

    def _message(self, client, userdata, msg):
        with self.changed:
            self.messages.append((msg.topic, msg.payload))
            self.changed.notify_all()

    def wait_for(self, done, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not done(self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def documents(messages, prefix):
    out = []
    for topic, payload in messages:
        if topic.startswith(prefix) and payload:
            try:
                out.append((topic, json.loads(payload)))
            except ValueError:
                out.append((topic, None))
    return out


def waveform_problems(chunks, odr: float) -> list[str]:
    """Samples of each chunk must be the boards' waveform: consecutive n, exact y and z."""
    problems = []
    for topic, doc in chunks:
        if not doc:
            problems.append(f"{topic}: not JSON")
            continue
        previous = None
        for point in doc.get("data", []):
            x = int(round(point["gx"] * LSB_PER_DPS))
            n = x if previous is None else previous[0] + int16(x - previous[1])
            if previous is not None and n != previous[0] + 1:
                problems.append(f"{topic}: n jumps from {previous[0]} to {n}")
                break
            previous = (n, x)
            y = round(10000 * math.sin(2 * math.pi * n / odr))
            if abs(point["gy"] * LSB_PER_DPS - y) > 1.0 or int(round(point["gz"] * LSB_PER_DPS)) != int16(-n):
                problems.append(f"{topic}: sample n={n} differs from the waveform")
                break
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="a gyrogate binary (default: the demo builds the release one)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the documents")
    args = parser.parse_args()

    with open(os.path.join(REPO, "config.json")) as f:
        config = json.load(f)
    sensors = [s["address"] for s in config["sensors"]]
    odr = float(config["gyro"]["odrHz"])
    tmp = tempfile.mkdtemp(prefix="gyrogate-demo-")
    mqtt_port, hci_port = free_port(), free_port()
    config["dataDirectory"] = os.path.join(tmp, "data")
    config["admin"]["socketPath"] = os.path.join(tmp, "admin.sock")
    config["bluetooth"]["transport"] = f"tcp:127.0.0.1:{hci_port}"
    if "web" in config:
        config["web"]["listen"] = f"127.0.0.1:{free_port()}"
    config["mqtt"].update({"host": "127.0.0.1", "port": mqtt_port, "clientId": f"gyrogate-demo-test-{os.getpid()}"})
    config_path = os.path.join(tmp, "config.json")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)

    env = dict(os.environ, GYROGATE_CONFIG=config_path)
    if args.binary:
        env["GYROGATE_BINARY"] = os.path.abspath(args.binary)
    binary = env.get("GYROGATE_BINARY", os.path.join(REPO, ".build", "release", "gyrogate"))
    log_path = os.path.join(tmp, "demo.log")
    results: list[tuple[str, bool, str]] = []

    def check(name: str, ok: bool, detail: str = "") -> None:
        results.append((name, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    subscriber = Subscriber(mqtt_port)
    with open(log_path, "w") as log:
        demo = subprocess.Popen(["bash", os.path.join(REPO, "deploy", "demo.sh")], cwd=REPO, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def complete(messages) -> bool:
            records = {doc.get("device") for _t, doc in documents(messages, "records/") if doc}
            chunks = {doc.get("device") for _t, doc in documents(messages, "realtime_data/") if doc}
            daily = documents(messages, "TitanUpUsers/")
            return set(sensors) <= records and set(sensors) <= chunks and bool(daily)

        arrived = subscriber.wait_for(complete, args.timeout)
        with subscriber.lock:
            messages = list(subscriber.messages)
        records = documents(messages, "records/")
        chunks = documents(messages, "realtime_data/")
        daily = [(t, d) for t, d in documents(messages, "TitanUpUsers/") if "/DailySessions/" in t]
        check("documents arrive within the timeout", arrived,
              f"{len(records)} records, {len(chunks)} realtime_data, {len(daily)} DailySessions")
        check("a records document per sensor", set(sensors) <= {d.get("device") for _t, d in records if d},
              ", ".join(sorted({str(d.get('device')) for _t, d in records if d})))
        check("realtime_data chunks from both sensors", set(sensors) <= {d.get("device") for _t, d in chunks if d})
        problems = waveform_problems(chunks, odr)
        check("chunk samples equal the emulated waveform", bool(chunks) and not problems, "; ".join(problems[:3]))
        check("DailySessions documents", bool(daily), daily[0][0] if daily else "")

        status = subprocess.run([binary, "status", "--config", config_path, "--json"], capture_output=True, text=True,
                                timeout=30)
        streaming: list[str] = []
        if status.returncode == 0:
            try:
                for sensor in json.loads(status.stdout).get("sensors", []):
                    if sensor.get("state") == "streaming":
                        streaming.append(sensor.get("address"))
            except ValueError:
                pass
        check("gyrogate status shows both sensors streaming", set(sensors) <= set(streaming),
              f"exit {status.returncode}, streaming: {streaming} {status.stderr.strip()[:200]}")
    finally:
        subscriber.close()
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGINT)
        try:
            code = demo.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
            code = demo.wait()
    check("Ctrl-C stops the demo cleanly", code == 0, f"exit status {code}")
    failed = [r for r in results if not r[1]]
    if failed:
        with open(log_path) as f:
            print("---- demo output (last 40 lines) ----")
            print("".join(f.readlines()[-40:]), end="")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
