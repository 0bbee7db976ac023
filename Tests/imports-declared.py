#!/usr/bin/env python3
"""Every module a Swift file imports is a declared dependency of its target in Package.swift.

SwiftPM builds a target that imports an undeclared module of the same package whenever that
module happens to be built first, so an undeclared import works until the build order changes,
and the manifest no longer says which layer knows which (docs/architecture.md). This reads the
manifest as SwiftPM does (`swift package dump-package`) and each target's sources, and names
every import that is neither a declared dependency (a target, or a product whose module has
the product's name), the target itself, nor the toolchain's (Foundation, Glibc, XCTest ...).

Usage: python3 Tests/imports-declared.py     (from the repository; exit 1 on any undeclared import)
"""
import json
import os
import re
import subprocess
import sys

TOOLCHAIN = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin", "Dispatch",
             "XCTest", "Synchronization", "_Concurrency", "Observation", "os"}
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*import\s+(?:(?:struct|enum|class|protocol|func|var|let|typealias)\s+)?(\w+)", re.M)


def main() -> int:
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    problems = []
    checked = 0
    for target in manifest["targets"]:
        if target["type"] == "system":
            continue
        name = target["name"]
        declared = {name}
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            declared.add(value[0])  # byName, target or product: its first field is the name
        root = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name)
        for folder, _, files in os.walk(root):
            for file in sorted(f for f in files if f.endswith(".swift")):
                path = os.path.join(folder, file)
                checked += 1
                with open(path, encoding="utf-8") as source:
                    for module in IMPORT.findall(source.read()):
                        if module not in declared and module not in TOOLCHAIN:
                            problems.append(f"{path}: imports {module}, which target {name} does not declare in Package.swift")
    for problem in problems:
        print(problem)
    print(f"{checked} files of {len(manifest['targets'])} targets read: {len(problems)} undeclared imports")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
