// alltoall over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

/// src and dst hold n blocks of count elements; block j of member i's src
/// lands in block i of member j's dst. dst must be the same symmetric_ptr on every
/// member and must not overlap src (no in-place form, as in NCCL). On return
/// dst is complete and src may be reused. Any trivially copyable element type.
/// count == 0 only synchronizes the team.
///
/// Small blocks: LL packets straight into each peer's scratch. Large blocks:
/// between two team syncs every member stores block j into member j's dst.
///
/// - @coll_callers{`count`}
/// - @coll_transports
/// - @coll_errors
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void alltoall(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count) {
    detail::device_collective<G, Policy, detail::coll_kind::alltoall>(ctx, t, dst, src, count);
}

PGAS_NAMESPACE_END
