// The signals' behaviour, written once over the device API as bodies that host code and kernels both run:
// put_signal's data before its signal, signal set and add, fence ordering, the waits and tests that read signals
// and flags, barriers and team syncs; each transport's test binary registers these cases for its launchers with
// PGAS_TEST_SIGNAL_CASES (tests/common/support.hpp says what a launcher is).
#pragma once

#include "support.hpp"

#include <cstddef>
#include <cstdint>

namespace test::signal_cases {

struct ring_buffers {
    pgas::symmetric_ptr<std::uint64_t> data, by_set, by_add, ack, tally;
};

// Each PE put_signals a block to its right neighbour, round after round and for every group, alternating a
// blocking put_signal that sets the signal to the round and a put_signal_nbi that adds 2 to another: the block of
// the round is there when the signal is. The reader acks each round and the writer waits for it, so a round's
// block overwrites the last one while nothing else keeps them apart. Then every PE adds to one signal of PE 0.
inline constexpr std::size_t ring_count = 1000;
struct put_signal_ring_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const ring_buffers& b) const {
        constexpr int rounds = 10;  // per group
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        const scratch<std::uint64_t> source(ring_count);
        std::uint64_t round = 0;
        for_each_body_group(body_groups{}, [&](auto tag) {
            using G = typename decltype(tag)::type;
            PGAS_TEST_INFO("group " << std::string(group_name<G>()));
            for (int i = 0; i < rounds; ++i) {
                ++round;
                for (std::size_t k = 0; k < ring_count; ++k) source[k] = mix(std::uint64_t(me), k, round);
                if (round % 2) {
                    pgas::put_signal<G>(ctx, b.data, source.data(), ring_count, b.by_set, round,
                                        pgas::signal_op::set, right);
                    PGAS_TEST_REQUIRE(pgas::signal_wait_until(ctx, b.by_set, pgas::cmp::ge, round) == round);
                } else {
                    pgas::put_signal_nbi<G>(ctx, b.data, source.data(), ring_count, b.by_add, 2,
                                            pgas::signal_op::add, right);
                    PGAS_TEST_REQUIRE(pgas::signal_wait_until(ctx, b.by_add, pgas::cmp::eq, round) == round);
                }
                PGAS_TEST_REQUIRE(first_wrong(ctx.local(b.data), ring_count, [&](std::size_t k) {
                                      return mix(std::uint64_t(left), k, round);
                                  }) == ring_count);
                pgas::quiet<G>(ctx);  // the _nbi source is reusable
                pgas::signal(ctx, b.ack, 1, pgas::signal_op::add, left);
                pgas::signal_wait_until(ctx, b.ack, pgas::cmp::ge, round);
            }
        });
        PGAS_TEST_REQUIRE(pgas::signal_fetch(ctx, b.ack) == round);
        pgas::barrier_all(ctx);
        pgas::signal(ctx, b.tally, 3, pgas::signal_op::add, 0);
        pgas::barrier_all(ctx);
        if (me == 0) PGAS_TEST_CHECK(pgas::signal_fetch(ctx, b.tally) == std::uint64_t(3 * n));
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void put_signal_ring(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        return ring_buffers{w.alloc<std::uint64_t>(ring_count), w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1),
                            w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1)};
    }, put_signal_ring_body{});
}

struct large_buffers {
    pgas::symmetric_ptr<std::uint64_t> data, sig;
};

// PE 0 put_signals megabytes to PE 1 (several chunks where the transport splits), then PE 1 one word back (inline
// where the transport has an inline form): every byte is there once the signal is. Other PEs only watch.
inline constexpr std::size_t large_count = (std::size_t{3} << 20) / 8 + 5;
struct put_signal_large_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const large_buffers& b) const {
        const int me = ctx.my_pe();
        if (ctx.n_pes() < 2 || me > 1) {
            pgas::barrier_all(ctx);
            return;
        }
        const scratch<std::uint64_t> source(me == 0 ? large_count : 1);
        for (int round = 1; round <= 4; ++round) {
            if (me == 0) {
                for (std::size_t i = 0; i < large_count; ++i) source[i] = mix(round, i, 7);
                if (round % 2) {
                    pgas::put_signal(ctx, b.data, source.data(), large_count, b.sig, 1, pgas::signal_op::add, 1);
                } else {
                    pgas::put_signal_nbi(ctx, b.data, source.data(), large_count, b.sig, 1, pgas::signal_op::add, 1);
                    pgas::quiet(ctx);
                }
                pgas::signal_wait_until(ctx, b.sig + 1, pgas::cmp::eq, std::uint64_t(round));  // ack from PE 1
            } else {
                pgas::signal_wait_until(ctx, b.sig, pgas::cmp::eq, std::uint64_t(round));
                PGAS_TEST_REQUIRE(first_wrong(ctx.local(b.data), large_count,
                                              [&](std::size_t i) { return mix(round, i, 7); }) == large_count);
                pgas::signal(ctx, b.sig + 1, std::uint64_t(round), pgas::signal_op::set, 0);
            }
        }
        if (me == 1) {
            source[0] = 0xabcdef;
            pgas::put_signal(ctx, b.data + 1, source.data(), 1, b.sig, 100, pgas::signal_op::set, 0);
        } else {
            pgas::signal_wait_until(ctx, b.sig, pgas::cmp::eq, std::uint64_t(100));
            PGAS_TEST_CHECK(ctx.local(b.data)[1] == 0xabcdef);
        }
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void put_signal_large(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        return large_buffers{w.alloc<std::uint64_t>(large_count), w.alloc<std::uint64_t>(2)};
    }, put_signal_large_body{});
}

struct ordering_buffers {
    pgas::symmetric_ptr<std::uint64_t> sig, flag, value;
    pgas::team even;  // PEs 0, 2, 4, ...
};

// Signal adds from every PE to every PE sum up; a value put before a fence is there when the flag put after it
// is; barriers back to back and a sync of a strided team that not every PE is in.
struct fence_and_barriers_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const ordering_buffers& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        for (int pe = 0; pe < n; ++pe) pgas::signal(ctx, b.sig, std::uint64_t(me + 1), pgas::signal_op::add, pe);
        pgas::signal_wait_until(ctx, b.sig, pgas::cmp::eq, std::uint64_t(n * (n + 1) / 2));
        pgas::barrier_all(ctx);
        const int right = (me + 1) % n;
        const int left = (me + n - 1) % n;
        for (std::uint64_t round = 1; round <= 50; ++round) {
            pgas::p(ctx, b.value, round * 1000 + std::uint64_t(me), right);
            pgas::fence(ctx);
            pgas::p(ctx, b.flag, round, right);
            pgas::wait_until(ctx, b.flag, pgas::cmp::ge, round);
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.value, me) == round * 1000 + std::uint64_t(left));
            pgas::barrier_all(ctx);  // keeps the rounds apart
        }
        for (int i = 0; i < 50; ++i) pgas::barrier_all(ctx);
        if (me % 2 == 0) pgas::sync(ctx, b.even);
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void fence_and_barriers(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        const int n = w.n_pes();
        return ordering_buffers{w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1),
                                w.split_strided(w.team_world(), 0, 2, (n + 1) / 2)};
    }, fence_and_barriers_body{});
}

struct wait_buffers {
    pgas::symmetric_ptr<std::int32_t> flag;
    pgas::symmetric_ptr<double> big;
};

// wait_until and test for every comparison, on an integer and a floating-point word.
struct wait_and_test_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const wait_buffers& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int left = (me + n - 1) % n, right = (me + 1) % n;
        PGAS_TEST_REQUIRE(pgas::test(ctx, b.flag, pgas::cmp::eq, 0));
        PGAS_TEST_REQUIRE(!pgas::test(ctx, b.flag, pgas::cmp::ne, 0));
        pgas::barrier_all(ctx);
        pgas::p(ctx, b.flag, 5, right);
        PGAS_TEST_REQUIRE(pgas::wait_until(ctx, b.flag, pgas::cmp::eq, 5) == 5);
        PGAS_TEST_REQUIRE(pgas::test(ctx, b.flag, pgas::cmp::ge, 5));
        PGAS_TEST_REQUIRE(pgas::test(ctx, b.flag, pgas::cmp::gt, 4));
        PGAS_TEST_REQUIRE(pgas::test(ctx, b.flag, pgas::cmp::le, 5));
        PGAS_TEST_REQUIRE(pgas::test(ctx, b.flag, pgas::cmp::lt, 6));
        PGAS_TEST_REQUIRE(!pgas::test(ctx, b.flag, pgas::cmp::lt, 5));
        pgas::barrier_all(ctx);
        pgas::p(ctx, b.flag, -3, left);
        PGAS_TEST_REQUIRE(pgas::wait_until(ctx, b.flag, pgas::cmp::lt, 0) == -3);
        PGAS_TEST_REQUIRE(pgas::wait_until(ctx, b.flag, pgas::cmp::ne, 5) == -3);
        PGAS_TEST_REQUIRE(pgas::wait_until(ctx, b.flag, pgas::cmp::le, -3) == -3);
        pgas::p(ctx, b.big, 1.5 * me, right);
        PGAS_TEST_REQUIRE(pgas::wait_until(ctx, b.big, pgas::cmp::ge, 1.5 * left) == 1.5 * left);
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void wait_and_test(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) { return wait_buffers{w.alloc<std::int32_t>(1), w.alloc<double>(1)}; },
                  wait_and_test_body{});
}

// wait_until_all/any/some and test_all/any/some over one word per PE (slot i written by PE i), with and without a
// status mask: PE 0 writes first, so "any" sees exactly slot 0; masked slots are ignored.
struct array_waits_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, pgas::symmetric_ptr<std::uint64_t> slots) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const auto count = std::size_t(n);
        const scratch<int> status(count);
        const scratch<std::size_t> indices(count);
        PGAS_TEST_REQUIRE(pgas::test_any(ctx, slots, count, nullptr, pgas::cmp::eq, 1) == count);
        pgas::barrier_all(ctx);
        if (me == 0)
            for (int pe = 0; pe < n; ++pe) pgas::p(ctx, slots, std::uint64_t(1), pe);
        PGAS_TEST_REQUIRE(pgas::wait_until_any(ctx, slots, count, nullptr, pgas::cmp::eq, 1) == 0u);
        PGAS_TEST_REQUIRE(pgas::wait_until_some(ctx, slots, count, indices.data(), nullptr, pgas::cmp::eq, 1) == 1u);
        PGAS_TEST_REQUIRE(indices[0] == 0u);
        pgas::barrier_all(ctx);
        for (int pe = 0; pe < n; ++pe)
            if (me != 0) pgas::p(ctx, slots + me, std::uint64_t(1), pe);
        pgas::wait_until_all(ctx, slots, count, nullptr, pgas::cmp::eq, 1);
        PGAS_TEST_REQUIRE(pgas::test_all(ctx, slots, count, nullptr, pgas::cmp::eq, 1));
        PGAS_TEST_REQUIRE(pgas::test_some(ctx, slots, count, indices.data(), nullptr, pgas::cmp::eq, 1) == count);
        // a fully masked any/some returns at once, a fully masked all too
        for (std::size_t i = 0; i < count; ++i) status[i] = 1;
        PGAS_TEST_REQUIRE(pgas::wait_until_any(ctx, slots, count, status.data(), pgas::cmp::eq, 99) == count);
        PGAS_TEST_REQUIRE(pgas::wait_until_some(ctx, slots, count, indices.data(), status.data(), pgas::cmp::eq, 99) ==
                          0u);
        pgas::wait_until_all(ctx, slots, count, status.data(), pgas::cmp::eq, 99);
        status[count - 1] = 0;
        PGAS_TEST_REQUIRE(pgas::test_any(ctx, slots, count, status.data(), pgas::cmp::eq, 1) == count - 1);
        PGAS_TEST_REQUIRE(!pgas::test_all(ctx, slots, count, status.data(), pgas::cmp::eq, 2));
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void array_waits(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) { return w.alloc<std::uint64_t>(std::size_t(w.n_pes())); },
                  array_waits_body{});
}

struct team_buffers {
    pgas::symmetric_ptr<std::uint64_t> arrivals;
    pgas::team odd;   // PEs 1, 3, 5, ... (the world where there is one PE)
    pgas::team even;  // PEs 0, 2, 4, ...
};

// barrier_all keeps rounds apart (PE 0 sees every PE's add of the round), sync_all, and barriers and syncs of
// strided sub-teams by every calling group, many times. (Membership from the PE number: a launcher whose PEs share
// one world hands every PE the same team values.)
struct team_syncs_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const team_buffers& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const bool in_odd = n == 1 || (me % 2 == 1 && me / 2 < n / 2);
        for (std::uint64_t round = 1; round <= 30; ++round) {
            pgas::atomic_add(ctx, b.arrivals, std::uint64_t(1), 0);
            pgas::barrier_all(ctx);
            if (me == 0) PGAS_TEST_REQUIRE(pgas::atomic_fetch(ctx, b.arrivals, 0) == round * std::uint64_t(n));
            pgas::sync_all(ctx);
            for_each_body_group(body_groups{}, [&](auto tag) {
                using G = typename decltype(tag)::type;
                PGAS_TEST_INFO("group " << std::string(group_name<G>()));
                if (in_odd) pgas::barrier<G>(ctx, b.odd);
                if (me % 2 == 0) pgas::sync<G>(ctx, b.even);
            });
        }
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void team_syncs(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        const pgas::team all = w.team_world();
        const int n = w.n_pes();
        return team_buffers{w.alloc<std::uint64_t>(1), n >= 2 ? w.split_strided(all, 1, 2, n / 2) : all,
                            w.split_strided(all, 0, 2, (n + 1) / 2)};
    }, team_syncs_body{});
}

}  // namespace test::signal_cases

// The cases, each registered once per launcher type given to PGAS_TEST_SIGNAL_CASES.
TEST_CASE_TEMPLATE_DEFINE("signals: put_signal and put_signal_nbi of every group - the data is visible when the "
                          "signal is, by set and by add", Launch, signal_ring) {
    test::signal_cases::put_signal_ring(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("signals: every byte of a large put_signal is visible once the signal is", Launch,
                          signal_large) {
    test::signal_cases::put_signal_large(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("signals: adds from every PE, fence ordering, barriers and a strided team's sync", Launch,
                          signal_ordering) {
    test::signal_cases::fence_and_barriers(Launch{});
}

TEST_CASE_TEMPLATE_DEFINE("waits: wait_until and test for every comparison", Launch, wait_compare) {
    test::signal_cases::wait_and_test(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("waits: wait_until_all/any/some and test_all/any/some honour the status mask", Launch,
                          wait_arrays) {
    test::signal_cases::array_waits(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("syncs: barrier_all, sync_all and every group's barrier and sync of strided teams",
                          Launch, team_syncs) {
    test::signal_cases::team_syncs(Launch{});
}

// Registers every signal case for each launcher type (one test binary's translation unit does this once).
#define PGAS_TEST_SIGNAL_CASES(...)                          \
    TEST_CASE_TEMPLATE_INVOKE(signal_ring, __VA_ARGS__);     \
    TEST_CASE_TEMPLATE_INVOKE(signal_large, __VA_ARGS__);    \
    TEST_CASE_TEMPLATE_INVOKE(signal_ordering, __VA_ARGS__); \
    TEST_CASE_TEMPLATE_INVOKE(wait_compare, __VA_ARGS__);    \
    TEST_CASE_TEMPLATE_INVOKE(wait_arrays, __VA_ARGS__);     \
    TEST_CASE_TEMPLATE_INVOKE(team_syncs, __VA_ARGS__)
