"""NCCL all-to-all(v) peer of bench_moe: torch.distributed.all_to_all_single of exactly the bytes per (source, destination) that MoE dispatch and combine move, timed with CUDA events.

    python3 bench/moe/peers/nccl_alltoall.py --gpus 4 --out results.jsonl            # spawns 4 ranks
    torchrun --nproc-per-node 4 bench/moe/peers/nccl_alltoall.py --out results.jsonl  # or under torchrun

The bytes come from a uniform top-8 routing (harness.route, the same draw as deepep_bench.py) of 4096 tokens per GPU
(mode normal) and 128 (mode ll) of hidden 7168, sent two ways: every (token, expert) row (what pgas's dispatch sends),
and each token once per destination GPU (what DeepEP's normal mode sends); each as bf16 and as fp8 with one fp32 scale
per 128 values; combine is the bf16 transpose. --bytes-matrix FILE moves instead exactly the bytes of a JSON matrix
[[bytes from s to d, ...], ...] (one row per source rank). One JSON record per case; see README.md for the fields.
"""

import argparse
import json

import harness


def cases(args, rank, world, dist, device):
    """(mode, tokens, sends, payload, phase, byte matrix) for every all-to-all this run times."""
    if args.bytes_matrix:
        with open(args.bytes_matrix) as f:
            matrix = json.load(f)
        if len(matrix) != world or any(len(row) != world for row in matrix):
            harness.fail(f'--bytes-matrix {args.bytes_matrix}: needs {world} rows of {world} byte counts')
        return [('given', None, 'given', 'bytes', 'alltoall', matrix)]
    out = []
    for mode in args.modes.split(','):
        tokens = args.tokens_ll if mode == 'll' else args.tokens_normal
        experts = args.experts or harness.default_experts(world)
        topk_idx = harness.route(rank, tokens, experts, args.top_k, args.seed, device)
        rows, toks = harness.route_counts(topk_idx, experts, world)
        counts = {'rows': harness.gather_matrix(rows, dist, device), 'tokens': harness.gather_matrix(toks, dist, device)}
        for sends, count in counts.items():
            for payload in ('bf16', 'fp8'):
                out.append((mode, tokens, sends, payload, 'dispatch', harness.scaled(count, harness.token_bytes(payload, args.hidden))))
            back = harness.scaled(count, harness.token_bytes('bf16', args.hidden))
            out.append((mode, tokens, sends, 'bf16', 'combine', [list(col) for col in zip(*back)]))
    return out


def worker(rank, world, args):
    import torch
    backend = 'nccl' if args.device == 'cuda' else 'gloo'
    dist = harness.init_dist(rank, world, backend)
    device = f'cuda:{torch.cuda.current_device()}' if backend == 'nccl' else 'cpu'
    todo = cases(args, rank, world, dist, device)
    # One send and one receive buffer, as large as the largest case, sliced per case.
    send_max = max(sum(m[rank]) for *_, m in todo)
    recv_max = max(sum(row[rank] for row in m) for *_, m in todo)
    send_buf = torch.zeros(max(send_max, 1), dtype=torch.uint8, device=device)
    recv_buf = torch.empty(max(recv_max, 1), dtype=torch.uint8, device=device)
    timer = harness.Timer(device)
    for mode, tokens, sends, payload, phase, matrix in todo:
        send_splits = list(matrix[rank])
        recv_splits = [matrix[s][rank] for s in range(world)]
        send, recv = send_buf[:sum(send_splits)], recv_buf[:sum(recv_splits)]

        def fn(send=send, recv=recv, send_splits=send_splits, recv_splits=recv_splits):
            dist.all_to_all_single(recv, send, recv_splits, send_splits)

        samples = timer.run([fn], args.warmup, args.iters, sync=dist.barrier)[0]
        timing = harness.slowest_rank(samples, dist)
        logical, link = harness.per_gpu(matrix)
        rec = harness.record('nccl', mode, phase, payload, sends, world, tokens, args.hidden, args.top_k,
                             args.experts or harness.default_experts(world), timing, logical, link, None,
                             iters=args.iters, device=harness.device_label(), nccl=nccl_version(torch),
                             torch=torch.__version__, backend=backend)
        if args.bytes_matrix:
            rec.update(tokens=None, hidden=None, top_k=None, experts=None, bytes_matrix=matrix)
        if rank == 0:
            harness.emit(rec, args.out)
    dist.barrier()
    dist.destroy_process_group()


def nccl_version(torch):
    try:
        v = torch.cuda.nccl.version()
        return '.'.join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception:  # noqa: BLE001 - a label only (no NCCL on a CPU-only torch)
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--gpus', type=int, default=2, help='ranks to spawn, one per GPU (ignored under torchrun; default 2)')
    p.add_argument('--modes', default='normal,ll', help='comma list of normal (4096 tokens) and ll (128 tokens)')
    p.add_argument('--tokens-normal', type=int, default=harness.TOKENS['normal'])
    p.add_argument('--tokens-ll', type=int, default=harness.TOKENS['ll'])
    p.add_argument('--hidden', type=int, default=harness.HIDDEN)
    p.add_argument('--experts', type=int, default=0, help='default: 256, or 288 where 256 does not divide among the GPUs')
    p.add_argument('--top-k', type=int, default=harness.TOP_K)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--bytes-matrix', help='JSON [[bytes from rank s to rank d]]: time exactly these instead of a routing')
    p.add_argument('--warmup', type=int, default=10)
    p.add_argument('--iters', type=int, default=50, help='timed iterations (the median is reported; at least 20)')
    p.add_argument('--device', choices=('cuda', 'cpu'), default='cuda', help='cpu: gloo on host threads, a smoke test only')
    p.add_argument('--out', help='append JSON lines here')
    args = p.parse_args()
    if args.iters < 20:
        p.error('--iters: at least 20')
    if not set(args.modes.split(',')) <= {'normal', 'll'}:
        p.error(f'--modes {args.modes}: a comma list of normal and ll')
    harness.launch(worker, args, args.gpus)


if __name__ == '__main__':
    main()
