// reduce (to a root) and allreduce over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

namespace detail {
// reduce: every member's block, combined in team order, lands in the root's dst (in place: src = dst).
PGAS_HD constexpr coll_plan reduce_plan(std::size_t count, int root) {
    return {coll_kind::reduce, count, root,
            coll_plan::layout::one_block, coll_plan::layout::one_block,
            coll_plan::members::everyone, coll_plan::members::root_only,
            /*in_place_allowed=*/true};
}
// reduce, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void reduce_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                         std::size_t count, Op op, int root, coll_part part) {
    run_collective<G, Policy>(ctx, t, reduce_plan(count, root), dst, src, op, part);
}
}  // namespace detail

/// Reduces count elements of src over every member of team t with op and
/// writes the result to dst on member `root` (a team index); dst elsewhere is
/// not touched. In place when dst == src; other overlaps are errors.
/// On return the root's dst holds the result and the caller's src may be
/// reused. Elements are combined in team order, so results are reproducible.
/// count == 0 is valid: it only synchronizes the team (as pgas::sync).
///
/// - **Called by** every thread of `G` on every member PE of `t`, with the same `count`, `op` and `root` on every
///   member (`Policy`, default coll::automatic, the same too); one collective at a time per team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal"). Load/store
///   transports (nvlink, host) use the LL packets and peer pointers; libfabric, ibgda and route the put/get path
///   (coll::rma_policy).
/// - **Errors:** compile time: a `const` destination, element types that differ; `op` not one of pgas::op, elements
///   not int8..int64, uint8..uint64, half, bf16, float or double, or a bitwise op on floating point; always checked:
///   the caller not a member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument), `root`
///   not a team index (errc::pe_out_of_range); overlapping buffers other than the in-place form
///   (errc::invalid_argument); with PGAS_CHECKS, buffers outside the heap (errc::not_symmetric) and members passing
///   different arguments where LL can run (errc::collective_mismatch naming the field). Waits end in errc::timeout
///   after PGAS_TIMEOUT_MS or errc::peer_failed. A failure throws on the host transport and traps on a GPU (@ref
///   errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U, class Op>
PGAS_HD void reduce(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                    std::size_t count, Op op, int root) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::reduce_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, op, root, {});
}

namespace detail {
// allreduce: every member's block, combined in team order, lands in every member's dst (in place: src = dst).
PGAS_HD constexpr coll_plan allreduce_plan(std::size_t count) {
    return {coll_kind::allreduce, count, coll_plan::no_root,
            coll_plan::layout::one_block, coll_plan::layout::one_block,
            coll_plan::members::everyone, coll_plan::members::everyone,
            /*in_place_allowed=*/true};
}
// allreduce, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void allreduce_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, Op op, coll_part part) {
    run_collective<G, Policy>(ctx, t, allreduce_plan(count), dst, src, op, part);
}
}  // namespace detail

/// Reduces count elements of src over every member of team t with op into dst
/// on every member; in place when dst == src. On return dst holds the result
/// (bit-identical on every member: elements are combined in team order) and
/// src may be reused. count == 0 only synchronizes the team.
///
/// Small blocks: one-shot LL, every member sends its src to every other in
/// flag-in-data packets and reduces what it receives, no barrier at all.
/// Large blocks: two-shot direct, member i reduces slice i from every member's
/// src and stores it into every member's dst, between two team syncs.
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
PGAS_HD void allreduce(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, Op op) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::allreduce_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, op, {});
}

PGAS_NAMESPACE_END
