// Throughput expert-parallel dispatch and combine (DeepEP's normal mode): a count exchange, then contiguous runs of rows over every SM.
//
//   dispatch  notify (every PE sends how many tokens it sends each PE) and, in the same kernel, every token goes
//             once to each PE that holds one of its experts, at a row every PE computes from those counts
//             (sources in PE order, tokens in order), with its choices as the receiver's local expert indices;
//             one warp-level put per (token, destination) over the grid's warps.
//   combine   the experts wrote one partial sum per received token (its local choices, weighted); each PE pushes
//             its partial sums home (one warp-level put per row), then each home token adds the ones it received
//             and its own, read locally.
// A token with several experts on one PE crosses the link once, as in DeepEP's normal mode: at 4 PEs and top-8
// that is about 2.2x fewer bytes than one row per (token, expert).
//
// The bodies are PGAS_HD templates over the transport, as in ep/low_latency.hpp.
#pragma once

#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/ep/config.hpp>
#include <pgas/ep/detail/rows.hpp>
#include <pgas/ep/detail/sync.hpp>
#include <pgas/ep/grid.hpp>
#include <pgas/transport/concepts.hpp>

#include <cstddef>
#include <cstdint>

#include <cuda/atomic>

PGAS_NAMESPACE_BEGIN
namespace ep {

namespace detail {
// Whether choice c of a token (its top-k expert indices at `choices`) is its first on that expert's PE: a token
// goes to a PE once, however many of its experts live there.
PGAS_HD inline bool first_on_pe(const int* choices, int c, int nl) {
    for (int j = 0; j < c; ++j)
        if (choices[j] / nl == choices[c] / nl) return false;
    return true;
}
// Whether a token (its top-k choices) has an expert on PE d.
PGAS_HD inline bool goes_to(const int* choices, int k, int nl, int d) {
    for (int j = 0; j < k; ++j)
        if (choices[j] / nl == d) return true;
    return false;
}
}  // namespace detail

/// Throughput dispatch (DeepEP's get_dispatch_layout + notify_dispatch + dispatch), one kernel with no host round
/// trip: the per-destination token counts go to every PE, then every token lands once on each PE that holds one
/// of its experts, with its top-k choices as that PE's local indices (throughput_layout). Called by every thread
/// of every block of the kernel (blocks all resident: pgas::ep::resident_blocks), or by every block-thread on the
/// host transport. On return this PE's `recv_*`, `recv_src`, `recv_topk_*`, `source_begin` and `expert_count`
/// hold what every PE sent. Calls alternate dispatch, combine, dispatch, ...
template <class Tr>
PGAS_HD void dispatch(const pgas::device::context<Tr>& ctx, const throughput_layout& b, const batch& a) {
    constexpr const char* call = "ep::dispatch (throughput)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k, ne = c.experts;
    const std::int64_t capacity = throughput_recv_rows(c, n);
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const int* idx = ctx.local(b.io.topk_idx);
    const float* weight = ctx.local(b.io.topk_w);
    const int* table = ctx.local(b.count_table);
    int* count = ctx.local(b.block_count) + std::size_t(grid::block()) * n;
    int* next = ctx.local(b.block_next) + std::size_t(grid::block()) * n;
    int* row_of = ctx.local(b.send_row);
    const auto mine = detail::my_tokens(a.tokens);

    // 1. This block's tokens: counted once per PE they go to; the fp8 cast (unless the caller cast them). Block 0
    //    clears the expert counts this PE fills as a receiver in step 6 (the user read the last ones before this
    //    call).
    for (int d = int(grid::thread()); d < n; d += int(grid::threads())) count[d] = 0;
    if (grid::block() == 0)
        for (int le = int(grid::thread()); le < nl; le += int(grid::threads())) ctx.local(b.expert_count)[le] = 0;
    pgas::block::sync();
    for (int i = mine.begin * k + int(grid::thread()); i < mine.end * k; i += int(grid::threads())) {
        const int e = idx[i];
        if constexpr (PGAS_EP_CHECKS) {
            if (e < 0 || e >= ne) detail::bad_expert(call, me, i / k, i % k, e, ne);
        }
        if (detail::first_on_pe(idx + (i - i % k), i % k, nl))
            cuda::atomic_ref<int, cuda::thread_scope_block>(count[e / nl]).fetch_add(1, cuda::memory_order_relaxed);
    }
    if (c.fp8 && a.cast)
        detail::cast_tokens(ctx.local(b.io.x), ctx.local(b.io.x8), ctx.local(b.io.x_scale), c.hidden, mine.begin,
                            mine.end);
    detail::grid_barrier(ctx, b.grid_bar, epoch);

    // 2. Notify: block 0 sums the blocks' counts per destination and sends them to every PE.
    if (grid::block() == 0) {
        int* sum = ctx.local(b.my_count);
        for (int d = int(grid::thread()); d < n; d += int(grid::threads())) {
            int total = 0;
            for (unsigned blk = 0; blk < grid::blocks(); ++blk) total += ctx.local(b.block_count)[std::size_t(blk) * n + d];
            sum[d] = total;
        }
        pgas::block::sync();
        for (int pe = 0; pe < n; ++pe)
            pgas::put_signal<pgas::block>(ctx, b.count_table + std::size_t(me) * n, sum, n, b.notify_sig + me, epoch,
                                          pgas::signal_op::set, pe);
    }
    // Meanwhile: this block's first row on each destination among this PE's tokens.
    for (int d = int(grid::thread()); d < n; d += int(grid::threads())) {
        int before = 0;
        for (unsigned blk = 0; blk < grid::block(); ++blk) before += ctx.local(b.block_count)[std::size_t(blk) * n + d];
        next[d] = before;
    }
    for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
        pgas::signal_wait_until(ctx, b.notify_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();

    // 3. On each destination this PE's tokens follow those of the sources before it. Block 0 also lays out this PE
    //    as a receiver: where each source's rows begin.
    for (int d = int(grid::thread()); d < n; d += int(grid::threads()))
        for (int s = 0; s < me; ++s) next[d] += table[std::size_t(s) * n + d];
    if (grid::block() == 0 && grid::thread() == 0) {
        int* begin = ctx.local(b.source_begin);
        int row = 0;
        for (int s = 0; s < n; ++s) {
            begin[s] = row;
            row += table[std::size_t(s) * n + me];
        }
        begin[n] = row;
    }
    pgas::block::sync();

    // 4. The row of each of this block's tokens on each PE (-1 where it does not go): one thread per destination
    //    walks the tokens in order.
    for (int d = int(grid::thread()); d < n; d += int(grid::threads())) {
        int row = next[d];
        for (int t = mine.begin; t < mine.end; ++t)
            row_of[std::size_t(t) * n + d] = detail::goes_to(idx + std::size_t(t) * k, k, nl, d) ? row++ : -1;
    }
    pgas::block::sync();

    // 5. Data: one warp per (token, destination), the block's warps taking them in turn, on the block's channel
    //    (as DeepEP's normal mode gives each channel its SMs): the token's row, its top-k choices and weights as
    //    they are (the receiver makes them local in step 6: a store per choice here took 26 more registers a
    //    thread, 144, past the two blocks per SM that resident_blocks asks for), and where it came from.
    const auto chan = ctx.on_channel(int(grid::block()) % ctx.n_channels());
    for (int i = mine.begin * n + int(grid::warp()); i < mine.end * n; i += int(grid::warps())) {
        const int t = i / n, d = i % n;
        const std::int64_t row = row_of[i];
        if (row < 0) continue;
        if constexpr (PGAS_EP_CHECKS) {
            if (row >= capacity) detail::bad_row(call, me, t, d, row, capacity);
        }
        detail::put_token(chan, b, std::size_t(row), t, d);
        pgas::put_nbi<pgas::warp>(chan, b.recv_topk_idx + row * k, idx + std::size_t(t) * k, std::size_t(k), d);
        pgas::put_nbi<pgas::warp>(chan, b.recv_topk_w + row * k, weight + std::size_t(t) * k, std::size_t(k), d);
        if (grid::lane() == 0) pgas::p(chan, b.recv_src + row, std::uint64_t(me) << 32 | std::uint64_t(t), d);
    }

    // 6. Every block done: tell every PE its rows from here are complete, and wait for theirs (every block: each
    //    then takes its share of the received rows, makes their choices local expert indices, -1 and weight 0
    //    where the expert is on another PE, and counts the rows per local expert: num_recv_tokens_per_expert).
    detail::grid_barrier(ctx, b.grid_bar + 1, epoch);
    detail::tell_all_and_wait(ctx, b.data_sig, epoch);
    const int rows = ctx.local(b.source_begin)[n];
    int* choice_of = ctx.local(b.recv_topk_idx);
    float* weight_of = ctx.local(b.recv_topk_w);
    // Counted in the block first, then one device-wide add per (block, expert): not one per received choice.
    int* experts = ctx.local(b.block_experts) + std::size_t(grid::block()) * nl;
    for (int le = int(grid::thread()); le < nl; le += int(grid::threads())) experts[le] = 0;
    pgas::block::sync();
    for (int r = int(grid::global_thread()); r < rows; r += int(grid::global_threads()))
        for (int choice = 0; choice < k; ++choice) {
            const std::size_t at = std::size_t(r) * k + choice;
            const int e = choice_of[at];
            if (e / nl == me) {
                choice_of[at] = e - me * nl;
                cuda::atomic_ref<int, cuda::thread_scope_block>(experts[e - me * nl]).fetch_add(1, cuda::memory_order_relaxed);
            } else {
                choice_of[at] = -1;
                weight_of[at] = 0.0f;
            }
        }
    pgas::block::sync();
    for (int le = int(grid::thread()); le < nl; le += int(grid::threads()))
        if (experts[le] != 0)
            cuda::atomic_ref<int, cuda::thread_scope_device>(ctx.local(b.expert_count)[le])
                .fetch_add(experts[le], cuda::memory_order_relaxed);
}

/// Throughput combine (DeepEP's normal combine): each PE pushes its partial sums (`expert_y`, one row per token
/// it received) home, into the home PE's `io.comb_recv[token][this PE]`, and each home token's partial sums, its own
/// read in place, are added into `io.out`. Called like dispatch.
template <class Tr>
PGAS_HD void combine(const pgas::device::context<Tr>& ctx, const throughput_layout& b, const batch& a) {
    constexpr const char* call = "ep::combine (throughput)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes();
    const std::size_t h = std::size_t(c.hidden);
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);

    // 1. Every received row from another PE goes home, one warp per row over the grid's warps, each block on its
    //    channel: stores travel without a round trip (reading the partial sums from the home over NVLink, a pull,
    //    was bound by the SMs' rate of remote reads). No PE overwrites a home's slots before the home has read
    //    them: the next combine's pushes follow the next dispatch's notify, which waits for every PE, each after
    //    its own combine. The rows from this PE stay where they are. The rows are grouped by home (source order);
    //    PE p starts with home p + 1's and wraps around, so that at any time the PEs push to different homes
    //    rather than all through home 0's links first.
    const int rows = ctx.local(b.source_begin)[n], first = ctx.local(b.source_begin)[me + 1];
    const std::uint64_t* from = ctx.local(b.recv_src);
    const bf16* y = ctx.local(b.expert_y);
    const auto chan = ctx.on_channel(int(grid::block()) % ctx.n_channels());
    const int warp = int(grid::block() * grid::warps() + grid::warp()), warps = int(grid::blocks() * grid::warps());
    for (int i = warp; i < rows; i += warps) {
        const int r = (i + first) % rows;
        const std::uint64_t src = from[r];
        const int home = int(src >> 32), t = int(src & 0xffffffffu);
        if (home == me) continue;
        pgas::put_nbi<pgas::warp>(chan, b.io.comb_recv + (std::size_t(t) * std::size_t(n) + std::size_t(me)) * h,
                                  y + std::size_t(r) * h, h, home);
    }

    // 2. Every block's rows are out: tell every PE, and wait until every PE has pushed its rows here.
    detail::grid_barrier(ctx, b.grid_bar + 2, epoch);
    detail::tell_all_and_wait(ctx, b.comb_sig, epoch);

    // 3. This block's home tokens.
    const auto mine = detail::my_tokens(a.tokens);
    detail::sum_partials(ctx, b, mine.begin, mine.end);
    detail::finish_call(ctx, b.epoch, epoch);
}

}  // namespace ep
PGAS_NAMESPACE_END
