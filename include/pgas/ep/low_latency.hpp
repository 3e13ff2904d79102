// Low-latency expert-parallel dispatch and combine (DeepEP's low_latency_* calls): fixed receive slots, one warp per
// choice.
//
//   dispatch  every (token, choice) is put by one warp straight into its slot of the owner's receive buffer
//             [local expert][source PE][slot]; the per-(expert, source) count follows as a signal; a PE waits
//             only for the counts of its own experts.
//   combine   every expert output goes back to its token's home PE, into [token][choice]; the home waits for
//             the flags of the experts its tokens chose and reduces the top-k, weighted by the gate.
//
// Channels: DeepEP spreads traffic over one queue pair per expert. The warp that puts a token to expert e uses
// ctx.on_channel(e % channels), so warps sending to different experts post to different queues (ibgda: QPs, the
// proxy: rings) and never wait for each other's slots or doorbells; the grid barrier before the counts then
// completes every channel (quiet_all). On NVLink the channel changes nothing.
//
// The bodies are PGAS_HD templates over the transport: a GPU kernel (host/ep/on_stream.cuh) runs them with
// pgas::nvlink, the host transport with each block as a thread. Buffers are reused without a reset: every signal
// carries the call's epoch, and each combine ends with every PE having heard from every other.
#pragma once

#include <pgas/device/atomic.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/ep/config.hpp>
#include <pgas/ep/detail/rows.hpp>
#include <pgas/ep/detail/sync.hpp>
#include <pgas/ep/grid.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace ep {

/// Low-latency dispatch (DeepEP's low_latency_dispatch), one kernel: every (token, choice) of this PE's
/// `a.tokens` tokens goes to its slot in the expert owner's receive buffer. Called by every thread of every
/// block of the kernel (blocks all resident: pgas::ep::resident_blocks), or by every block-thread on the host
/// transport (pgas::ep::buffer::dispatch). On return this PE's `recv_*` and `recv_count` hold what every PE sent
/// to its experts. Every PE calls it with the same layout; calls alternate dispatch, combine, dispatch, ...
template <class Tr>
PGAS_HD void dispatch(const pgas::device::context<Tr>& ctx, const low_latency_layout& b, const batch& a) {
    constexpr const char* call = "ep::dispatch (low latency)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k;
    const std::size_t slots = std::size_t(c.max_tokens);
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const std::uint64_t parity = epoch & 1;
    const int* idx = ctx.local(b.io.topk_idx);

    // 1. One block per token: cast it (fp8, unless the caller did), then one warp per choice puts it
    //    into its slot. The slot is this PE's next one for that expert.
    for (int t = int(grid::block()); t < a.tokens; t += int(grid::blocks())) {
        if (c.fp8 && a.cast) {
            detail::cast_tokens(ctx.local(b.io.x), ctx.local(b.io.x8), ctx.local(b.io.x_scale), c.hidden, t, t + 1);
            pgas::block::sync();
        }
        for (int choice = int(grid::warp()); choice < k; choice += int(grid::warps())) {
            const int e = idx[std::size_t(t) * k + choice];
            if constexpr (PGAS_EP_CHECKS) {
                if (e < 0 || e >= c.experts) detail::bad_expert(call, me, t, choice, e, c.experts);
            }
            const int pe = e / nl, le = e % nl;
            std::uint64_t slot = 0;
            if (grid::lane() == 0) slot = pgas::atomic_fetch_add(ctx, b.slot_count + parity * c.experts + e, 1, me);
            slot = detail::warp_broadcast(slot);
            if constexpr (PGAS_EP_CHECKS) {
                if (slot >= slots) detail::bad_slot(call, me, t, choice, e, std::int64_t(slot), std::int64_t(slots));
            }
            // Expert e's channel, as DeepEP picks expert e's queue pair.
            const auto to_e = ctx.on_channel(e % ctx.n_channels());
            const std::size_t cell = (std::size_t(le) * n + me) * slots + slot;
            detail::put_token<4>(to_e, b, cell, t, pe);  // on every SM: put_nbi's 4 (6: 1-3% slower, 4xH200)
            if (grid::lane() == 0) pgas::p(to_e, b.recv_src + cell, std::uint64_t(t) * k + choice, pe);
        }
    }

    // 2. Once every block's puts are done, one thread per expert sends this
    //    PE's count for it, tagged with the call's epoch.
    detail::grid_barrier(ctx, b.grid_bar, epoch);
    for (int e = int(grid::global_thread()); e < c.experts; e += int(grid::global_threads())) {
        const std::uint64_t count = detail::load_relaxed(ctx.local(b.slot_count) + parity * c.experts + e);
        const int pe = e / nl, le = e % nl;
        pgas::signal(ctx, b.count_sig + (le * n + me), epoch << 32 | count, pgas::signal_op::set, pe);
    }
    if (grid::block() == 0)  // the other parity's counters were last used by the previous call
        for (int e = int(grid::thread()); e < c.experts; e += int(grid::threads()))
            detail::store_relaxed(ctx.local(b.slot_count) + (1 - parity) * c.experts + e, std::uint64_t{0});

    // 3. Wait for the counts of this PE's experts only.
    for (int i = int(grid::global_thread()); i < nl * n; i += int(grid::global_threads())) {
        const std::uint64_t seen = pgas::signal_wait_until(ctx, b.count_sig + i, pgas::cmp::ge, epoch << 32);
        ctx.local(b.recv_count)[i] = int(seen & 0xffffffffu);
    }
}

/// Low-latency combine (DeepEP's low_latency_combine), one kernel: every row of `expert_y` goes home and each
/// home token is reduced over its top-k, weighted by topk_w, into `io.out` (in float, rounded to bf16 once).
/// topk_idx and topk_w must be those of the dispatch. Called like dispatch; on return no PE reads what the next
/// dispatch overwrites.
template <class Tr>
PGAS_HD void combine(const pgas::device::context<Tr>& ctx, const low_latency_layout& b, const batch& a) {
    constexpr const char* call = "ep::combine (low latency)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k;
    const std::size_t h = std::size_t(c.hidden), slots = std::size_t(c.max_tokens);
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);

    // 1. One block per (local expert, source): a warp per row, then one flag
    //    per (expert, home) once the whole block's rows are out.
    for (int i = int(grid::block()); i < nl * n; i += int(grid::blocks())) {
        const int le = i / n, home = i % n;
        const int count = ctx.local(b.recv_count)[i];
        for (int j = int(grid::warp()); j < count; j += int(grid::warps())) {
            const std::size_t cell = std::size_t(i) * slots + std::size_t(j);
            const std::uint64_t tc = ctx.local(b.recv_src)[cell];
            pgas::put_nbi<pgas::warp>(ctx, b.io.comb_recv + tc * h, ctx.local(b.expert_y) + cell * h, h, home);
        }
        if constexpr (!pgas::load_store_transport<Tr>) pgas::quiet<pgas::warp>(ctx);
        pgas::block::sync();
        if (grid::thread() == 0) pgas::signal(ctx, b.comb_flag + (me * nl + le), epoch, pgas::signal_op::set, home);
        pgas::block::sync();
    }

    // 2. One block per home token: wait for the flags of its experts, reduce.
    const int* idx = ctx.local(b.io.topk_idx);
    for (int t = int(grid::block()); t < a.tokens; t += int(grid::blocks())) {
        for (int choice = int(grid::thread()); choice < k; choice += int(grid::threads()))
            pgas::signal_wait_until(ctx, b.comb_flag + idx[std::size_t(t) * k + choice], pgas::cmp::ge, epoch);
        pgas::block::sync();
        detail::reduce_token(ctx, b.io, c, t);
    }
    // 3. Every expert's flag, used or not: after this no PE still reads what
    //    the next dispatch will overwrite.
    for (int e = int(grid::global_thread()); e < c.experts; e += int(grid::global_threads()))
        pgas::signal_wait_until(ctx, b.comb_flag + e, pgas::cmp::ge, epoch);
    detail::finish_call(ctx, b.epoch, epoch);
}

}  // namespace ep
PGAS_NAMESPACE_END
