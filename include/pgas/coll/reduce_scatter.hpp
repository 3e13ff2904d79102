// reduce_scatter over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

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
/// - @coll_callers{`count` and `op`}
/// - @coll_transports
/// - @coll_errors
/// - @coll_reduction_errors
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U, class Op>
PGAS_HD void reduce_scatter(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                            std::size_t count, Op op) {
    detail::device_collective<G, Policy, detail::coll_kind::reduce_scatter>(ctx, t, dst, src, count, op);
}

PGAS_NAMESPACE_END
