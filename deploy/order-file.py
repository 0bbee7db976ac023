#!/usr/bin/env python3
"""Writes deploy/gyrogate.ld: the code a running gateway executes, hottest first, as a linker script.

    .venv/bin/python deploy/order-file.py [--output deploy/gyrogate.ld] [--keep-temp]
    .venv/bin/python deploy/order-file.py --check   (Tests/run-tests.sh: is the script behind the code?)

deploy/release-build.sh links the shipped binary with it (lld, one section per function), so
that the code that runs sits together and the rest of the binary is never mapped in. Run it
again after changes to the code: sections that no longer exist match nothing, and new code is
laid out after the listed part, so a stale script costs memory, never correctness.

The script names input sections by object file and section, not symbols: many executed pieces
have no unique symbol (local helpers that every object file carries a copy of, unnamed thunks
`.L__unnamed_N`), and a symbol in a library built without function sections (the Swift runtime,
Foundation) stands for that object's whole code.

How: an unordered release build with symbols; then the end-to-end benchmark's loads
(Tests/Benchmarks/E2E/e2e_bench.py, emulated sensors over H4/TCP and a real mosquitto: 4 x
100 Hz, then 4 x 400 Hz packed) with the gateway under valgrind's callgrind, from start to
shutdown, while the admin API is asked what an operator asks (`gyrogate status`, /metrics,
/v1/sessions). Every input section of the link map that holds an instruction callgrind saw
executing is written, by instructions executed in it, most first. Needs valgrind (apt-get install valgrind) and the test
environment of Tests/run-tests.sh (.venv with bumble and paho, mosquitto).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BENCH = os.path.join(REPO, "Tests", "Benchmarks", "E2E", "e2e_bench.py")
LOADS = [("100", "20"), ("400", "15")]  # (ODR in Hz, seconds): unpacked, then packed


def die(message: str) -> None:
    sys.exit(f"deploy/order-file.py: error: {message}")


def build(scratch: str, link_map: str, ordered: bool = False) -> str:
    layout = [] if ordered else ["--unordered", "--symbols"]
    command = ["bash", os.path.join(HERE, "release-build.sh"), *layout, "--scratch-path", scratch]
    bin_dir = subprocess.run(command + ["--show-bin-path"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    binary = os.path.join(bin_dir, "gyrogate")
    if os.path.exists(binary):
        os.remove(binary)  # the map is written only when the binary is linked
    if subprocess.run(command + ["-Xlinker", f"-Map={link_map}"], cwd=REPO).returncode != 0:
        die(f"the {'ordered' if ordered else 'unordered'} release build failed (above)")
    return binary


def wrapper(tmp: str, binary: str) -> str:
    """A gateway command for the benchmark: `run` under callgrind, anything else as it is."""
    # valgrind 3.19 (Debian 12) cannot read the DWARF 5 that Swift 6.3 writes: symbols only.
    plain = os.path.join(tmp, "gyrogate")
    subprocess.run(["strip", "--strip-debug", "-o", plain, binary], check=True)
    path = os.path.join(tmp, "gyrogate-callgrind")
    with open(path, "w") as f:
        f.write(f"""#!/bin/bash
if [ "$1" = run ]; then
    exec valgrind --tool=callgrind --dump-instr=yes --dump-line=no -q \\
        --callgrind-out-file={tmp}/callgrind.%p {plain} "$@"
fi
exec {plain} "$@"
""")
    os.chmod(path, 0o755)
    return path


def ask_admin(plain: str, log: str, deadline: float) -> None:
    """Once every sensor streams, asks the admin API what an operator would."""
    while time.time() < deadline:
        text = open(log).read() if os.path.exists(log) else ""
        if "all streaming" in text:
            break
        time.sleep(0.5)
    else:
        return
    pids = subprocess.run(["pgrep", "-f", f"{plain} run"], capture_output=True, text=True).stdout.split()
    if not pids:
        return
    arguments = open(f"/proc/{pids[0]}/cmdline").read().split("\0")
    config = next((a for a in arguments if a.endswith(".json")), None)
    if not config:
        return
    socket = json.load(open(config)).get("admin", {}).get("socketPath")
    for _ in range(2):
        time.sleep(3)
        subprocess.run([plain, "status", "--socket", socket], capture_output=True)
        subprocess.run([plain, "status", "--socket", socket, "--json"], capture_output=True)
        for path in ("/metrics", "/v1/sessions"):
            subprocess.run(["curl", "-s", "--unix-socket", socket, f"http://gateway{path}"], capture_output=True)


def executed(path: str, binary: str) -> collections.Counter:
    """Instructions executed per instruction address of `binary`, from one callgrind file."""
    objects: dict[str, str] = {}
    cost: collections.Counter = collections.Counter()
    current_object = None
    position = 0
    after_call = False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                m = re.match(r"ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m:
                    if m.group(2):
                        objects[m.group(1)] = m.group(2)
                    current_object = objects.get(m.group(1))
                else:
                    current_object = line[3:].strip()
            elif line.startswith("cob="):
                m = re.match(r"cob=\((\d+)\) (.*)", line.rstrip("\n"))
                if m:
                    objects[m.group(1)] = m.group(2)
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line[:1] in "0123456789+-*":
                fields = line.split()
                where = fields[0]
                if where.startswith("0x"):
                    position = int(where, 16)
                elif where.startswith(("+", "-")):
                    position += int(where)
                if after_call:
                    after_call = False
                    continue
                if current_object == binary and len(fields) >= 2 and fields[1].isdigit():
                    cost[position] += int(fields[1])
    return cost


def input_sections(link_map: str) -> list[tuple[int, int, str, str]]:
    """(address, size, file, section) of every code input section in lld's map, by address."""
    sections = []
    with open(link_map) as f:
        for line in f:
            m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(\S.*):\((\.text[^)]*)\)$", line.rstrip("\n"))
            if m:
                sections.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)))
    sections.sort()
    return sections


def file_pattern(path: str) -> str:
    """The object as a linker script names it, independent of where the build folder is."""
    m = re.match(r".*/([^/]+\.a)\(([^)]+)\)$", path)
    if m:
        return f"*{m.group(1)}:{m.group(2)}"
    return "*" + "/".join(path.split("/")[-2:])


def listed(script: str) -> list[tuple[str, str]]:
    """(file pattern, section) of every input section a script written by this program names."""
    entries = []
    with open(script) as f:
        for line in f:
            m = re.match(r'\s*(\*\S+?)\("([^"]+)"\)$', line.rstrip("\n"))
            if m:
                entries.append((m.group(1), m.group(2)))
    return entries


def check(script: str, scratch: str) -> None:
    """Fails when the script names code sections of the gateway's own modules that the current
    code no longer has. A profile is not reproducible to the byte (instruction counts follow
    timing), so the check compares names, not the file: a renamed, moved or removed function
    that the profile saw executing means the layout is behind the code."""
    tmp = tempfile.mkdtemp(prefix="gyrogate-order-check-")
    link_map = os.path.join(tmp, "gyrogate.map")
    build(scratch, link_map, ordered=True)
    present = {(file_pattern(path), section) for _, _, path, section in input_sections(link_map)}
    shutil.rmtree(tmp, ignore_errors=True)
    entries = listed(script)
    if not entries:
        die(f"{script} names no sections: is it a script this program wrote?")
    stale = [entry for entry in entries if entry not in present]
    own = [entry for entry in stale if ".build/" in entry[0]]
    runtime = len(stale) - len(own)
    if runtime:
        # The Swift runtime's and the C libraries' sections follow the toolchain, not this code.
        print(f"{script}: {runtime} sections of the toolchain's libraries are not in this build (another Swift version?)")
    if own:
        examples = "\n".join(f"    {pattern}(\"{section}\")" for pattern, section in own[:5])
        die(f"{os.path.relpath(script, REPO)} is behind the code: {len(own)} of the {len(entries)} sections it names no longer "
            f"exist in the package's modules, for example\n{examples}\n"
            f"Regenerate it (needs valgrind; several minutes) and commit it: .venv/bin/python deploy/order-file.py")
    print(f"{os.path.relpath(script, REPO)}: every section it names from the package's modules exists ({len(entries) - runtime} of {len(entries)} named exist)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=os.path.join(HERE, "gyrogate.ld"))
    parser.add_argument("--scratch-path", default=os.path.join(REPO, ".build-orderfile"))
    parser.add_argument("--keep-temp", action="store_true")
    parser.add_argument("--check", action="store_true",
                        help="do not profile: build as shipped and fail if the script names code that no longer exists")
    args = parser.parse_args()
    if args.check:
        check(args.output, args.scratch_path)
        return
    if not shutil.which("valgrind"):
        die("valgrind not found (apt-get install valgrind)")
    python = os.path.join(REPO, ".venv", "bin", "python")
    if not os.path.exists(python):
        die(".venv is missing: run Tests/run-tests.sh once (it makes the venv with bumble and paho)")

    tmp = tempfile.mkdtemp(prefix="gyrogate-order-")
    link_map = os.path.join(tmp, "gyrogate.map")
    binary = build(args.scratch_path, link_map)
    gateway = wrapper(tmp, binary)
    plain = os.path.join(tmp, "gyrogate")
    for odr, seconds in LOADS:
        log = os.path.join(tmp, f"bench-{odr}.log")
        print(f"== 4 sensors x {odr} Hz for {seconds} s under callgrind", flush=True)
        with open(log, "w") as out:
            bench = subprocess.Popen([python, BENCH, "--sensors", "4", "--odr", odr, "--seconds", seconds,
                                      "--skip-reference", "--check", "--gateway", gateway],
                                     cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            ask_admin(plain, log, time.time() + 180)
            if bench.wait() != 0:
                die(f"the benchmark failed under callgrind; see {log}")

    cost: collections.Counter = collections.Counter()
    for name in os.listdir(tmp):
        if name.startswith("callgrind."):
            cost.update(executed(os.path.join(tmp, name), plain))
    sections = input_sections(link_map)
    starts = [section[0] for section in sections]
    weight: collections.Counter = collections.Counter()
    for address, instructions in cost.items():
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < sections[i][0] + sections[i][1]:
            weight[i] += instructions
    if len(weight) < 1000:
        die(f"only {len(weight)} code sections of the binary seen executing: did callgrind run? ({tmp})")
    with open(args.output, "w") as f:
        f.write("/* Generated by deploy/order-file.py; deploy/release-build.sh links with it. The code\n"
                "   sections a running gateway executes, most instructions first, so that they sit together. */\n")
        f.write("SECTIONS {\n  .text : {\n")
        for i, _ in weight.most_common():
            _, _, path, section = sections[i]
            f.write(f'    {file_pattern(path)}("{section}")\n')
        f.write("  }\n}\nINSERT BEFORE .fini;\n")
    print(f"{args.output}: {len(weight)} sections, {sum(sections[i][1] for i in weight) / 1e6:.2f} MB")
    if args.keep_temp:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
