#!/usr/bin/env python3
"""scripts/nvshmem-programs --versus-nvshmem reads which way each perftest row is better from the row itself.

Runs the script's parser and comparison on two made-up rounds of output in the format of NVSHMEM's perftests with
NVSHMEM_MACHINE_READABLE_OUTPUT=1 ("&&&& PERF <key> <value> <+|-><unit>"): a bandwidth row of a program whose name
says nothing about bandwidth (as the host `bw.cpp`) and a time row. Before the rows' sign was read, the bandwidth row's
ratio came out as pgas / NVSHMEM bandwidth, i.e. upside down.
"""
import importlib.machinery
import importlib.util
import pathlib
import sys

script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "nvshmem-programs"
loader = importlib.machinery.SourceFileLoader("nvshmem_programs", str(script))
spec = importlib.util.spec_from_loader("nvshmem_programs", loader)
programs = importlib.util.module_from_spec(spec)
loader.exec_module(programs)


def output(bandwidth, latency):
    return (f"[0] Bandwidth\n[0] &&&& PERF Bandwidth___None___size__4096___Bandwidth {bandwidth:.6f} +GB\n"
            f"latency\n&&&& PERF latency___None___size__8___latency {latency:.6f} -us\n"
            "some other line 12 34\n")


failures = []
rows = programs.perftest_rows(output(20.0, 3.0))
if rows != {"Bandwidth___None___size__4096___Bandwidth": (20.0, True), "latency___None___size__8___latency": (3.0, False)}:
    failures.append(f"perftest_rows read {rows}")

# pgas: 20 GB/s and 3 us (median of 20, 21, 19 and 3, 2.9, 3.1); NVSHMEM: 10 GB/s and 6 us. pgas takes half the time
# on both rows: every ratio 0.5.
pgas = [output(20.0, 3.0), output(21.0, 2.9), output(19.0, 3.1)]
nvshmem = [output(10.0, 6.0)] * 3
count, geomean, worst, best = programs.versus(pgas, nvshmem)
if count != 2 or abs(geomean - 0.5) > 1e-9 or abs(worst[0] - 0.5) > 1e-9 or abs(best[0] - 0.5) > 1e-9:
    failures.append(f"versus gave rows {count}, geometric mean {geomean}, worst {worst}, best {best}; want 2, 0.5")
if programs.versus([output(20.0, 3.0)], ["no rows here\n"]) is not None:
    failures.append("versus compared rows NVSHMEM never printed")

for failure in failures:
    print(f"nvshmem-programs versus: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
