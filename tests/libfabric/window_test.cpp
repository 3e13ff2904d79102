// Registered windows over the libfabric proxy (shm and tcp;ofi_rxm loopback): the shared case
// (tests/common/window_cases.hpp: every op at element offsets into buffers the PEs allocated themselves, host memory),
// the device checks and the proxy's own range check, groups, another channel, release and late windows.
#include "support.hpp"

#include "../common/window_cases.hpp"

#include <pgas/device/window.hpp>

#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t elements = 64;

std::uint64_t value_of(int pe, std::size_t i, int round) { return test::mix(std::uint64_t(pe), i, std::uint64_t(round)); }

// Each PE's buffer is a plain std::vector (host memory the fabric registers without FI_HMEM), filled with `fill`.
struct buffer {
    std::vector<std::uint64_t> data = std::vector<std::uint64_t>(elements, 0);
};

}  // namespace

PGAS_TEST_WINDOW_CASES(test::loopback, test::loopback_staged);

TEST_CASE("libfabric windows: the device checks refuse a range past the end, naming the call and the last element") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto ctx = fabric.context();
            const int me = ctx.my_pe(), right = (me + 1) % ctx.n_pes();
            buffer mine;
            auto win = w.register_window(mine.data.data(), elements);
            CHECK(fabric.live_windows() == 1);
            const std::vector<std::uint64_t> src(5, 1);
            const std::string text =
                test::error_of([&] { pgas::put(ctx, win + 60, src.data(), 5, right); }, pgas::errc::invalid_argument);
            CHECK(text ==
                  "pgas: put on PE " + std::to_string(me) + ": range past the end of the window, last element 64");
            pgas::barrier_all(ctx);
            w.release_window(win);
            CHECK(fabric.live_windows() == 0);
            CHECK(w.live_windows() == 0);
        });
    });
}

TEST_CASE("libfabric windows: warps and blocks as groups, and a window on another channel's ring") {
    test::for_each_provider([](const std::string& provider) {
        auto o = test::fabric(provider);
        o.channels = 2;
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto ctx = fabric.context().on_channel(1);
            const int me = ctx.my_pe(), other = 1 - me;
            std::vector<std::uint32_t> mine(1000, 0);
            auto win = w.register_window(mine.data(), mine.size());
            std::vector<std::uint32_t> src(700);
            for (std::size_t i = 0; i < src.size(); ++i) src[i] = std::uint32_t(value_of(me, i, 9));
            pgas::put_nbi<pgas::warp>(ctx, win + 300, src.data(), src.size(), other);
            pgas::quiet(ctx, other);
            pgas::barrier_all(ctx);
            for (std::size_t i = 0; i < 300; ++i) REQUIRE(mine[i] == 0);
            for (std::size_t i = 0; i < src.size(); ++i) REQUIRE(mine[300 + i] == std::uint32_t(value_of(other, i, 9)));
            std::vector<std::uint32_t> back(700);
            pgas::get<pgas::warp>(ctx, back.data(), win + 300, back.size(), other);
            for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == std::uint32_t(value_of(me, i, 9)));
            pgas::barrier_all(ctx);
            w.release_window(win);
        }, o);
    });
}

TEST_CASE("libfabric windows: a window registered before the domain exists is reached through it") {
    test::for_each_provider([](const std::string& provider) {
        pgas::world::run_threads(2, [&](pgas::world& w) {
            std::vector<std::int64_t> mine(16, -1);
            auto win = w.register_window(mine.data(), mine.size());
            {
                pgas::libfabric_domain fabric(w, test::fabric(provider));
                CHECK(fabric.live_windows() == 1);
                auto ctx = fabric.context();
                const int me = ctx.my_pe();
                pgas::p(ctx, win + 3, std::int64_t(40 + me), 1 - me);
                pgas::quiet(ctx);
                pgas::barrier_all(ctx);
                CHECK(mine[3] == 40 + (1 - me));
                CHECK(mine[2] == -1);
                pgas::barrier_all(ctx);
            }
            w.release_window(win);  // no domain observes it any more: the world alone releases it
            CHECK(w.live_windows() == 0);
        }, test::options());
    });
}

TEST_CASE("libfabric windows: the proxy checks the range against the target's registered buffer before posting") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto ctx = fabric.context();
            std::vector<std::uint64_t> mine(8, 0);
            auto win = w.register_window(mine.data(), mine.size());
            if (ctx.my_pe() == 0) {
                // Below the device API's checks: byte 60 of a 64-byte buffer, 8 bytes.
                std::uint64_t v = 1;
                ctx.transport.window_put_nbi<pgas::thread>(win.table_offset(), 60, &v, 8, 1);
                const std::string text = test::error_of([&] { ctx.transport.quiet<pgas::thread>(); });
                CHECK_MESSAGE(test::contains(text, "the proxy thread failed"), text);
                CHECK_MESSAGE(test::contains(text, "fi_write to PE 1 (8 bytes at byte 60 of window " +
                                                       std::to_string(win.table_offset()) +
                                                       ") is outside PE 1's buffer (64 bytes)"),
                              text);
            }
            CHECK(mine[7] == 0);  // nothing was posted
        }, {}, test::options(1500));
    });
}

TEST_CASE("libfabric windows: a command naming a released window fails the proxy naming it") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto ctx = fabric.context();
            std::vector<std::uint64_t> mine(8, 0);
            auto win = w.register_window(mine.data(), mine.size());
            w.release_window(win);
            CHECK(fabric.live_windows() == 0);
            if (ctx.my_pe() == 0) {
                std::uint64_t v = 1;
                ctx.transport.window_put_nbi<pgas::thread>(win.table_offset(), 0, &v, 8, 1);
                const std::string text = test::error_of([&] { ctx.transport.quiet<pgas::thread>(); });
                CHECK_MESSAGE(test::contains(text, "fi_write to PE 1 names window " +
                                                       std::to_string(win.table_offset()) +
                                                       ", which is not registered with this libfabric domain"),
                              text);
            }
        }, {}, test::options(1500));
    });
}
