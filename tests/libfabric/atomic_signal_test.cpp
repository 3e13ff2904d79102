// Atomics of every op and type, signals, put_signal (data before signal) and barriers through the proxy.
#include "support.hpp"

#include <cstdint>
#include <vector>

namespace {

template <class T>
void check_atomics(const std::string& provider) {
    test::run(provider, 3, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
        auto word = w.alloc<T>(8);
        auto ctx = fabric.context();
        const int me = ctx.my_pe(), n = ctx.n_pes();
        // Everyone adds to PE 0's word 0: fetch_add returns distinct old values.
        T old = pgas::atomic_fetch_add(ctx, word, T(1), 0);
        CHECK(old >= T(0));
        CHECK(old < T(n));
        pgas::atomic_add(ctx, word + 1, T(2), 0);
        pgas::atomic_inc(ctx, word + 1, 0);
        pgas::barrier_all(ctx);
        if (me == 0) {
            CHECK(ctx.local(word)[0] == T(n));
            CHECK(ctx.local(word)[1] == T(3 * n));
        }
        pgas::barrier_all(ctx);
        const int target = (me + 1) % n;
        pgas::atomic_set(ctx, word + 2, T(40 + me), target);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        CHECK(pgas::atomic_fetch(ctx, word + 2, target) == T(40 + me));  // only this PE writes it
        CHECK(pgas::atomic_swap(ctx, word + 2, T(7), target) == T(40 + me));
        CHECK(pgas::atomic_compare_swap(ctx, word + 2, T(6), T(9), target) == T(7));  // fails: still 7
        CHECK(pgas::atomic_compare_swap(ctx, word + 2, T(7), T(9), target) == T(7));  // succeeds
        CHECK(pgas::atomic_fetch(ctx, word + 2, target) == T(9));
        if constexpr (std::is_integral_v<T>) {
            pgas::atomic_set(ctx, word + 3, T(0b1100), target);
            CHECK(pgas::atomic_fetch_and(ctx, word + 3, T(0b0110), target) == T(0b1100));
            CHECK(pgas::atomic_fetch_or(ctx, word + 3, T(0b0001), target) == T(0b0100));
            CHECK(pgas::atomic_fetch_xor(ctx, word + 3, T(0b0111), target) == T(0b0101));
            CHECK(pgas::atomic_fetch(ctx, word + 3, target) == T(0b0010));
        }
        pgas::barrier_all(ctx);
    });
}

}  // namespace

TEST_CASE_TEMPLATE("atomics: every op on every type", T, std::uint32_t, std::int64_t, std::uint64_t, std::int32_t,
                   float, double) {
    test::for_each_provider([](const std::string& p) { check_atomics<T>(p); });
}

TEST_CASE("put_signal: every byte of the data is visible once the signal is (delivery before signal)") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            constexpr std::size_t count = (std::size_t{3} << 20) / 8 + 5;  // several chunks
            auto data = w.alloc<std::uint64_t>(count);
            auto sig = w.alloc<std::uint64_t>(2);
            auto ctx = fabric.context();
            const int me = ctx.my_pe();
            std::vector<std::uint64_t> source(count);
            for (int round = 1; round <= 4; ++round) {
                if (me == 0) {
                    for (std::size_t i = 0; i < count; ++i) source[i] = test::mix(round, i, 7);
                    if (round % 2) pgas::put_signal(ctx, data, source.data(), count, sig, 1, pgas::signal_op::add, 1);
                    else {
                        pgas::put_signal_nbi(ctx, data, source.data(), count, sig, 1, pgas::signal_op::add, 1);
                        pgas::quiet(ctx);
                    }
                    pgas::signal_wait_until(ctx, sig + 1, pgas::cmp::eq, std::uint64_t(round));  // ack from PE 1
                } else {
                    pgas::signal_wait_until(ctx, sig, pgas::cmp::eq, std::uint64_t(round));
                    for (std::size_t i = 0; i < count; ++i) REQUIRE(ctx.local(data)[i] == test::mix(round, i, 7));
                    pgas::signal(ctx, sig + 1, std::uint64_t(round), pgas::signal_op::set, 0);
                }
            }
            // small put_signal: the data travels inline in the command
            if (me == 1) {
                std::uint64_t value = 0xabcdef;
                pgas::put_signal(ctx, data + 1, &value, 1, sig, 100, pgas::signal_op::set, 0);
            } else {
                pgas::signal_wait_until(ctx, sig, pgas::cmp::eq, std::uint64_t(100));
                CHECK(ctx.local(data)[1] == 0xabcdef);
            }
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE("signal set/add and fence ordering and barriers through signals") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 3, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto sig = w.alloc<std::uint64_t>(1);
            auto flag = w.alloc<std::uint64_t>(1);
            auto value = w.alloc<std::uint64_t>(1);
            auto ctx = fabric.context();
            const int me = ctx.my_pe(), n = ctx.n_pes();
            for (int pe = 0; pe < n; ++pe) pgas::signal(ctx, sig, std::uint64_t(me + 1), pgas::signal_op::add, pe);
            pgas::signal_wait_until(ctx, sig, pgas::cmp::eq, std::uint64_t(n * (n + 1) / 2));
            pgas::barrier_all(ctx);
            // fence: the value put before it is there when the flag put after it is
            const int right = (me + 1) % n;
            for (std::uint64_t round = 1; round <= 20; ++round) {
                pgas::p(ctx, value, round * 1000 + std::uint64_t(me), right);
                pgas::fence(ctx);
                pgas::p(ctx, flag, round, right);
                pgas::wait_until(ctx, flag, pgas::cmp::ge, round);
                CHECK(pgas::test(ctx, value, pgas::cmp::ge, round * 1000));
                pgas::barrier_all(ctx);
            }
            for (int i = 0; i < 50; ++i) pgas::barrier_all(ctx);
            auto row = w.split_strided(w.team_world(), 0, 2, 2);  // PEs 0 and 2
            if (me != 1) pgas::sync(ctx, row);
            pgas::barrier_all(ctx);
        });
    });
}
