// reduce (to a root) and allreduce over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/detail/ll.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {

template <class T, class U>
PGAS_HD constexpr void require_collective_buffers() {
    static_assert(!std::is_const_v<T>, "pgas: a collective's destination must be a symmetric_ptr to non-const");
    require_same_element<T, U>();
}

// LL reduction of one chunk of `len` bytes at byte offset `off`: every
// member's unit u, in team order, from the local source or from the packet.
template <group G, class T, class Op, class Tr>
PGAS_HD void ll_reduce_chunk(const coll_call<Tr>& c, unsigned char* d, const unsigned char* s, std::size_t off,
                             std::size_t len, std::uint64_t chunk, Op op) {
    const std::size_t units = (len + 7) / 8;
    // Each member's message number, loaded once per chunk (a global load per
    // unit and member sat in front of every poll); the array lives in local
    // memory, which L1 serves.
    std::uint64_t message[coll_scratch::max_ll_pes];
    if (G::rank() < units)
        for (int q = 0; q < c.n; ++q) message[q] = q == c.me ? 0 : ll_received(c, q) + 1 + chunk;
    for (std::size_t u = G::rank(); u < units; u += G::size()) {
        std::uint64_t acc = 0;
        for (int q = 0; q < c.n; ++q) {
            const std::uint64_t v = q == c.me ? load_unit(s + off + 8 * u, len - 8 * u)
                                              : ll_receive_unit(c, q, message[q], u);
            acc = q == 0 ? v : reduce_units<T>(acc, v, op);
        }
        store_unit(d + off + 8 * u, acc, len - 8 * u);
    }
}

}  // namespace detail

namespace detail {
// reduce, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void reduce_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                         std::size_t count, Op op, int root, coll_part part) {
    using E = T;
    auto c = detail::begin_call(ctx, t, "reduce");
    detail::check_root(c, root);
    const std::size_t bytes = count * sizeof(E);
    detail::check_buffer(c, dst.offset(), bytes);
    detail::check_buffer(c, src.offset(), bytes);
    detail::check_overlap(c, dst.offset(), bytes, src.offset(), bytes, dst.offset());
    const auto path = detail::choose_path<G, Policy>(
        c, {count, unsigned(detail::coll_kind::reduce), Op::code, detail::type_code<E>(), unsigned(root + 1)}, bytes,
        part);
    if (!detail::settle_part(part, path, c.n, count)) return;
    if (count == 0) return sync<G>(ctx, c.t);
    auto* d = reinterpret_cast<unsigned char*>(ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(ctx.local(src));
    if (c.n == 1) return detail::local_copy<G>(d, s, bytes);
    if (path.ll) {
        const std::size_t payload = detail::coll_scratch::payload_bytes(c.n);
        const std::uint64_t chunks = (bytes + payload - 1) / payload;
        auto is_root = [root](int i) { return i == root; };
        if (c.me != root) {
            for (std::uint64_t k = 0; k < chunks; ++k)
                detail::ll_send<G>(c, root, detail::ll_sent(c, root) + 1 + k, s + k * payload,
                                   detail::min_size(payload, bytes - k * payload));
            return detail::ll_commit<G>(c, chunks, is_root, 0, detail::no_one);
        }
        for (std::uint64_t k = 0; k < chunks; ++k) {
            detail::ll_reduce_chunk<G, E>(c, d, s, k * payload, detail::min_size(payload, bytes - k * payload), k, op);
            detail::ll_ack_all<G>(c, k, detail::everyone);
        }
        return detail::ll_commit<G>(c, 0, detail::no_one, chunks, detail::everyone);
    }
    // Direct: each member reduces its slice from every member's src and
    // stores it into the root's dst; the syncs bracket the reads and writes.
    detail::part_sync<G>(c, part, false);
    const auto slice = detail::slice_of<E>(count, c.n, c.me);
    const auto piece = detail::part_of<E>(slice.size, part);
    const auto at = std::ptrdiff_t(slice.begin + piece.begin);
    detail::reduce_slice<G>(c, path, src + at, dst + at, piece.size, op, root);
    detail::part_sync<G>(c, part, true);
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
// allreduce, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void allreduce_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<const T> src,
                            std::size_t count, Op op, coll_part part) {
    using E = T;
    auto c = detail::begin_call(ctx, t, "allreduce");
    const std::size_t bytes = count * sizeof(E);
    detail::check_buffer(c, dst.offset(), bytes);
    detail::check_buffer(c, src.offset(), bytes);
    detail::check_overlap(c, dst.offset(), bytes, src.offset(), bytes, dst.offset());
    const auto path = detail::choose_path<G, Policy>(
        c, {count, unsigned(detail::coll_kind::allreduce), Op::code, detail::type_code<E>(), 0}, bytes, part);
    if (!detail::settle_part(part, path, c.n, count)) return;
    if (count == 0) return sync<G>(ctx, c.t);
    auto* d = reinterpret_cast<unsigned char*>(ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(ctx.local(src));
    if (c.n == 1) return detail::local_copy<G>(d, s, bytes);
    if (path.ll) {
        const std::size_t payload = detail::coll_scratch::payload_bytes(c.n);
        const std::uint64_t chunks = (bytes + payload - 1) / payload;
        auto len = [&](std::uint64_t k) { return detail::min_size(payload, bytes - k * payload); };
        detail::ll_exchange<G>(
            c, chunks,
            [&](std::uint64_t k) {
                for (int j = 1; j < c.n; ++j) {  // start at the right neighbour: spreads the first writes
                    const int to = (c.me + j) % c.n;
                    detail::ll_send<G>(c, to, detail::ll_sent(c, to) + 1 + k, s + k * payload, len(k));
                }
            },
            [&](std::uint64_t k) { detail::ll_reduce_chunk<G, E>(c, d, s, k * payload, len(k), k, op); });
        return detail::ll_commit<G>(c, chunks, detail::everyone, chunks, detail::everyone);
    }
    detail::part_sync<G>(c, part, false);
    const auto slice = detail::slice_of<E>(count, c.n, c.me);
    const auto piece = detail::part_of<E>(slice.size, part);
    const auto at = std::ptrdiff_t(slice.begin + piece.begin);
    detail::reduce_slice<G>(c, path, src + at, dst + at, piece.size, op, detail::all_members);
    detail::part_sync<G>(c, part, true);
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
