// The proxy ring itself, over a scripted backend (no fabric): credits, stalls, order, wrap-around, a dead proxy.
#include <pgas/transport/proxy/proxy_ops.hpp>
#include <pgas/host/proxy/service.hpp>

#include "../common/support.hpp"
#include "../wait_timeout_format.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Records every command and completes them only while `open` is set.
struct gated_backend {
    struct seen {
        std::uint64_t token, remote, value;
    };
    std::atomic<bool> open{true};
    std::vector<std::uint64_t> pending;
    std::mutex mutex;
    std::vector<seen> puts;

    std::uint32_t put(std::uint64_t token, int, std::uint64_t remote, const void* src, std::size_t bytes, bool) {
        std::uint64_t value = 0;
        std::memcpy(&value, src, bytes < 8 ? bytes : 8);
        std::lock_guard lock(mutex);
        puts.push_back({token, remote, value});
        pending.push_back(token);
        return 1;
    }
    std::uint32_t get(std::uint64_t token, int, void* dst, std::uint64_t remote, std::size_t bytes, bool) {
        std::memset(dst, int(remote & 0xff), bytes);
        pending.push_back(token);
        return 1;
    }
    std::uint32_t atomic(std::uint64_t token, int, std::uint64_t remote, pgas::amo, pgas::proxy::value_kind,
                         std::uint64_t operand, std::uint64_t, void* result) {
        if (result) {
            const std::uint64_t old = remote + operand;
            std::memcpy(result, &old, 8);
        }
        pending.push_back(token);
        return 1;
    }
    std::uint32_t signal(std::uint64_t token, int, std::uint64_t, pgas::signal_op, std::uint64_t) {
        pending.push_back(token);
        return 1;
    }
    template <class F>
    bool progress(F&& on_complete) {
        if (!open.load() || pending.empty()) return false;
        for (auto t : pending) on_complete(t);
        pending.clear();
        return true;
    }
    std::size_t put_count() {
        std::lock_guard lock(mutex);
        return puts.size();
    }
};
static_assert(pgas::proxy::backend<gated_backend>);

// A transport made of nothing but a ring: the proxy ops on top of it.
struct ring_only : pgas::proxy::proxy_ops<ring_only> {
    pgas::proxy::ring_view view;
    const pgas::proxy::ring_view& ring() const { return view; }
};

struct fixture {
    explicit fixture(std::uint32_t capacity, std::uint64_t timeout_ms = 10000)
        : memory(capacity, pgas::proxy::producers::host_threads, 0), proxy(backend, memory, 0, {}) {
        pgas::runtime_state runtime;
        runtime.timeout_ns = timeout_ms * 1000000ull;
        t.view = memory.view(runtime);
    }
    gated_backend backend;
    pgas::proxy::ring_memory memory;
    pgas::proxy::service<gated_backend> proxy;
    ring_only t;
};

}  // namespace

TEST_CASE("ring full: producers wait for credits - then every command arrives once and in order") {
    fixture f(4);
    f.backend.open = false;
    std::atomic<int> returned{0};
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < 40; ++i) {
            f.t.put_nbi<pgas::thread>(i * 8, &i, sizeof(i), 1);
            ++returned;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(returned.load() == 4);  // four slots, then the fifth waits for a credit
    CHECK(f.backend.put_count() == 4);
    f.backend.open = true;
    producer.join();
    f.t.quiet<pgas::thread>();
    REQUIRE(f.backend.put_count() == 40);
    for (std::uint64_t i = 0; i < 40; ++i) {
        CHECK(f.backend.puts[i].remote == i * 8);
        CHECK(f.backend.puts[i].value == i);
    }
}

TEST_CASE("wrap-around with replies: fetching ops and gets come back through reused slots") {
    fixture f(2);
    for (std::uint64_t i = 0; i < 1000; ++i) {
        CHECK(f.t.atomic<std::uint64_t>(pgas::amo::fetch_add, i, std::uint64_t(3), 0, 1) == i + 3);
        std::uint8_t got[5] = {};
        f.t.get<pgas::thread>(got, i, sizeof(got), 1);
        CHECK(got[4] == std::uint8_t(i & 0xff));
    }
}

// A producer between publishing a fetching op and reading its reply (a GPU
// lane its warp-mates starve, say) must not hold the ring: its reply waits in
// its own reply entry while the others wrap the ring many times over. (When
// ring slots carried replies until acknowledged, the 5th put here waited for
// a credit that only the stalled reader could give.)
TEST_CASE("a reply nobody has read yet holds no ring slot - the ring wraps past it and the reply stays intact") {
    fixture f(4, 2000);
    const pgas::proxy::ring_view& ring = f.t.view;
    const std::uint32_t entry = ring.claim_reply("test");
    const std::uint64_t ticket = ring.push("test", [&](pgas::proxy::command& c) {
        c.op = pgas::proxy::op_code::atomic;
        c.flags = pgas::proxy::flag_reply;
        c.reply_entry = entry;
        c.amo_op = pgas::amo::fetch_add;
        c.kind = pgas::proxy::value_kind::u64;
        c.pe = 1;
        c.remote = 1000;
        c.bytes = 8;
        c.operand = 7;
    });
    for (std::uint64_t i = 0; i < 64; ++i) f.t.put_nbi<pgas::thread>(i * 8, &i, sizeof(i), 1);  // 16 laps
    f.t.quiet<pgas::thread>();
    CHECK(f.backend.put_count() == 64);
    std::uint64_t old = 0;
    ring.take_reply(ticket, entry, &old, sizeof(old), "test");
    CHECK(old == 1007);  // the gated backend's fetch_add answers remote + operand
}

// atomic_add and the other non-fetching forms (atomic_update) return once
// pushed, like put_nbi; quiet completes them. The fetching form waits.
TEST_CASE("a non-fetching atomic returns before it completes - quiet waits for it") {
    fixture f(8, 2000);
    f.backend.open = false;
    std::atomic<bool> returned{false};
    std::thread producer([&] {
        f.t.atomic_update<std::uint64_t>(pgas::amo::fetch_add, 64, std::uint64_t(5), 1);
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(returned.load());  // no completion was possible yet
    std::atomic<bool> fetched{false};
    std::thread fetcher([&] {
        (void)f.t.atomic<std::uint64_t>(pgas::amo::fetch_add, 64, std::uint64_t(1), 0, 1);
        fetched = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(fetched.load());  // the fetching form waits for its reply
    f.backend.open = true;
    producer.join();
    fetcher.join();
    f.t.quiet<pgas::thread>();
    CHECK(fetched.load());
}

TEST_CASE("a ring for GPU producers smaller than a warp's reservation is refused naming the size") {
    CHECK_THROWS_WITH_AS(pgas::proxy::ring_memory(32, pgas::proxy::producers::gpu, 3),
                         doctest::Contains("a ring for GPU producers needs at least 64 slots, got 32"), pgas::error);
}

TEST_CASE("many producers on one ring: nothing lost and nothing duplicated") {
    fixture f(8);
    constexpr int threads = 6, each = 3000;
    std::vector<std::thread> producers;
    for (int p = 0; p < threads; ++p)
        producers.emplace_back([&, p] {
            for (int i = 0; i < each; ++i) {
                const std::uint64_t v = std::uint64_t(p) * each + std::uint64_t(i);
                f.t.put_nbi<pgas::thread>(v, &v, sizeof(v), 1);
                if (i % 500 == 0) f.t.quiet<pgas::thread>();
            }
            f.t.quiet<pgas::thread>();
        });
    for (auto& t : producers) t.join();
    REQUIRE(f.backend.put_count() == std::size_t(threads) * each);
    std::vector<int> hits(std::size_t(threads) * each, 0);
    for (const auto& s : f.backend.puts) {
        REQUIRE(s.value == s.remote);
        ++hits.at(s.value);
    }
    for (int h : hits) REQUIRE(h == 1);
}

TEST_CASE("a ring that stays full times out naming the wait") {
    fixture f(2, 300);
    f.backend.open = false;
    std::uint64_t v = 1;
    f.t.put_nbi<pgas::thread>(0, &v, 8, 1);
    f.t.put_nbi<pgas::thread>(8, &v, 8, 1);
    const std::string text = test::error_of([&] { f.t.put_nbi<pgas::thread>(16, &v, 8, 1); }, pgas::errc::timeout);
    CHECK_MESSAGE(test::contains(text, "a free ring slot (ring full)"), text);
    f.backend.open = true;
}

TEST_CASE("a dead proxy thread: device waits time out with a diagnostic instead of hanging") {
    fixture f(8, 300);
    f.proxy.simulate_death();
    std::uint64_t v = 1;
    f.t.put_nbi<pgas::thread>(0, &v, 8, 1);
    const std::string text = test::error_of([&] { f.t.quiet<pgas::thread>(); }, pgas::errc::timeout);
    CHECK_MESSAGE(test::contains(text, "quiet on PE 0"), text);
    CHECK_MESSAGE(test::contains(text, "is the proxy thread alive"), text);
    CHECK_MESSAGE(test::is_wait_timeout(text), text);  // the format of every wait's timeout
}

TEST_CASE("a stopped proxy ends waits at once with its reason") {
    fixture f(8, 0);  // no timeout: only the proxy's status can end the wait
    f.proxy.stop();
    std::uint64_t v = 1;
    f.t.put_nbi<pgas::thread>(0, &v, 8, 1);
    CHECK_THROWS_WITH_AS(f.t.quiet<pgas::thread>(), doctest::Contains("the proxy thread has stopped"), pgas::error);
}
