// The host side of a world: collective alloc/free (and alloc at an alignment), SPMD threads, and every bad input with
// a clear error.
#include "support.hpp"
#include "../wait_timeout_format.hpp"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <cstdint>
#include <optional>
#include <string>

using doctest::Contains;

TEST_CASE("alloc returns the same zeroed, aligned block on every PE - free makes it reusable") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        const auto free_at_start = w.heap_free_bytes();
        auto a = w.alloc<char>(3);
        auto b = w.alloc<double>(1000);
        CHECK(a.offset() % 256 == 0);
        CHECK(b.offset() % 256 == 0);
        CHECK(b.offset() >= a.offset() + 256);
        for (int pe = 0; pe < n_pes; ++pe)
            for (int i = 0; i < 1000; ++i) REQUIRE(w.local(b, pe)[i] == 0.0);
        w.local(b, 0)[0] = 42.0;
        w.free(b);
        auto c = w.alloc<double>(1000);
        CHECK(c == b);                      // reuse after free
        CHECK(w.local(c, 0)[0] == 0.0);     // and zeroed again
        w.free(c);
        w.free(a);
        CHECK(w.heap_free_bytes() == free_at_start);  // coalesced back
    });
}

TEST_CASE("alloc(count, alignment): the offset and every PE's address are multiples of it, zero-filled") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto pad = w.alloc<char>(3);  // the next block would sit at 256 without the alignment
        for (std::uint64_t alignment : {std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{65536},
                                        std::uint64_t{2} << 20}) {
            CAPTURE(alignment);
            auto p = w.alloc<double>(100, alignment);
            CHECK(p.offset() % alignment == 0);
            for (int pe = 0; pe < n_pes; ++pe) {
                CHECK(reinterpret_cast<std::uintptr_t>(w.local(p, pe)) % alignment == 0);
                for (int i = 0; i < 100; ++i) REQUIRE(w.local(p, pe)[i] == 0.0);
            }
            w.launch_host([&](const test::ctx& ctx) {
                for (int q = 0; q < ctx.n_pes(); ++q)
                    CHECK(reinterpret_cast<std::uintptr_t>(ctx.peer(p, q)) % alignment == 0);
            });
            w.free(p);
        }
        w.free(pad);
    });
}

TEST_CASE("bad input: alloc(count, alignment) with an alignment that is no power of two, too small or too large") {
    auto w = pgas::world::init_local(2, test::options());
    for (long long alignment : {0LL, -8LL, 24LL, 4LL, 4LL << 20}) {
        CAPTURE(alignment);
        const std::string text =
            test::error_of([&] { (void)w.alloc<double>(4, alignment); }, pgas::errc::invalid_argument);
        CHECK_MESSAGE(test::contains(text, "alloc(count, alignment)"), text);
        CHECK_MESSAGE(test::contains(text, "got " + std::to_string(alignment)), text);
        CHECK_MESSAGE(test::contains(text, "alignof(T) = 8"), text);
    }
}

TEST_CASE("bad input: alloc alignments that differ between PEs are found on every PE") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(3, [&](pgas::world& w) {
        const std::string text = test::error_of([&] { (void)w.alloc<int>(10, w.my_pe() == 2 ? 4096 : 512); },
                                                pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(text, "alloc(count, alignment) on PE " + std::to_string(w.my_pe())), text);
        CHECK_MESSAGE(test::contains(text, "alignment = "), text);
        if (text != "no error") ++errors;
    }, test::options());
    CHECK(errors == 3);
    errors = 0;
    pgas::world::run_threads(2, [&](pgas::world& w) {  // the default alignment on one PE, an explicit one on the other
        const std::string text =
            test::error_of([&] { (void)(w.my_pe() == 0 ? w.alloc<int>(10) : w.alloc<int>(10, 4096)); },
                           pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(text, w.my_pe() == 0 ? "alignment = 0 here but 4096 on PE 1"
                                                          : "alignment = 4096 here but 0 on PE 0"),
                      text);
        if (text != "no error") ++errors;
    }, test::options());
    CHECK(errors == 2);
}

TEST_CASE("SPMD threads: every PE gets the same symmetric_ptr and sees the others' heaps") {
    std::atomic<int> done{0};
    pgas::world::run_threads(8, [&](pgas::world& w) {
        auto x = w.alloc<int>(16);
        auto all = w.alloc<std::uint64_t>(8);
        auto ctx = w.context<pgas::host>();
        pgas::p(ctx, all + ctx.my_pe(), x.offset(), 0);  // PE 0 collects everyone's offset
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0)
            for (int pe = 0; pe < 8; ++pe) REQUIRE(ctx.local(all)[pe] == x.offset());
        w.free(x);
        ++done;
    }, test::options());
    CHECK(done == 8);
}

TEST_CASE("every context comes from its transport's builder: host through the world, route<host, host> built alone") {
    static_assert(pgas::host_buildable_transport<pgas::host> && pgas::host_buildable_transport<pgas::nvlink>);
    static_assert(pgas::host_buildable_transport<pgas::route<pgas::host, pgas::host>>);
    pgas::world::run_threads(4, [&](pgas::world& w) {
        const auto direct = pgas::transport_builder_t<pgas::host>(w).context();
        const auto from_world = w.context<pgas::host>();
        CHECK(direct.my_pe() == from_world.my_pe());
        CHECK(direct.transport.peer_address(0, 3) == from_world.transport.peer_address(0, 3));
        // Near pairs {0, 1} and {2, 3}: a put to the next PE goes near for even PEs, far for odd ones.
        const int me = w.my_pe();
        pgas::transport_builder_t<pgas::route<pgas::host, pgas::host>> routes(w, {.near_pes = pgas::pe_range{me / 2 * 2, 2}});
        const auto ctx = routes.context();
        CHECK(ctx.transport.is_near(me ^ 1));
        CHECK_FALSE(ctx.transport.is_near((me + 2) % 4));
        auto slot = w.alloc<int>(1);
        pgas::p(ctx, slot, 100 + me, (me + 1) % 4);
        pgas::barrier_all(ctx);
        CHECK(*ctx.local(slot) == 100 + (me + 3) % 4);
        w.free(slot);
    }, test::options());
}

TEST_CASE("bad input: zero or negative counts") {
    auto w = pgas::world::init_local(2, test::options());
    CHECK_THROWS_WITH_AS(w.alloc<int>(0), "pgas: alloc: element count must be positive, got 0", pgas::error);
    CHECK_THROWS_WITH_AS(w.alloc<int>(-5), "pgas: alloc: element count must be positive, got -5", pgas::error);
    CHECK_THROWS_WITH_AS(pgas::world::init_local(0), Contains("PE count must be positive, got 0"), pgas::error);
    CHECK_THROWS_WITH_AS(pgas::world::init_local(-2), Contains("got -2"), pgas::error);
}

TEST_CASE("bad input: heap exhaustion says requested and free sizes") {
    auto w = pgas::world::init_local(1, test::options());
    const auto free = w.heap_free_bytes();
    // free elements of 8 bytes: 8x too many bytes
    const std::optional<pgas::error> e = test::thrown([&] { (void)w.alloc<std::uint64_t>(free); });
    REQUIRE_MESSAGE(e.has_value(), "alloc did not throw");
    CHECK(e->code() == pgas::errc::heap_exhausted);
    CHECK(e->pe() == 0);
    const std::string text = e->what();
    CHECK_MESSAGE(test::contains(text, "requested " + std::to_string(free) + " elements of 8 bytes"), text);
    CHECK_MESSAGE(test::contains(text, std::to_string(free) + " bytes free"), text);
    CHECK_MESSAGE(test::contains(text, "PGAS_HEAP_SIZE"), text);
    auto most = w.alloc<char>(free - 4096);  // fragmentation is reported too
    CHECK_THROWS_WITH_AS(w.alloc<char>(8192), Contains("largest free block 4096"), pgas::error);
    w.free(most);
}

TEST_CASE("bad input: allocation sizes that differ between PEs") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(3, [&](pgas::world& w) {
        if (const std::optional<pgas::error> e = test::thrown([&] { (void)w.alloc<int>(w.my_pe() == 1 ? 20 : 10); })) {
            CHECK(e->code() == pgas::errc::collective_mismatch);
            CHECK(e->pe() == w.my_pe());
            const std::string text = e->what();
            CHECK_MESSAGE(test::contains(text, "alloc on PE " + std::to_string(w.my_pe())), text);
            CHECK_MESSAGE(test::contains(text, w.my_pe() == 1 ? "on PE 0" : "80 on PE 1"), text);
            ++errors;
        }
    }, test::options());
    CHECK(errors == 3);  // every PE reports it, none allocates
}

TEST_CASE("bad input: pointers that are not symmetric") {
    auto w = pgas::world::init_local(2, test::options());
    auto x = w.alloc<int>(8);
    int outside = 0;
    CHECK_THROWS_WITH_AS(w.symmetric(&outside), Contains("not inside a live allocation"), pgas::error);
    CHECK(w.symmetric(w.local(x, 1) + 3, 1) == x + 3);
    CHECK_THROWS_WITH_AS(w.free(x + 1), Contains("free: heap offset"), pgas::error);
    CHECK_THROWS_AS(w.free(pgas::symmetric_ptr<int>{}), pgas::error);
    w.free(x);
    CHECK_THROWS_WITH_AS(w.free(x), Contains("double free"), pgas::error);
    CHECK_THROWS_WITH_AS(w.local(x, 0), Contains("world::local"), pgas::error);
    CHECK_THROWS_WITH_AS(w.local(x, 5), Contains("local PE index 5 outside [0, 2)"), pgas::error);
}

TEST_CASE("bad input in device calls (PGAS_CHECKS): PE out of range, foreign pointer, misaligned atomic") {
    auto w = pgas::world::init_local(2, test::options());
    auto x = w.alloc<std::uint64_t>(4);
    auto ctx = w.context<pgas::host>(1);
    std::uint64_t v = 1;
    CHECK_THROWS_WITH_AS(pgas::put(ctx, x, &v, 1, 2), "pgas: put on PE 1: target PE 2", pgas::error);
    CHECK_THROWS_WITH_AS(pgas::p(ctx, x, 1, -1), "pgas: p on PE 1: target PE -1", pgas::error);
    CHECK_THROWS_WITH_AS(pgas::atomic_fetch_add(ctx, x, 1, 7), Contains("atomic_fetch_add on PE 1: target PE 7"),
                         pgas::error);
    pgas::symmetric_ptr<std::uint64_t> foreign(pgas::detail::offset_tag{}, 8);  // inside pgas's reserved area
    CHECK_THROWS_WITH_AS(pgas::get(ctx, &v, foreign, 1, 0), Contains("outside the heap's user area, offset 8"),
                         pgas::error);
    // The source is the heap, not v: 2^40 elements from an 8-byte local would be an overread that g++ sees
    // (-Warray-bounds in detail/copy.hpp) on the path where the check did not throw.
    CHECK_THROWS_WITH_AS(pgas::put(ctx, x, ctx.local(x), std::size_t(1) << 40, 0), Contains("put on PE 1"),
                         pgas::error);
    CHECK_THROWS_AS(pgas::wait_until(ctx, pgas::symmetric_ptr<int>{}, pgas::cmp::eq, 1), pgas::error);
    auto misaligned = pgas::symmetric_cast<std::uint64_t>(pgas::symmetric_cast<char>(x) + 4);
    CHECK_THROWS_WITH_AS(pgas::atomic_add(ctx, misaligned, 1, 0), Contains("not naturally aligned"), pgas::error);
    CHECK_THROWS_WITH_AS(w.context<pgas::host>(2), Contains("world::context"), pgas::error);
}

TEST_CASE("a wait that cannot finish times out with the PE, address, condition and value") {
    auto w = pgas::world::init_local(2, test::options(/*timeout_ms=*/200));
    auto flag = w.alloc<std::uint64_t>(1);
    auto ctx = w.context<pgas::host>(1);
    *w.local(flag, 1) = 3;
    const std::string text =
        test::error_of([&] { pgas::signal_wait_until(ctx, flag, pgas::cmp::ge, 5); }, pgas::errc::timeout);
    CHECK_MESSAGE(test::contains(text, "signal_wait_until on PE 1"), text);
    CHECK_MESSAGE(test::contains(text, "heap offset " + std::to_string(flag.offset()) + " >= 5 (seen 3)"), text);
    CHECK_MESSAGE(test::is_wait_timeout(text), text);  // the format of the proxy's and IBGDA's timeouts too
}

TEST_CASE("a PE that fails makes the others stop waiting instead of hanging") {
    auto w = pgas::world::init_local(3, test::options(/*timeout_ms=*/0));  // no timeout: only the abort flag helps
    auto flag = w.alloc<std::uint64_t>(1);
    std::atomic<int> stopped{0};
    CHECK_THROWS_WITH_AS(w.launch_host([&](const test::ctx& ctx) {
        if (ctx.my_pe() == 1) throw std::runtime_error("PE 1 broke");
        try {
            pgas::barrier_all(ctx);  // can never complete without PE 1
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::peer_failed);
            CHECK_MESSAGE(test::contains(std::string(e.what()), "failed PE 1"), std::string(e.what()));
            ++stopped;
            throw;
        }
    }), "PE 1 broke", std::runtime_error);
    CHECK(stopped == 2);
    (void)flag;
}

TEST_CASE("PGAS_TIMEOUT_MS and PGAS_HEAP_SIZE are read and checked") {
    ::setenv("PGAS_HEAP_SIZE", "lots", 1);
    CHECK_THROWS_WITH_AS(pgas::world::init_local(1), Contains("PGAS_HEAP_SIZE"), pgas::error);
    ::setenv("PGAS_HEAP_SIZE", "32M", 1);
    ::setenv("PGAS_TIMEOUT_MS", "-1", 1);
    CHECK_THROWS_WITH_AS(pgas::world::init_local(1), Contains("PGAS_TIMEOUT_MS"), pgas::error);
    ::setenv("PGAS_TIMEOUT_MS", "1500", 1);
    {
        auto w = pgas::world::init_local(1);
        CHECK(w.heap_bytes() == (32u << 20));
        CHECK(w.context<pgas::host>().runtime.timeout_ns == 1500ull * 1000000ull);
    }
    ::setenv("PGAS_HEAP_SIZE", "1M", 1);  // smaller than the reserved head
    CHECK_THROWS_WITH_AS(pgas::world::init_local(1), Contains("smaller than"), pgas::error);
    ::unsetenv("PGAS_HEAP_SIZE");
    ::unsetenv("PGAS_TIMEOUT_MS");
}

// --- faults of PE threads: one failure path, heaps that outlive every PE --------------------------

namespace {
long long ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

TEST_CASE("SPMD threads: a PE that throws inside a barrier_all loop stops the others, and no heap is freed early") {
    std::atomic<int> stopped{0};
    // No device timeout: only the shared abort flag can end the others' waits.
    CHECK_THROWS_WITH_AS(pgas::world::run_threads(4, [&](pgas::world& w) {
        auto ctx = w.context<pgas::host>();
        try {
            for (int i = 0; i < 100000; ++i) {
                if (ctx.my_pe() == 1 && i == 50) throw std::runtime_error("PE 1 broke");
                pgas::barrier_all(ctx);
            }
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::peer_failed);
            CHECK_MESSAGE(test::contains(e.what(), "stopped waiting: failed PE 1"), e.what());
            ++stopped;
            throw;
        }
    }, test::options(/*timeout_ms=*/0)), "PE 1 broke", std::runtime_error);
    CHECK(stopped == 3);
}

TEST_CASE("SPMD threads: a PE that throws before a host collective stops the others at once, naming it") {
    for (const char* call : {"alloc", "barrier", "split_strided"}) {
        CAPTURE(call);
        std::atomic<int> stopped{0};
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH_AS(pgas::world::run_threads(4, [&](pgas::world& w) {
            if (w.my_pe() == 2) throw std::runtime_error("PE 2 broke");
            try {
                if (std::string(call) == "alloc") (void)w.alloc<int>(4);
                if (std::string(call) == "barrier") w.barrier();
                if (std::string(call) == "split_strided") (void)w.split_strided(w.team_world(), 0, 1, 2);
            } catch (const pgas::error& e) {
                CHECK(e.code() == pgas::errc::peer_failed);
                CHECK_MESSAGE(test::contains(e.what(), std::string("pgas: ") + call + " on PE " +
                                                           std::to_string(w.my_pe()) + ": PE 2 failed; stopped waiting in " + call),
                              e.what());
                ++stopped;
                throw;
            }
        }, test::options()), "PE 2 broke", std::runtime_error);
        CHECK(stopped == 3);
        CHECK(ms_since(start) < 2000);  // not the 30 s bootstrap timeout
    }
}

TEST_CASE("SPMD threads: PGAS_BOOTSTRAP_TIMEOUT_MS bounds host collectives and names the late PE") {
    ::setenv("PGAS_BOOTSTRAP_TIMEOUT_MS", "300", 1);
    std::atomic<int> timed_out{0};
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(pgas::world::run_threads(3, [&](pgas::world& w) {
        if (w.my_pe() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        try {
            w.barrier();
        } catch (const pgas::error& e) {
            if (e.code() == pgas::errc::timeout) {
                CHECK_MESSAGE(test::contains(e.what(), "PE(s) 1 did not reach barrier #"), e.what());
                CHECK_MESSAGE(test::contains(e.what(), "within 300 ms"), e.what());
                ++timed_out;
            }
            throw;
        }
    }, test::options()), pgas::error);
    ::unsetenv("PGAS_BOOTSTRAP_TIMEOUT_MS");
    CHECK(timed_out >= 1);
    CHECK(ms_since(start) < 2500);
}

TEST_CASE("SPMD threads: different collective calls are found on every PE, naming both calls") {
    std::atomic<int> mismatches{0};
    CHECK_THROWS_AS(pgas::world::run_threads(4, [&](pgas::world& w) {
        try {
            if (w.my_pe() == 1)
                w.barrier();
            else
                (void)w.alloc<std::uint64_t>(1);
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "collective calls differ between PEs"), text);
            CHECK_MESSAGE(test::contains(text, "called barrier #"), text);
            CHECK_MESSAGE(test::contains(text, "called alloc #"), text);
            ++mismatches;
            throw;
        }
    }, test::options()), pgas::error);
    CHECK(mismatches == 4);
    mismatches = 0;
    CHECK_THROWS_AS(pgas::world::run_threads(3, [&](pgas::world& w) {
        auto x = w.alloc<std::uint64_t>(1);
        try {
            if (w.my_pe() == 0)
                (void)w.alloc<std::uint64_t>(1);  // the same 8-byte exchange as free's, but another call
            else
                w.free(x);
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            CHECK_MESSAGE(test::contains(e.what(), "alloc #"), e.what());
            CHECK_MESSAGE(test::contains(e.what(), "free #"), e.what());
            ++mismatches;
            throw;
        }
    }, test::options()), pgas::error);
    CHECK(mismatches == 3);
}

TEST_CASE("bad input: team geometry that overflows int is rejected, naming call, PE and value") {
    auto w = pgas::world::init_local(4, test::options());
    CHECK_THROWS_WITH_AS(w.split_strided(w.team_world(), 0, 1 << 30, 5),
                         "pgas: split_strided on PE 0: members start=0 stride=1073741824 size=5: the last member "
                         "start + stride * (size - 1) = 4294967296 is outside a parent team of 4 PEs",
                         pgas::error);
    CHECK_THROWS_WITH_AS(w.split_strided(w.team_world(), 3, 2147483647, 2),
                         Contains("= 2147483650 is outside a parent team of 4 PEs"), pgas::error);
    auto one = w.split_strided(w.team_world(), 3, 2147483647, 1);  // one member: the stride is never used
    CHECK(one.n_pes() == 1);
    CHECK(one.world_pe(0) == 3);
}
