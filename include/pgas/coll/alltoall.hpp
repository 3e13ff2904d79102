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
    return {coll_kind::alltoall,
            count,
            coll_plan::no_root,
            coll_plan::layout::block_per_member,
            coll_plan::layout::block_per_member,
            coll_plan::members::everyone,
            coll_plan::members::everyone,
            /*in_place_allowed=*/false};
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
/// - @coll_callers{`count`}
/// - @coll_transports
/// - @coll_errors
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void alltoall(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count) {
    detail::require_collective_buffers<T, U>();
    detail::run_collective<G, Policy>(ctx, t, detail::alltoall_plan(count), dst, symmetric_ptr<const T>(src),
                                      detail::no_reduction{}, {});
}

PGAS_NAMESPACE_END
