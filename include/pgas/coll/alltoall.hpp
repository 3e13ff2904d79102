// alltoall over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

namespace detail {
// alltoall: block r of member i's src lands at block i of member r's dst (no in-place form).
PGAS_HD constexpr coll_plan alltoall_plan(std::size_t count) {
    return {coll_kind::alltoall, count, coll_plan::no_root,
            coll_plan::layout::block_per_member, coll_plan::layout::block_per_member,
            coll_plan::members::everyone, coll_plan::members::everyone,
            /*in_place_allowed=*/false};
}
// alltoall, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T>
PGAS_HD void alltoall_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                           std::size_t count, coll_part part) {
    run_collective<G, Policy>(ctx, t, alltoall_plan(count), dst, src, no_reduction{}, part);
}
}  // namespace detail

/// src and dst hold n blocks of count elements; block j of member i's src
/// lands in block i of member j's dst. dst must be the same symmetric_ptr on every
/// member and must not overlap src (no in-place form, as in NCCL). On return
/// dst is complete and src may be reused. Any trivially copyable element type.
/// count == 0 only synchronizes the team.
///
/// Small blocks: LL packets straight into each peer's scratch. Large blocks:
/// between two team syncs every member stores block j into member j's dst.
///
/// - **Called by** every thread of `G` on every member PE of `t`, with the same `count` on every member
///   (`Policy`, default coll::automatic, the same too); one collective at a time per team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal"). Load/store
///   transports (nvlink, host) use the LL packets and peer pointers; libfabric, ibgda and route the put/get path
///   (coll::rma_policy).
/// - **Errors:** compile time: a `const` destination, element types that differ; always checked:
///   the caller not a member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument),
///   overlapping buffers other than the in-place form (errc::invalid_argument); with PGAS_CHECKS, buffers outside
///   the heap (errc::not_symmetric) and members passing different arguments where LL can run
///   (errc::collective_mismatch naming the field). Waits end in errc::timeout after PGAS_TIMEOUT_MS or
///   errc::peer_failed. A failure throws on the host transport and traps on a GPU (@ref errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void alltoall(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count) {
    detail::require_collective_buffers<T, U>();
    detail::alltoall_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, {});
}

PGAS_NAMESPACE_END
