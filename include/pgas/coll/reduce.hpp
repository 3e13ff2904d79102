// reduce (to a root) and allreduce over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

/// Reduces count elements of src over every member of team t with op and
/// writes the result to dst on member `root` (a team index); dst elsewhere is
/// not touched. In place when dst == src; other overlaps are errors.
/// On return the root's dst holds the result and the caller's src may be
/// reused. Elements are combined in team order, so results are reproducible.
/// count == 0 is valid: it only synchronizes the team (as pgas::sync).
///
/// - @coll_callers{`count`\, `op` and `root`}
/// - @coll_transports
/// - @coll_errors
/// - @coll_reduction_errors
/// - `root` not a team index: errc::pe_out_of_range.
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U, class Op>
PGAS_HD void reduce(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                    std::size_t count, Op op, int root) {
    detail::device_collective<G, Policy, detail::coll_kind::reduce>(ctx, t, dst, src, count, op, root);
}

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
/// - @coll_callers{`count` and `op`}
/// - @coll_transports
/// - @coll_errors
/// - @coll_reduction_errors
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U, class Op>
PGAS_HD void allreduce(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, Op op) {
    detail::device_collective<G, Policy, detail::coll_kind::allreduce>(ctx, t, dst, src, count, op);
}

PGAS_NAMESPACE_END
