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
        report_wait_timeout(c.name, c.ctx.my_pe(), offset, cmp::eq, std::uint64_t(flag), std::uint64_t(seen),
                            waited_ms);
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
// Member i's ack: a peer writes it, so a relaxed load (no stale L1 copy).
template <class Tr>
PGAS_HD std::uint64_t ll_acked(const coll_call<Tr>& c, int i) {
    return load_relaxed(c.counter(coll_scratch::counter::ack, i));
}

// The pair counters of one call (messages sent to and received from each
// member on the call's channel), read once when the call starts, all at once;
// they are written back once when it ends. Every thread of the group holds
// them: read where they were needed, one member after the other, each read was
// a trip to L2 in a dependent chain, about 1 us per member and call on 4xH100
// (the 8-byte allreduce in a kernel: 2.6 us on 2 GPUs, 4.7 on 4). The first
// ll_cached_pes members are read together at the start, into registers: the
// arrays are only ever indexed by constants (pick), since an array indexed at
// run time lives in local memory, which cost the 8-byte allreduce on a stream
// 0.6-0.8 us on 4xH100. A larger team reads the others where they are needed.
// Of the acks only the tightest credit is used (credit_slack: the least of
// ack - sent over the cached members), which covers every member at once
// while a call's chunk is within it. The constructor only issues the loads:
// nothing reads them before the first credit check, so their trip to L2 runs
// beside the call's set-up (folded in the constructor, the 8-byte allreduce
// in a kernel waited there for them, ~0.3 us on 2xH200).
struct ll_pairs {
    static constexpr int ll_cached_pes = 8;
    std::uint64_t sent_before[ll_cached_pes];
    std::uint64_t received_before[ll_cached_pes];
    std::uint64_t acked_before[ll_cached_pes];

    template <class Tr>
    PGAS_HD explicit ll_pairs(const coll_call<Tr>& c) {
        PGAS_UNROLL
        for (int i = 0; i < ll_cached_pes; ++i) {
            if (i >= c.n) break;
            sent_before[i] = ll_sent(c, i);
            received_before[i] = ll_received(c, i);
            acked_before[i] = ll_acked(c, i);
        }
    }
    // The least of ack - sent over the cached members of a team of n (<= 0; 0 for the caller, whose ack and
    // sent words stay 0).
    PGAS_HD std::int64_t credit_slack(int n) const {
        std::int64_t slack = 0;
        PGAS_UNROLL
        for (int i = 0; i < ll_cached_pes; ++i) {
            if (i >= n) break;
            const std::int64_t s = std::int64_t(acked_before[i] - sent_before[i]);
            slack = s < slack ? s : slack;
        }
        return slack;
    }
    // a[i] for 0 <= i < ll_cached_pes, by selects over constant indices that
    // stop at i: member i costs i steps, not ll_cached_pes (a small call on
    // one thread picks a counter five times or more, each a dependent chain).
    PGAS_HD static std::uint64_t pick(const std::uint64_t (&a)[ll_cached_pes], int i) {
        std::uint64_t v = a[0];
        PGAS_UNROLL
        for (int k = 1; k < ll_cached_pes; ++k) {
            if (k > i) break;
            if (i == k) v = a[k];
        }
        return v;
    }
    template <class Tr>
    PGAS_HD std::uint64_t sent(const coll_call<Tr>& c, int to) const {
        return to < ll_cached_pes ? pick(sent_before, to) : ll_sent(c, to);
    }
    template <class Tr>
    PGAS_HD std::uint64_t received(const coll_call<Tr>& c, int from) const {
        return from < ll_cached_pes ? pick(received_before, from) : ll_received(c, from);
    }
    // Whether the acks read at the start already free the cells of chunk
    // `chunk` to member i (ack >= sent + 1 + chunk - ll_depth), given credit_slack.
    PGAS_HD static bool credit_covers(int i, std::uint64_t chunk, std::int64_t slack) {
        return i < ll_cached_pes && std::int64_t(1 + chunk) <= std::int64_t(coll_scratch::ll_depth) + slack;
    }
};

// Runs f(i) for every member i other than the caller that `which` selects,
// one member per thread of G (the group's threads take the members in turn):
// the per-member bookkeeping of a call runs side by side, not member after
// member.
template <group G, class Tr, class Which, class F>
PGAS_HD void for_each_member(const coll_call<Tr>& c, Which which, F f) {
    for (int i = int(G::rank()); i < c.n; i += int(G::size()))
        if (i != c.me && which(i)) f(i);
}

// Waits until the cells of chunk `chunk` to every member in `to` are free:
// the receiver acked the message that used each cell last (message -
// ll_depth). Each thread of G checks every member itself before it writes
// its own units, against the tightest credit read with the pair counters
// (it almost always covers a call's first chunk), reading and polling a
// member's ack word only where that falls short; the group does not sync,
// and the first send waits on no load issued after the counters'. Relaxed polls:
// the cell's old reads returned before the peer acked (see ll_ack_all); a
// system-scope acquire per poll cost an 8-byte allreduce ~1 us on 2xH200.
template <group G, class Tr, class To>
PGAS_HD void ll_wait_credits(const coll_call<Tr>& c, const ll_pairs& pairs, std::uint64_t chunk, To to) {
    const std::int64_t slack = pairs.credit_slack(c.n);
    for (int i = 0; i < c.n; ++i) {
        if (i == c.me || !to(i)) continue;
        if (ll_pairs::credit_covers(i, chunk, slack)) continue;
        const std::uint64_t message = pairs.sent(c, i) + 1 + chunk;
        if (message <= coll_scratch::ll_depth || ll_acked(c, i) >= message - coll_scratch::ll_depth) continue;
        wait_local<polling::relaxed>(c.ctx, c.name, c.counter(coll_scratch::counter::ack, i), cmp::ge,
                                     message - coll_scratch::ll_depth);
    }
}

// Sends message number `message` (bytes at data) to member `to`: every
// thread of G writes its share of the units. The cell's credit must have
// been taken (ll_wait_credits).
template <group G, class Tr>
PGAS_HD void ll_send(const coll_call<Tr>& c, int to, std::uint64_t message, const unsigned char* data,
                     std::size_t bytes) {
    const std::size_t units = (bytes + 7) / 8;
    auto* cell = c.ctx.peer(
        coll_scratch::at<std::uint64_t>(coll_scratch::cell_offset(c.t.slot(), c.n, c.channel, c.me, message)),
        c.world_pe(to));
    for (std::size_t u = G::rank(); u < units; u += G::size()) {
        const std::uint64_t v = load_unit(data + 8 * u, bytes - 8 * u);
        ll_store_unit(cell + 2 * u, ll_word(std::uint32_t(v), message), ll_word(std::uint32_t(v >> 32), message));
    }
}

// The LL words of unit u of message `message` from member `from`, in the caller's scratch.
template <class Tr>
PGAS_HD const std::uint64_t* ll_unit_address(const coll_call<Tr>& c, int from, std::uint64_t message, std::size_t u) {
    return c.ctx.local(
               coll_scratch::at<std::uint64_t>(coll_scratch::cell_offset(c.t.slot(), c.n, c.channel, from, message))) +
           2 * u;
}

// Unit u of message `message` from member `from`, once it has arrived.
template <class Tr>
PGAS_HD std::uint64_t ll_receive_unit(const coll_call<Tr>& c, int from, std::uint64_t message, std::size_t u) {
    return ll_wait_unit(c, ll_unit_address(c, from, message, u), message);
}

// Unit u of up to ll_batch messages at once: for every slot j that `slots`
// selects (bit j), out[j] is unit u of member members[j]'s message whose
// number's low 32 bits are flags[j] (enough for the flag and the cell, as
// 2^32 is a multiple of ll_depth). Every unit is looked at once before any is
// checked, so the loads overlap (one member at a time paid a load latency per
// member); a unit not there yet is then polled alone. Slots are fixed
// positions, not packed: the arrays are indexed by constants only and stay in
// registers.
inline constexpr int ll_batch = 4;
static_assert((std::uint64_t{1} << 32) % coll_scratch::ll_depth == 0, "a message's low 32 bits name its cell");
template <class Tr>
PGAS_HD void ll_receive_units(const coll_call<Tr>& c, const int* members, const std::uint32_t* flags, unsigned slots,
                              std::size_t u, std::uint64_t* out) {
    std::uint64_t lo[ll_batch], hi[ll_batch];
    PGAS_UNROLL
    for (int j = 0; j < ll_batch; ++j)
        if (slots >> j & 1u) ll_load_unit(ll_unit_address(c, members[j], flags[j], u), lo[j], hi[j]);
    PGAS_UNROLL
    for (int j = 0; j < ll_batch; ++j) {
        if ((slots >> j & 1u) == 0) continue;
        const std::uint32_t flag = flags[j];
        out[j] = std::uint32_t(lo[j] >> 32) == flag && std::uint32_t(hi[j] >> 32) == flag
                     ? (hi[j] << 32) | std::uint32_t(lo[j])
                     : ll_receive_unit(c, members[j], flag, u);
    }
}

// Gives the cells of chunk `chunk` back to every member in `from`, after G
// synced behind every read of them: one thread per member stores the ack.
//
// A relaxed store, not a release: the ack only has to follow the reads of the
// cell, and every one of those reads has returned before the group sync
// (ll_wait_unit spins on the value it loaded), so the sender's next write to
// the cell cannot reach a read of this message. A system-scope release would
// add a fence of about 1 us to every LL call on 2xH200 (see sync.hpp).
template <group G, class Tr, class From>
PGAS_HD void ll_ack_all(const coll_call<Tr>& c, const ll_pairs& pairs, std::uint64_t chunk, From from) {
    G::sync();
    for_each_member<G>(c, from, [&](int i) {
        auto* ack = c.ctx.peer(coll_scratch::at<std::uint64_t>(coll_scratch::counter_offset(
                                   c.t.slot(), coll_scratch::counter::ack, c.channel, c.me)),
                               c.world_pe(i));
        store_relaxed(ack, pairs.received(c, i) + 1 + chunk);
    });
}

// Ends a call: after every thread of G is done, the pair counters advance by
// `sent` messages to each member in `to` and `received` from each in `from`
// (predicates over team indices), one thread per member.
template <group G, class Tr, class To, class From>
PGAS_HD void ll_commit(const coll_call<Tr>& c, const ll_pairs& pairs, std::uint64_t sent, To to, std::uint64_t received,
                       From from) {
    G::sync();
    for_each_member<G>(
        c, [](int) { return true; },
        [&](int i) {
            if (to(i)) *c.counter(coll_scratch::counter::sent, i) = pairs.sent(c, i) + sent;
            if (from(i)) *c.counter(coll_scratch::counter::recv, i) = pairs.received(c, i) + received;
        });
    G::sync();
}

// The exchange loop of the LL algorithm: chunk k+1 goes out before chunk k
// is consumed, so each chunk's one-way latency overlaps the previous chunk's
// work (ll_depth = 2 cells per pair allow exactly one chunk ahead). send(k)
// sends chunk k to every member in `to` (their credits taken here first),
// consume(k) reads chunk k of every member in `from`; the acks to those
// follow each consume.
template <group G, class Tr, class Send, class Consume, class To, class From>
PGAS_HD void ll_exchange(const coll_call<Tr>& c, const ll_pairs& pairs, std::uint64_t chunks, Send send,
                         Consume consume, To to, From from) {
    static_assert(coll_scratch::ll_depth >= 2, "ll_exchange sends one chunk ahead");
    ll_wait_credits<G>(c, pairs, 0, to);
    send(std::uint64_t{0});
    for (std::uint64_t k = 0; k < chunks; ++k) {
        if (k + 1 < chunks) {
            ll_wait_credits<G>(c, pairs, k + 1, to);
            send(k + 1);
        }
        consume(k);
        ll_ack_all<G>(c, pairs, k, from);
    }
}

// PGAS_CHECKS: every member sends its signature to every other and compares
// what it receives; the first difference is reported on every PE that sees it.
template <group G, class Tr>
PGAS_HD void ll_check_signature(const coll_call<Tr>& c, std::uint64_t mine) {
    const ll_pairs pairs(c);
    auto everyone = [](int) { return true; };
    ll_wait_credits<G>(c, pairs, 0, everyone);
    for (int i = 0; i < c.n; ++i)
        if (i != c.me) ll_send<G>(c, i, pairs.sent(c, i) + 1, reinterpret_cast<const unsigned char*>(&mine), 8);
    if (G::rank() == 0)  // one thread, in team order: the first difference is the one reported
        for (int i = 0; i < c.n; ++i)
            if (i != c.me) {
                const std::uint64_t theirs = ll_receive_unit(c, i, pairs.received(c, i) + 1, 0);
                if (theirs != mine) report_mismatch(c.name, c.ctx.my_pe(), mine, theirs, i);
            }
    ll_ack_all<G>(c, pairs, 0, everyone);
    ll_commit<G>(c, pairs, 1, everyone, 1, everyone);
}

}  // namespace detail
PGAS_NAMESPACE_END
