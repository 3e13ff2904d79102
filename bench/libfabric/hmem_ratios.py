#!/usr/bin/env python3
"""The pgas/provider table of bench_libfabric_gpu_hmem.

  bench_libfabric_gpu_hmem --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true \
      --benchmark_out=hmem.json --benchmark_out_format=json
  python3 bench/libfabric/hmem_ratios.py hmem.json

Latency: us per 8 B put+quiet and pgas/provider (target <= 1.3). Bandwidth: GB/s per size and
pgas/provider (target >= 0.9 from 1 MiB). Each pgas path is set against the provider alone on the
same memory: hmem shm against raw fi_write between the GPU heaps (FI_HMEM), the staged paths against
raw fi_write between host heaps of the same provider (what their provider side is).

Each figure is the median over repetitions. shm's own GPU-memory bandwidth moves by +-12% from one measurement to
the next (1.44-1.92 GB/s on one H100), so one run per path decides nothing: repetitions, interleaved at random with
the other paths' (Google Benchmark's --benchmark_enable_random_interleaving), put both sides through the same drift.
"""
import statistics
import json
import sys

PATHS = ["pgas hmem shm", "pgas staged shm", "pgas staged tcp", "raw hmem shm", "raw host shm", "raw host tcp"]
BASELINE = {0: 3, 1: 4, 2: 5}  # pgas path -> the provider alone it is compared with


def main(path):
    runs = [b for b in json.load(open(path))["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    lat, bw, errors = {}, {}, {}  # lat/bw: every repetition's figure, by path (and size)
    for b in runs:
        parts = b["name"].split("/")
        index = int(parts[1])
        if b.get("error_occurred"):
            errors[PATHS[index]] = b.get("error_message", "")
            continue
        if parts[0] == "hmem_put_quiet":
            lat.setdefault(index, []).append(b["us_per_op"])
        elif parts[0] == "hmem_put_bandwidth":
            bw.setdefault((index, int(parts[2])), []).append(b["GBps"])
    repetitions = max((len(v) for v in list(lat.values()) + list(bw.values())), default=0)
    lat = {k: statistics.median(v) for k, v in lat.items()}
    bw = {k: statistics.median(v) for k, v in bw.items()}
    for name, why in errors.items():
        print(f"skipped: {name}: {why}")
    print(f"\nmedians over up to {repetitions} repetitions")
    print("\n8 B put + quiet latency (us)")
    print(f"{'path':18} {'pgas':>8} {'provider':>9} {'ratio':>6}  target <= 1.3")
    for p, base in BASELINE.items():
        if p in lat and base in lat:
            r = lat[p] / lat[base]
            print(f"{PATHS[p]:18} {lat[p]:8.2f} {lat[base]:9.2f} {r:6.2f}  {'ok' if r <= 1.3 else 'MISSED'}")
    sizes = sorted({s for (_, s) in bw})
    print("\nput bandwidth (GB/s), pgas / provider; target >= 0.9 from 1 MiB")
    print(f"{'bytes':>10} " + " ".join(f"{PATHS[p]:>26}" for p in BASELINE))
    for s in sizes:
        cells = []
        for p, base in BASELINE.items():
            if (p, s) in bw and (base, s) in bw:
                r = bw[(p, s)] / bw[(base, s)]
                mark = "" if s < (1 << 20) else (" ok" if r >= 0.9 else " MISSED")
                cells.append(f"{bw[(p, s)]:7.2f}/{bw[(base, s)]:7.2f}={r:4.2f}{mark:7}")
            else:
                cells.append(f"{'-':>26}")
        print(f"{s:>10} " + " ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
