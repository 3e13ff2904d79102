// reduce_scatter over a team, called by a thread, warp, tile or block inside a kernel.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/detail/ll.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
// reduce_scatter, as part `part` of a multi-block call (part.hpp).
template <group G, class Policy, class Tr, class T, class Op>
PGAS_HD void reduce_scatter_part(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst,
                                 symmetric_ptr<const T> src, std::size_t count, Op op, coll_part part) {
    using E = T;
    auto c = detail::begin_call(ctx, t, "reduce_scatter");
    const std::size_t bytes = count * sizeof(E);
    detail::check_buffer(c, dst.offset(), bytes);
    detail::check_buffer(c, src.offset(), bytes * std::size_t(c.n));
    if (dst.offset() != src.offset() + bytes * std::uint64_t(c.me))
        detail::check_overlap(c, dst.offset(), bytes, src.offset(), bytes * std::size_t(c.n), ~std::uint64_t{0});
    const auto path = detail::choose_path<G, Policy>(
        c, {count, unsigned(detail::coll_kind::reduce_scatter), Op::code, detail::type_code<E>(), 0}, bytes, part);
    if (!detail::settle_part(part, path, c.n, count)) return;
    if (count == 0) return sync<G>(ctx, c.t);
    auto* d = reinterpret_cast<unsigned char*>(ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(ctx.local(src));
    if (c.n == 1) return detail::local_copy<G>(d, s, bytes);
    if (path.ll) {
        const std::size_t payload = detail::coll_scratch::payload_bytes(c.n);
        const std::uint64_t chunks = (bytes + payload - 1) / payload;
        const unsigned char* mine = s + bytes * std::size_t(c.me);
        auto len = [&](std::uint64_t k) { return detail::min_size(payload, bytes - k * payload); };
        detail::ll_exchange<G>(
            c, chunks,
            [&](std::uint64_t k) {
                for (int j = 1; j < c.n; ++j) {
                    const int to = (c.me + j) % c.n;
                    detail::ll_send<G>(c, to, detail::ll_sent(c, to) + 1 + k, s + bytes * std::size_t(to) + k * payload,
                                       len(k));
                }
            },
            [&](std::uint64_t k) { detail::ll_reduce_chunk<G, E>(c, d, mine, k * payload, len(k), k, op); });
        return detail::ll_commit<G>(c, chunks, detail::everyone, chunks, detail::everyone);
    }
    detail::part_sync<G>(c, part, false);
    const auto piece = detail::part_of<E>(count, part);
    detail::reduce_slice<G>(c, path, src + std::ptrdiff_t(count * std::size_t(c.me) + piece.begin),
                            dst + std::ptrdiff_t(piece.begin), piece.size, op, c.me);
    detail::part_sync<G>(c, part, true);
}
}  // namespace detail

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
PGAS_HD void reduce_scatter(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                            std::size_t count, Op op) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::reduce_scatter_part<G, Policy>(ctx, t, dst, symmetric_ptr<const T>(src), count, op, {});
}

PGAS_NAMESPACE_END
