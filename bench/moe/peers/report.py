"""Prints the peer benchmarks' JSON-lines records (deepep_bench.py, nccl_alltoall.py) as one markdown table per GPU count.

    python3 bench/moe/peers/report.py results.jsonl [more.jsonl ...]
"""

import json
import sys

MODES = {'normal': 0, 'll': 1, 'given': 2}
PHASES = {'layout': 0, 'dispatch': 1, 'dispatch_full': 2, 'combine': 3, 'alltoall': 4}
COLUMNS = ('mode', 'phase', 'payload', 'tool', 'sends', 'config', 'µs', 'logical GB/s', 'link GB/s', 'SMs', 'checked')


def cell(value):
    if value is None:
        return '—'
    if isinstance(value, bool):
        return 'yes' if value else '**no**'
    if isinstance(value, float):
        return f'{value:.1f}'
    return str(value)


def row(r):
    return (r['mode'], r['phase'], r['payload'], r['tool'], r['sends'], r.get('config'), r['us'], r['logical_gbps'],
            r['link_gbps'], r['sms'], r.get('checked'))


def table(records):
    lines = ['| ' + ' | '.join(COLUMNS) + ' |', '|' + '---|' * len(COLUMNS)]
    key = lambda r: (MODES.get(r['mode'], 9), PHASES.get(r['phase'], 9), str(r['payload']), r['tool'], str(r['sends']))  # noqa: E731
    lines += ['| ' + ' | '.join(cell(v) for v in row(r)) + ' |' for r in sorted(records, key=key)]
    return '\n'.join(lines)


def main(paths):
    records = []
    for path in paths:
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    if not records:
        print('(no records)')
        return 1
    for gpus in sorted({r['gpus'] for r in records}):
        mine = [r for r in records if r['gpus'] == gpus]
        devices = sorted({r.get('device') or '?' for r in mine})
        shapes = sorted({f"{r['mode']}: {r['tokens']} tokens" for r in mine if r['tokens']})
        first = mine[0]
        print(f"### {gpus} GPUs ({', '.join(devices)}); hidden {first['hidden']}, top-{first['top_k']}, "
              f"{first['experts']} experts; {'; '.join(shapes)}\n")
        print(table(mine))
        print()
    print('µs: median over the timed iterations of the slowest rank. GB/s: mean bytes per GPU over that time; logical as '
          "DeepEP's tests count them, link: only bytes between different GPUs (bench/moe/peers/README.md).")
    return 0


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    sys.exit(main(sys.argv[1:]))
