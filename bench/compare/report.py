#!/usr/bin/env python3
"""Turns the comparison programs' JSON lines into results.json, a Markdown table of pgas/peer ratios and PNG plots.

    report.py [--no-plots] [--check] [--command TEXT] INPUT... OUTDIR

INPUT: files of JSON lines (one record per line, as pgas_compare,
nvshmem_compare and nccl_compare print them) or a results.json written by
this script. Every ratio is a ratio of times, pgas / peer: below 1 pgas is
faster (for bandwidth rows too: the time ratio is the inverse of the
bandwidth ratio).

Each record says its run's rank count ("ranks"; records from before the
field existed were all 2 ranks). Figures are compared only with figures of
the same rank count: table.md has one part per rank count, in increasing
order, each with its own summary, tables and gap list; with several rank
counts the plots are <benchmark>-<N>ranks.png and latency_summary-<N>ranks.png.

Objects with a "status" are failure notes, not figures (scripts/bench-compare
writes them to failures.jsonl): {"impl", "benchmark" (null: every one),
"bytes" (null: every size), "status" ("timed out", "failed", "not run",
"not built"), "program", "detail", "ranks"}. They go to failures.json, and the table
says the status where a figure is missing. After the table, the rows where
pgas has a figure and a peer has none are listed, with the reason if known.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

REQUIRED = {"impl": str, "benchmark": str, "bytes": int, "us": (int, float), "algbw_GBps": (int, float),
            "busbw_GBps": (int, float), "machine": str, "date": str}
# Peers in table order; nccl-best is derived here: per size, the faster of nccl and nccl-symm.
PEERS = ["nvshmem", "nccl", "nccl-symm", "nccl-best"]
COLLECTIVES = ["allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"]
ORDER = ["p_pingpong", "barrier_all", "barrier_all_on_stream", "put_quiet_on_stream", "allreduce_8B_in_kernel",
         "atomic_fetch_add", "put_rate_8B", "put_block", "put_nbi_grid",
         "get_block", "get_nbi_grid", "allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"]
WHAT = {
    "p_pingpong": "one-way latency of a flag bounced PE0 <-> PE1 by p + wait_until, inside one kernel",
    "barrier_all": "device barrier_all inside one kernel, per call",
    "barrier_all_on_stream": "barrier_all enqueued on a stream, per call",
    "put_quiet_on_stream": "8-byte put + quiet enqueued on a stream, per pair",
    "allreduce_8B_in_kernel": "one block calls a block-scope sum allreduce of 2 floats, in a loop inside one kernel",
    "atomic_fetch_add": "one thread, dependent 8-byte fetch-adds on the peer, per operation (round trip)",
    "put_rate_8B": "8-byte non-blocking puts from 8192 threads then quiet, time per message",
    "put_block": "one block (1024 threads): put + quiet, PE0 -> PE1",
    "put_nbi_grid": "up to 64 blocks (one per 64 KiB): put_nbi + quiet, PE0 -> PE1",
    "get_block": "one block (1024 threads): get, PE0 <- PE1",
    "get_nbi_grid": "up to 64 blocks: get_nbi + quiet, PE0 <- PE1",
    "allreduce": "float sum, out of place; bytes = buffer size. pgas: see docs/perf/README.md for how it is launched",
    "allgather": "bytes = gathered output size",
    "reduce_scatter": "float sum; bytes = input size",
    "broadcast": "root 0; bytes = buffer size",
    "alltoall": "bytes = one rank's send buffer",
}
# Which benchmarks each measured peer implements (nvshmem_compare: all of
# them; nccl_compare: the collectives): a row where pgas has a figure and such
# a peer has none is a gap, listed after the table.
EXPECTED = {"nvshmem": set(ORDER), "nccl": set(COLLECTIVES), "nccl-symm": set(COLLECTIVES)}
# Point-to-point benchmarks: ranks 0 and 1 only, whatever the rank count (barriers and collectives: all ranks).
PAIR = {"p_pingpong", "put_quiet_on_stream", "atomic_fetch_add", "put_rate_8B", "put_block", "put_nbi_grid",
        "get_block", "get_nbi_grid"}


def ranks_of(r):
    """The rank count of a record or note; the programs ran 2 ranks before they said so."""
    return r.get("ranks", 2)


def load(paths):
    """(figures, failure notes) from the inputs; a figure measured twice (a rerun) keeps the later one."""
    records = []
    for path in paths:
        with open(path) as f:
            text = f.read()
        stripped = text.lstrip()
        if stripped.startswith("["):
            records.extend(json.loads(stripped))
            continue
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line.startswith("{"):
                continue  # program chatter mixed into the stream
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{number}: not JSON: {e}")
    notes = [r for r in records if "status" in r]
    latest = {}
    for r in records:
        if "status" not in r:
            latest[(ranks_of(r), r.get("impl"), r.get("benchmark"), r.get("bytes"))] = r  # dicts keep insertion order
    return list(latest.values()), notes


def validate(records):
    problems = []
    for i, r in enumerate(records):
        for key, kind in REQUIRED.items():
            if key not in r:
                problems.append(f"record {i} ({r.get('impl')}/{r.get('benchmark')}): no '{key}'")
            elif not isinstance(r[key], kind) or isinstance(r[key], bool):
                problems.append(f"record {i}: '{key}' has type {type(r[key]).__name__}")
        if isinstance(r.get("us"), (int, float)) and not (r["us"] > 0 and math.isfinite(r["us"])):
            problems.append(f"record {i} ({r.get('impl')}/{r.get('benchmark')}/{r.get('bytes')}): us = {r['us']}")
        if r.get("ok") is False:
            problems.append(f"record {i} ({r.get('impl')}/{r.get('benchmark')}/{r.get('bytes')}): output check failed")
        if not good_ranks(r):
            problems.append(f"record {i} ({r.get('impl')}/{r.get('benchmark')}): 'ranks' = {r['ranks']!r}")
    return problems


def good_ranks(r):
    """'ranks', when present, is a whole number of at least 2 (the point-to-point rows need ranks 0 and 1)."""
    n = r.get("ranks", 2)
    return isinstance(n, int) and not isinstance(n, bool) and n >= 2


def validate_notes(notes):
    problems = []
    for i, n in enumerate(notes):
        if not isinstance(n.get("impl"), str) or not isinstance(n.get("status"), str):
            problems.append(f"failure note {i}: needs 'impl' and 'status' strings: {n}")
        if n.get("benchmark") is not None and not isinstance(n["benchmark"], str):
            problems.append(f"failure note {i}: 'benchmark' is neither a string nor null")
        if n.get("bytes") is not None and (not isinstance(n["bytes"], int) or isinstance(n["bytes"], bool)):
            problems.append(f"failure note {i}: 'bytes' is neither an integer nor null")
        if not good_ranks(n):
            problems.append(f"failure note {i}: 'ranks' = {n['ranks']!r}")
    return problems


def reason(notes, impl, bench, size):
    """Why impl has no figure for (bench, size), from the notes: (short status, long text), or None."""
    mine = [n for n in notes if n["impl"] == impl and n.get("benchmark") in (bench, None)]

    def text(n, status, at=""):
        what = "" if status == n["status"] and not at else f" {n['status']}{at}"
        detail = f": {n['detail']}" if n.get("detail") else ""
        return status, f"{status} ({n.get('program', impl)}{what}{detail})"

    for n in mine:
        if n.get("bytes") == size:
            return text(n, n["status"])
    for n in mine:
        if n.get("bytes") is None:
            return text(n, n["status"])
    # the program stopped at a smaller size of this benchmark and nothing measured the rest
    below = [n for n in mine if n.get("benchmark") == bench and n.get("bytes") is not None and n["bytes"] < size]
    if below:
        n = max(below, key=lambda n: n["bytes"])
        return text(n, "not run", f" at {human(n['bytes'])}")
    return None


def index(records):
    """{benchmark: {impl: {bytes: record}}}, with nccl-best derived."""
    table = defaultdict(lambda: defaultdict(dict))
    for r in records:
        table[r["benchmark"]][r["impl"]][r["bytes"]] = r
    for bench, impls in table.items():
        plain, symm = impls.get("nccl", {}), impls.get("nccl-symm", {})
        if plain and symm:
            for size in set(plain) | set(symm):
                options = [x for x in (plain.get(size), symm.get(size)) if x]
                impls["nccl-best"][size] = min(options, key=lambda x: x["us"])
    return table


def ordered(benchmarks):
    known = [b for b in ORDER if b in benchmarks]
    return known + sorted(b for b in benchmarks if b not in ORDER)


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def fmt_us(r, why=None):
    if r is None:
        return f"*{why[0]}*" if why else "—"
    if r.get("rate_Mops"):
        return f"{r['us'] * 1e3:.2f} ns ({r['rate_Mops']:.0f} M/s)"
    return f"{r['us']:.2f}"


def fmt_bw(r):
    return "" if r is None or r["busbw_GBps"] < 1 or r.get("rate_Mops") else f" ({r['busbw_GBps']:.1f} GB/s)"


def columns(bench, impls, notes):
    """The peers with a column in bench's table: those with figures, those with a note, and those expected
    to measure it wherever pgas did (so that a peer that produced nothing shows why, not nothing)."""
    noted = {n["impl"] for n in notes if n.get("benchmark") in (bench, None)}
    return [p for p in PEERS if p in impls or p in noted or (bench in EXPECTED.get(p, ()) and "pgas" in impls)]


def gaps(table, notes):
    """[(peer, bench, size, why)]: the rows where pgas has a figure and a peer that measures the benchmark does
    not; why is (short, long) or None."""
    out = []
    for bench in ordered(table):
        impls = table[bench]
        mine = impls.get("pgas", {})
        for peer in PEERS:
            if peer == "nccl-best" or bench not in EXPECTED.get(peer, ()):
                continue
            theirs = impls.get(peer, {})
            out += [(peer, bench, size, reason(notes, peer, bench, size)) for size in sorted(mine) if size not in theirs]
    return out


def gap_lines(found):
    """The gaps, one line per peer, benchmark and run of sizes with the same reason."""
    lines = []
    i = 0
    while i < len(found):
        peer, bench, first, why = found[i]
        j = i
        while j + 1 < len(found) and found[j + 1][:2] == (peer, bench) and found[j + 1][3] == why:
            j += 1
        last = found[j][2]
        sizes = human(first) if i == j else f"{human(first)} … {human(last)} ({j - i + 1} sizes)"
        lines.append(f"{peer} {bench} {sizes}: {why[1] if why else 'no figure, reason unknown'}")
        i = j + 1
    return lines


def markdown(table, records, command, notes=(), ranks=2):
    """One rank count's part of table.md (its records and notes only)."""
    machines = sorted({r["machine"] for r in records})
    dates = sorted({r["date"] for r in records})
    out = [f"# pgas vs NVSHMEM and NCCL: {ranks} ranks", ""]
    out.append(f"Machine: {', '.join(machines)}. Run: {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "") + ".")
    out.append(f"Ranks: {ranks}, one process each." + (
        f" Point-to-point rows (ping-pong, put, get, atomics, message rate, on-stream put) run between PE 0 and "
        f"PE 1 while the others wait; barriers and collectives run on all {ranks}." if ranks > 2 else ""))
    if command:
        out.append(f"Command: `{command}`.")
    out += ["",
            "Times are µs per operation: the median of timed replays of a CUDA graph of many operations "
            "(docs/perf/README.md). **Ratio = pgas time / peer time: below 1 pgas is faster**, for latency "
            "and bandwidth rows alike. Bandwidth in parentheses is busbw (nccl-tests' factors; equal to algbw "
            "for point-to-point). nccl-best is the faster of nccl (plain buffers) and nccl-symm (symmetric "
            "windows) at each size. — : not measured; *failed*, *timed out*, *not run*, *not built*: no figure, "
            "and the run recorded why (listed at the end).", ""]
    out += summary(table, ranks)
    failed = [r for r in records if r.get("ok") is False]
    if failed:
        out.append(f"**{len(failed)} figures failed their output check** (marked ✗); do not trust them.")
        out.append("")
    for bench in ordered(table):
        impls = table[bench]
        peers = columns(bench, impls, notes)
        out.append(f"## {bench} ({ranks} ranks{': PE 0 and PE 1' if bench in PAIR and ranks > 2 else ''})")
        if bench in WHAT:
            out.append(f"_{WHAT[bench]}_")
        out.append("")
        header = ["size", "pgas µs"]
        for p in peers:
            header += [f"{p} µs", f"pgas/{p}"]
        extras = [i for i in sorted(impls) if i != "pgas" and i not in PEERS]
        header += [f"{i} µs" for i in extras]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        sizes = sorted({s for per in impls.values() for s in per})
        for size in sizes:
            mine = impls.get("pgas", {}).get(size)
            row = [human(size) if size > 0 else "—",
                   fmt_us(mine, reason(notes, "pgas", bench, size) if mine is None else None) + fmt_bw(mine) + mark(mine)]
            for p in peers:
                theirs = impls.get(p, {}).get(size)
                why = reason(notes, p, bench, size) if theirs is None and p != "nccl-best" else None
                row.append(fmt_us(theirs, why) + fmt_bw(theirs) + mark(theirs))
                row.append(f"{mine['us'] / theirs['us']:.2f}" if mine and theirs else "—")
            row += [fmt_us(impls[i].get(size)) for i in extras]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    found = gap_lines(gaps(table, notes))
    if found:
        out += [f"## Peer figures missing ({ranks} ranks)", "",
                "Rows where pgas has a figure and a peer that measures the benchmark has none:", ""]
        out += [f"- {line}" for line in found] + [""]
    return "\n".join(out) + "\n"


def summary(table, ranks=2):
    """Per benchmark and peer: geometric mean of pgas/peer over the common sizes, and the worst size."""
    rows = []
    for bench in ordered(table):
        impls = table[bench]
        mine = impls.get("pgas", {})
        cells = []
        for p in PEERS:
            theirs = impls.get(p, {})
            common = sorted(set(mine) & set(theirs))
            if not common:
                cells.append("—")
                continue
            ratios = [(mine[s]["us"] / theirs[s]["us"], s) for s in common]
            mean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
            worst, at = max(ratios)
            cells.append(f"{mean:.2f}" + (f" (worst {worst:.2f} at {human(at)})" if len(ratios) > 1 else "")
                         + (f" [{len(common)} of {len(mine)} sizes]" if len(common) < len(mine) else ""))
        if any(c != "—" for c in cells):
            rows.append(f"| {bench} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    head = [f"## Summary ({ranks} ranks): pgas / peer time (geometric mean over sizes; below 1 pgas is faster)", "",
            "| benchmark | " + " | ".join(PEERS) + " |", "|---|" + "---|" * len(PEERS)]
    return head + rows + [""]


def mark(r):
    return " ✗" if r is not None and r.get("ok") is False else ""


def plots(table, outdir, ranks=2, suffix=""):
    """The PNGs of one rank count: <benchmark><suffix>.png and latency_summary<suffix>.png."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"pgas": dict(color="tab:red", marker="o", linewidth=2),
              "nvshmem": dict(color="tab:green", marker="s"),
              "nccl": dict(color="tab:blue", marker="^"),
              "nccl-symm": dict(color="tab:purple", marker="v")}
    written = []
    points = []
    for bench in ordered(table):
        impls = {k: v for k, v in table[bench].items() if k != "nccl-best"}
        sizes = {s for per in impls.values() for s in per}
        if len(sizes) <= 1:
            points.append((bench, impls))
            continue
        fig, (lat, bw) = plt.subplots(1, 2, figsize=(12, 4.5))
        for impl, per in sorted(impls.items(), key=lambda kv: kv[0] != "pgas"):
            xs = sorted(per)
            style = styles.get(impl, {})
            lat.plot(xs, [per[x]["us"] for x in xs], label=impl, **style)
            bw.plot(xs, [per[x]["busbw_GBps"] for x in xs], label=impl, **style)
        lat.set(xscale="log", yscale="log", xlabel="message size (bytes)", ylabel="µs per operation (lower is better)",
                title=f"{bench}, {ranks} ranks: latency")
        bw.set(xscale="log", xlabel="message size (bytes)", ylabel="busbw GB/s (higher is better)",
               title=f"{bench}, {ranks} ranks: bandwidth")
        for ax in (lat, bw):
            ax.set_xscale("log", base=2)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        path = os.path.join(outdir, f"{bench}{suffix}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if points:
        fig, axes = plt.subplots(1, len(points), figsize=(4 * len(points), 4), squeeze=False)
        for ax, (bench, impls) in zip(axes[0], points):
            names = sorted(impls, key=lambda n: n != "pgas")
            firsts = [next(iter(impls[n].values())) for n in names]
            if all(r.get("rate_Mops") for r in firsts):
                values, label = [r["rate_Mops"] for r in firsts], "M messages/s (higher is better)"
            else:
                values, label = [r["us"] for r in firsts], "µs (lower is better)"
            ax.bar(names, values, color=[styles.get(n, {}).get("color", "gray") for n in names])
            ax.set(title=f"{bench}, {ranks} ranks", ylabel=label)
            for i, v in enumerate(values):
                ax.annotate(f"{v:.3g}", (i, v), ha="center", va="bottom")
        fig.tight_layout()
        path = os.path.join(outdir, f"latency_summary{suffix}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="JSON-lines files or a results.json, then the output directory")
    parser.add_argument("--no-plots", action="store_true", help="write the JSON and the table only")
    parser.add_argument("--check", action="store_true",
                        help="fail on malformed records, failed output checks or missing outputs")
    parser.add_argument("--command", default="", help="the command that produced the figures, for the table")
    args = parser.parse_args(argv)
    if len(args.inputs) < 2:
        parser.error("need at least one input and the output directory")
    *inputs, outdir = args.inputs
    records, notes = load(inputs)
    if not records:
        raise SystemExit("no records in " + ", ".join(inputs))
    problems = validate(records) + validate_notes(notes)
    notes = [n for n in notes if isinstance(n.get("impl"), str) and isinstance(n.get("status"), str) and good_ranks(n)]
    for p in problems:
        print("report.py: " + p, file=sys.stderr)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(records, f, indent=1)
    written = [os.path.join(outdir, "results.json")]
    if notes:
        with open(os.path.join(outdir, "failures.json"), "w") as f:
            json.dump(notes, f, indent=1)
        written.append(os.path.join(outdir, "failures.json"))
    tabled = [r for r in records if good_ranks(r)]  # (the others are in results.json and the problems above)
    counts = sorted({ranks_of(r) for r in tabled})
    stray = sorted({ranks_of(n) for n in notes} - set(counts))
    if stray:
        print(f"report.py: failure notes for {', '.join(map(str, stray))} ranks, with no figure at that rank count: "
              "in failures.json only", file=sys.stderr)
    parts, pngs, found = [], [], {}
    for n in counts:
        mine = [r for r in tabled if ranks_of(r) == n]
        their_notes = [x for x in notes if ranks_of(x) == n]
        table = index(mine)
        parts.append(markdown(table, mine, args.command, their_notes, n))
        if not args.no_plots:
            pngs += plots(table, outdir, n, f"-{n}ranks" if len(counts) > 1 else "")
        found[n] = gap_lines(gaps(table, their_notes))
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write("\n".join(parts))
    written += [os.path.join(outdir, "table.md")] + pngs
    for path in written:
        print("wrote " + path)
    for n in counts:
        if found[n]:
            print(f"report.py: {n} ranks: where pgas has a figure and a peer has none ({len(found[n])} lines):")
            for line in found[n]:
                print("  " + line)
        else:
            print(f"report.py: {n} ranks: every pgas figure has its peers' figures beside it")
    if args.check:
        missing = [p for p in written if not os.path.getsize(p)]
        if problems or missing:
            raise SystemExit(f"report.py --check: {len(problems)} bad records, {len(missing)} empty outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
