// Host transport: every remote atomic, checked under contention from all PEs.
#include "support.hpp"

#include <cstdint>

TEST_CASE_TEMPLATE("fetch_add/add/inc under contention count every update", T, std::int32_t, std::uint32_t,
                   std::int64_t, std::uint64_t) {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto counter = w.alloc<T>(1);
        constexpr int rounds = 50;
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe();
            for (int i = 0; i < rounds; ++i) {
                const T old = pgas::atomic_fetch_add(ctx, counter, T(2), 0);
                REQUIRE(old < T(6 * rounds * ctx.n_pes()));
                pgas::atomic_add(ctx, counter, T(1), 0);
                pgas::atomic_inc(ctx, counter, 0);
                REQUIRE(pgas::atomic_fetch_inc(ctx, counter, 0) > old);  // my own 2+1+1 are in
                pgas::atomic_fetch_add(ctx, counter, T(1), 0);
            }
            pgas::barrier_all(ctx);
            if (me == 0) REQUIRE(pgas::atomic_fetch(ctx, counter, 0) == T(6 * rounds * ctx.n_pes()));
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE("fetch_inc hands out unique tickets") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto next = w.alloc<std::uint64_t>(1);
        auto seen = w.alloc<std::uint32_t>(64 * 8);
        w.launch_host([&](const test::ctx& ctx) {
            for (int i = 0; i < 64; ++i) {
                const auto ticket = pgas::atomic_fetch_inc(ctx, next, ctx.n_pes() - 1);
                pgas::atomic_inc(ctx, pgas::symmetric_cast<std::uint32_t>(seen) + std::ptrdiff_t(ticket), 0);
            }
            pgas::barrier_all(ctx);
            if (ctx.my_pe() == 0)
                for (int t = 0; t < 64 * ctx.n_pes(); ++t) REQUIRE(ctx.local(seen)[t] == 1u);
        });
    });
}

TEST_CASE("set, fetch, swap and compare_swap") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto word = w.alloc<std::int64_t>(1);
        auto lock = w.alloc<std::uint32_t>(1);
        auto inside = w.alloc<std::int32_t>(1);
        auto fp = w.alloc<double>(2);
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            const int right = (me + 1) % n;
            pgas::atomic_set(ctx, word, std::int64_t(me) * 11, right);
            pgas::barrier_all(ctx);
            REQUIRE(pgas::atomic_fetch(ctx, word, me) == std::int64_t((me + n - 1) % n) * 11);
            pgas::barrier_all(ctx);
            REQUIRE(pgas::atomic_swap(ctx, word, std::int64_t(-1), me) == std::int64_t((me + n - 1) % n) * 11);
            REQUIRE(*ctx.local(word) == -1);
            // a spin lock built from compare_swap keeps the critical section exclusive
            for (int i = 0; i < 20; ++i) {
                while (pgas::atomic_compare_swap(ctx, lock, 0u, std::uint32_t(me + 1), 0) != 0u) {
                }
                const int before = pgas::g(ctx, inside, 0);
                pgas::p(ctx, inside, before + 1, 0);
                pgas::quiet(ctx);
                REQUIRE(pgas::atomic_compare_swap(ctx, lock, std::uint32_t(me + 1), 0u, 0) == std::uint32_t(me + 1));
            }
            pgas::barrier_all(ctx);
            if (me == 0) REQUIRE(*ctx.local(inside) == 20 * n);
            // a failed compare_swap leaves the word and returns it
            pgas::barrier_all(ctx);
            REQUIRE(pgas::atomic_compare_swap(ctx, lock, 12345u, 7u, 0) == 0u);
            // floating point: set/fetch/swap and add
            pgas::atomic_add(ctx, fp, 0.5, 0);
            pgas::barrier_all(ctx);
            if (me == 0) {
                REQUIRE(pgas::atomic_fetch(ctx, fp, 0) == 0.5 * n);
                REQUIRE(pgas::atomic_swap(ctx, fp + 1, 2.5, 0) == 0.0);
                REQUIRE(pgas::atomic_fetch(ctx, fp + 1, 0) == 2.5);
            }
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE_TEMPLATE("bitwise and/or/xor and their fetch forms", T, std::uint32_t, std::int64_t) {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto bits = w.alloc<T>(3);
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            if (me == 0) {
                *ctx.local(bits + 1) = T(-1);  // and-target: all ones
                *ctx.local(bits + 2) = T(0);
            }
            pgas::barrier_all(ctx);
            pgas::atomic_or(ctx, bits, T(T(1) << me), 0);                 // sets bit me
            pgas::atomic_and(ctx, bits + 1, T(~(T(1) << me)), 0);         // clears bit me
            const T before = pgas::atomic_fetch_xor(ctx, bits + 2, T(T(1) << me), 0);
            REQUIRE((before & T(T(1) << me)) == T(0));
            pgas::barrier_all(ctx);
            if (me == 0) {
                const T all = T((T(1) << n) - 1);
                REQUIRE(*ctx.local(bits) == all);
                REQUIRE(*ctx.local(bits + 1) == T(T(-1) & ~all));
                REQUIRE(*ctx.local(bits + 2) == all);
                REQUIRE(pgas::atomic_fetch_or(ctx, bits, T(0), 0) == all);
                REQUIRE(pgas::atomic_fetch_and(ctx, bits, T(1), 0) == all);
                REQUIRE(pgas::atomic_fetch(ctx, bits, 0) == T(1));
            }
            pgas::barrier_all(ctx);
        });
    });
}
