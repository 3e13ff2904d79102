// The remote atomics' behaviour, written once over the device API as bodies that host code and kernels both run:
// each transport's test binary registers these cases for its launchers with PGAS_TEST_ATOMIC_CASES
// (tests/common/support.hpp says what a launcher is).
#pragma once

#include "support.hpp"

#include <cstdint>
#include <type_traits>

namespace test::atomic_cases {

using integer_types = type_list<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
using word_types = type_list<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double>;

// A word value of PE pe, distinct for every PE and exact in every word type (floats hold 24 bits).
template <class T>
PGAS_HD T word_of(int pe) {
    if constexpr (std::is_integral_v<T>) return T(0x5a000000u + unsigned(pe));
    else return T((1u << 20) + unsigned(pe));
}

template <class T>
PGAS_HD T bit_of(int pe) {
    return T(T(1) << (pe % int(sizeof(T) * 8)));
}

// Every case body is a function object (a kernel can run it: the GPU launchers), generic over the context.

// Every PE hits PE 0's counter with fetch_add, add, inc, fetch_inc: no update is lost, and a PE's own earlier
// updates are in the value it fetches next.
template <class T>
struct contended_counting_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, pgas::symmetric_ptr<T> counter) const {
        constexpr int rounds = 50;
        const T total = T(6 * rounds * ctx.n_pes());
        for (int i = 0; i < rounds; ++i) {
            const T old = pgas::atomic_fetch_add(ctx, counter, T(2), 0);
            PGAS_TEST_REQUIRE(old < total);
            pgas::atomic_add(ctx, counter, T(1), 0);
            pgas::atomic_inc(ctx, counter, 0);
            PGAS_TEST_REQUIRE(pgas::atomic_fetch_inc(ctx, counter, 0) > old);  // my own 2+1+1 are in
            pgas::atomic_fetch_add(ctx, counter, T(1), 0);
        }
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0) PGAS_TEST_REQUIRE(pgas::atomic_fetch(ctx, counter, 0) == total);
        pgas::barrier_all(ctx);
    }
};
template <class T, class Launch>
void contended_counting(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) { return w.alloc<T>(1); }, contended_counting_body<T>{});
}

struct ticket_buffers {
    pgas::symmetric_ptr<std::uint64_t> next;
    pgas::symmetric_ptr<std::uint32_t> seen;
};

// fetch_inc on one word of the last PE hands every PE distinct tickets: each ticket is seen exactly once.
inline constexpr int tickets_per_pe = 64;
struct unique_tickets_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const ticket_buffers& b) const {
        for (int i = 0; i < tickets_per_pe; ++i) {
            const auto ticket = pgas::atomic_fetch_inc(ctx, b.next, ctx.n_pes() - 1);
            pgas::atomic_inc(ctx, b.seen + std::ptrdiff_t(ticket), 0);
        }
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0)
            for (int t = 0; t < tickets_per_pe * ctx.n_pes(); ++t) PGAS_TEST_REQUIRE(ctx.local(b.seen)[t] == 1u);
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void unique_tickets(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        return ticket_buffers{w.alloc<std::uint64_t>(1),
                              w.alloc<std::uint32_t>(std::size_t(tickets_per_pe * w.n_pes()))};
    }, unique_tickets_body{});
}

template <class T>
struct exchange_buffers {
    pgas::symmetric_ptr<T> ring;  // written by the left neighbour
    pgas::symmetric_ptr<T> cell;  // word q written by PE q
};

// set, fetch, swap and compare_swap (miss and hit), fetch_inc and inc, on a word only one PE writes.
template <class T>
struct exchange_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const exchange_buffers<T>& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        pgas::atomic_set(ctx, b.ring, word_of<T>(me), right);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, b.ring, right) == word_of<T>(me));
        PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, b.ring, me) == word_of<T>(left));
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK(pgas::atomic_swap(ctx, b.ring, T(-1), me) == word_of<T>(left));
        PGAS_TEST_CHECK(*ctx.local(b.ring) == T(-1));
        for (int pe = 0; pe < n; ++pe) {
            const T v = word_of<T>(me);
            auto mine = b.cell + me;
            PGAS_TEST_CHECK(pgas::atomic_swap(ctx, mine, v, pe) == T(0));
            PGAS_TEST_CHECK(pgas::atomic_compare_swap(ctx, mine, T(v + 1), T(7), pe) == v);  // miss: the word stays
            PGAS_TEST_CHECK(pgas::atomic_compare_swap(ctx, mine, v, T(v + 2), pe) == v);     // hit
            PGAS_TEST_CHECK(pgas::atomic_fetch_inc(ctx, mine, pe) == T(v + 2));
            pgas::atomic_inc(ctx, mine, pe);
            PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, mine, pe) == T(v + 4));
        }
        pgas::barrier_all(ctx);
        for (int pe = 0; pe < n; ++pe) PGAS_TEST_CHECK(ctx.local(b.cell)[pe] == T(word_of<T>(pe) + 4));
        pgas::barrier_all(ctx);
    }
};
template <class T, class Launch>
void set_fetch_swap_compare_swap(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        return exchange_buffers<T>{w.alloc<T>(1), w.alloc<T>(std::size_t(w.n_pes()))};
    }, exchange_body<T>{});
}

struct lock_buffers {
    pgas::symmetric_ptr<std::uint32_t> lock;
    pgas::symmetric_ptr<std::int32_t> inside;
};

// A spin lock built from compare_swap keeps its critical section (a g and a p) exclusive.
struct compare_swap_lock_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const lock_buffers& b) const {
        constexpr int entries = 20;
        const auto key = std::uint32_t(ctx.my_pe() + 1);
        for (int i = 0; i < entries; ++i) {
            while (pgas::atomic_compare_swap(ctx, b.lock, 0u, key, 0) != 0u) {
            }
            const int before = pgas::g(ctx, b.inside, 0);
            pgas::p(ctx, b.inside, before + 1, 0);
            pgas::quiet(ctx);
            PGAS_TEST_REQUIRE(pgas::atomic_compare_swap(ctx, b.lock, key, 0u, 0) == key);
        }
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0) PGAS_TEST_REQUIRE(*ctx.local(b.inside) == entries * ctx.n_pes());
        pgas::barrier_all(ctx);
        PGAS_TEST_REQUIRE(pgas::atomic_compare_swap(ctx, b.lock, 12345u, 7u, 0) == 0u);  // a miss returns the word
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void compare_swap_lock(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        return lock_buffers{w.alloc<std::uint32_t>(1), w.alloc<std::int32_t>(1)};
    }, compare_swap_lock_body{});
}

// Floating-point add (a compare-swap loop where the NIC has none) loses no update; swap returns the sum.
template <class T>
struct float_add_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, pgas::symmetric_ptr<T> sum) const {
        constexpr int adds = 40;
        const int target = 1 % ctx.n_pes();
        const T total = T(0.5 * adds * ctx.n_pes());
        for (int i = 0; i < adds; ++i) pgas::atomic_add(ctx, sum, T(0.5), target);
        pgas::atomic_fetch_add(ctx, sum + 1, T(0.25), 0);
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0) {
            PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, sum, target) == total);
            PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, sum + 1, 0) == T(0.25 * ctx.n_pes()));
        }
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK(pgas::atomic_swap(ctx, sum, T(1.5), ctx.my_pe()) == (ctx.my_pe() == target ? total : T(0)));
        pgas::barrier_all(ctx);
    }
};
template <class T, class Launch>
void float_add(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) { return w.alloc<T>(2); }, float_add_body<T>{});
}

// or, and, xor and their fetch forms: every PE on its own bit of words of PE 0 and PE n-1, then each PE through a
// sequence on its right neighbour's word.
template <class T>
struct bitwise_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, pgas::symmetric_ptr<T> bits) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const T mine = bit_of<T>(me);
        T all = 0;
        for (int pe = 0; pe < n; ++pe) all = T(all | bit_of<T>(pe));
        if (me == 0) *ctx.local(bits + 1) = T(~T(0));
        pgas::barrier_all(ctx);
        pgas::atomic_or(ctx, bits, mine, 0);           // sets my bit
        pgas::atomic_and(ctx, bits + 1, T(~mine), 0);  // clears my bit
        PGAS_TEST_CHECK((pgas::atomic_fetch_xor(ctx, bits + 2, mine, 0) & mine) == T(0));
        pgas::atomic_or(ctx, bits + 3, mine, n - 1);
        pgas::barrier_all(ctx);
        if (me == 0) {
            PGAS_TEST_CHECK(*ctx.local(bits) == all);
            PGAS_TEST_CHECK(*ctx.local(bits + 1) == T(~all));
            PGAS_TEST_CHECK(*ctx.local(bits + 2) == all);
            PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, bits + 3, n - 1) == all);
            PGAS_TEST_CHECK(pgas::atomic_fetch_or(ctx, bits, T(0), 0) == all);
            PGAS_TEST_CHECK(pgas::atomic_fetch_and(ctx, bits, T(1), 0) == all);
            PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, bits, 0) == T(1));
        }
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK((pgas::atomic_fetch_xor(ctx, bits + 3, mine, n - 1) & mine) == mine);  // clears my bit again
        pgas::barrier_all(ctx);
        if (me == 0) PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, bits + 3, n - 1) == T(0));
        pgas::barrier_all(ctx);
        pgas::atomic_set(ctx, bits + 3, T(~T(0)), n - 1);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK((pgas::atomic_fetch_and(ctx, bits + 3, T(~mine), n - 1) & mine) == mine);
        pgas::barrier_all(ctx);
        if (me == 0) PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, bits + 3, n - 1) == T(~all));
        // one PE per word: each on its right neighbour's
        const int right = (me + 1) % n;
        pgas::atomic_set(ctx, bits + 4, T(0b1100), right);
        PGAS_TEST_CHECK(pgas::atomic_fetch_and(ctx, bits + 4, T(0b0110), right) == T(0b1100));
        PGAS_TEST_CHECK(pgas::atomic_fetch_or(ctx, bits + 4, T(0b0001), right) == T(0b0100));
        PGAS_TEST_CHECK(pgas::atomic_fetch_xor(ctx, bits + 4, T(0b0111), right) == T(0b0101));
        pgas::atomic_xor(ctx, bits + 4, T(0b0011), right);
        pgas::quiet(ctx);
        PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, bits + 4, right) == T(0b0001));
        pgas::barrier_all(ctx);
    }
};
template <class T, class Launch>
void bitwise(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) { return w.alloc<T>(5); }, bitwise_body<T>{});
}

}  // namespace test::atomic_cases

// The cases, each registered once per launcher type given to PGAS_TEST_ATOMIC_CASES.
TEST_CASE_TEMPLATE_DEFINE("atomics: fetch_add, add, inc and fetch_inc under contention count every update", Launch,
                          atomic_counting) {
    test::for_each_element_type<test::atomic_cases::word_types>(
        [](auto tag) { test::atomic_cases::contended_counting<typename decltype(tag)::type>(Launch{}); });
}
TEST_CASE_TEMPLATE_DEFINE("atomics: fetch_inc hands out unique tickets", Launch, atomic_tickets) {
    test::atomic_cases::unique_tickets(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("atomics: set, fetch, swap and compare_swap on every word type", Launch, atomic_exchange) {
    test::for_each_element_type<test::atomic_cases::word_types>(
        [](auto tag) { test::atomic_cases::set_fetch_swap_compare_swap<typename decltype(tag)::type>(Launch{}); });
}
TEST_CASE_TEMPLATE_DEFINE("atomics: a compare_swap spin lock keeps its critical section exclusive", Launch,
                          atomic_lock) {
    test::atomic_cases::compare_swap_lock(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("atomics: floating-point add loses no update", Launch, atomic_float_add) {
    test::for_each_element_type<test::type_list<float, double>>(
        [](auto tag) { test::atomic_cases::float_add<typename decltype(tag)::type>(Launch{}); });
}
TEST_CASE_TEMPLATE_DEFINE("atomics: bitwise and, or, xor and their fetch forms", Launch, atomic_bitwise) {
    test::for_each_element_type<test::atomic_cases::integer_types>(
        [](auto tag) { test::atomic_cases::bitwise<typename decltype(tag)::type>(Launch{}); });
}

// Registers every atomic case for each launcher type (one test binary's translation unit does this once).
#define PGAS_TEST_ATOMIC_CASES(...)                                \
    TEST_CASE_TEMPLATE_INVOKE(atomic_counting, __VA_ARGS__);       \
    TEST_CASE_TEMPLATE_INVOKE(atomic_tickets, __VA_ARGS__);        \
    TEST_CASE_TEMPLATE_INVOKE(atomic_exchange, __VA_ARGS__);       \
    TEST_CASE_TEMPLATE_INVOKE(atomic_lock, __VA_ARGS__);           \
    TEST_CASE_TEMPLATE_INVOKE(atomic_float_add, __VA_ARGS__);      \
    TEST_CASE_TEMPLATE_INVOKE(atomic_bitwise, __VA_ARGS__)
