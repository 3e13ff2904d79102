// The LL algorithm: one-shot flag-in-data packets through the team's scratch, no barrier; one LL channel per part.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/ll.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/detail/plan.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// LL reduction of `len` bytes: every member's unit u, in team order, from
// the caller's own block (own) or from member q's packet of message
// base[q] + chunk, combined and stored at d.
template <group G, class T, class Op, class Tr>
PGAS_HD void ll_reduce_chunk(const coll_call<Tr>& c, unsigned char* d, const unsigned char* own, std::size_t len,
                             std::uint64_t chunk, Op op) {
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
            const std::uint64_t v =
                q == c.me ? load_unit(own + 8 * u, len - 8 * u) : ll_receive_unit(c, q, message[q], u);
            acc = q == 0 ? v : reduce_units<T>(acc, v, op);
        }
        store_unit(d + 8 * u, acc, len - 8 * u);
    }
}

// Runs plan p over LL packets, as part `part` (its elements of every block,
// on LL channel part.index): each sender sends its blocks to their receivers
// in chunks of the cell payload, one chunk ahead, and each receiver copies or
// combines what arrives. No team barrier: the credits keep a cell from being
// overwritten before it is read, and a receiver is done when its data is.
template <group G, class T, class Op, class Tr>
PGAS_HD void ll_algorithm(coll_call<Tr> c, const coll_plan& p, symmetric_ptr<T> dst, symmetric_ptr<const T> src, Op op,
                          coll_part part) {
    c.channel = int(part.index);
    const auto piece = part_of<T>(p.count, part);
    const std::size_t off = piece.begin * sizeof(T), bytes = piece.size * sizeof(T);
    if (bytes == 0) return;  // a part beyond the elements: its channel carries nothing on any member
    auto* d = reinterpret_cast<unsigned char*>(c.ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(c.ctx.local(src));
    const std::size_t payload = coll_scratch::payload_bytes(c.t.slot(), c.n);
    const std::uint64_t chunks = (bytes + payload - 1) / payload;
    auto len = [&](std::uint64_t k) { return min_size(payload, bytes - k * payload); };
    auto to_me = [&](int i) { return p.moves(i, c.me); };
    auto from_me = [&](int r) { return p.moves(c.me, r); };
    auto send = [&](std::uint64_t k) {
        for (int j = 1; j < c.n; ++j) {  // start at the right neighbour: spreads the first writes
            const int to = (c.me + j) % c.n;
            if (!from_me(to)) continue;
            ll_send<G>(c, to, ll_sent(c, to) + 1 + k, s + p.send_offset(to) * sizeof(T) + off + k * payload, len(k));
        }
    };
    auto consume = [&](std::uint64_t k) {
        if (!p.receives(c.me)) return;
        const std::size_t at = off + k * payload;
        if constexpr (reduces_with<Op>) {
            ll_reduce_chunk<G, T>(c, d + at, s + p.send_offset(c.me) * sizeof(T) + at, len(k), k, op);
        } else {
            for (int j = 1; j < c.n; ++j) {
                const int from = (c.me + c.n - j) % c.n;  // the left neighbour's packets came first
                if (!to_me(from)) continue;
                unsigned char* block = d + p.recv_offset(from) * sizeof(T) + at;
                const std::uint64_t message = ll_received(c, from) + 1 + k;  // one load, not one per unit
                for (std::size_t u = G::rank(); u < (len(k) + 7) / 8; u += G::size())
                    store_unit(block + 8 * u, ll_receive_unit(c, from, message, u), len(k) - 8 * u);
            }
        }
    };
    ll_exchange<G>(c, chunks, send, consume, to_me);
    if (!reduces_with<Op> && p.keeps_own(c.me))
        local_copy<G>(d + p.recv_offset(c.me) * sizeof(T) + off, s + p.send_offset(c.me) * sizeof(T) + off, bytes);
    ll_commit<G>(c, chunks, from_me, chunks, to_me);
}

}  // namespace detail
PGAS_NAMESPACE_END
