"""Shared by the peer benchmarks (DeepEP, NCCL all-to-all): the routing, the byte accounting, the GPU timer, the launch and the JSON records."""

import json
import os
import socket
import statistics
import sys
import time

# NVLink multicast stays off in every peer run (the device machines forbid it; pgas's own runs do the same).
MULTICAST_OFF = {'NVSHMEM_DISABLE_NVLS': '1', 'NCCL_NVLS_ENABLE': '0', 'TORCH_SYMM_MEM_DISABLE_MULTICAST': '1'}
for _k, _v in MULTICAST_OFF.items():
    os.environ.setdefault(_k, _v)

# DeepSeek-V3, as bench_moe runs it.
HIDDEN, EXPERTS, TOP_K = 7168, 256, 8
TOKENS = {'normal': 4096, 'll': 128}
SCALE_BLOCK = 128  # fp8 e4m3 with one fp32 scale per 128 values
LL_HEADER = 16  # DeepEP's low-latency message carries an int4 of source info before the payload


def token_bytes(payload, hidden):
    """Bytes of one token's payload: bf16 values, or fp8 values plus one fp32 scale per 128."""
    if payload == 'bf16':
        return 2 * hidden
    if payload == 'fp8':
        return hidden + (hidden // SCALE_BLOCK) * 4
    raise ValueError(f'payload {payload!r}: bf16 or fp8')


def default_experts(gpus):
    """256 experts where they divide among the GPUs, else 288 (DeepEP's low-latency test's count)."""
    for e in (EXPERTS, 288):
        if e % gpus == 0:
            return e
    raise SystemExit(f'no expert count of 256 or 288 divides among {gpus} GPUs; pass --experts')


def route(rank, tokens, experts, top_k, seed, device):
    """Uniform top-k routing of one rank's tokens, the way DeepEP's tests draw it: top-k of |randn|+1 scores, seeded per rank."""
    import torch
    gen = torch.Generator(device=device)
    gen.manual_seed(seed * 1000003 + rank)
    scores = torch.randn((tokens, experts), generator=gen, device=device, dtype=torch.float32).abs() + 1
    return torch.topk(scores, top_k, dim=-1, largest=True, sorted=False)[1]


def route_counts(topk_idx, experts, gpus):
    """For one rank's routing, per destination GPU: (rows, tokens) = (token, expert) pairs sent there, tokens sent there at least once."""
    import torch
    dest = topk_idx // (experts // gpus)
    rows = torch.stack([(dest == d).sum() for d in range(gpus)])
    tokens = torch.stack([(dest == d).any(dim=1).sum() for d in range(gpus)])
    return rows, tokens


def gather_matrix(row, dist, device):
    """All ranks' rows of a per-(source, destination) count matrix, gathered: matrix[s][d] as Python ints."""
    import torch
    mine = torch.as_tensor(row, dtype=torch.int64, device=device)
    every = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(every, mine)
    return [t.tolist() for t in every]


def per_gpu(matrix):
    """Mean bytes per GPU under a per-(source, destination) byte matrix: (all of them, only those between different GPUs).

    Averaged over GPUs, what each sends and what each receives are the same number, so one function serves both
    conventions (DeepEP counts what a GPU receives in normal dispatch and what it sends in low-latency dispatch).
    """
    n = len(matrix)
    total = sum(sum(row) for row in matrix)
    local = sum(matrix[r][r] for r in range(n))
    return total / n, (total - local) / n


def scaled(counts, nbytes):
    """A count matrix times bytes per unit."""
    return [[c * nbytes for c in row] for row in counts]


class Timer:
    """Times `fn` per iteration on the GPU with CUDA events (on the CPU, for the gloo smoke run, with the wall clock)."""

    def __init__(self, device):
        self.cuda = device.startswith('cuda')

    def run(self, fns, warmup, iters, sync=None):
        """Runs the callables in `fns` in turn, `iters` times after `warmup`; returns one list of µs per callable.

        On the GPU the stream is first held by a sleep kernel so that the host queues the timed iterations ahead of it:
        the events then time the GPU, not Python's launch gaps (DeepEP's own tests use the profiler for the same reason).
        """
        import torch
        for _ in range(warmup):
            for fn in fns:
                fn()
        if sync:
            sync()
        if not self.cuda:
            out = [[] for _ in fns]
            for _ in range(iters):
                for k, fn in enumerate(fns):
                    t0 = time.perf_counter()
                    fn()
                    out[k].append((time.perf_counter() - t0) * 1e6)
            return out
        torch.cuda.synchronize()
        marks = [[torch.cuda.Event(enable_timing=True) for _ in range(len(fns) + 1)] for _ in range(iters)]
        if hasattr(torch.cuda, '_sleep'):
            torch.cuda._sleep(int(os.environ.get('PEERS_SLEEP_CYCLES', 50_000_000)))  # ~25 ms at ~2 GHz
        for it in range(iters):
            marks[it][0].record()
            for k, fn in enumerate(fns):
                fn()
                marks[it][k + 1].record()
        torch.cuda.synchronize()
        return [[marks[it][k].elapsed_time(marks[it][k + 1]) * 1e3 for it in range(iters)] for k in range(len(fns))]


def slowest_rank(samples, dist):
    """Median µs of each rank's samples, gathered: returns (the slowest rank's median, every rank's median, min, max over all)."""
    import torch
    device = 'cuda' if torch.cuda.is_available() and dist.get_backend() == 'nccl' else 'cpu'
    mine = torch.tensor([statistics.median(samples), min(samples), max(samples)], dtype=torch.float64, device=device)
    every = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(every, mine)
    every = [t.tolist() for t in every]
    medians = [e[0] for e in every]
    return max(medians), medians, min(e[1] for e in every), max(e[2] for e in every)


def record(tool, mode, phase, payload, sends, gpus, tokens, hidden, top_k, experts, timing, logical_bytes, link_bytes, sms,
           **extra):
    """One JSON record per phase: µs is the slowest rank's median; GB/s divide mean bytes per GPU by it."""
    us, medians, us_min, us_max = timing
    return {
        'tool': tool, 'mode': mode, 'phase': phase, 'payload': payload, 'sends': sends, 'gpus': gpus, 'tokens': tokens,
        'hidden': hidden, 'top_k': top_k, 'experts': experts, 'us': round(us, 2),
        'logical_gbps': round(logical_bytes / us / 1e3, 2), 'link_gbps': round(link_bytes / us / 1e3, 2), 'sms': sms,
        'logical_bytes_per_gpu': int(logical_bytes), 'link_bytes_per_gpu': int(link_bytes),
        'us_rank_medians': [round(m, 2) for m in medians], 'us_min': round(us_min, 2), 'us_max': round(us_max, 2), **extra
    }


def emit(rec, out):
    """Appends a record to the JSON-lines file `out` (if given) and prints it on one line."""
    line = json.dumps(rec, sort_keys=False)
    print(line, flush=True)
    if out:
        with open(out, 'a') as f:
            f.write(line + '\n')


def free_port():
    """A TCP port free on the loopback now, for the rendezvous of one launch."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def init_dist(rank, world, backend):
    """Joins the process group (torchrun's store, else a tcp rendezvous at MASTER_ADDR:MASTER_PORT); on the GPU binds rank r to GPU r."""
    import inspect
    import torch
    import torch.distributed as dist
    under_torchrun = 'TORCHELASTIC_RUN_ID' in os.environ or 'LOCAL_RANK' in os.environ
    params = {
        'backend': backend,
        'init_method': 'env://' if under_torchrun else f"tcp://{os.environ.get('MASTER_ADDR', '127.0.0.1')}:{os.environ['MASTER_PORT']}",
        'world_size': world,
        'rank': rank
    }
    if backend == 'nccl':
        local = int(os.environ.get('LOCAL_RANK', rank))
        torch.cuda.set_device(local)
        if 'device_id' in inspect.signature(dist.init_process_group).parameters:
            params['device_id'] = torch.device('cuda', local)
    dist.init_process_group(**params)
    return dist


def launch(worker, args, gpus):
    """Runs worker(rank, world, args) on every rank: in this process under torchrun, else as `gpus` spawned processes."""
    if 'LOCAL_RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        worker(int(os.environ['RANK']), int(os.environ['WORLD_SIZE']), args)
        return
    import torch.multiprocessing as mp
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ['MASTER_PORT'] = str(free_port())
    mp.spawn(_spawned, args=(worker, args, gpus), nprocs=gpus, join=True)


def _spawned(rank, worker, args, gpus):
    worker(rank, gpus, args)


def device_label():
    """The GPU's name (or 'cpu'), for the records."""
    try:
        import torch
        return torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu'
    except Exception:  # noqa: BLE001 - a label only
        return 'unknown'


def fail(msg):
    print(f'{os.path.basename(sys.argv[0])}: {msg}', file=sys.stderr, flush=True)
    raise SystemExit(1)

