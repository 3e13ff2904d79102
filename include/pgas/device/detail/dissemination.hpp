// The dissemination rounds behind sync and barrier (and each block's own barrier in multi-block collectives).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/team.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/device/context.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Run by one thread per PE: ceil(log2 n) rounds; in round r member i adds 1 to the round-r arrival counter of
// member (i + 2^r) mod n and waits until its own counter reaches this call's epoch. Counters only grow, so
// repeated calls need no reset. Each wait names whose arrival it waits for, (i - 2^r) mod n, so that a member
// that left is named at once (check_awaited). Arrivals are the transport's signal add (a release `red` on
// load/store transports), waits acquire polls of the caller's own memory: the cheapest form measured on 2xH200
// (bench_nvlink barrier_all/thread, 1.9 us); polling the partner's word instead could read a heap already freed.
// The words are parameters so that each block of a multi-block collective runs its own barrier
// (coll/detail/part.hpp): the local epoch at epoch_offset, round r's arrival counter at arrival_offset(r).
template <class Tr, class ArrivalOffset>
PGAS_HD void disseminate_over(const device::context<Tr>& ctx, team t, const char* call, std::uint64_t epoch_offset,
                              ArrivalOffset arrival_offset) {
    t = t.bound_to(ctx.my_pe());
    const int me = t.my_pe();
    const int n = t.n_pes();
    if (me < 0) report(errc::pe_out_of_range, call, ctx.my_pe(), "caller is not a member of team slot", t.slot());
    if (n <= 1) return;
    auto* epoch = static_cast<std::uint64_t*>(ctx.transport.local_address(epoch_offset));
    std::uint64_t target = 0;
    for (int round = 0, distance = 1; distance < n; ++round, distance <<= 1) {
        const std::uint64_t word = arrival_offset(round);
        const int to = t.world_pe((me + distance) % n);
        ctx.transport.signal(word, 1, signal_op::add, to);
        // Read after the first arrival left: the local load overlaps its flight instead of preceding it.
        if (round == 0) target = ++*epoch;
        wait_local(ctx, call, static_cast<const std::uint64_t*>(ctx.transport.local_address(word)), cmp::ge, target,
                   t.world_pe((me + n - distance) % n));
    }
}

// The team's own barrier words (heap_layout's team sync slot).
template <class Tr>
PGAS_HD void disseminate(const device::context<Tr>& ctx, team t, const char* call) {
    const int slot = t.slot();
    disseminate_over(ctx, t, call, heap_layout::epoch_offset(slot),
                     [slot](int round) { return heap_layout::arrival_offset(slot, round); });
}

}  // namespace detail
PGAS_NAMESPACE_END
