#!/usr/bin/env python3
"""scripts/nvshmem-programs --runtime links NVSHMEM programs against a libpgas_nvshmem.so already built (CMake's
pgas_nvshmem target) instead of compiling its own, and the program runs on it; a missing library is refused by name.

    nvshmem_programs_runtime_test.py LIBPGAS_NVSHMEM PGASRUN

Writes a small host NVSHMEM program outside the repository (the script builds no tracked file), builds and runs it
under pgasrun -n 2 (the host transport where there is no GPU), and checks that the script compiled no runtime of its
own, that the binary needs the given library, and that the run passed; then, with the same --out and a copy of the
library elsewhere, that the binary is linked again against the copy.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "nvshmem-programs"
library, pgasrun = sys.argv[1], sys.argv[2]
PROGRAM = r"""
#include <nvshmem.h>
#include <cstdio>
int main() {
    nvshmem_init();
    int* slot = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(slot, 100 + me, (me + 1) % n);
    nvshmem_barrier_all();
    const int want = 100 + (me + n - 1) % n;
    std::printf("PE %d of %d got %d: %s\n", me, n, *slot, *slot == want ? "ok" : "WRONG");
    const int failed = *slot != want;
    nvshmem_free(slot);
    nvshmem_finalize();
    return failed;
}
"""

failures = []
with tempfile.TemporaryDirectory() as scratch:
    scratch = pathlib.Path(scratch)
    program = scratch / "ring.cpp"
    program.write_text(PROGRAM)
    out = scratch / "out"
    common = [sys.executable, str(script), str(scratch / "no-nvshmem-source"), "--program", str(program),
              "--out", str(out), "--run-timeout", "60"]
    done = subprocess.run(common + ["--runtime", library, "--run", "--pgasrun", pgasrun],
                          capture_output=True, text=True, timeout=600)
    table = done.stdout
    if done.returncode != 0 or "| other/ring.cpp | yes |" not in table or "| pass | 0 |" not in table:
        failures.append(f"the program did not build and pass (exit {done.returncode}):\n{table}\n{done.stderr}")
    if (out / "runtime.o").exists() or (out / "libpgas_nvshmem.so").exists():
        failures.append("the script compiled a runtime of its own despite --runtime")
    binary = out / "other_ring"
    if binary.exists():
        needed = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True).stdout
        if "libpgas_nvshmem.so" not in needed:
            failures.append(f"the binary does not need libpgas_nvshmem.so:\n{needed}")
    log = out / "other_ring.log"
    if log.exists() and "PE 0 of 2 got 101: ok" not in log.read_text():
        failures.append(f"the run's log lacks PE 0's check:\n{log.read_text()}")

    # The same --out with another copy of the library: the kept binary is linked again, against the copy (run on
    # the old one, it would measure another runtime than the one asked for).
    other = scratch / "other-runtime"
    other.mkdir()
    shutil.copy2(library, other / pathlib.Path(library).name)
    again = subprocess.run(common + ["--runtime", str(other / pathlib.Path(library).name)], capture_output=True,
                           text=True, timeout=600)
    runpath = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True).stdout
    if again.returncode != 0 or str(other) not in runpath:
        failures.append(f"a binary kept in --out was not linked again against another --runtime (exit "
                        f"{again.returncode}):\n{runpath}\n{again.stderr}")

    missing = subprocess.run(common + ["--runtime", str(scratch / "nowhere.so")], capture_output=True, text=True,
                             timeout=60)
    if missing.returncode == 0 or f"--runtime {scratch / 'nowhere.so'}: no such file" not in missing.stderr:
        failures.append(f"a missing --runtime was not refused by name (exit {missing.returncode}): {missing.stderr}")

for failure in failures:
    print(f"nvshmem-programs --runtime: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
