// The one driver of the collectives: checks a plan's arguments, picks the algorithm and the part, and runs it.
#pragma once

#include <pgas/coll/algorithm/direct.hpp>
#include <pgas/coll/algorithm/ll.hpp>
#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/detail/ll.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace detail {

template <class T, class U>
PGAS_HD constexpr void require_collective_buffers() {
    static_assert(!std::is_const_v<T>, "pgas: a collective's destination must be a symmetric_ptr to non-const");
    require_same_element<T, U>();
}

// Whether policy P runs LL for a block of `block_bytes` to each peer in a
// team of n in `slot`, where LL can run at all: while one chunk per channel
// carries the block (the team's cells bound it: 512 KiB on 2 PEs of the
// world or node team, 256 KiB on 4, 128 KiB on 8, 6 KiB on 2 PEs of a split
// team), what one PE sends all its peers, block_bytes * (n - 1), is at
// most P::ll_max_bytes and block_bytes at most P::ll_max_peer_bytes. A policy with ll_max_bytes = ~0 (coll::ll_policy)
// runs LL at every size, in as many chunks as it takes. The host launch asks
// the same, so both agree without seeing each other.
template <class P>
PGAS_HD constexpr bool ll_fits(int slot, int n, std::size_t block_bytes) {
    if (std::size_t(P::ll_max_bytes) == ~std::size_t{0}) return true;
    const std::uint64_t capacity = coll_scratch::payload_bytes(slot, n) * std::uint64_t(coll_scratch::channels(slot));
    return block_bytes <= capacity && block_bytes <= std::size_t(P::ll_max_peer_bytes) &&
           block_bytes * std::uint64_t(n - 1) <= std::uint64_t(P::ll_max_bytes);
}

// The larger of plan p's src and dst, in bytes: what an on-stream launch spreads over its blocks.
PGAS_HD constexpr std::size_t buffer_bytes(const coll_plan& p, int n, std::size_t element) {
    return (p.src_elements(n) > p.dst_elements(n) ? p.src_elements(n) : p.dst_elements(n)) * element;
}

// Whether LL can carry a call of this team at all: every member mapped and
// at most coll_scratch::max_ll_pes of them.
template <class Tr>
PGAS_HD bool ll_capable(const coll_call<Tr>& c) {
    return c.n > 1 && c.n <= coll_scratch::max_ll_pes && c.all_mapped();
}

// Whether a call with blocks of `block_bytes` takes the LL path under policy
// P: asked on the device (choose_path) and on the host (an on-stream launch
// picks its kernel by it), which agree since they read the same team and
// context.
template <class P, class Tr>
PGAS_HD bool takes_ll(const coll_call<Tr>& c, std::size_t block_bytes) {
    return ll_capable(c) && ll_fits<P>(c.t.slot(), c.n, block_bytes);
}

// Picks the path and, under PGAS_CHECKS, compares the call's arguments with
// every member's (over LL packets, so only where LL can run, and only in the
// first part of a multi-block call: the checks use channel 0).
template <group G, class P, class Tr>
PGAS_HD coll_path choose_path(const coll_call<Tr>& c, coll_signature signature, std::size_t block_bytes,
                              coll_part part) {
    if (c.n == 1) return {false, false};
    const bool ll_can_run = ll_capable(c);
    if constexpr (PGAS_CHECKS) {
        if (ll_can_run && part.index == 0) ll_check_signature<G>(c, signature.pack());
    }
    // ll_capable holds all_mapped: a route asks its members once
    const bool mapped = ll_can_run || c.all_mapped();
    return {ll_can_run && ll_fits<P>(c.t.slot(), c.n, block_bytes), mapped && bool(P::peer_pointers)};
}

// The algorithms one instance of run_collective holds: a device collective
// holds both and picks per call; an on-stream launch builds one kernel per
// path and picks it on the host (takes_ll), so that the LL kernel carries none
// of the direct path's registers (see ll_stream_threads).
enum class coll_paths { both, ll_only, direct_only };

// Runs the collective described by plan p as part `part` of a launch (the
// whole call when part.count == 1): argument checks, the path, then the
// algorithm. Identical decisions on every member: they depend only on the
// plan, the policy, the team and the launch.
template <group G, class Policy, coll_paths Paths = coll_paths::both, class Tr, class T, class Op>
PGAS_HD void run_collective(const device::context<Tr>& ctx, team t, const coll_plan& p, symmetric_ptr<T> dst,
                            symmetric_ptr<const T> src, Op op, coll_part part) {
    using P = coll::resolve_policy<Policy, Tr>;
    static_assert(coll::tuning_policy<P>, "pgas: a collective's Policy must model pgas::coll::tuning_policy");
    auto c = begin_call(ctx, t, coll_name(p.kind));
    if (p.rooted()) check_root(c, p.root);
    const std::size_t bytes = p.count * sizeof(T);
    const std::uint64_t dst_bytes = p.dst_elements(c.n) * sizeof(T), src_bytes = p.src_elements(c.n) * sizeof(T);
    check_buffer(c, dst.offset(), dst_bytes);
    check_buffer(c, src.offset(), src_bytes);
    check_overlap(c, dst.offset(), dst_bytes, src.offset(), src_bytes, p.in_place_src(dst.offset(), c.me, sizeof(T)));
    // The signature's count: elements for the reductions, bytes for the copies (their element type may differ
    // in name between members as long as the bytes agree).
    const coll_signature signature{reduces_with<Op> ? std::uint64_t(p.count) : std::uint64_t(bytes), unsigned(p.kind),
                                   Op::code, type_code<T>(), p.rooted() ? unsigned(p.root + 1) : 0u};
    const auto path = choose_path<G, P>(c, signature, bytes, part);
    if (!settle_part(part, path, c, p.count)) return;
    if (p.count == 0) return sync<G>(ctx, c.t);
    if (c.n == 1) return local_copy<G>(ctx.local(dst), ctx.local(src), bytes);
    if constexpr (Paths == coll_paths::both) {
        if (path.ll) return ll_algorithm<G, T>(c, p, dst, src, op, part);
        direct_algorithm<G, T>(c, p, path, dst, src, op, part);
    } else if (path.ll != (Paths == coll_paths::ll_only)) {
        report(errc::invalid_argument, c.name, ctx.my_pe(),
               "the on-stream kernel launched holds the other path (host and device disagree); the call's LL =",
               int(path.ll));
    } else if constexpr (Paths == coll_paths::ll_only) {
        ll_algorithm<G, T>(c, p, dst, src, op, part);
    } else {
        direct_algorithm<G, T>(c, p, path, dst, src, op, part);
    }
}

// Every device collective (broadcast, reduce, allreduce, allgather, reduce_scatter, alltoall): its compile-time
// checks, then collective K's plan run by the driver as the whole call. Its on-stream form is launch_collective
// (host/stream/collectives.cuh).
template <group G, class Policy, coll_kind K, class Tr, class T, class U, class Op = no_reduction>
PGAS_HD void device_collective(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                               std::size_t count, Op op = {}, int root = coll_plan::no_root) {
    require_collective_buffers<T, U>();
    if constexpr (reduces_with<Op>) require_reduction<Op, T>();
    run_collective<G, Policy>(ctx, t, plan_of<K>(count, root), dst, symmetric_ptr<const T>(src), op, {});
}

// The most threads an LL on-stream kernel launches with, and its launch
// bound: with 512 (stream_threads) ptxas held the kernels to 128 registers and
// the LL path's pair counters in registers (ll_pairs) spilled in 8 of the 28
// kernels of tests/coll/stream_compile.cu, even with the direct path out of
// them; with 256 the LL kernels take 144-184 registers and none spills.
// The cost is at the largest LL sizes, where the channels cap the blocks and
// each thread carries several units: there the one 512-thread kernel before
// this (counters in local memory) was 8-27% faster, below that 0.3-0.7 us
// slower (probe of the on-stream collectives, 4xH100, one process per GPU,
// 2 KiB per block, 2026-11-28: reduce_scatter 1 MiB on 2 GPUs 11.6 us against
// 14.7, allreduce 256 KiB on 4 GPUs 13.5 against 15.1; 16 KiB 7.2 against 6.5).
inline constexpr unsigned ll_stream_threads = 256;

// The most blocks each PE's on-stream kernel launches with when `pes_per_gpu` PEs share each GPU of `sms` SMs. The
// kernels of PEs sharing a GPU wait for each other, so they must be resident together; each beside the one
// successor that begin_stream_kernel (host/stream/launch.cuh) lets launch early and wait. One block of any pgas
// on-stream kernel fits an SM (launch bounds (threads, 1)), so 2 x pes_per_gpu grids of sms / (2 x pes_per_gpu)
// blocks always fit: without the bound, four PEs on one H200 hung in their first 2 MiB allreduce_on_stream
// (64 blocks each, one per SM). With one PE per GPU nothing needs co-residency across kernels: no bound.
PGAS_HD constexpr unsigned block_share(int sms, int pes_per_gpu) {
    if (pes_per_gpu <= 1) return ~0u;
    const int share = sms / (2 * pes_per_gpu);
    return share < 1 ? 1u : unsigned(share);
}

// The grid of an on-stream launch of plan p, whose path the caller took from
// takes_ll (every PE computes the same, as the parts' channels and barriers
// need). Blocks: the LL path spreads over one block per P::ll_bytes_per_block
// of the buffer, at most the team's LL channels; the direct peer-pointer path
// over one block per P::stream_bytes_per_block, at most P::stream_max_blocks;
// put/get runs one block. Threads: P::stream_threads, but on the LL path no
// more whole warps than one 8-byte unit of the block's part per thread and at
// most ll_stream_threads. The LL algorithm spreads its units over whatever
// threads the block has; a small call's idle warps only cost it (4xH100, one
// process per GPU: the 8-byte allreduce on 32 or 128 threads took 5.0 us at 2
// PEs and 6.7 at 4, on 512 threads 5.6 and 7.5).
//
// At most `most_blocks` blocks (block_share: the PE's share of a GPU that PEs share; every PE passes the same).
struct launch_grid {
    unsigned blocks, threads;
};
template <class P>
inline launch_grid launch_shape(const team& t, const coll_plan& p, std::size_t element, bool ll, unsigned most_blocks) {
    const int n = t.n_pes();
    const std::size_t buffer = buffer_bytes(p, n, element);
    auto spread = [buffer, most_blocks](std::size_t per_block, std::size_t most) {
        const std::size_t wanted = (buffer + per_block - 1) / per_block;
        if (most > most_blocks) most = most_blocks;
        return unsigned(wanted < 1 ? 1 : wanted < most ? wanted : most);
    };
    if (ll) {
        const unsigned most_threads = P::stream_threads < ll_stream_threads ? P::stream_threads : ll_stream_threads;
        const unsigned blocks = spread(P::ll_bytes_per_block, std::size_t(coll_scratch::channels(t.slot())));
        const std::size_t part = (p.count + blocks - 1) / blocks * element + 16;  // 16: slice_of's rounding
        const std::size_t warps = ((part + 7) / 8 + 31) / 32;
        return {blocks, warps * 32 < most_threads ? unsigned(warps * 32) : most_threads};
    }
    if (!P::peer_pointers) return {1, P::stream_threads};
    return {spread(P::stream_bytes_per_block, P::stream_max_blocks), P::stream_threads};
}

}  // namespace detail
PGAS_NAMESPACE_END
