// Registered windows' behaviour, written once over the device API as a body that host code and kernels both run:
// every op on a window (put, put_nbi, get, get_nbi, p, g, put_signal, put_signal_nbi, atomics) at element offsets
// into buffers the PEs allocated themselves, each landing in the target PE's own buffer and nowhere else. Each
// transport's test binary registers the case for its launchers with PGAS_TEST_WINDOW_CASES (tests/common/support.hpp
// says what a launcher is; a launcher releases what the case made with test::release_case_buffers).
#pragma once

#include "support.hpp"

#include <pgas/device/window.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace test::window_cases {

inline constexpr std::size_t elements = 64;
inline constexpr std::uint64_t untouched = 0x5555555555555555ull;

PGAS_HD inline std::uint64_t value_of(int pe, std::size_t i, int round) {
    return mix(std::uint64_t(pe), i, std::uint64_t(round));
}

// The window over every PE's own buffer, and heap buffers: the source of puts from registered memory, the target
// of gets into it, and put_signal's flag.
struct buffers {
    pgas::window<std::uint64_t> win;
    pgas::symmetric_ptr<std::uint64_t> staging, landing, sig;
};

// Collective: each local PE's buffer of `elements` words (test::private_buffers: the PE's GPU memory where the world
// has one, else host memory), registered as one window, and the heap buffers.
inline buffers make(pgas::world& w) {
    std::vector<std::uint64_t*> own;
    for (int i = 0; i < w.n_local_pes(); ++i) own.push_back(private_buffer<std::uint64_t>(w, i, elements));
    buffers b;
    b.win = w.n_local_pes() == 1 ? w.register_window(own.front(), elements) : w.register_window(own, elements);
    b.staging = w.alloc<std::uint64_t>(elements);
    b.landing = w.alloc<std::uint64_t>(elements);
    b.sig = w.alloc<std::uint64_t>(1);
    return b;
}

// The case's window goes back after the run (collective, as register_window).
inline void release_case_buffers(pgas::world& w, const buffers& b) { w.release_window(b.win); }

// The first word of `mine` that `written(i)` does not claim and that is no longer `untouched` (a stray write), or
// `elements` when there is none.
template <class Written>
PGAS_HD std::size_t first_stray(const std::uint64_t* mine, Written&& written) {
    return first_wrong(mine, elements, [&](std::size_t i) { return written(i) ? mine[i] : untouched; });
}

// Every op on the window, round by round, each PE checking its own buffer (window_local) after a barrier.
struct every_op {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const buffers& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        std::uint64_t* mine = pgas::window_local(ctx, b.win);
        std::uint64_t* staging = ctx.local(b.staging);
        const auto reset = [&](int round) {
            for (std::size_t i = 0; i < elements; ++i) mine[i] = round < 0 ? untouched : value_of(me, i, round);
            pgas::barrier_all(ctx);
        };

        // 1. put (blocking) of 10 elements from the heap at element 5, of 3 from private memory at element 20, and
        //    put_nbi of 9 from the heap at element 30: into the right neighbour's buffer at those offsets only.
        reset(-1);
        for (std::size_t i = 0; i < elements; ++i) staging[i] = value_of(me, i, 1);
        pgas::put(ctx, b.win + 5, staging, 10, right);
        const std::uint64_t small[3] = {value_of(me, 0, 2), value_of(me, 1, 2), value_of(me, 2, 2)};
        pgas::put(ctx, b.win + 20, small, 3, right);
        pgas::put_nbi(ctx, b.win + 30, staging + 10, 9, right);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        for (std::size_t i = 0; i < 10; ++i) PGAS_TEST_CHECK(mine[5 + i] == value_of(left, i, 1));
        for (std::size_t i = 0; i < 3; ++i) PGAS_TEST_CHECK(mine[20 + i] == value_of(left, i, 2));
        for (std::size_t i = 0; i < 9; ++i) PGAS_TEST_CHECK(mine[30 + i] == value_of(left, 10 + i, 1));
        PGAS_TEST_CHECK(first_stray(mine, [](std::size_t i) {
                            return (i >= 5 && i < 15) || (i >= 20 && i < 23) || (i >= 30 && i < 39);
                        }) == elements);
        pgas::barrier_all(ctx);

        // 2. get into private memory and into the heap, get_nbi, g: what the left neighbour's buffer holds there.
        reset(3);
        std::uint64_t got[7] = {};
        pgas::get(ctx, got, b.win + 40, 7, left);
        for (std::size_t i = 0; i < 7; ++i) PGAS_TEST_CHECK(got[i] == value_of(left, 40 + i, 3));
        std::uint64_t* landing = ctx.local(b.landing);
        pgas::get(ctx, landing, b.win + 1, 20, left);
        for (std::size_t i = 0; i < 20; ++i) PGAS_TEST_CHECK(landing[i] == value_of(left, 1 + i, 3));
        pgas::get_nbi(ctx, landing + 20, b.win + 50, 14, left);
        pgas::quiet(ctx);
        for (std::size_t i = 0; i < 14; ++i) PGAS_TEST_CHECK(landing[20 + i] == value_of(left, 50 + i, 3));
        PGAS_TEST_CHECK(pgas::g(ctx, b.win + 63, left) == value_of(left, 63, 3));
        PGAS_TEST_CHECK(pgas::g(ctx, b.win, left) == value_of(left, 0, 3));
        pgas::barrier_all(ctx);

        // 3. p, then put_signal from private memory and put_signal_nbi from the heap: the payload into the window,
        //    the flag in the heap; whoever sees the flag sees the data.
        *ctx.local(b.sig) = 0;
        reset(-1);
        pgas::p(ctx, b.win + 25, value_of(me, 25, 4), right);
        std::uint64_t payload[6];
        for (std::size_t i = 0; i < 6; ++i) payload[i] = value_of(me, i, 5);
        pgas::put_signal(ctx, b.win + 52, payload, 6, b.sig, 1, pgas::signal_op::add, right);
        pgas::signal_wait_until(ctx, b.sig, pgas::cmp::ge, std::uint64_t{1});
        for (std::size_t i = 0; i < 6; ++i) PGAS_TEST_CHECK(mine[52 + i] == value_of(left, i, 5));
        for (std::size_t i = 0; i < 4; ++i) staging[i] = value_of(me, i, 6);
        pgas::put_signal_nbi(ctx, b.win + 10, staging, 4, b.sig, 2, pgas::signal_op::add, right);
        pgas::signal_wait_until(ctx, b.sig, pgas::cmp::ge, std::uint64_t{3});
        for (std::size_t i = 0; i < 4; ++i) PGAS_TEST_CHECK(mine[10 + i] == value_of(left, i, 6));
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        PGAS_TEST_CHECK(mine[25] == value_of(left, 25, 4));
        PGAS_TEST_CHECK(first_stray(mine, [](std::size_t i) {
                            return i == 25 || (i >= 52 && i < 58) || (i >= 10 && i < 14);
                        }) == elements);
        pgas::barrier_all(ctx);

        // 4. Atomics on the last PE's element 60 from every PE: fetch_adds see distinct old values, adds land, a
        //    compare_swap with the wrong expected value changes nothing and one with the right value swaps.
        reset(-1);
        const int owner = n - 1;
        if (me == 0) pgas::atomic_set(ctx, b.win + 60, std::uint64_t{100}, owner);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        const std::uint64_t old = pgas::atomic_fetch_add(ctx, b.win + 60, std::uint64_t{1}, owner);
        PGAS_TEST_CHECK(old >= 100);
        PGAS_TEST_CHECK(old < 100 + std::uint64_t(n));
        pgas::barrier_all(ctx);  // every fetch_add saw only fetch_adds
        pgas::atomic_add(ctx, b.win + 60, std::uint64_t{10}, owner);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        const std::uint64_t sum = 100 + 11 * std::uint64_t(n);
        PGAS_TEST_CHECK(pgas::atomic_fetch(ctx, b.win + 60, owner) == sum);
        pgas::barrier_all(ctx);
        if (me == 0) {
            PGAS_TEST_CHECK(pgas::atomic_compare_swap(ctx, b.win + 60, std::uint64_t{1}, std::uint64_t{7}, owner) == sum);
            PGAS_TEST_CHECK(pgas::atomic_compare_swap(ctx, b.win + 60, sum, std::uint64_t{7}, owner) == sum);
        }
        pgas::barrier_all(ctx);
        if (me == owner) {
            PGAS_TEST_CHECK(mine[60] == 7);
            PGAS_TEST_CHECK(first_stray(mine, [](std::size_t i) { return i == 60; }) == elements);
        } else {
            PGAS_TEST_CHECK(first_stray(mine, [](std::size_t) { return false; }) == elements);
        }
        pgas::barrier_all(ctx);
    }
};

// Every op on a window, on each of the launcher's worlds.
template <launcher L>
void every_op_case(const L& launch) {
    on_each_world(launch, make, every_op{});
}

}  // namespace test::window_cases

TEST_CASE_TEMPLATE_DEFINE("windows: every op at element offsets lands in the target PE's own buffer only", Launch,
                          window_every_op) {
    test::window_cases::every_op_case(Launch{});
}

// Registers the window case for each launcher type (one test binary's translation unit does this once).
#define PGAS_TEST_WINDOW_CASES(...) TEST_CASE_TEMPLATE_INVOKE(window_every_op, __VA_ARGS__)
