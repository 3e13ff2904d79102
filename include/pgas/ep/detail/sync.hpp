// Internals of the ep bodies: grid barrier, per-block call epochs, token ranges, warp shuffles, relaxed words.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/ep/grid.hpp>

#include <cstdint>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace ep::detail {

PGAS_HD inline std::uint64_t warp_broadcast(std::uint64_t v) {
    NV_IF_TARGET(NV_IS_DEVICE, (return __shfl_sync(0xffffffffu, (unsigned long long)v, 0);), (return v;))
}

// The largest v over each aligned run of `width` lanes (a power of two, at most 32), in every lane of the run.
// Called by every lane of the warp. On the host transport a warp is one lane: v itself.
template <int width = 32>
PGAS_HD float warp_max(float v) {
    static_assert(width > 0 && width <= 32 && (width & (width - 1)) == 0, "pgas: warp_max over a power of two lanes");
    NV_IF_TARGET(NV_IS_DEVICE,
                 (for (int d = width / 2; d > 0; d /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d)); return v;),
                 (return v;))
}

// How many threads before this one in the block have their flag set (its rank among them) and, in `total`, how
// many have: a warp ballot each, then the warps' counts in shared memory. Called by every thread of the block
// (a multiple of 32 threads); on the host transport a block is one thread.
PGAS_HD inline int block_rank(bool flag, int& total) {
#if PGAS_DEVICE_PASS  // not NV_IF_TARGET: a __shared__ block of statements, not one macro argument
    __shared__ int warp_count[32];
    const unsigned set = __ballot_sync(0xffffffffu, flag), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_count[warp] = __popc(set);
    __syncthreads();
    int before = __popc(set & ((1u << lane) - 1u));
    total = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) {
        before += w < warp ? warp_count[w] : 0;
        total += warp_count[w];
    }
    __syncthreads();  // warp_count is the next call's
    return before;
#else
    total = flag ? 1 : 0;
    return 0;
#endif
}

template <class T>
PGAS_HD T load_relaxed(const T* p) {
    return pgas::detail::atomic_ref<T, pgas::detail::thread_scope::system>(*const_cast<T*>(p))
        .load(pgas::detail::memory_order_relaxed);
}
template <class T>
PGAS_HD void store_relaxed(T* p, T v) {
    pgas::detail::atomic_ref<T, pgas::detail::thread_scope::system>(*p).store(v, pgas::detail::memory_order_relaxed);
}

// Tokens [begin, end) of this block: contiguous ranges, so a source's rows
// for one expert stay in token order.
struct token_range {
    int begin, end;
};
PGAS_HD inline token_range my_tokens(int tokens) {
    const int per = (tokens + int(grid::blocks()) - 1) / int(grid::blocks());
    const int begin = per * int(grid::block());
    return {begin < tokens ? begin : tokens, begin + per < tokens ? begin + per : tokens};
}
// A barrier over the blocks of one kernel on one PE (they are all resident:
// see pgas::ep::resident_blocks). Arrivals only grow, so call `epoch` waits for epoch * blocks.
// The release add and the acquire wait carry every earlier store of the block
// (through its __syncthreads) to every later access of the others.
template <class Tr>
PGAS_HD void grid_barrier(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> word,
                          std::uint64_t epoch) {
    if constexpr (!pgas::load_store_transport<Tr>) pgas::quiet_all<pgas::block>(ctx);  // a NIC's puts, every channel
    pgas::block::sync();
    if (grid::thread() == 0) {
        pgas::signal(ctx, word, 1, pgas::signal_op::add, ctx.my_pe());
        pgas::wait_until(ctx, word, pgas::cmp::ge, epoch * grid::blocks());
    }
    pgas::block::sync();
}

// Every PE's word `flags + s` is set to `epoch` by PE s: block 0 of this PE sets its own word on every PE, and every
// block waits until all n words here have reached `epoch` (an all-to-all "done" of one call).
template <class Tr>
PGAS_HD void tell_all_and_wait(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> flags,
                               std::uint64_t epoch) {
    const int n = ctx.n_pes();
    if (grid::block() == 0)
        for (int pe = int(grid::thread()); pe < n; pe += int(grid::threads()))
            pgas::signal(ctx, flags + ctx.my_pe(), epoch, pgas::signal_op::set, pe);
    for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
        pgas::signal_wait_until(ctx, flags + s, pgas::cmp::ge, epoch);
    pgas::block::sync();
}

template <class Tr>
PGAS_HD std::uint64_t next_epoch(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> epoch) {
    return load_relaxed(ctx.local(epoch) + grid::block()) + 1;
}

// Ends a combine: the block's epoch word moves on (read by the next dispatch).
template <class Tr>
PGAS_HD void finish_call(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> epoch,
                         std::uint64_t e) {
    pgas::block::sync();
    if (grid::thread() == 0) store_relaxed(ctx.local(epoch) + grid::block(), e);
}

}  // namespace ep::detail
PGAS_NAMESPACE_END
