// broadcast over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

namespace detail {
// broadcast: the root's block lands in every member's dst (in place: src = dst on the root).
PGAS_HD constexpr coll_plan broadcast_plan(std::size_t count, int root) {
    return {coll_kind::broadcast, count, root,
            coll_plan::layout::one_block, coll_plan::layout::one_block,
            coll_plan::members::root_only, coll_plan::members::everyone,
            /*in_place_allowed=*/true};
}
// broadcast, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T>
PGAS_HD void broadcast_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, int root, coll_part part) {
    run_collective<G, Policy>(ctx, t, broadcast_plan(count, root), dst, src, no_reduction{}, part);
}
}  // namespace detail

/// Copies count elements of src on member `root` (a team index) into dst on
/// every member, the root included. In place when dst == src (the root's
/// copy is then skipped); other overlaps are errors. On return the caller's
/// dst holds the data and, on the root, src may be reused. Any trivially
/// copyable element type. count == 0 only synchronizes the team.
///
/// Small blocks: the root writes LL packets into every member's scratch, and
/// members return as soon as they have the data. Large blocks: after a team
/// sync each non-root member pulls its 1/(n - 1) of the block from the root,
/// a second sync, then each pulls the other sub-slices from their owners' dst;
/// a last sync frees the root's src and every dst (the root's links carry the
/// block once, not n - 1 times).
///
/// - **Called by** every thread of `G` on every member PE of `t`, with the same `count` and `root` on every member
///   (`Policy`, default coll::automatic, the same too); one collective at a time per team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal"). Load/store
///   transports (nvlink, host) use the LL packets and peer pointers; libfabric, ibgda and route the put/get path
///   (coll::rma_policy).
/// - **Errors:** compile time: a `const` destination, element types that differ; always checked:
///   the caller not a member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument), `root`
/// not a team index (errc::pe_out_of_range); overlapping buffers other than the in-place form
/// (errc::invalid_argument); with PGAS_CHECKS, buffers outside the heap (errc::not_symmetric) and members passing
/// different arguments where LL can run (errc::collective_mismatch naming the field). Waits end in errc::timeout
/// after PGAS_TIMEOUT_MS or errc::peer_failed. A failure throws on the host transport and traps on a GPU (@ref
/// errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void broadcast(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, int root) {
    detail::require_collective_buffers<T, U>();
    detail::broadcast_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, root, {});
}

PGAS_NAMESPACE_END
