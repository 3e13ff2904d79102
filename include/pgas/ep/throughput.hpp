// Throughput expert-parallel dispatch and combine (DeepEP's normal mode): a count exchange, then contiguous runs of
// rows over every SM.
//
//   dispatch  notify (every PE sends how many tokens it sends each PE) and, in the same kernel, every token goes
//             once to each PE that holds one of its experts, at a row every PE computes from those counts
//             (sources in PE order, tokens in order), with its choices as the receiver's local expert indices;
//             one warp-level put per (token, destination) over the grid's warps.
//   combine   the experts wrote one partial sum per received token (its local choices, weighted); a quarter of
//             the blocks push the partial sums home (one warp-level put per row, a home token chunk at a time),
//             while the others add, chunk by chunk as each arrives, every home token's partial sums and its own.
// A token with several experts on one PE crosses the link once, as in DeepEP's normal mode: at 4 PEs and top-8
// that is about 2.2x fewer bytes than one row per (token, expert).
//
// The bodies are PGAS_HD templates over the transport, as in ep/low_latency.hpp.
#pragma once

#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/memory_ops.hpp>
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

// Where combine's pushes start: chunk_row[s][j] is the first received row from source s whose token is in s's
// token chunk j or later (rows of a source are in token order), chunk_row[s][chunks] the end of s's rows. Row r
// writes the entries of the chunks from its predecessor's (exclusive) to its own; the last row of a source also
// those after its own; a source with no rows is written whole by `entry`, a flat index over [n][chunks + 1]. Called
// once per row and once per entry, by any threads.
template <class Tr>
PGAS_HD void mark_chunk_row(const pgas::device::context<Tr>& ctx, const throughput_layout& b, int r) {
    const std::uint64_t* src = ctx.local(b.recv_src);
    const int* begin = ctx.local(b.source_begin);
    const int chunks = combine_chunks(b.cfg), per = combine_chunk_tokens(b.cfg);
    const int s = int(src[r] >> 32), j = int(src[r] & 0xffffffffu) / per;
    int* first = ctx.local(b.chunk_row) + std::size_t(s) * std::size_t(chunks + 1);
    const int before = r == begin[s] ? -1 : int(src[r - 1] & 0xffffffffu) / per;
    for (int i = before + 1; i <= j; ++i) first[i] = r;
    if (r + 1 == begin[s + 1])
        for (int i = j + 1; i <= chunks; ++i) first[i] = r + 1;
}
template <class Tr>
PGAS_HD void mark_empty_source(const pgas::device::context<Tr>& ctx, const throughput_layout& b, int entry) {
    const int chunks = combine_chunks(b.cfg), s = entry / (chunks + 1);
    const int* begin = ctx.local(b.source_begin);
    if (begin[s] == begin[s + 1]) ctx.local(b.chunk_row)[entry] = begin[s];
}

// The throughput combine's sum of this PE's `tokens` (n = N, or at most N: sum_partials_upto), in a block of the
// `summers` that sum, `summer` among them: a chunk's tokens are summed once the n - 1 pushes of call `epoch` to it
// have arrived. On a GPU warp 0 waits for the chunks in order (acquire) and publishes each in shared memory; the
// other warps sum, each spinning on that word before it reads a token of a chunk not yet published (a one-warp
// block waits for every chunk, then sums). The summing loop itself holds no pgas wait: one in it (inline or a
// call) took the combine kernel from 127 registers to 146-158, past the 128 of two blocks per SM. On the host
// transport a block is one thread: it waits for a chunk itself before summing it.
template <int N, class Tr>
PGAS_HD void sum_arrived(const pgas::device::context<Tr>& ctx, const throughput_layout& b, int tokens,
                         std::uint64_t epoch, int summer, int summers) {
    const int per = combine_chunk_tokens(b.cfg);
    const std::uint64_t pushes = epoch * std::uint64_t(ctx.n_pes() - 1);
#if PGAS_DEVICE_PASS           // not NV_IF_TARGET: a __shared__ block of statements, not one macro argument
    __shared__ int published;  // chunks [0, published) have arrived
    if (threadIdx.x == 0) published = 0;
    pgas::block::sync();
    const int waiters = grid::warps() > 1 ? 1 : 0;  // a one-warp block waits for every chunk, then sums
    if (grid::warp() == 0) {
        for (int j = 0; j * per < tokens; ++j) {
            if (grid::lane() == 0) {
                pgas::wait_until(ctx, b.chunk_sig + j, pgas::cmp::ge, pushes);
                pgas::detail::atomic_ref<int, pgas::detail::thread_scope::block>(published).store(
                    j + 1, pgas::detail::memory_order_release);
            }
        }
        if (waiters == 1) return;
        pgas::warp::sync();
    }
    const int worker = summer * int(grid::warps() - waiters) + int(grid::warp()) - waiters;
    const int workers = summers * int(grid::warps() - waiters);
    int seen = 0;
    auto ready = [&](int t) {
        while (t / per >= seen)
            seen = pgas::detail::atomic_ref<int, pgas::detail::thread_scope::block>(published).load(
                pgas::detail::memory_order_acquire);
    };
#else
    const int worker = summer, workers = summers;
    int seen = 0;
    auto ready = [&](int t) {
        for (; t / per >= seen; ++seen) pgas::wait_until(ctx, b.chunk_sig + seen, pgas::cmp::ge, pushes);
    };
#endif
    sum_partials_upto<N>(ctx, b, 0, tokens, worker, workers, ready);
}

// The throughput combine's blocks that push (the others sum), at least one; with one block, it pushes and then sums.
// Each home takes pushes from n - 1 PEs; more PEs wanted more pushers: a quarter of the blocks at 2 PEs, a third
// from 3 PEs on. bench_moe on 24 blocks of 512 threads, 2026-11-28, senders: combine us: 2xH200 3: 501, 4: 379,
// 5: 316, 6: 277, 9: 296; 4xH200 6: 686, 7: 612, 8: 591, 9: 617, 10: 670, 11: 712. 8 PEs not measured (a third).
PGAS_HD inline int combine_senders(int blocks, int n_pes) {
    const int senders = n_pes <= 2 ? blocks / 4 : blocks / 3;
    return senders > 1 ? senders : 1;
}
}  // namespace detail

namespace detail {
// Dispatch step 1: this block's tokens counted once per PE they go to (count[d]), and the fp8 cast unless the
// caller cast them. Block 0 clears the expert counts this PE fills as a receiver in step 6 (the user read the last
// ones before this call).
template <class Tr>
PGAS_HD void count_destinations(const pgas::device::context<Tr>& ctx, const throughput_layout& b, const batch& a,
                                token_range mine, int* count, const char* call) {
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k;
    const int* idx = ctx.local(b.io.topk_idx);
    for (int d = int(grid::thread()); d < n; d += int(grid::threads())) count[d] = 0;
    if (grid::block() == 0)
        for (int le = int(grid::thread()); le < nl; le += int(grid::threads())) ctx.local(b.expert_count)[le] = 0;
    pgas::block::sync();
    for (int i = mine.begin * k + int(grid::thread()); i < mine.end * k; i += int(grid::threads())) {
        const int e = idx[i];
        if constexpr (PGAS_EP_CHECKS) {
            if (e < 0 || e >= c.experts) bad_expert(call, me, i / k, i % k, e, c.experts);
        }
        if (first_on_pe(idx + (i - i % k), i % k, nl))
            pgas::detail::atomic_ref<int, pgas::detail::thread_scope::block>(count[e / nl])
                .fetch_add(1, pgas::detail::memory_order_relaxed);
    }
    if (c.fp8 && a.cast)
        cast_tokens(ctx.local(b.io.x), ctx.local(b.io.x8), ctx.local(b.io.x_scale), c.hidden, mine.begin, mine.end);
}

// Dispatch steps 2 and 3 (after every block counted): block 0 sums the blocks' counts per destination and sends
// them to every PE (notify); every block finds its first row on each destination (next[d]): after the tokens of
// the sources before this PE, and of this PE's blocks before it. Block 0 also lays out this PE as a receiver:
// where each source's rows begin.
template <class Tr>
PGAS_HD void notify_counts(const pgas::device::context<Tr>& ctx, const throughput_layout& b, std::uint64_t epoch,
                           int* next) {
    const int me = ctx.my_pe(), n = ctx.n_pes();
    const int* table = ctx.local(b.count_table);
    const int* block_count = ctx.local(b.block_count);
    if (grid::block() == 0) {
        int* sum = ctx.local(b.my_count);
        for (int d = int(grid::thread()); d < n; d += int(grid::threads())) {
            int total = 0;
            for (unsigned blk = 0; blk < grid::blocks(); ++blk) total += block_count[std::size_t(blk) * n + d];
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
        for (unsigned blk = 0; blk < grid::block(); ++blk) before += block_count[std::size_t(blk) * n + d];
        next[d] = before;
    }
    for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
        pgas::signal_wait_until(ctx, b.notify_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();
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
}

// Dispatch step 4: the row of each of this block's tokens on each PE (-1 where it does not go): a token a thread,
// its row the block's next on that PE plus the tokens before it that go there (block_rank), not one thread per
// destination walking the block's tokens in turn (a dependent step per token: 171 at 4096 tokens on 24 blocks).
template <class Tr>
PGAS_HD void lay_out_rows(const pgas::device::context<Tr>& ctx, const throughput_layout& b, token_range mine,
                          int* next) {
    const int n = ctx.n_pes(), k = b.cfg.top_k, nl = b.cfg.experts / n;
    const int* idx = ctx.local(b.io.topk_idx);
    int* row_of = ctx.local(b.send_row);
    for (int base = mine.begin; base < mine.end; base += int(grid::threads())) {
        const int t = base + int(grid::thread());
        for (int d = 0; d < n; ++d) {
            const bool goes = t < mine.end && goes_to(idx + std::size_t(t) * k, k, nl, d);
            const int first = next[d];  // read by every thread before block_rank's barrier, updated after it
            int total = 0;
            const int rank = block_rank(goes, total);
            if (t < mine.end) row_of[std::size_t(t) * n + d] = goes ? first + rank : -1;
            if (grid::thread() == 0) next[d] = first + total;
        }
        pgas::block::sync();
    }
}

// Dispatch step 5, the data: one warp per (token, destination), the block's warps taking them in turn, on the
// block's channel (as DeepEP's normal mode gives each channel its SMs): the token's row (push_row, 5 loads a lane
// in flight: 6 took the kernel to 129 registers), with its top-k choices and weights riding in the lanes
// (riding_words: loaded before the row, stored after it, since an array put after the row cost the warp one more
// load round trip per row; the receiver makes them local in step 6), and where it came from.
template <class Tr>
PGAS_HD void send_rows(const pgas::device::context<Tr>& ctx, const throughput_layout& b, token_range mine,
                       const char* call) {
    const int me = ctx.my_pe(), n = ctx.n_pes(), k = b.cfg.top_k;
    const std::int64_t capacity = throughput_recv_rows(b.cfg, n);
    const int* idx = ctx.local(b.io.topk_idx);
    const float* weight = ctx.local(b.io.topk_w);
    const int* row_of = ctx.local(b.send_row);
    const auto chan = ctx.on_channel(int(grid::block()) % ctx.n_channels());
    for (int i = mine.begin * n + int(grid::warp()); i < mine.end * n; i += int(grid::warps())) {
        const int t = i / n, d = i % n;
        const std::int64_t row = row_of[i];
        if (row < 0) continue;
        if constexpr (PGAS_EP_CHECKS) {
            if (row >= capacity) bad_row(call, me, t, d, row, capacity);
        }
        const int* choices = idx + std::size_t(t) * k;
        const float* weights = weight + std::size_t(t) * k;
        riding_words<int, 1> choice_words;
        riding_words<float, 1> weight_words;
        choice_words.load(chan, choices, k);
        weight_words.load(chan, weights, k);
        put_token<5>(chan, b, std::size_t(row), t, d);
        choice_words.put(chan, b.recv_topk_idx + row * k, choices, k, d);
        weight_words.put(chan, b.recv_topk_w + row * k, weights, k, d);
        if (grid::lane() == 0) pgas::p(chan, b.recv_src + row, std::uint64_t(me) << 32 | std::uint64_t(t), d);
    }
}

// Dispatch step 6, once every PE's rows have arrived: every block takes its share of the received rows, marks
// where combine's pushes start (chunk_row), makes their choices local expert indices (-1 and weight 0 where the
// expert is on another PE), and counts the rows per local expert (num_recv_tokens_per_expert): in the block
// first, then one device-wide add per (block, expert), not one per received choice.
template <class Tr>
PGAS_HD void localize_received(const pgas::device::context<Tr>& ctx, const throughput_layout& b) {
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = b.cfg.experts / n, k = b.cfg.top_k;
    const int rows = ctx.local(b.source_begin)[n];
    int* choice_of = ctx.local(b.recv_topk_idx);
    float* weight_of = ctx.local(b.recv_topk_w);
    int* experts = ctx.local(b.block_experts) + std::size_t(grid::block()) * nl;
    for (int le = int(grid::thread()); le < nl; le += int(grid::threads())) experts[le] = 0;
    pgas::block::sync();
    const int chunk_entries = n * (combine_chunks(b.cfg) + 1);
    for (int i = int(grid::global_thread()); i < chunk_entries; i += int(grid::global_threads()))
        mark_empty_source(ctx, b, i);
    for (int r = int(grid::global_thread()); r < rows; r += int(grid::global_threads())) {
        mark_chunk_row(ctx, b, r);
        for (int choice = 0; choice < k; ++choice) {
            const std::size_t at = std::size_t(r) * k + choice;
            const int e = choice_of[at];
            if (e / nl == me) {
                choice_of[at] = e - me * nl;
                pgas::detail::atomic_ref<int, pgas::detail::thread_scope::block>(experts[e - me * nl])
                    .fetch_add(1, pgas::detail::memory_order_relaxed);
            } else {
                choice_of[at] = -1;
                weight_of[at] = 0.0f;
            }
        }
    }
    pgas::block::sync();
    for (int le = int(grid::thread()); le < nl; le += int(grid::threads()))
        if (experts[le] != 0)
            pgas::detail::atomic_ref<int, pgas::detail::thread_scope::device>(ctx.local(b.expert_count)[le])
                .fetch_add(experts[le], pgas::detail::memory_order_relaxed);
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
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, ctx.my_pe(), b.cfg, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const auto mine = detail::my_tokens(a.tokens);
    const int n = ctx.n_pes();
    int* next = ctx.local(b.block_next) + std::size_t(grid::block()) * n;
    detail::count_destinations(ctx, b, a, mine, ctx.local(b.block_count) + std::size_t(grid::block()) * n, call);
    detail::grid_barrier(ctx, b.grid_bar, epoch);
    detail::notify_counts(ctx, b, epoch, next);
    detail::lay_out_rows(ctx, b, mine, next);
    detail::send_rows(ctx, b, mine, call);
    // Every block done: tell every PE its rows from here are complete, and wait for theirs.
    detail::grid_barrier(ctx, b.grid_bar + 1, epoch);
    detail::tell_all_and_wait(ctx, b.data_sig, epoch);
    detail::localize_received(ctx, b);
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
    const int blocks = int(grid::blocks()), block = int(grid::block());
    const int senders = detail::combine_senders(blocks, n), chunks = detail::combine_chunks(c);

    // The two parts run side by side: the first `senders` blocks push, the others sum what has arrived, a home
    // token chunk at a time, so that the sum hides behind the pushes (one after the other, the sum added about half
    // the push's time at 4 PEs).
    //
    // 1. Push: one item per (home, home token chunk), chunk by chunk, each chunk's homes from this PE's right
    //    neighbour on (at any time the PEs push to different homes, not all through home 0's links first); a
    //    sending block's warps take the item's rows (chunk_row, from dispatch) one warp per row, on the block's
    //    channel. On load/store transports each lane keeps 8 loads of 16 bytes in flight, not put_nbi's 4: the
    //    senders' 96 warps (two blocks per SM, by registers) otherwise bound the push by the latency of their
    //    loads (4xH100, 4 PEs: 645 -> 584 us; the kernel stays at 128 registers, 16 in flight would take 168).
    //    Stores travel without a round trip (reading the partial sums from the home over NVLink, a pull,
    //    was bound by the SMs' rate of remote reads). When an item's rows are out the block adds 1 to the home's
    //    chunk_sig[chunk]. No PE overwrites a home's slots before the home has read them: the next combine's
    //    pushes follow the next dispatch's notify, which waits for every PE, each after its own combine. The rows
    //    from this PE stay where they are.
    if (block < senders) {
        const std::uint64_t* from = ctx.local(b.recv_src);
        const int* first = ctx.local(b.chunk_row);
        const bf16* y = ctx.local(b.expert_y);
        const auto chan = ctx.on_channel(block % ctx.n_channels());
        for (int item = block; item < (n - 1) * chunks; item += senders) {
            const int j = item / (n - 1), home = (me + 1 + item % (n - 1)) % n;
            const int* rows = first + std::size_t(home) * std::size_t(chunks + 1);
            for (int r = rows[j] + int(grid::warp()); r < rows[j + 1]; r += int(grid::warps())) {
                const std::size_t t = std::size_t(from[r] & 0xffffffffu);
                const auto slot = b.io.comb_recv + (t * std::size_t(n) + std::size_t(me)) * h;
                detail::push_row<8>(chan, slot, y + std::size_t(r) * h, h, home);
            }
            // A load/store transport's signal is a release after the block's sync; another transport completes the
            // block's puts first.
            if constexpr (pgas::load_store_transport<Tr>)
                pgas::block::sync();
            else
                pgas::quiet<pgas::block>(chan);
            if (grid::thread() == 0) pgas::signal(chan, b.chunk_sig + j, 1, pgas::signal_op::add, home);
        }
    }

    // 2. Sum: every summing block takes every chunk of this PE's tokens in turn, once its n - 1 pushes of this call
    //    have arrived, its warps sharing the chunk's (token, tile) pairs with the other summing blocks'.
    if (block >= senders || blocks == 1) {
        const int summer = blocks == 1 ? 0 : block - senders, summers = blocks == 1 ? 1 : blocks - senders;
        if (n <= 2)
            detail::sum_arrived<2>(ctx, b, a.tokens, epoch, summer, summers);
        else if (n <= 4)
            detail::sum_arrived<4>(ctx, b, a.tokens, epoch, summer, summers);
        else
            detail::sum_arrived<8>(ctx, b, a.tokens, epoch, summer, summers);
    }
    detail::finish_call(ctx, b.epoch, epoch);
}

}  // namespace ep
PGAS_NAMESPACE_END
