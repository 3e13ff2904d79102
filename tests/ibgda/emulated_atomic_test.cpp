// IBGDA over the emulated NIC: every remote atomic (standard and masked WQEs) and signal through the device API.
#include "support.hpp"

#include <cstdint>
#include <type_traits>

namespace {

template <class T>
void check_integer_atomics(int n_pes) {
    auto w = pgas::world::init_local(n_pes, test::options());
    auto counter = w.alloc<T>(1);
    auto bits = w.alloc<T>(1);
    auto cell = w.alloc<T>(n_pes);
    pgas::ibgda_domain ib(w, test::emulated());
    test::launch(w, ib, [&](const test::ib_ctx& ctx) {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        // fetch_add from every PE into PE 0: the returned olds are distinct
        constexpr int adds = 50;
        for (int i = 0; i < adds; ++i) pgas::atomic_add(ctx, counter, T(1), 0);
        T seen = pgas::atomic_fetch_add(ctx, counter, T(0), 0);
        CHECK(seen >= T(adds));
        // or/and/xor on disjoint bits of PE (n-1)'s word
        const T mine = T(T(1) << (me % (sizeof(T) * 8)));
        pgas::atomic_or(ctx, bits, mine, n - 1);
        pgas::barrier_all(ctx);
        if (me == 0) {
            T all = 0;
            for (int pe = 0; pe < n; ++pe) all = T(all | T(T(1) << (pe % (sizeof(T) * 8))));
            CHECK(pgas::atomic_fetch(ctx, bits, n - 1) == all);
            CHECK(pgas::atomic_fetch(ctx, counter, 0) == T(adds * n));
        }
        pgas::barrier_all(ctx);
        const T before_xor = pgas::atomic_fetch_xor(ctx, bits, mine, n - 1);
        CHECK((before_xor & mine) == mine);
        pgas::barrier_all(ctx);
        if (me == 0) CHECK(pgas::atomic_fetch(ctx, bits, n - 1) == T(0));
        pgas::barrier_all(ctx);
        pgas::atomic_set(ctx, bits, T(~T(0)), n - 1);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        const T before_and = pgas::atomic_fetch_and(ctx, bits, T(~mine), n - 1);
        CHECK((before_and & mine) == mine);
        pgas::barrier_all(ctx);
        if (me == 0) {
            T cleared = T(~T(0));
            for (int pe = 0; pe < n; ++pe) cleared = T(cleared & T(~T(T(1) << (pe % (sizeof(T) * 8)))));
            CHECK(pgas::atomic_fetch(ctx, bits, n - 1) == cleared);
        }
        // swap, compare_swap (miss and hit), inc on my cell of every PE
        for (int pe = 0; pe < n; ++pe) {
            const T v = T(0x5a000000u + me);
            CHECK(pgas::atomic_swap(ctx, cell + me, v, pe) == T(0));
            CHECK(pgas::atomic_compare_swap(ctx, cell + me, T(v + 1), T(7), pe) == v);  // miss
            CHECK(pgas::atomic_compare_swap(ctx, cell + me, v, T(v + 2), pe) == v);     // hit
            CHECK(pgas::atomic_fetch_inc(ctx, cell + me, pe) == T(v + 2));
            pgas::atomic_inc(ctx, cell + me, pe);
            CHECK(pgas::atomic_fetch(ctx, cell + me, pe) == T(v + 4));
        }
        pgas::barrier_all(ctx);
        for (int pe = 0; pe < n; ++pe) CHECK(ctx.local(cell)[pe] == T(0x5a000000u + pe + 4));
        pgas::barrier_all(ctx);
    });
    CHECK(ib.emulated_nic().first_violation() == "");
}

}  // namespace

TEST_CASE_TEMPLATE("ibgda integer atomics (standard and masked WQEs) through the emulated NIC", T, std::int32_t,
                   std::uint32_t, std::int64_t, std::uint64_t) {
    for (int n : {1, 2, 3}) {
        CAPTURE(n);
        check_integer_atomics<T>(n);
    }
}

TEST_CASE_TEMPLATE("ibgda floating-point atomic add is a compare-swap loop that loses no update", T, float, double) {
    auto w = pgas::world::init_local(3, test::options());
    auto sum = w.alloc<T>(1);
    pgas::ibgda_domain ib(w, test::emulated());
    test::launch(w, ib, [&](const test::ib_ctx& ctx) {
        for (int i = 0; i < 40; ++i) pgas::atomic_add(ctx, sum, T(0.5), 1);
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0) CHECK(pgas::atomic_fetch(ctx, sum, 1) == T(60));
        pgas::barrier_all(ctx);
        CHECK(pgas::atomic_swap(ctx, sum + 0, T(1.5), ctx.my_pe()) == (ctx.my_pe() == 1 ? T(60) : T(0)));
        pgas::barrier_all(ctx);
    });
}

TEST_CASE("ibgda signals: put_signal data is visible when the signal is, set and add") {
    for (int n_pes : {1, 2, 4}) {
        CAPTURE(n_pes);
        auto w = pgas::world::init_local(n_pes, test::options());
        constexpr std::size_t count = 300;
        auto data = w.alloc<std::uint64_t>(count * std::size_t(n_pes));
        auto flags = w.alloc<std::uint64_t>(std::size_t(n_pes));
        auto tally = w.alloc<std::uint64_t>(1);
        pgas::ibgda_domain ib(w, test::emulated());
        test::launch(w, ib, [&](const test::ib_ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            const int right = (me + 1) % n, left = (me + n - 1) % n;
            for (std::uint64_t round = 1; round <= 5; ++round) {
                std::uint64_t source[count];
                for (std::size_t i = 0; i < count; ++i) source[i] = test::mix(std::uint64_t(me), i, round);
                if (round % 2)
                    pgas::put_signal(ctx, data + std::size_t(me) * count, source, count, flags + me, round,
                                     pgas::signal_op::set, right);
                else
                    pgas::put_signal_nbi(ctx, data + std::size_t(me) * count, source, count, flags + me, 1,
                                         pgas::signal_op::add, right);
                pgas::signal_wait_until(ctx, flags + left, pgas::cmp::ge, round);
                for (std::size_t i = 0; i < count; ++i)
                    REQUIRE(ctx.local(data)[std::size_t(left) * count + i] == test::mix(std::uint64_t(left), i, round));
                pgas::quiet(ctx);
                pgas::barrier_all(ctx);
            }
            pgas::signal(ctx, tally, 3, pgas::signal_op::add, 0);
            pgas::barrier_all(ctx);
            if (me == 0) CHECK(pgas::signal_fetch(ctx, tally) == std::uint64_t(3 * n));
            pgas::barrier_all(ctx);
        });
        CHECK(ib.emulated_nic().first_violation() == "");
    }
}
