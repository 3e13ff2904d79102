// reduce_scatter over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

namespace detail {
// reduce_scatter: block r of every member's src, combined in team order, lands in member r's dst (in place:
// dst = src + my_pe * count).
PGAS_HD constexpr coll_plan reduce_scatter_plan(std::size_t count) {
    return {coll_kind::reduce_scatter, count, coll_plan::no_root,
            coll_plan::layout::block_per_member, coll_plan::layout::one_block,
            coll_plan::members::everyone, coll_plan::members::everyone,
            /*in_place_allowed=*/true};
}
// reduce_scatter, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void reduce_scatter_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst,
                                 symmetric_ptr<const T> src, std::size_t count, Op op, coll_part part) {
    run_collective<G, Policy>(ctx, t, reduce_scatter_plan(count), dst, src, op, part);
}
}  // namespace detail

/// src holds n blocks of count elements; member i receives in dst (count
/// elements) the reduction with op, over every member in team order, of block
/// i of their src. src must be the same symmetric_ptr on every member. In place
/// when the caller's dst is src + my_pe * count (dst then differs between
/// members, which is allowed: dst is only written locally); other overlaps are
/// errors. On return dst holds the result and src may be reused. count == 0
/// only synchronizes the team.
///
/// Small blocks: member i sends block j of its src to member j in LL packets.
/// Large blocks: between two team syncs, member i reduces block i straight
/// from every member's src.
///
/// - **Called by** every thread of `G` on every member PE of `t`, with the same `count` and `op` on every member
///   (`Policy`, default coll::automatic, the same too); one collective at a time per team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal"). Load/store
///   transports (nvlink, host) use the LL packets and peer pointers; libfabric, ibgda and route the put/get path
///   (coll::rma_policy).
/// - **Errors:** compile time: a `const` destination, element types that differ; `op` not one of pgas::op, elements
///   not int8..int64, uint8..uint64, half, bf16, float or double, or a bitwise op on floating point; always checked:
///   the caller not a member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument),
///   overlapping buffers other than the in-place form (errc::invalid_argument); with PGAS_CHECKS, buffers outside the
///   heap (errc::not_symmetric) and members passing different arguments where LL can run (errc::collective_mismatch
///   naming the field). Waits end in errc::timeout after PGAS_TIMEOUT_MS or errc::peer_failed. A failure throws on
///   the host transport and traps on a GPU (@ref errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U, class Op>
PGAS_HD void reduce_scatter(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                            std::size_t count, Op op) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::reduce_scatter_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, op, {});
}

PGAS_NAMESPACE_END
