#!/usr/bin/env python3
"""pgas against itself at another commit: per benchmark and size, the time after a change over the time before.

    before_after.py --before FILE... --after FILE... --out OUTDIR [--label-before TEXT] [--label-after TEXT]

FILEs are JSON lines as pgas_compare prints them (scripts/bench-before-after runs the two builds alternately and
keeps one file per round). Only pgas's own figures are read ("impl": "pgas"; failure notes and other records are
skipped), grouped by rank count, benchmark and size; each side's figure is the median of its rounds, and the ratio
is after / before of the time ("us"): below 1 the change made it faster, for bandwidth rows too. Rows only one side
measured are listed, not compared.

Writes OUTDIR/before-after.md (per rank count: a summary per benchmark, the geometric mean and the worst and best
size, then every row) and OUTDIR/before-after.json, and prints the summary. Exit status 0 whatever the ratios: this
reports, the reader judges what noise is (the rows of one binary move between runs; compare the rounds' spread).
"""
import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict

from report import human, ordered  # the table's size names and benchmark order, as bench-compare's tables


def figures(paths):
    """{(ranks, benchmark, bytes): [us of each round]} of pgas's records in the files."""
    found = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("impl") != "pgas" or "us" not in record or "status" in record:
                    continue
                key = (int(record.get("ranks", 2)), record["benchmark"], int(record["bytes"]))
                found[key].append(float(record["us"]))
    return found


def size_text(n):
    return human(n) if n else "—"  # barriers measure no size


def compare(before, after):
    """Rows [(ranks, benchmark, bytes, before us, after us, ratio, before spread, after spread)] where both sides
    have figures, and the keys only one side has."""
    rows, lonely = [], []
    order = {bench: i for i, bench in enumerate(ordered({key[1] for key in set(before) | set(after)}))}
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], order[k[1]], k[2])):
        if key not in before or key not in after:
            lonely.append((key, "before" if key in before else "after"))
            continue
        b, a = statistics.median(before[key]), statistics.median(after[key])
        spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and statistics.median(xs) else 0.0
        rows.append((*key, b, a, a / b if b > 0 else math.inf, spread(before[key]), spread(after[key])))
    return rows, lonely


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def report(rows, lonely, label_before, label_after):
    lines = [f"# pgas {label_after} against pgas {label_before}", "",
             "Ratio = time after / time before, each the median of its rounds: below 1 the change is faster. "
             "Spread = (max - min) / median over one side's rounds.", ""]
    summary = {}
    for ranks in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == ranks]
        lines += [f"## {ranks} ranks", "", "| benchmark | sizes | geometric mean | worst (size) | best (size) |",
                  "|---|---|---|---|---|"]
        for bench in dict.fromkeys(r[1] for r in mine):
            these = [r for r in mine if r[1] == bench]
            worst = max(these, key=lambda r: r[5])
            best = min(these, key=lambda r: r[5])
            mean = geomean([r[5] for r in these])
            summary[f"{ranks}/{bench}"] = {"sizes": len(these), "geomean": mean, "worst": worst[5],
                                           "worst_bytes": worst[2], "best": best[5], "best_bytes": best[2]}
            lines.append(f"| {bench} | {len(these)} | {mean:.3f} | {worst[5]:.3f} ({size_text(worst[2])}) | "
                         f"{best[5]:.3f} ({size_text(best[2])}) |")
        lines.append(f"| **all** | {len(mine)} | **{geomean([r[5] for r in mine]):.3f}** | | |")
        lines += ["", "| benchmark | size | before µs | after µs | ratio | spread before | spread after |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r[1]} | {size_text(r[2])} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} | {r[6]:.2f} | {r[7]:.2f} |"
                  for r in mine]
        lines.append("")
    if lonely:
        lines += ["Measured on one side only:", ""]
        lines += [f"- {ranks} ranks {bench} {size_text(size)}: {side} only" for (ranks, bench, size), side in lonely]
    return "\n".join(lines) + "\n", summary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", nargs="+", required=True, metavar="FILE")
    parser.add_argument("--after", nargs="+", required=True, metavar="FILE")
    parser.add_argument("--label-before", default="before")
    parser.add_argument("--label-after", default="after")
    parser.add_argument("--out", required=True, metavar="OUTDIR")
    args = parser.parse_args()
    rows, lonely = compare(figures(args.before), figures(args.after))
    if not rows:
        sys.exit("before_after.py: no benchmark and size that both sides measured")
    text, summary = report(rows, lonely, args.label_before, args.label_after)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "before-after.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "before-after.json"), "w") as f:
        json.dump({"before": args.label_before, "after": args.label_after, "summary": summary,
                   "rows": [dict(zip(("ranks", "benchmark", "bytes", "before_us", "after_us", "ratio",
                                      "spread_before", "spread_after"), r)) for r in rows]}, f, indent=1)
    print(text[: text.find("| benchmark | size |")] if "| benchmark | size |" in text else text, end="")


if __name__ == "__main__":
    main()
