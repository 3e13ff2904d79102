// broadcast over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

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
/// - @coll_callers{`count` and `root`}
/// - @coll_transports
/// - @coll_errors
/// - `root` not a team index: errc::pe_out_of_range.
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void broadcast(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, int root) {
    detail::device_collective<G, Policy, detail::coll_kind::broadcast>(ctx, t, dst, src, count, detail::no_reduction{},
                                                                       root);
}

PGAS_NAMESPACE_END
