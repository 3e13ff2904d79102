// Proxy channels: one ring per channel, drained by the PE's one proxy thread. Over a scripted backend that holds
// back one channel's commands: the other rings' slots, fences and quiets do not wait for it; quiet_all and
// flush_local do; replies of different rings never mix. Then over real libfabric on loopback: every byte on every
// channel, each completion scope, the option and PGAS_CHANNELS.
#include "support.hpp"

#include <pgas/host/proxy/service.hpp>
#include <pgas/transport/proxy/proxy_ops.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Completes every command at once, except those of the channels in `held` (bit c: channel c), which wait.
struct channel_gated_backend {
    std::atomic<std::uint32_t> held{0};
    std::vector<std::uint64_t> pending;  // proxy thread only
    std::mutex mutex;
    std::vector<std::uint64_t> tokens;  // every command's token, in the order the proxy started them

    std::uint32_t record(std::uint64_t token) {
        std::lock_guard lock(mutex);
        tokens.push_back(token);
        pending.push_back(token);
        return 1;
    }
    std::uint32_t put(std::uint64_t token, int, std::uint64_t, const void*, std::size_t, bool) { return record(token); }
    std::uint32_t get(std::uint64_t token, int, void* dst, std::uint64_t remote, std::size_t bytes, bool) {
        std::memset(dst, int(remote & 0xff), bytes);
        return record(token);
    }
    std::uint32_t atomic(std::uint64_t token, int, std::uint64_t remote, pgas::amo, pgas::proxy::value_kind,
                         std::uint64_t operand, std::uint64_t, void* result) {
        if (result) {
            const std::uint64_t old = remote + operand;
            std::memcpy(result, &old, 8);
        }
        return record(token);
    }
    std::uint32_t signal(std::uint64_t token, int, std::uint64_t, pgas::signal_op, std::uint64_t) { return record(token); }
    template <class F>
    bool progress(F&& on_complete) {
        std::vector<std::uint64_t> now, later;
        {
            std::lock_guard lock(mutex);
            for (auto t : pending) ((held.load() >> (t >> pgas::proxy::ring_view::channel_shift)) & 1u ? later : now).push_back(t);
            pending = later;
        }
        for (auto t : now) on_complete(t);
        return !now.empty();
    }
    std::size_t started(int channel) {
        std::lock_guard lock(mutex);
        std::size_t n = 0;
        for (auto t : tokens) n += int(t >> pgas::proxy::ring_view::channel_shift) == channel;
        return n;
    }
};

struct ring_only : pgas::proxy::proxy_ops<ring_only> {
    pgas::proxy::ring_view view;
    const pgas::proxy::ring_view& ring() const { return view; }
    ring_only on(int c) const {
        ring_only t;
        t.view = view.on_channel(c);
        return t;
    }
};

struct fixture {
    fixture(std::uint32_t capacity, int channels)
        : memory(capacity, pgas::proxy::producers::host_threads, 0, channels), proxy(backend, memory, 0, {}) {
        pgas::runtime_state runtime;
        runtime.timeout_ns = 5000ull * 1000000ull;
        t.view = memory.view(runtime);
    }
    channel_gated_backend backend;
    pgas::proxy::ring_memory memory;
    pgas::proxy::service<channel_gated_backend> proxy;
    ring_only t;
};

bool stays_false(const std::atomic<bool>& done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return !done.load();
}

// Waits (up to 5 s) for another thread to reach `count`, then 150 ms more so that going past it would show.
int settles_at(const std::atomic<int>& counter, int count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (counter.load() < count && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return counter.load();
}

}  // namespace

TEST_CASE("proxy channels: a held-back ring stalls only itself - its fence and full slots leave the others going") {
    fixture f(4, 2);
    const ring_only c0 = f.t.on(0), c1 = f.t.on(1);
    CHECK(c1.view.channel == 1);
    CHECK(c1.view.tail != c0.view.tail);
    CHECK(c1.view.slots != c0.view.slots);
    f.backend.held = 0b10;
    std::uint64_t v = 1;
    c1.put_nbi<pgas::thread>(0, &v, 8, 1);  // started, held
    c1.fence<pgas::thread>();               // waits for it: the ring behind stops
    c1.put_nbi<pgas::thread>(8, &v, 8, 1);  // not started
    std::atomic<int> pushed{0};
    std::thread filler([&] {  // fills channel 1's ring of 4 slots, then waits for a credit
        for (int i = 0; i < 3; ++i) {
            c1.put_nbi<pgas::thread>(16, &v, 8, 1);
            ++pushed;
        }
    });
    // Channel 0 meanwhile: 40 commands through its own 4 slots, each quiet ends (a 5 s timeout would throw).
    for (std::uint64_t i = 0; i < 40; ++i) {
        c0.put_nbi<pgas::thread>(i * 8, &i, 8, 1);
        if (i % 8 == 7) c0.quiet<pgas::thread>();
    }
    c0.fence<pgas::thread>();
    CHECK(c0.atomic<std::uint64_t>(pgas::amo::fetch_add, 5, std::uint64_t(2), 0, 1) == 7);
    c0.quiet<pgas::thread>();
    CHECK(f.backend.started(0) == 40 + 1);      // the puts and the atomic (a fence never reaches the backend)
    CHECK(f.backend.started(1) == 1);           // behind its fence
    // 4 slots: put, fence, put, put; the next waits. The filler may not have run yet on a loaded machine.
    CHECK(settles_at(pushed, 1) == 1);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        f.t.quiet_all<pgas::thread>();
        done = true;
    });
    CHECK(stays_false(done));
    f.backend.held = 0;
    filler.join();
    waiter.join();
    f.t.quiet_all<pgas::thread>();
    CHECK(f.backend.started(1) == 2 + 3);
}

TEST_CASE("proxy channels: flush_local and quiet wait for their own ring only") {
    fixture f(64, 3);
    const ring_only c0 = f.t.on(0), c2 = f.t.on(2);
    f.backend.held = 0b100;
    std::vector<std::uint64_t> source(32, 3);  // beyond the 48-byte payload: read while the put completes
    c2.put_nbi<pgas::thread>(0, source.data(), source.size() * 8, 1);
    c0.put_nbi<pgas::thread>(0, source.data(), source.size() * 8, 1);
    c0.flush_local<pgas::thread>();
    c0.quiet_pe<pgas::thread>(1);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        c2.flush_local<pgas::thread>();
        done = true;
    });
    CHECK(stays_false(done));
    f.backend.held = 0;
    waiter.join();
    CHECK(done.load());
}

TEST_CASE("proxy channels: replies of different rings share the pool but never answer each other's commands") {
    fixture f(8, 2);
    const ring_only c0 = f.t.on(0), c1 = f.t.on(1);
    for (std::uint64_t i = 0; i < 500; ++i) {
        // the same thread, so the same reply entry; the same ticket numbers on both rings
        CHECK(c0.atomic<std::uint64_t>(pgas::amo::fetch_add, i, std::uint64_t(1), 0, 1) == i + 1);
        CHECK(c1.atomic<std::uint64_t>(pgas::amo::fetch_add, i, std::uint64_t(1000), 0, 1) == i + 1000);
        std::uint8_t got[3] = {};
        c1.get<pgas::thread>(got, i, sizeof(got), 1);
        CHECK(got[2] == std::uint8_t(i & 0xff));
    }
}

TEST_CASE("proxy ring memory: channel counts out of range are refused") {
    for (int channels : {0, 33}) {
        CAPTURE(channels);
        CHECK_THROWS_WITH_AS(pgas::proxy::ring_memory(64, pgas::proxy::producers::host_threads, 3, channels),
                             doctest::Contains("channels must be in [1, 32]"), pgas::error);
    }
}

TEST_CASE("libfabric channels: every channel moves every byte, quiet(ctx, pe), flush_local, quiet_all complete them") {
    test::for_each_provider([](const std::string& provider) {
        auto fo = test::fabric(provider);
        fo.channels = 3;
        test::run(provider, 3, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            constexpr std::size_t count = 40;  // 320 bytes: beyond the inline payload
            auto inbox = w.alloc<std::uint64_t>(3 * count);
            auto flag = w.alloc<std::uint64_t>(3);
            CHECK(fabric.channels() == 3);
            const auto ctx = fabric.context();
            CHECK(ctx.n_channels() == 3);
            const int me = ctx.my_pe(), right = (me + 1) % 3, left = (me + 2) % 3;
            std::vector<std::uint64_t> source(count);
            for (int c = 0; c < 3; ++c) {
                const auto on_c = ctx.on_channel(c);
                CHECK(on_c.channel() == c);
                for (std::size_t i = 0; i < count; ++i) source[i] = test::mix(std::uint64_t(me), i, std::uint64_t(c));
                pgas::put_nbi(on_c, inbox + std::ptrdiff_t(c * count), source.data(), count, right);
                pgas::flush_local(on_c);
                source.assign(count, 0);
                pgas::atomic_add(on_c, flag + c, std::uint64_t(1), right);
                if (c == 1) pgas::quiet(on_c, right);
            }
            pgas::quiet_all(ctx);
            pgas::barrier_all(ctx);
            for (int c = 0; c < 3; ++c) {
                CHECK(ctx.local(flag)[c] == 1);
                for (std::size_t i = 0; i < count; ++i)
                    REQUIRE(ctx.local(inbox)[c * count + i] == test::mix(std::uint64_t(left), i, std::uint64_t(c)));
            }
            pgas::barrier_all(ctx.on_channel(2));  // collectives run on any channel
        }, fo);
    });
}

TEST_CASE("libfabric channels: 0 takes the world's (PGAS_CHANNELS), out of range names the call, PE and value") {
    const std::string provider = test::providers().empty() ? "" : test::providers().front();
    if (provider.empty()) return;
    setenv("PGAS_CHANNELS", "2", 1);
    test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
        CHECK(w.channels() == 2);
        CHECK(fabric.channels() == 2);
        CHECK(fabric.context().n_channels() == 2);
        const std::string text = test::error_of([&] { (void)fabric.context().on_channel(2); });
        CHECK_MESSAGE(test::contains(text, "on_channel on PE " + std::to_string(w.my_pe())), text);
        CHECK_MESSAGE(test::contains(text, "2"), text);
    });
    unsetenv("PGAS_CHANNELS");
    auto fo = test::fabric(provider);
    fo.channels = 40;
    std::atomic<int> errors{0};
    const std::string text = test::error_of([&] {
        test::run(provider, 1, [&](pgas::world&, pgas::libfabric_domain&) {}, fo);
    }, pgas::errc::invalid_argument);
    CHECK_MESSAGE(test::contains(text, "libfabric_domain on PE 0: channels must be an integer in [1, 32], got '40'"),
                  text);
    if (text != "no error") ++errors;
    CHECK(errors.load() == 1);
}
