// Host transport: the smaller API gaps of issue 15 (aligned alloc, team destruction, the node team, the *_vector
// waits, strided iput/iget, alltoallv, collective_launch's checks).
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

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
        try {
            (void)w.alloc<double>(4, alignment);
            FAIL("no error");
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::invalid_argument);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "alloc(count, alignment)"), text);
            CHECK_MESSAGE(test::contains(text, "got " + std::to_string(alignment)), text);
            CHECK_MESSAGE(test::contains(text, "alignof(T) = 8"), text);
        }
    }
}

TEST_CASE("bad input: alloc alignments that differ between PEs are found on every PE") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(3, [&](pgas::world& w) {
        try {
            (void)w.alloc<int>(10, w.my_pe() == 2 ? 4096 : 512);
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "alloc(count, alignment) on PE " + std::to_string(w.my_pe())), text);
            CHECK_MESSAGE(test::contains(text, "alignment = "), text);
            ++errors;
        }
    }, test::options());
    CHECK(errors == 3);
}
