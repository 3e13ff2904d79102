#!/usr/bin/env python3
"""Checks that the gpu-suite target builds every binary a GPU test runs (scripts/gpu-test builds only gpu-suite).

  check_gpu_suite.py <build dir>

Lists the tests labelled gpu (ctest --show-only=json-v1) and every path into the build tree on their command lines
(the program, pgasrun's program, a worker), and fails naming each test whose binary gpu-suite does not depend on
(ninja -t query gpu-suite), or whose program was not built at all. Run after a full build (CI's)."""
import json
import os
import subprocess
import sys


def main(build):
    build = os.path.realpath(build)
    listing = subprocess.run(["ctest", "--test-dir", build, "-L", "gpu", "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    tests = json.loads(listing)["tests"]
    query = subprocess.run(["ninja", "-C", build, "-t", "query", "gpu-suite"], check=True, capture_output=True,
                           text=True).stdout
    suite = set()  # the paths listed under "  input: phony", up to "  outputs:" (what depends on gpu-suite)
    section = None
    for line in query.splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            section = line.strip()
        elif line.startswith("    ") and section is not None and section.startswith("input:"):
            suite.add(line.strip())
    problems = []
    for test in tests:
        command = test.get("command")
        if not command:
            problems.append(f"'{test['name']}': its program was not found (not built?)")
            continue
        for arg in command:
            path = os.path.realpath(arg) if os.path.isabs(arg) else None
            if path and path.startswith(build + os.sep) and os.path.isfile(path):
                relative = os.path.relpath(path, build)
                if relative not in suite:
                    problems.append(f"'{test['name']}' runs {relative}, which gpu-suite does not build")
    for p in problems:
        print("check_gpu_suite: " + p)
    print(f"check_gpu_suite: {len(tests)} gpu tests, {len(suite)} gpu-suite binaries, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
