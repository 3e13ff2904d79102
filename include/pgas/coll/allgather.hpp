// allgather (fcollect) over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>

#include <cstddef>

PGAS_NAMESPACE_BEGIN

namespace detail {
// allgather: every member's block lands at its index in every member's dst (in place: src = dst + my_pe * count).
PGAS_HD constexpr coll_plan allgather_plan(std::size_t count) {
    return {coll_kind::allgather, count, coll_plan::no_root,
            coll_plan::layout::one_block, coll_plan::layout::block_per_member,
            coll_plan::members::everyone, coll_plan::members::everyone,
            /*in_place_allowed=*/true};
}
// allgather, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T>
PGAS_HD void allgather_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, coll_part part) {
    run_collective<G, Policy>(ctx, t, allgather_plan(count), dst, src, no_reduction{}, part);
}
}  // namespace detail

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
PGAS_HD void allgather(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count) {
    detail::require_collective_buffers<T, U>();
    detail::allgather_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, {});
}

/// OpenSHMEM's name for allgather: the same call, with the same contract (callers, completion, transports,
/// errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void fcollect(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count) {
    allgather<G, Policy>(ctx, t, dst, src, count);
}

PGAS_NAMESPACE_END
