// allgather (fcollect) over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

/// Concatenates every member's count elements of src, in team order, into dst
/// (n * count elements) on every member: dst[i * count + k] = src[k] of team
/// member i. In place when the caller's src is dst + my_pe * count (then src differs
/// between members, which is allowed: src is only read locally); other
/// overlaps are errors. dst must be the same symmetric_ptr on every member.
/// On return dst is complete and src may be reused. Any trivially copyable
/// element type. count == 0 only synchronizes the team.
///
/// Small blocks: every member sends its block to every other in LL packets.
/// Large blocks: between two team syncs every member stores its block into
/// every member's dst.
///
/// - @coll_callers{`count`}
/// - @coll_transports
/// - @coll_errors
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void allgather(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count) {
    detail::device_collective<G, Policy, detail::coll_kind::allgather>(ctx, t, dst, src, count);
}

/// OpenSHMEM's name for allgather: the same call, with the same contract (callers, completion, transports,
/// errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void fcollect(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count) {
    allgather<G, Policy>(ctx, t, dst, src, count);
}

PGAS_NAMESPACE_END
