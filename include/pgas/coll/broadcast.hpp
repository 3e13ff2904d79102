// broadcast over a team, called by a thread, warp, tile or block inside a kernel.
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
// broadcast, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T>
PGAS_HD void broadcast_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, int root, coll_part part) {
    using E = T;
    auto c = detail::begin_call(ctx, t, "broadcast");
    detail::check_root(c, root);
    const std::size_t bytes = count * sizeof(E);
    detail::check_buffer(c, dst.offset(), bytes);
    detail::check_buffer(c, src.offset(), bytes);
    detail::check_overlap(c, dst.offset(), bytes, src.offset(), bytes, dst.offset());
    const auto path = detail::choose_path<G, Policy>(
        c, {bytes, unsigned(detail::coll_kind::broadcast), 0, detail::type_code<E>(), unsigned(root + 1)}, bytes, part);
    if (!detail::settle_part(part, path, c.n, count)) return;
    if (count == 0) return sync<G>(ctx, c.t);
    auto* d = reinterpret_cast<unsigned char*>(ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(ctx.local(src));
    if (c.n == 1) return detail::local_copy<G>(d, s, bytes);
    if (path.ll) {
        const std::size_t payload = detail::coll_scratch::payload_bytes(c.n);
        const std::uint64_t chunks = (bytes + payload - 1) / payload;
        auto is_root = [root](int i) { return i == root; };
        if (c.me == root) {
            for (std::uint64_t k = 0; k < chunks; ++k)
                for (int j = 1; j < c.n; ++j) {
                    const int to = (c.me + j) % c.n;
                    detail::ll_send<G>(c, to, detail::ll_sent(c, to) + 1 + k, s + k * payload,
                                       detail::min_size(payload, bytes - k * payload));
                }
            detail::local_copy<G>(d, s, bytes);
            return detail::ll_commit<G>(c, chunks, detail::everyone, 0, detail::no_one);
        }
        for (std::uint64_t k = 0; k < chunks; ++k) {
            const std::size_t off = k * payload, len = detail::min_size(payload, bytes - off);
            const std::uint64_t message = detail::ll_received(c, root) + 1 + k;  // one load, not one per unit
            for (std::size_t u = G::rank(); u < (len + 7) / 8; u += G::size())
                detail::store_unit(d + off + 8 * u, detail::ll_receive_unit(c, root, message, u), len - 8 * u);
            detail::ll_ack_all<G>(c, k, is_root);
        }
        return detail::ll_commit<G>(c, 0, detail::no_one, chunks, is_root);
    }
    detail::part_sync<G>(c, part, false);
    const auto piece = detail::part_of<E>(count, part);
    if (c.me == root)
        detail::local_copy<G>(reinterpret_cast<E*>(d) + piece.begin, reinterpret_cast<const E*>(s) + piece.begin,
                              piece.size * sizeof(E));
    else
        detail::pull<G>(c, path, reinterpret_cast<E*>(d) + piece.begin, src + std::ptrdiff_t(piece.begin),
                        piece.size, root);
    detail::part_sync<G>(c, part, false);
}
}  // namespace detail

/// Copies count elements of src on member `root` (a team index) into dst on
/// every member, the root included. In place when dst == src (the root's
/// copy is then skipped); other overlaps are errors. On return the caller's
/// dst holds the data and, on the root, src may be reused. Any trivially
/// copyable element type. count == 0 only synchronizes the team.
///
/// Small blocks: the root writes LL packets into every member's scratch, and
/// members return as soon as they have the data. Large blocks: after a team
/// sync every member pulls from the root, then a second sync frees the root's src.
///
/// - **Called by** every thread of `G` on every member PE of `t`, with the same `count` and `root` on every member
///   (`Policy`, default coll::automatic, the same too); one collective at a time per team and PE.
/// - **Transports:** every transport that models pgas::rma_transport and pgas::signal_transport (every built-in
///   one; with another the team syncs inside fail to compile: "pgas: this transport cannot signal"). Load/store
///   transports (nvlink, host) use the LL packets and peer pointers; libfabric, ibgda and route the put/get path
///   (coll::rma_policy).
/// - **Errors:** compile time: a `const` destination, element types that differ; always checked:
///   the caller not a member of `t` (errc::pe_out_of_range), an invalid team slot (errc::invalid_argument), `root`
/// not a team index (errc::pe_out_of_range); overlapping buffers other than the in-place form
/// (errc::invalid_argument); with PGAS_CHECKS, buffers outside the heap (errc::not_symmetric) and members passing
/// different arguments where LL can run (errc::collective_mismatch naming the field). Waits end in errc::timeout
/// after PGAS_TIMEOUT_MS or errc::peer_failed. A failure throws on the host transport and traps on a GPU (@ref
/// errors).
template <group G = thread, class Policy = coll::automatic, class Tr, class T, class U>
PGAS_HD void broadcast(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, int root) {
    detail::require_collective_buffers<T, U>();
    detail::broadcast_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, root, {});
}

PGAS_NAMESPACE_END
