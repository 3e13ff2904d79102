// Throughput expert-parallel dispatch and combine (DeepEP's normal mode): a count exchange, then contiguous runs of rows over every SM.
//
//   dispatch  notify (every PE sends its per-expert counts to every PE) and, in the same kernel, each (source,
//             expert) run of rows is put contiguously at an offset every PE computes from those counts, one row
//             per warp-level put, over all warps of the grid.
//   combine   each home token reads its top-k expert outputs in place, on the PEs that computed them, and
//             reduces them weighted by the gate (one pass over the bytes; a load/store transport).
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

/// Throughput dispatch (DeepEP's get_dispatch_layout + notify_dispatch + dispatch), one kernel with no host round
/// trip: the per-expert counts go to every PE, then every (token, choice) row lands contiguously in its expert's
/// run on the owner (throughput_layout). Called by every thread of every block of the kernel (blocks all
/// resident: pgas::ep::resident_blocks), or by every block-thread on the host transport. On return this PE's
/// `recv_*`, `recv_src` and `expert_begin` hold what every PE sent. Calls alternate dispatch, combine, ...
template <class Tr>
PGAS_HD void dispatch(const pgas::device::context<Tr>& ctx, const throughput_layout& b, const batch& a) {
    constexpr const char* call = "ep::dispatch (throughput)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k, ne = c.experts;
    const std::size_t h = std::size_t(c.hidden), groups = h / fp8_group;
    const std::int64_t capacity = throughput_recv_rows(c);
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const int* idx = ctx.local(b.io.topk_idx);
    const int* table = ctx.local(b.count_table);
    int* hist = ctx.local(b.block_hist) + std::size_t(grid::block()) * ne;
    int* next = ctx.local(b.block_next) + std::size_t(grid::block()) * ne;
    const auto mine = detail::my_tokens(a.tokens);

    // 1. This block's tokens: fp8 cast, and counts per expert.
    for (int e = int(grid::thread()); e < ne; e += int(grid::threads())) hist[e] = 0;
    pgas::block::sync();
    for (int i = mine.begin * k + int(grid::thread()); i < mine.end * k; i += int(grid::threads())) {
        const int e = idx[i];
        if constexpr (PGAS_EP_CHECKS) {
            if (e < 0 || e >= ne) detail::bad_expert(call, me, i / k, i % k, e, ne);
        }
        cuda::atomic_ref<int, cuda::thread_scope_block>(hist[e]).fetch_add(1, cuda::memory_order_relaxed);
    }
    if (c.fp8)
        for (int t = mine.begin; t < mine.end; ++t)
            detail::cast_token(ctx.local(b.io.x) + t * h, ctx.local(b.io.x8) + t * h,
                               ctx.local(b.io.x_scale) + t * groups, c.hidden);
    detail::grid_barrier(ctx, b.grid_bar, epoch);

    // 2. Notify: block 0 sums the blocks' counts and sends them to every PE.
    if (grid::block() == 0) {
        int* count = ctx.local(b.my_count);
        for (int e = int(grid::thread()); e < ne; e += int(grid::threads())) {
            int sum = 0;
            for (unsigned blk = 0; blk < grid::blocks(); ++blk) sum += ctx.local(b.block_hist)[std::size_t(blk) * ne + e];
            count[e] = sum;
        }
        pgas::block::sync();
        for (int pe = 0; pe < n; ++pe)
            pgas::put_signal<pgas::block>(ctx, b.count_table + std::size_t(me) * ne, count, ne, b.notify_sig + me,
                                          epoch, pgas::signal_op::set, pe);
    }
    // Meanwhile: this block's first row of each expert among this PE's rows.
    for (int e = int(grid::thread()); e < ne; e += int(grid::threads())) {
        int sum = 0;
        for (unsigned blk = 0; blk < grid::block(); ++blk) sum += ctx.local(b.block_hist)[std::size_t(blk) * ne + e];
        next[e] = sum;
    }
    for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
        pgas::signal_wait_until(ctx, b.notify_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();

    // 3. Where each expert's run from this PE starts on its owner: owner's
    //    rows are its experts in order, each expert's sources in PE order.
    for (int e = int(grid::thread()); e < ne; e += int(grid::threads())) {
        const int owner = e / nl;
        int row = 0;
        for (int e2 = owner * nl; e2 < e; ++e2)
            for (int s = 0; s < n; ++s) row += table[std::size_t(s) * ne + e2];
        for (int s = 0; s < me; ++s) row += table[std::size_t(s) * ne + e];
        next[e] += row;
    }
    if (grid::block() == 0) {  // this PE as a receiver: where each local expert's rows begin
        int* begin = ctx.local(b.expert_begin);
        if (grid::thread() == 0) {
            int row = 0;
            for (int le = 0; le < nl; ++le) {
                begin[le] = row;
                for (int s = 0; s < n; ++s) row += table[std::size_t(s) * ne + me * nl + le];
            }
            begin[nl] = row;
        }
    }
    pgas::block::sync();

    // 4. Where each of this block's (token, choice) rows lands: one thread per expert walks the block's rows in
    //    token order and numbers that expert's from the block's first row.
    int* row_of = ctx.local(b.send_row);
    for (int e = int(grid::thread()); e < ne; e += int(grid::threads())) {
        int row = next[e];
        for (int i = mine.begin * k; i < mine.end * k; ++i)
            if (idx[i] == e) row_of[i] = row++;
    }
    pgas::block::sync();

    // 5. Data: one warp-level put per row, the block's warps taking rows in turn, with no block-wide step
    //    between rows (a block-wide put per row, two __syncthreads each, ran at a sixth of the copy rate with 4
    //    PEs sharing an H100). The block's channel, as DeepEP's normal mode gives each channel its SMs.
    const auto chan = ctx.on_channel(int(grid::block()) % ctx.n_channels());
    for (int i = mine.begin * k + int(grid::warp()); i < mine.end * k; i += int(grid::warps())) {
        const int t = i / k, e = idx[i], pe = e / nl;
        const std::int64_t row = row_of[i];
        if constexpr (PGAS_EP_CHECKS) {
            if (row >= capacity) detail::bad_slot(call, me, t, i % k, e, row, capacity);
        }
        if (c.fp8) {
            pgas::put_nbi<pgas::warp>(chan, b.recv_x8 + row * h, ctx.local(b.io.x8) + t * h, h, pe);
            pgas::put_nbi<pgas::warp>(chan, b.recv_scale + row * groups, ctx.local(b.io.x_scale) + t * groups,
                                      groups, pe);
        } else {
            pgas::put_nbi<pgas::warp>(chan, b.recv_x + row * h, ctx.local(b.io.x) + t * h, h, pe);
        }
        if (grid::lane() == 0) pgas::p(chan, b.recv_src + row, std::uint64_t(me) << 32 | std::uint64_t(i), pe);
    }

    // 6. Every block done: tell every PE its rows from here are complete, and
    //    wait for theirs.
    detail::grid_barrier(ctx, b.grid_bar + 1, epoch);
    if (grid::block() == 0) {
        for (int pe = int(grid::thread()); pe < n; pe += int(grid::threads()))
            pgas::signal(ctx, b.data_sig + me, epoch, pgas::signal_op::set, pe);
        for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
            pgas::signal_wait_until(ctx, b.data_sig + s, pgas::cmp::ge, epoch);
    }
}

/// Throughput combine (DeepEP's normal combine): each home token's top-k outputs in `expert_y` are reduced,
/// weighted by the gate, into `io.out`. Called like dispatch; needs a load/store transport.
//
// Each home token's top-k expert outputs are read in place, on the PEs that computed them (at the rows
// dispatch put them in: send_row), and reduced weighted by the gate. Reading them where they are moves each
// returned byte once; putting them home first (as low-latency mode does, which a NIC needs) writes every byte
// into comb_recv and reads it back, three passes over the bytes where this makes one. So this mode needs a
// load/store transport (NVLink, the host transport), as DeepEP's intranode normal mode does.
template <class Tr>
PGAS_HD void combine(const pgas::device::context<Tr>& ctx, const throughput_layout& b, const batch& a) {
    static_assert(pgas::load_store_transport<Tr>,
                  "pgas: ep::combine (throughput) reads the experts' outputs in place: it needs a load/store transport (NVLink or the host transport); over a NIC use low-latency mode");
    constexpr const char* call = "ep::combine (throughput)";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes();
    if constexpr (PGAS_EP_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);

    // 1. This PE's expert outputs are complete (the kernel that wrote them ran before this one on the PE's
    //    stream): say so to every PE, and wait until every PE has.
    if (grid::block() == 0)
        for (int pe = int(grid::thread()); pe < n; pe += int(grid::threads()))
            pgas::signal(ctx, b.comb_sig + me, epoch, pgas::signal_op::set, pe);
    for (int s = int(grid::thread()); s < n; s += int(grid::threads()))
        pgas::signal_wait_until(ctx, b.comb_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();

    // 2. This block's home tokens. No PE overwrites its expert outputs before every PE's next dispatch has
    //    begun (its notify waits for all), so nothing more is needed after the reads.
    const auto mine = detail::my_tokens(a.tokens);
    detail::reduce_tokens_in_place(ctx, b, mine.begin, mine.end);
    detail::finish_call(ctx, b.epoch, epoch);
}

}  // namespace ep
PGAS_NAMESPACE_END
