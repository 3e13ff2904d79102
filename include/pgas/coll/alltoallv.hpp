// alltoallv (variable counts and displacements per peer) over a team, called by a thread, warp, tile or block inside a
// kernel.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// Variable all-to-all (MPI_Alltoallv's data movement, one-sided): member i sends `src_counts[j]` elements from
/// `src + src_displs[j]` to member j, where they land at `dst + dst_displs[j]` of member j. `dst_displs[j]` is where
/// member j wants this member's block (MPI's rdispls[i] on member j): the sender places its data, the receiver needs
/// no counts. The three arrays hold `t.n_pes()` entries in elements, indexed by team member, in memory the calling
/// threads can read (device memory on a GPU, or the kernel's parameters). Blocks written into one member's dst must
/// not overlap each other or src. dst must be the same symmetric_ptr on every member. On return every block sent
/// to the caller has landed in its dst and src may be reused.
///
/// One path on every transport: a team sync (every member's dst is free), one put per peer (on nvlink/host a copy
/// over the group into the peer's memory), then a team barrier. No LL packets: the sizes differ per peer, so the
/// small-message path of alltoall does not apply.
///
/// - **Called by** every thread of `G` on every member PE of `t`, with its own arrays; one collective at a time per
///   team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal").
/// - **Errors:** compile time: a `const` destination, element types that differ; always checked: the caller not a
///   member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument), a src or dst block
///   (displacement + count) outside the heap's user area (errc::not_symmetric, naming the team member the block is
///   for). Waits end in errc::timeout after PGAS_TIMEOUT_MS or errc::peer_failed. A failure throws on the host
///   transport and traps on a GPU (@ref errors).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void alltoallv(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, const std::size_t* dst_displs,
                       symmetric_ptr<U> src, const std::size_t* src_counts, const std::size_t* src_displs) {
    detail::require_collective_buffers<T, U>();
    auto c = detail::begin_call(ctx, t, "alltoallv");
    for (int j = 0; j < c.n; ++j) {
        if (!detail::elements_in_heap(ctx, src.offset(), src_displs[j], src_counts[j], sizeof(T)))
            detail::report(errc::not_symmetric, "alltoallv", ctx.my_pe(),
                           "src block (src_displs + src_counts) outside the heap's user area, for team member", j);
        if (!detail::elements_in_heap(ctx, dst.offset(), dst_displs[j], src_counts[j], sizeof(T)))
            detail::report(errc::not_symmetric, "alltoallv", ctx.my_pe(),
                           "dst block (dst_displs + src_counts) outside the heap's user area, for team member", j);
    }
    sync<G>(ctx, c.t);
    const T* s = ctx.local(symmetric_ptr<const T>(src));
    for (int k = 0; k < c.n; ++k) {
        const int to = (c.me + k) % c.n;
        const T* block = s + src_displs[to];
        if (to == c.me)
            detail::local_copy<G>(ctx.local(dst) + dst_displs[to], block, src_counts[to] * sizeof(T));
        else if (src_counts[to] != 0)
            put<G>(ctx, dst + std::ptrdiff_t(dst_displs[to]), block, src_counts[to], c.t.world_pe(to));
    }
    barrier<G>(ctx, c.t);
}

PGAS_NAMESPACE_END
