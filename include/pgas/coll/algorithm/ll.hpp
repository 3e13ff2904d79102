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

// One batch for ll_receive_units: slot jj holds member member(first + jj)
// and the low 32 bits of its message number for chunk `chunk`; the returned
// bits select the slots where first + jj < c.n and `keep` takes that member.
template <class Tr, class Member, class Keep>
PGAS_HD unsigned ll_batch_of(const coll_call<Tr>& c, const ll_pairs& pairs, std::uint64_t chunk, int first,
                             Member member, Keep keep, int* members, std::uint32_t* flags) {
    unsigned slots = 0;
    PGAS_UNROLL
    for (int jj = 0; jj < ll_batch; ++jj) {
        if (first + jj >= c.n) {  // beyond the team: a slot never selected, no counter to read
            members[jj] = c.me;
            flags[jj] = 0;
            continue;
        }
        const int q = member(first + jj);
        members[jj] = q;
        flags[jj] = std::uint32_t(pairs.received(c, q) + 1 + chunk);
        if (keep(q)) slots |= 1u << jj;
    }
    return slots;
}

// LL reduction of `len` bytes: every member's unit u, in team order, from
// the caller's own block (own) or from member q's packet of chunk `chunk`,
// combined and stored at d. The members' units are received ll_batch at a
// time, their loads overlapping.
template <group G, class T, class Op, class Tr>
PGAS_HD void ll_reduce_chunk(const coll_call<Tr>& c, const ll_pairs& pairs, unsigned char* d, const unsigned char* own,
                             std::size_t len, std::uint64_t chunk, Op op) {
    const std::size_t units = (len + 7) / 8;
    for (std::size_t u = G::rank(); u < units; u += G::size()) {
        std::uint64_t acc = 0;
        for (int first = 0; first < c.n; first += ll_batch) {
            int members[ll_batch];
            std::uint32_t flags[ll_batch];
            std::uint64_t units_in[ll_batch];
            const unsigned slots = ll_batch_of(
                c, pairs, chunk, first, [](int q) { return q; }, [&](int q) { return q != c.me; }, members, flags);
            ll_receive_units(c, members, flags, slots, u, units_in);
            PGAS_UNROLL
            for (int jj = 0; jj < ll_batch; ++jj) {
                const int q = first + jj;
                if (q >= c.n) break;
                const std::uint64_t v = q == c.me ? load_unit(own + 8 * u, len - 8 * u) : units_in[jj];
                acc = q == 0 ? v : reduce_units<T>(acc, v, op);
            }
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
    const ll_pairs pairs(c);  // first: its loads fly while the part and the chunks are worked out
    const auto piece = part_of<T>(p.count, part);
    const std::size_t off = piece.begin * sizeof(T), bytes = piece.size * sizeof(T);
    if (bytes == 0) return;  // a part beyond the elements: its channel carries nothing on any member
    auto* d = reinterpret_cast<unsigned char*>(c.ctx.local(dst));
    const auto* s = reinterpret_cast<const unsigned char*>(c.ctx.local(src));
    // the thread's first unit of its own block, which the first send or the reduction reads, on its way meanwhile
    if (8 * std::size_t(G::rank()) < bytes) prefetch_l1(s + p.send_offset(c.me) * sizeof(T) + off + 8 * G::rank());
    const std::size_t payload = coll_scratch::payload_bytes(c.t.slot(), c.n);
    const std::uint64_t chunks = divide(bytes + payload - 1, payload);
    auto len = [&](std::uint64_t k) { return min_size(payload, bytes - k * payload); };
    auto to_me = [&](int i) { return p.moves(i, c.me); };
    auto from_me = [&](int r) { return p.moves(c.me, r); };
    auto send = [&](std::uint64_t k) {
        for (int j = 1; j < c.n; ++j) {  // start at the right neighbour: spreads the first writes
            const int to = c.me + j < c.n ? c.me + j : c.me + j - c.n;
            if (!from_me(to)) continue;
            ll_send<G>(c, to, pairs.sent(c, to) + 1 + k, s + p.send_offset(to) * sizeof(T) + off + k * payload, len(k));
        }
    };
    auto consume = [&](std::uint64_t k) {
        // A copy that keeps the caller's own block copies it first, while the first packets are on their way
        // (after the exchange it sat on a small call's critical path; ll_ack_all's sync orders it before the end).
        if (!reduces_with<Op> && k == 0 && p.keeps_own(c.me)) {
            unsigned char* own_dst = d + p.recv_offset(c.me) * sizeof(T) + off;
            const unsigned char* own_src = s + p.send_offset(c.me) * sizeof(T) + off;
            if (own_dst != own_src) group_copy<G>(own_dst, own_src, bytes);
        }
        if (!p.receives(c.me)) return;
        const std::size_t at = off + k * payload;
        if constexpr (reduces_with<Op>) {
            ll_reduce_chunk<G, T>(c, pairs, d + at, s + p.send_offset(c.me) * sizeof(T) + at, len(k), k, op);
        } else {
            // Senders in batches, the left neighbour first (its packets came first).
            for (int j0 = 1; j0 < c.n; j0 += ll_batch) {
                int members[ll_batch];
                std::uint32_t flags[ll_batch];
                std::uint64_t units_in[ll_batch];
                const unsigned slots = ll_batch_of(
                    c, pairs, k, j0, [&](int j) { return (c.me + c.n - j) % c.n; }, to_me, members, flags);
                for (std::size_t u = G::rank(); u < (len(k) + 7) / 8; u += G::size()) {
                    ll_receive_units(c, members, flags, slots, u, units_in);
                    PGAS_UNROLL
                    for (int jj = 0; jj < ll_batch; ++jj)
                        if (slots >> jj & 1u)
                            store_unit(d + p.recv_offset(members[jj]) * sizeof(T) + at + 8 * u, units_in[jj],
                                       len(k) - 8 * u);
                }
            }
        }
    };
    ll_exchange<G>(c, pairs, chunks, send, consume, from_me, to_me);
    ll_commit<G>(c, pairs, chunks, from_me, chunks, to_me);
}

}  // namespace detail
PGAS_NAMESPACE_END
