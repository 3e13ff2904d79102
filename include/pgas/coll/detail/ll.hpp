// LL (low-latency) channels: flag-in-data packets between team members over mapped peer memory, with credits.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/detail/clock.hpp>
#include <pgas/detail/memory_ops.hpp>
#include <pgas/detail/wait.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// A message is up to payload_bytes(n) bytes, cut into 8-byte units; unit u
// travels as two 8-byte words, each {4 data bytes, 4 flag bytes} written with
// one 8-byte store (atomic on NVLink and host memory), so a receiver that sees
// both flags equal to the message number has the unit: no separate flag, no
// fence, one one-way latency. Message numbers count per ordered pair of
// members and channel (sent/recv counters in the scratch); the sender reuses
// a cell only after the receiver acked the message that used it last
// (credits), so the ring never overwrites unread data, whatever collectives
// run in between. Every function here works on the call's channel
// (coll_call::channel): the blocks of a multi-block LL collective each own one.

PGAS_HD inline std::uint64_t ll_word(std::uint32_t data, std::uint64_t message) {
    return std::uint64_t(std::uint32_t(message)) << 32 | data;
}

// Polls one LL unit (two words) of the caller's scratch until both flags are
// `message` and returns its 8 data bytes; times out and stops on a failed
// peer like every pgas wait.
template <class Tr>
PGAS_HD std::uint64_t ll_wait_unit(const coll_call<Tr>& c, const std::uint64_t* pair, std::uint64_t message) {
    const std::uint32_t flag = std::uint32_t(message);
    std::uint64_t lo, hi;
    auto arrived = [&] {
        ll_load_unit(pair, lo, hi);
        return std::uint32_t(lo >> 32) == flag && std::uint32_t(hi >> 32) == flag;
    };
    poll_until(c.ctx, c.name, arrived, [&](std::uint64_t waited_ms) {
        const std::uint64_t offset = local_offset(c.ctx, pair);
        const std::uint32_t seen = std::uint32_t(lo >> 32) != flag ? std::uint32_t(lo >> 32) : std::uint32_t(hi >> 32);
        report_wait_timeout(c.name, c.ctx.my_pe(), offset, cmp::eq, std::uint64_t(flag), std::uint64_t(seen), waited_ms);
    });
    return (hi << 32) | std::uint32_t(lo);
}

template <class Tr>
PGAS_HD std::uint64_t ll_sent(const coll_call<Tr>& c, int to) {
    return *c.counter(coll_scratch::counter::sent, to);
}
template <class Tr>
PGAS_HD std::uint64_t ll_received(const coll_call<Tr>& c, int from) {
    return *c.counter(coll_scratch::counter::recv, from);
}

// Sends message number `message` (bytes at data) to member `to`. Every
// thread of G calls it; each writes its share of the units. Waits first for
// the credit of the cell (the ack of message - ll_depth).
//
// Each thread loads its first unit before the credit check, so that load
// overlaps the credit's; one thread polls the credit, relaxed (the cell's old
// reads returned before the peer acked, see ll_ack), and the group syncs
// behind it: 512 threads each polling with a system-scope acquire made an
// 8-byte allreduce ~1 us slower on 2xH200.
template <group G, class Tr>
PGAS_HD void ll_send(const coll_call<Tr>& c, int to, std::uint64_t message, const unsigned char* data,
                     std::size_t bytes) {
    const std::size_t units = (bytes + 7) / 8;
    const std::size_t first = G::rank();
    const std::uint64_t first_value = first < units ? load_unit(data + 8 * first, bytes - 8 * first) : 0;
    if (message > coll_scratch::ll_depth) {
        // The ack is a peer's write, so reading it is a trip to L2; the last
        // value seen (often a message ahead of what this send needs) is local.
        // Only rank 0 reads and writes the credit: the group's decision to
        // sync must not depend on which threads saw the update.
        if (G::rank() == 0) {
            const std::uint64_t needed = message - coll_scratch::ll_depth;
            std::uint64_t* credit = c.counter(coll_scratch::counter::credit, to);
            if (*credit < needed)
                *credit = wait_local<polling::relaxed>(c.ctx, c.name, c.counter(coll_scratch::counter::ack, to),
                                                       cmp::ge, needed);
        }
        G::sync();
    }
    auto* cell = c.ctx.peer(
        coll_scratch::at<std::uint64_t>(coll_scratch::cell_offset(c.t.slot(), c.n, c.channel, c.me, message)),
        c.world_pe(to));
    for (std::size_t u = first; u < units; u += G::size()) {
        const std::uint64_t v = u == first ? first_value : load_unit(data + 8 * u, bytes - 8 * u);
        ll_store_unit(cell + 2 * u, ll_word(std::uint32_t(v), message), ll_word(std::uint32_t(v >> 32), message));
    }
}

// Unit u of message `message` from member `from`, once it has arrived.
template <class Tr>
PGAS_HD std::uint64_t ll_receive_unit(const coll_call<Tr>& c, int from, std::uint64_t message, std::size_t u) {
    const auto* cell = c.ctx.local(
        coll_scratch::at<std::uint64_t>(coll_scratch::cell_offset(c.t.slot(), c.n, c.channel, from, message)));
    return ll_wait_unit(c, cell + 2 * u, message);
}

// Gives the cell of message `message` from `from` back to its sender. Called
// by one thread after G synced behind every read of that message.
//
// A relaxed store, not a release: the ack only has to follow the reads of the
// cell, and every one of those reads has returned before the group sync
// (ll_wait_unit spins on the value it loaded), so the sender's next write to
// the cell cannot reach a read of this message. A system-scope release would
// add a fence of about 1 us to every LL call on 2xH200 (see sync.hpp).
template <group G, class Tr>
PGAS_HD void ll_ack(const coll_call<Tr>& c, int from, std::uint64_t message) {
    auto* ack = c.ctx.peer(coll_scratch::at<std::uint64_t>(
                               coll_scratch::counter_offset(c.t.slot(), coll_scratch::counter::ack, c.channel, c.me)),
                           c.world_pe(from));
    store_relaxed(ack, message);
}

// Ends a phase: after every thread of G is done, rank 0 advances the pair
// counters by `sent` messages to each member in `to` and `received` from each
// in `from` (predicates over team indices).
template <group G, class Tr, class To, class From>
PGAS_HD void ll_commit(const coll_call<Tr>& c, std::uint64_t sent, To to, std::uint64_t received, From from) {
    G::sync();
    if (G::rank() == 0) {
        for (int i = 0; i < c.n; ++i) {
            if (i == c.me) continue;
            if (to(i)) *c.counter(coll_scratch::counter::sent, i) += sent;
            if (from(i)) *c.counter(coll_scratch::counter::recv, i) += received;
        }
    }
    G::sync();
}

// Acks message `message` of every member in `from` (one thread), after G synced.
template <group G, class Tr, class From>
PGAS_HD void ll_ack_all(const coll_call<Tr>& c, std::uint64_t chunk, From from) {
    G::sync();
    if (G::rank() == 0)
        for (int i = 0; i < c.n; ++i)
            if (i != c.me && from(i)) ll_ack<G>(c, i, ll_received(c, i) + 1 + chunk);
}

// The exchange loop of the LL algorithm: chunk k+1 goes out before chunk k
// is consumed, so each chunk's one-way latency overlaps the previous chunk's
// work (ll_depth = 2 cells per pair allow exactly one chunk ahead). send(k)
// sends chunk k to every peer it sends to, consume(k) reads chunk k of every
// member in `from`; the acks to those follow each consume.
template <group G, class Tr, class Send, class Consume, class From>
PGAS_HD void ll_exchange(const coll_call<Tr>& c, std::uint64_t chunks, Send send, Consume consume, From from) {
    static_assert(coll_scratch::ll_depth >= 2, "ll_exchange sends one chunk ahead");
    send(std::uint64_t{0});
    for (std::uint64_t k = 0; k < chunks; ++k) {
        if (k + 1 < chunks) send(k + 1);
        consume(k);
        ll_ack_all<G>(c, k, from);
    }
}

// PGAS_CHECKS: every member sends its signature to every other and compares
// what it receives; the first difference is reported on every PE that sees it.
template <group G, class Tr>
PGAS_HD void ll_check_signature(const coll_call<Tr>& c, std::uint64_t mine) {
    for (int i = 0; i < c.n; ++i)
        if (i != c.me) ll_send<G>(c, i, ll_sent(c, i) + 1, reinterpret_cast<const unsigned char*>(&mine), 8);
    if (G::rank() == 0)
        for (int i = 0; i < c.n; ++i)
            if (i != c.me) {
                const std::uint64_t theirs = ll_receive_unit(c, i, ll_received(c, i) + 1, 0);
                if (theirs != mine) report_mismatch(c.name, c.ctx.my_pe(), mine, theirs, i);
            }
    auto everyone = [](int) { return true; };
    ll_ack_all<G>(c, 0, everyone);
    ll_commit<G>(c, 1, everyone, 1, everyone);
}

}  // namespace detail
PGAS_NAMESPACE_END
