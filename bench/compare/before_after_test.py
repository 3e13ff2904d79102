#!/usr/bin/env python3
"""before_after.py compares pgas with itself the right way up: after / before of the median time per size.

Builds two sides from the checked-in sample (sample/SAMPLE-results.jsonl, synthetic numbers): "before" the sample in
three rounds, "after" every pgas time scaled by 1.25 in three rounds except one row made twice as fast, plus a
size only "after" measured and a peer's record that must be ignored. Checks every ratio, the median of the rounds
(one round of a side is an outlier), the geometric mean, the list of one-sided rows, and that two sides with no
figure in common are refused.
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile

here = pathlib.Path(__file__).resolve().parent
sample = [json.loads(line) for line in (here / "sample/SAMPLE-results.jsonl").read_text().splitlines() if line.strip()]
pgas = [r for r in sample if r.get("impl") == "pgas" and "us" in r]
assert pgas, "the sample holds pgas figures"
faster = (pgas[0]["benchmark"], pgas[0]["bytes"])


def scaled(record, factor):
    copy = dict(record)
    copy["us"] = record["us"] * factor
    return copy


failures = []
with tempfile.TemporaryDirectory() as scratch:
    scratch = pathlib.Path(scratch)
    befores, afters = [], []
    for round_, outlier in enumerate((1.0, 1.0, 9.0)):  # the third round of each side is 9x off: the median ignores it
        before = [scaled(r, outlier) for r in pgas]
        after = [scaled(r, outlier * (0.5 if (r["benchmark"], r["bytes"]) == faster else 1.25)) for r in pgas]
        after.append({**pgas[-1], "bytes": 12345})  # only after
        after.append({**pgas[-1], "impl": "nvshmem", "us": 1e9})  # a peer: not pgas's figure
        for side, records, files in (("before", before, befores), ("after", after, afters)):
            path = scratch / f"{side}.{round_}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
            files.append(str(path))
    out = scratch / "out"
    done = subprocess.run([sys.executable, str(here / "before_after.py"), "--before", *befores, "--after", *afters,
                           "--label-before", "old", "--label-after", "new", "--out", str(out)],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        failures.append(f"exit {done.returncode}: {done.stderr}")
    else:
        result = json.loads((out / "before-after.json").read_text())
        for row in result["rows"]:
            want = 0.5 if (row["benchmark"], row["bytes"]) == faster else 1.25
            if abs(row["ratio"] - want) > 1e-9:
                failures.append(f"{row['benchmark']} {row['bytes']} B: ratio {row['ratio']}, want {want}")
        if len(result["rows"]) != len({(r["benchmark"], r["bytes"]) for r in pgas}):
            failures.append(f"{len(result['rows'])} rows compared, want one per pgas figure of the sample")
        n = len(result["rows"])
        overall = math.exp((math.log(0.5) + (n - 1) * math.log(1.25)) / n)
        table = (out / "before-after.md").read_text()
        if f"**{overall:.3f}**" not in table:
            failures.append(f"the overall geometric mean {overall:.3f} is not in the table:\n{table}")
        if "12345 B: after only" not in table:
            failures.append("the size only 'after' measured is not listed as one-sided")
        if "# pgas new against pgas old" not in table:
            failures.append("the labels are not in the title")
    peers_only = scratch / "peers.jsonl"
    peers_only.write_text(json.dumps({**pgas[0], "impl": "nccl"}) + "\n")
    none = subprocess.run([sys.executable, str(here / "before_after.py"), "--before", befores[0], "--after",
                           str(peers_only), "--out", str(scratch / "out2")], capture_output=True, text=True, timeout=60)
    if none.returncode == 0 or "no benchmark and size that both sides measured" not in none.stderr:
        failures.append(f"sides with nothing in common were not refused (exit {none.returncode}): {none.stderr}")

for failure in failures:
    print(f"before_after: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
