"""DeepEP peer of bench_moe: times DeepEP's intranode (normal) and low-latency dispatch/combine at bench_moe's shapes with CUDA events, one JSON record per phase.

    PYTHONPATH=<built DeepEP tree> python3 bench/moe/peers/deepep_bench.py --gpus 4 --mode normal --out results.jsonl
    ... --mode ll

scripts/deepep-compare builds DeepEP and runs this; see README.md for the phases, the byte conventions and the fields.
Only DeepEP's public Python API is used (deep_ep.Buffer, deep_ep.Config); the routing is harness.route, the draw
nccl_alltoall.py sizes its messages from, and the bytes are checked against DeepEP's own layout before timing.
"""

import argparse
import importlib
import math
import os
import sys

import harness

DEVICE = 'cuda'  # DeepEP runs on GPUs only; a mock of deep_ep may set 'cpu' (gloo) to walk this script without one
NVL_BUFFER_TOKENS = 256  # DeepEP's tests' num_max_nvl_chunked_recv_tokens for intranode tuning
DISPATCH_CHUNKS = tuple(range(4, 33, 2))  # the send-chunk sizes DeepEP's test_intranode.py sweeps
COMBINE_CHUNKS = tuple(range(1, 17))


def to_fp8(x):
    """bf16 [tokens, hidden] -> (e4m3 values, fp32 scales [tokens, hidden/128] column-major), one scale per 128 values."""
    import torch
    t, h = x.shape
    blocks = x.float().view(t, h // harness.SCALE_BLOCK, harness.SCALE_BLOCK)
    scale = blocks.abs().amax(dim=2).clamp(min=1e-4) / 448.0
    values = (blocks / scale.unsqueeze(2)).to(torch.float8_e4m3fn).view(t, h)
    return values, scale.t().contiguous().t()


def rel_error(got, want):
    """Largest absolute difference relative to the largest value of `want`."""
    return ((got.float() - want.float()).abs().max() / want.float().abs().max().clamp(min=1e-30)).item()


class Run:
    """What every phase of one launch shares: the process group, the routing, its count matrices, the timer."""

    def __init__(self, rank, world, args):
        import torch
        import deep_ep
        self.torch, self.deep_ep, self.args = torch, deep_ep, args
        self.rank, self.world, self.device = rank, world, DEVICE
        self.dist = harness.init_dist(rank, world, 'nccl' if DEVICE == 'cuda' else 'gloo')
        self.group = self.dist.new_group(list(range(world)))
        self.mode = args.mode
        self.tokens = args.tokens or harness.TOKENS[args.mode]
        self.experts = args.experts or harness.default_experts(world)
        if self.experts % world:
            harness.fail(f'{self.experts} experts do not divide among {world} GPUs')
        self.topk_idx = harness.route(rank, self.tokens, self.experts, args.top_k, args.seed, self.device)
        self.topk_idx = self.topk_idx.to(getattr(deep_ep, 'topk_idx_t', torch.int64))
        rows, toks = harness.route_counts(self.topk_idx, self.experts, world)
        self.rows = harness.gather_matrix(rows, self.dist, self.device)  # (token, expert) pairs from s to d
        self.toks = harness.gather_matrix(toks, self.dist, self.device)  # tokens from s sent to d at least once
        gen = torch.Generator(device=self.device)
        gen.manual_seed(args.seed * 1000003 + rank + 7)
        self.x = torch.randn((self.tokens, args.hidden), generator=gen, device=self.device).to(torch.bfloat16)
        self.weights = torch.rand((self.tokens, args.top_k), generator=gen, device=self.device) + 0.5
        self.timer = harness.Timer(self.device)
        self.problems = []

    def check(self, ok, what):
        if not ok:
            self.problems.append(what)
            print(f'[rank {self.rank}] check failed: {what}', file=sys.stderr, flush=True)

    def checked(self):
        """True where no rank saw a check fail."""
        t = self.torch.tensor([len(self.problems)], device=self.device)
        self.dist.all_reduce(t)
        return t.item() == 0

    def time(self, fns, iters=None, warmup=None):
        """Per callable, (slowest rank's median µs, every rank's median, min, max) over the timed iterations."""
        samples = self.timer.run(fns, self.args.warmup if warmup is None else warmup, iters or self.args.iters,
                                 sync=self.dist.barrier)
        return [harness.slowest_rank(s, self.dist) for s in samples]

    def emit(self, phase, payload, sends, timing, matrix, sms, **extra):
        logical, link = harness.per_gpu(matrix)
        rec = harness.record('deepep', self.mode, phase, payload, sends, self.world, self.tokens, self.args.hidden,
                             self.args.top_k, self.experts, timing, logical, link, sms, iters=self.args.iters,
                             device=harness.device_label(), deepep_commit=self.args.commit, torch=self.torch.__version__,
                             **extra)
        if self.rank == 0:
            harness.emit(rec, self.args.out)

    def best(self, make_fn, chunks, config):
        """The send-chunk size (of `chunks`) whose slowest-rank median is least, timed briefly as DeepEP's test tunes."""
        if self.args.no_tune:
            return None
        times = [(self.time([make_fn(config(c))], iters=20, warmup=5)[0][0], c) for c in chunks]
        return min(times)[1]


def normal(run):
    """Intranode dispatch (cached handle; and the full one with top-k, count exchange and host wait) and combine."""
    deep_ep, args = run.deep_ep, run.args
    buffer = deep_ep.Buffer(run.group, int(args.nvl_bytes), 0, low_latency_mode=False, num_qps_per_rank=1,
                            explicitly_destroy=True)
    deep_ep.Buffer.set_num_sms(args.sms)
    dispatch_default = deep_ep.Buffer.get_dispatch_config(run.world)
    combine_default = deep_ep.Buffer.get_combine_config(run.world)
    chunked = lambda c: deep_ep.Config(args.sms, c, NVL_BUFFER_TOKENS)  # noqa: E731

    per_rank, _, per_expert, in_rank, _ = buffer.get_dispatch_layout(run.topk_idx, run.experts)
    run.check(per_rank.tolist() == run.toks[run.rank], f'DeepEP layout {per_rank.tolist()} != routing {run.toks[run.rank]}')
    full = dict(num_tokens_per_rank=per_rank, is_token_in_rank=in_rank, num_tokens_per_expert=per_expert,
                topk_idx=run.topk_idx, topk_weights=run.weights)
    recv_x, _, _, _, handle, _ = buffer.dispatch(run.x, config=dispatch_default, **full)
    want = sum(run.toks[s][run.rank] for s in range(run.world))
    run.check(recv_x.size(0) == want, f'received {recv_x.size(0)} tokens, routing says {want}')
    combined, _, _ = buffer.combine(recv_x, handle, config=combine_default)
    err = rel_error(combined, run.x.float() * in_rank.sum(dim=1, keepdim=True))
    run.check(err < 2e-2, f'combine of the dispatched tokens is off by {err:.3g} (relative)')
    x_fp8 = to_fp8(run.x)
    ok = run.checked()

    (layout,) = run.time([lambda: buffer.get_dispatch_layout(run.topk_idx, run.experts)])
    run.emit('layout', None, None, layout, [[0] * run.world] * run.world, None, config='default', checked=ok)
    for payload, x in (('bf16', run.x), ('fp8', x_fp8)):
        matrix = harness.scaled(run.toks, harness.token_bytes(payload, args.hidden))
        cached = lambda cfg, x=x: (lambda: buffer.dispatch(x, handle=handle, config=cfg))  # noqa: E731
        chunk = run.best(cached, DISPATCH_CHUNKS, chunked)
        for label, cfg in (('default', dispatch_default), (f'tuned: nvl chunk {chunk}', chunk and chunked(chunk))):
            if cfg:
                run.emit('dispatch', payload, 'tokens', run.time([cached(cfg)])[0], matrix, args.sms, config=label,
                         checked=ok)
        (t,) = run.time([lambda x=x: buffer.dispatch(x, config=dispatch_default, **full)])
        run.emit('dispatch_full', payload, 'tokens', t, matrix, args.sms, config='default', checked=ok,
                 note='layout given; with top-k ids and weights, the count exchange and the host wait for counts')
    matrix = harness.scaled(run.toks, harness.token_bytes('bf16', args.hidden))
    combine = lambda cfg: (lambda: buffer.combine(recv_x, handle, config=cfg))  # noqa: E731
    chunk = run.best(combine, COMBINE_CHUNKS, chunked)
    for label, cfg in (('default', combine_default), (f'tuned: nvl chunk {chunk}', chunk and chunked(chunk))):
        if cfg:
            run.emit('combine', 'bf16', 'tokens', run.time([combine(cfg)])[0], matrix, args.sms, config=label,
                     checked=ok)
    return buffer


def low_latency(run):
    """Low-latency dispatch (bf16, fp8) each followed by combine, in pairs as DeepEP runs them (its buffers alternate)."""
    torch, deep_ep, args = run.torch, run.deep_ep, run.args
    rdma_bytes = deep_ep.Buffer.get_low_latency_rdma_size_hint(run.tokens, args.hidden, run.world, run.experts)
    buffer = deep_ep.Buffer(run.group, 0, rdma_bytes, low_latency_mode=True, num_qps_per_rank=run.experts // run.world,
                            allow_nvlink_for_low_latency_mode=True, explicitly_destroy=True)
    dispatch = lambda fp8: buffer.low_latency_dispatch(run.x, run.topk_idx, run.tokens, run.experts, use_fp8=fp8,  # noqa: E731
                                                       async_finish=False, return_recv_hook=False)
    recv_x, recv_count, handle, _, _ = dispatch(False)
    want = sum(run.rows[s][run.rank] for s in range(run.world))
    run.check(recv_count.sum().item() == want, f'received {recv_count.sum().item()} rows, routing says {want}')
    expert_out = recv_x.clone()  # the "experts" return their input: combine then yields x times the sum of weights
    combined, _, _ = buffer.low_latency_combine(expert_out, run.topk_idx, run.weights, handle)
    err = rel_error(combined, run.x.float() * run.weights.sum(dim=1, keepdim=True))
    run.check(err < 2e-2, f'combine of the dispatched rows is off by {err:.3g} (relative)')
    ok = run.checked()

    # DeepEP's low-latency kernels take ceil(experts / groups) SMs, groups = ceil(experts / the device's SMs).
    sms = None
    if torch.cuda.is_available():
        device_sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        sms = math.ceil(run.experts / math.ceil(run.experts / device_sms))
    combine_matrix = harness.scaled(run.rows, harness.token_bytes('bf16', args.hidden))
    for payload in ('bf16', 'fp8'):
        state = {}

        def d(fp8=payload == 'fp8'):
            state['handle'] = dispatch(fp8)[2]

        def c():
            buffer.low_latency_combine(expert_out, run.topk_idx, run.weights, state['handle'])

        td, tc = run.time([d, c])
        message = harness.token_bytes(payload, args.hidden) + harness.LL_HEADER
        run.emit('dispatch', payload, 'rows', td, harness.scaled(run.rows, message), sms, config='default', checked=ok)
        run.emit('combine', 'bf16', 'rows', tc, combine_matrix, sms, config=f'after {payload} dispatch', checked=ok)
    return buffer


def worker(rank, world, args):
    if args.deepep:
        sys.path.insert(0, args.deepep)
    try:
        importlib.import_module('deep_ep')
    except ImportError as e:
        harness.fail(f'cannot import deep_ep ({e}); build it (scripts/deepep-compare) and pass --deepep DIR or PYTHONPATH')
    run = Run(rank, world, args)
    buffer = (normal if args.mode == 'normal' else low_latency)(run)
    run.dist.barrier()
    buffer.destroy()
    run.dist.barrier()
    run.dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--gpus', type=int, default=2, help='ranks to spawn, one per GPU (ignored under torchrun; default 2)')
    p.add_argument('--mode', choices=('normal', 'll'), required=True, help='normal: intranode kernels; ll: low-latency kernels')
    p.add_argument('--tokens', type=int, default=0, help='tokens per GPU (default: 4096 normal, 128 ll)')
    p.add_argument('--hidden', type=int, default=harness.HIDDEN)
    p.add_argument('--experts', type=int, default=0, help='default: 256, or 288 where 256 does not divide among the GPUs')
    p.add_argument('--top-k', type=int, default=harness.TOP_K)
    p.add_argument('--sms', type=int, default=24, help="SMs of DeepEP's normal kernels (its tests' 24)")
    p.add_argument('--nvl-bytes', type=float, default=2e9, help="normal mode's NVLink buffer (its tests' 2e9)")
    p.add_argument('--no-tune', action='store_true', help='normal mode: only the default configs, no chunk sweep')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--warmup', type=int, default=20)
    p.add_argument('--iters', type=int, default=50, help='timed iterations (the median is reported; at least 20)')
    p.add_argument('--deepep', help='directory holding the built deep_ep package (else PYTHONPATH)')
    p.add_argument('--commit', default=os.environ.get('DEEPEP_COMMIT'), help="DeepEP's commit, for the records")
    p.add_argument('--out', help='append JSON lines here')
    args = p.parse_args()
    if args.iters < 20:
        p.error('--iters: at least 20')
    if args.sms % 2:
        p.error('--sms: DeepEP wants an even count')
    harness.launch(worker, args, args.gpus)


if __name__ == '__main__':
    main()
