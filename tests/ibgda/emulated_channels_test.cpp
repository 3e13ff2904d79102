// IBGDA channels over the emulated NIC: k RC QPs per peer, each consumed by the NIC; quiet covers its channel,
// quiet(ctx, pe) one QP, quiet_all every channel, flush_local waits until the NIC has read the sources. A paused
// QP (the NIC executes nothing there) shows which waits depend on which queue.
#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

pgas::ibgda_options with_channels(int channels) {
    auto o = test::emulated(64);
    o.channels = channels;
    return o;
}

// Runs body(host context, ibgda context) on every PE.
template <class Body>
void launch_both(pgas::world& w, pgas::ibgda_domain& ib, Body&& body) {
    w.launch_host([&](const pgas::device::context<pgas::host>& host) { body(host, ib.context(host.my_pe())); });
}

// Whether `done` stays false for a while (a wait that must not end yet).
bool stays_false(const std::atomic<bool>& done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return !done.load();
}

constexpr std::size_t words = 16;  // 128 bytes: beyond inline, one RDMA WRITE from the registered heap

}  // namespace

TEST_CASE("ibgda channels: each channel's ops go through its own QP to each peer, and the NIC consumes them all") {
    for (int channels : {1, 2, 4}) {
        CAPTURE(channels);
        auto w = pgas::world::init_local(3, test::options());
        auto inbox = w.alloc<std::uint64_t>(words * 4);
        auto source = w.alloc<std::uint64_t>(words * 4);
        pgas::ibgda_domain ib(w, with_channels(channels));
        CHECK(ib.channels() == channels);
        launch_both(w, ib, [&](const auto& host, const test::ib_ctx& ctx) {
            const int me = ctx.my_pe(), right = (me + 1) % 3, left = (me + 2) % 3;
            CHECK(ctx.n_channels() == channels);
            for (int c = 0; c < channels; ++c) {
                const auto on_c = ctx.on_channel(c);
                auto* src = ctx.local(source) + c * words;
                for (std::size_t i = 0; i < words; ++i) src[i] = test::mix(std::uint64_t(me), i, std::uint64_t(c));
                pgas::put_nbi(on_c, inbox + std::ptrdiff_t(c * words), src, words, right);
                // the WQE went to channel c's QP to `right`, no other
                for (int other = 0; other < channels; ++other)
                    CHECK((pgas::detail::ibgda_load(ctx.transport.queue_pair(right, other).reserved) != 0) ==
                          (other <= c));
            }
            pgas::quiet_all(ctx);
            pgas::barrier_all(host);
            for (int c = 0; c < channels; ++c) {
                CHECK(ib.emulated_nic().executed(me, right, c) >= 1);
                for (std::size_t i = 0; i < words; ++i)
                    REQUIRE(ctx.local(inbox)[c * words + i] == test::mix(std::uint64_t(left), i, std::uint64_t(c)));
            }
            pgas::barrier_all(host);
        });
        CHECK(ib.emulated_nic().first_violation() == "");
    }
}

TEST_CASE("ibgda channels: quiet completes its own channel without waiting for a stalled one, quiet_all waits") {
    auto w = pgas::world::init_local(2, test::options(5000));
    auto a = w.alloc<std::uint64_t>(words);
    auto b = w.alloc<std::uint64_t>(words);
    auto source = w.alloc<std::uint64_t>(2 * words);
    pgas::ibgda_domain ib(w, with_channels(2));
    auto& nic = ib.emulated_nic();
    launch_both(w, ib, [&](const auto& host, const test::ib_ctx& ctx) {
        if (ctx.my_pe() == 0) {
            nic.pause(0, 1, 1);
            auto* src = ctx.local(source);
            for (std::size_t i = 0; i < 2 * words; ++i) src[i] = 1000 + i;
            pgas::put_nbi(ctx.on_channel(1), a, src, words, 1);          // stalls on channel 1's QP
            pgas::put_nbi(ctx.on_channel(0), b, src + words, words, 1);  // channel 0 is free
            pgas::quiet(ctx.on_channel(0));  // must not wait for channel 1 (5 s timeout would throw)
            for (std::size_t i = 0; i < words; ++i) {
                REQUIRE(host.peer(b, 1)[i] == 1000 + words + i);
                REQUIRE(host.peer(a, 1)[i] == 0);  // the paused QP executed nothing
            }
            std::atomic<bool> done{false};
            std::thread waiter([&] {
                pgas::quiet_all(ctx);
                done = true;
            });
            CHECK(stays_false(done));  // channel 1's put is still in flight
            nic.resume(0, 1, 1);
            waiter.join();
            CHECK(done.load());
            for (std::size_t i = 0; i < words; ++i) REQUIRE(host.peer(a, 1)[i] == 1000 + i);
        }
        pgas::barrier_all(host);
    });
    CHECK(nic.first_violation() == "");
}

TEST_CASE("ibgda quiet(ctx, pe) completes one peer's QP without waiting for another peer's") {
    auto w = pgas::world::init_local(3, test::options(5000));
    auto inbox = w.alloc<std::uint64_t>(words);
    auto source = w.alloc<std::uint64_t>(words);
    pgas::ibgda_domain ib(w, with_channels(1));
    auto& nic = ib.emulated_nic();
    launch_both(w, ib, [&](const auto& host, const test::ib_ctx& ctx) {
        if (ctx.my_pe() == 0) {
            nic.pause(0, 1, 0);
            auto* src = ctx.local(source);
            for (std::size_t i = 0; i < words; ++i) src[i] = 7 + i;
            pgas::put_nbi(ctx, inbox, src, words, 1);  // stalled
            pgas::put_nbi(ctx, inbox, src, words, 2);
            pgas::quiet(ctx, 2);  // PE 2's QP only
            for (std::size_t i = 0; i < words; ++i) REQUIRE(host.peer(inbox, 2)[i] == 7 + i);
            std::atomic<bool> done{false};
            std::thread waiter([&] {
                pgas::quiet(ctx, 1);
                done = true;
            });
            CHECK(stays_false(done));
            nic.resume(0, 1, 0);
            waiter.join();
            for (std::size_t i = 0; i < words; ++i) REQUIRE(host.peer(inbox, 1)[i] == 7 + i);
        }
        pgas::barrier_all(host);
    });
    CHECK(nic.first_violation() == "");
}

TEST_CASE("ibgda flush_local returns only once the NIC has read a registered source, then it may be overwritten") {
    auto w = pgas::world::init_local(2, test::options(5000));
    auto inbox = w.alloc<std::uint64_t>(words);
    auto source = w.alloc<std::uint64_t>(words);
    pgas::ibgda_domain ib(w, with_channels(2));
    auto& nic = ib.emulated_nic();
    launch_both(w, ib, [&](const auto& host, const test::ib_ctx& ctx) {
        if (ctx.my_pe() == 0) {
            const auto on_1 = ctx.on_channel(1);
            nic.pause(0, 1, 1);
            auto* src = ctx.local(source);
            for (std::size_t i = 0; i < words; ++i) src[i] = 500 + i;
            pgas::put_nbi(on_1, inbox, src, words, 1);
            std::atomic<bool> done{false};
            std::thread waiter([&] {
                pgas::flush_local(on_1);
                for (std::size_t i = 0; i < words; ++i) src[i] = 0xdead;  // what flush_local allows
                done = true;
            });
            CHECK(stays_false(done));  // the NIC has not read the source yet
            nic.resume(0, 1, 1);
            waiter.join();
            pgas::quiet(on_1);
            for (std::size_t i = 0; i < words; ++i) REQUIRE(host.peer(inbox, 1)[i] == 500 + i);
        }
        pgas::barrier_all(host);
    });
}

TEST_CASE("ibgda barrier completes puts of every channel (it quiets them all)") {
    auto w = pgas::world::init_local(2, test::options());
    auto inbox = w.alloc<std::uint64_t>(4 * words);
    auto source = w.alloc<std::uint64_t>(4 * words);
    pgas::ibgda_domain ib(w, with_channels(4));
    test::launch(w, ib, [&](const test::ib_ctx& ctx) {
        const int me = ctx.my_pe(), peer = 1 - me;
        auto* src = ctx.local(source);
        for (std::size_t i = 0; i < 4 * words; ++i) src[i] = test::mix(std::uint64_t(me), i, 9);
        for (int c = 0; c < 4; ++c)
            pgas::put_nbi(ctx.on_channel(c), inbox + std::ptrdiff_t(c * words), src + c * words, words, peer);
        pgas::barrier_all(ctx);  // on channel 0: still covers channels 1-3
        for (std::size_t i = 0; i < 4 * words; ++i) REQUIRE(ctx.local(inbox)[i] == test::mix(std::uint64_t(peer), i, 9));
        pgas::barrier_all(ctx);
    });
}

TEST_CASE("bad input: ibgda_options::channels and PGAS_CHANNELS out of range name the call, the PE and the value") {
    auto w = pgas::world::init_local(1, test::options());
    for (int channels : {-1, 33}) {
        CAPTURE(channels);
        const std::string text =
            test::error_of([&] { pgas::ibgda_domain ib(w, with_channels(channels)); }, pgas::errc::invalid_argument);
        CHECK_MESSAGE(test::contains(text, "ibgda_domain on PE 0: channels must be an integer in [1, 32], got '" +
                                               std::to_string(channels) + "'"),
                      text);
    }
    setenv("PGAS_CHANNELS", "3", 1);
    auto w3 = pgas::world::init_local(1, test::options());
    {
        pgas::ibgda_domain from_env(w3, with_channels(0));
        CHECK(from_env.channels() == 3);
        CHECK(from_env.context().n_channels() == 3);
    }
    setenv("PGAS_CHANNELS", "64", 1);
    try {
        pgas::ibgda_domain ib(w3, with_channels(0));  // 0 takes the world's, chosen when PGAS_CHANNELS was 3
        CHECK(ib.channels() == 3);
    } catch (const pgas::error& e) {
        FAIL(e.what());
    }
    unsetenv("PGAS_CHANNELS");
    pgas::ibgda_domain one(w, with_channels(0));
    CHECK(one.channels() == 1);
    const std::string text = test::error_of([&] { (void)one.context().on_channel(1); });
    CHECK_MESSAGE(test::contains(text, "on_channel on PE 0"), text);
}

TEST_CASE("bad input: participants asking for different channel counts all get errc::collective_mismatch") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(2, [&](pgas::world& w) {
        const std::string text =
            test::error_of([&] { pgas::ibgda_domain ib(w, with_channels(w.my_pe() == 0 ? 2 : 3)); },
                           pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(text, "ibgda_domain on PE " + std::to_string(w.my_pe())), text);
        CHECK_MESSAGE(test::contains(text, "set PGAS_CHANNELS the same everywhere"), text);
        if (text != "no error") ++errors;
    }, test::options());
    CHECK(errors.load() == 2);
}
