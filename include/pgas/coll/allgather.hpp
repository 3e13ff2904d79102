// allgather (fcollect) over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/detail/ll.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
// allgather, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T>
PGAS_HD void allgather_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, coll_part part) {
    using E = T;
    auto c = detail::begin_call(ctx, t, "allgather");
    const std::size_t bytes = count * sizeof(E);
    detail::check_buffer(c, dst.offset(), bytes * std::size_t(c.n));
    detail::check_buffer(c, src.offset(), bytes);
    detail::check_overlap(c, dst.offset(), bytes * std::size_t(c.n), src.offset(), bytes,
                          dst.offset() + bytes * std::uint64_t(c.me));
    const auto path = detail::choose_path<G, Policy>(
        c, {bytes, unsigned(detail::coll_kind::allgather), 0, detail::type_code<E>(), 0}, bytes, part);
    if (!detail::settle_part(part, path, c.n, count)) return;
    if (count == 0) return sync<G>(ctx, c.t);
    auto* d = reinterpret_cast<unsigned char*>(ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(ctx.local(src));
    if (c.n == 1) return detail::local_copy<G>(d, s, bytes);
    if (path.ll) {
        const std::size_t payload = detail::coll_scratch::payload_bytes(c.n);
        const std::uint64_t chunks = (bytes + payload - 1) / payload;
        auto len = [&](std::uint64_t k) { return detail::min_size(payload, bytes - k * payload); };
        auto send = [&](std::uint64_t k) {
            const std::size_t off = k * payload;
            for (int j = 1; j < c.n; ++j) {
                const int to = (c.me + j) % c.n;
                detail::ll_send<G>(c, to, detail::ll_sent(c, to) + 1 + k, s + off, len(k));
            }
        };
        auto consume = [&](std::uint64_t k) {
            const std::size_t off = k * payload, len = detail::min_size(payload, bytes - off);
            for (int j = 1; j < c.n; ++j) {
                const int from = (c.me + c.n - j) % c.n;  // the left neighbour's packets came first
                unsigned char* block = d + bytes * std::size_t(from);
                const std::uint64_t message = detail::ll_received(c, from) + 1 + k;  // one load, not one per unit
                for (std::size_t u = G::rank(); u < (len + 7) / 8; u += G::size())
                    detail::store_unit(block + off + 8 * u, detail::ll_receive_unit(c, from, message, u), len - 8 * u);
            }
        };
        detail::ll_exchange<G>(c, chunks, send, consume);
        detail::local_copy<G>(d + bytes * std::size_t(c.me), s, bytes);
        return detail::ll_commit<G>(c, chunks, detail::everyone, chunks, detail::everyone);
    }
    detail::part_sync<G>(c, part, false);
    const auto piece = detail::part_of<E>(count, part);
    const E* mine = reinterpret_cast<const E*>(s) + piece.begin;
    for (int j = 0; j < c.n; ++j) {
        const int to = (c.me + j) % c.n;
        if (to == c.me)
            detail::local_copy<G>(reinterpret_cast<E*>(d) + count * std::size_t(c.me) + piece.begin, mine,
                                  piece.size * sizeof(E));
        else
            detail::push<G>(c, path, dst + std::ptrdiff_t(count * std::size_t(c.me) + piece.begin), mine, piece.size,
                            to);
    }
    detail::part_sync<G>(c, part, true);
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
