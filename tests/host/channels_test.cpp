// Host transport: channels (ctx.on_channel, world_options::channels, PGAS_CHANNELS) and the completion scopes
// quiet(ctx, pe), quiet_all and flush_local; the device layer's dispatch of each scope checked on a recording
// transport.
#include "support.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Sets an environment variable for a scope.
struct scoped_env {
    scoped_env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
    ~scoped_env() { unsetenv(name_); }
    const char* name_;
};

// A transport over one PE's memory that records which completion member the device layer called.
struct recording_transport {
    static constexpr const char* name = "recording";
    static constexpr bool provides_rma = true;
    static constexpr bool provides_atomics = false;
    static constexpr bool provides_signals = false;
    static constexpr bool provides_load_store = false;
    struct log {
        std::vector<std::string> calls;
    };
    log* calls = nullptr;
    int channel_ = 0;
    int my_pe() const { return 0; }
    int n_pes() const { return 4; }
    bool reachable(int) const { return true; }
    void* local_address(std::uint64_t) const { return nullptr; }
    std::uint64_t heap_bytes() const { return 1 << 20; }
    int channel() const { return channel_; }
    int channels() const { return 3; }
    recording_transport on_channel(int c) const {
        recording_transport t = *this;
        t.channel_ = c;
        return t;
    }
    void note(const std::string& what) const { calls->calls.push_back(what + "@" + std::to_string(channel_)); }
    template <class G> void put(std::uint64_t, const void*, std::size_t, int) const { note("put"); }
    template <class G> void put_nbi(std::uint64_t, const void*, std::size_t, int) const { note("put_nbi"); }
    template <class G> void get(void*, std::uint64_t, std::size_t, int) const { note("get"); }
    template <class G> void get_nbi(void*, std::uint64_t, std::size_t, int) const { note("get_nbi"); }
    template <class G> void fence() const { note("fence"); }
    template <class G> void quiet() const { note("quiet"); }
    template <class G> void quiet_pe(int pe) const { note("quiet_pe" + std::to_string(pe)); }
    template <class G> void quiet_all() const { note("quiet_all"); }
    template <class G> void flush_local() const { note("flush_local"); }
};
static_assert(pgas::channel_transport<recording_transport>);
static_assert(pgas::completion_scope_transport<recording_transport>);

// Without channels or scopes: the device layer falls back to quiet.
struct no_scopes_transport {
    static constexpr const char* name = "no_scopes";
    static constexpr bool provides_rma = true;
    static constexpr bool provides_atomics = false;
    static constexpr bool provides_signals = false;
    static constexpr bool provides_load_store = false;
    recording_transport::log* calls = nullptr;
    int my_pe() const { return 0; }
    int n_pes() const { return 2; }
    bool reachable(int) const { return true; }
    void* local_address(std::uint64_t) const { return nullptr; }
    std::uint64_t heap_bytes() const { return 1 << 20; }
    template <class G> void put(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G> void put_nbi(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G> void get(void*, std::uint64_t, std::size_t, int) const {}
    template <class G> void get_nbi(void*, std::uint64_t, std::size_t, int) const {}
    template <class G> void fence() const {}
    template <class G> void quiet() const { calls->calls.push_back("quiet"); }
};
static_assert(pgas::rma_transport<no_scopes_transport> && !pgas::channel_transport<no_scopes_transport> &&
              !pgas::completion_scope_transport<no_scopes_transport>);

}  // namespace

TEST_CASE("device layer: each completion scope calls its own transport member, on the context's channel") {
    recording_transport::log log;
    pgas::device::context<recording_transport> ctx;
    ctx.transport.calls = &log;
    CHECK(ctx.n_channels() == 3);
    CHECK(ctx.channel() == 0);
    const auto c2 = ctx.on_channel(2);
    CHECK(c2.channel() == 2);
    CHECK(ctx.channel() == 0);  // a copy: the original keeps its channel
    pgas::quiet(c2);
    pgas::quiet(c2, 3);
    pgas::quiet_all(c2);
    pgas::flush_local(c2);
    pgas::fence(c2);
    pgas::quiet(ctx.on_channel(1));
    CHECK(log.calls == std::vector<std::string>{"quiet@2", "quiet_pe3@2", "quiet_all@2", "flush_local@2", "fence@2",
                                                "quiet@1"});
}

TEST_CASE("device layer: a transport without channels or scopes has one channel and gets quiet for every scope") {
    recording_transport::log log;
    pgas::device::context<no_scopes_transport> ctx;
    ctx.transport.calls = &log;
    CHECK(ctx.n_channels() == 1);
    CHECK(ctx.on_channel(0).channel() == 0);
    pgas::quiet(ctx, 1);
    pgas::quiet_all(ctx);
    pgas::flush_local(ctx);
    CHECK(log.calls == std::vector<std::string>{"quiet", "quiet", "quiet"});
}

TEST_CASE("bad input: a channel out of range and quiet(ctx, pe) with a bad PE name the call, PE and value") {
    auto w = pgas::world::init_local(2, [] {
        auto o = test::options();
        o.channels = 4;
        return o;
    }());
    w.launch_host([&](const test::ctx& ctx) {
        for (int c : {-1, 4, 1000}) {
            CAPTURE(c);
            const std::string text =
                test::error_of([&] { (void)ctx.on_channel(c); }, pgas::errc::invalid_argument);
            CHECK_MESSAGE(test::contains(text, "on_channel on PE " + std::to_string(ctx.my_pe())), text);
            CHECK_MESSAGE(test::contains(text, std::to_string(c)), text);
        }
        const std::string text = test::error_of([&] { pgas::quiet(ctx, 2); }, pgas::errc::pe_out_of_range);
        CHECK_MESSAGE(test::contains(text, "quiet on PE " + std::to_string(ctx.my_pe())), text);
    });
}

TEST_CASE("channels per peer: world_options::channels, else PGAS_CHANNELS, else 1, out of range is an error") {
    CHECK(pgas::world::init_local(1, test::options()).channels() == 1);
    {
        scoped_env env("PGAS_CHANNELS", "8");
        auto w = pgas::world::init_local(2, test::options());
        CHECK(w.channels() == 8);
        w.launch_host([&](const test::ctx& ctx) { CHECK(ctx.n_channels() == 8); });
        auto o = test::options();
        o.channels = 2;  // the option wins over the environment
        CHECK(pgas::world::init_local(1, o).channels() == 2);
    }
    for (const char* text : {"0", "33", "-1", "four", "2x"}) {
        CAPTURE(text);
        scoped_env env("PGAS_CHANNELS", text);
        const std::string message =
            test::error_of([] { (void)pgas::world::init_local(1, test::options()); }, pgas::errc::invalid_argument);
        CHECK_MESSAGE(test::contains(message, "world init"), message);
        CHECK_MESSAGE(test::contains(message, "PGAS_CHANNELS"), message);
        CHECK_MESSAGE(test::contains(message, std::string("got '") + text + "'"), message);
    }
    for (int channels : {-3, 33}) {
        CAPTURE(channels);
        auto o = test::options();
        o.channels = channels;
        const std::string message = test::error_of([&] { (void)pgas::world::init_local(1, o); });
        CHECK_MESSAGE(test::contains(message, "world init on PE 0: channels must be an integer in [1, 32], got '" +
                                                  std::to_string(channels) + "'"),
                      message);
    }
}

TEST_CASE("host transport: puts on every channel, quiet(ctx, pe), flush_local and quiet_all deliver every byte") {
    test::for_each_pe_count([](int n_pes) {
        auto o = test::options();
        o.channels = 3;
        auto w = pgas::world::init_local(n_pes, o);
        constexpr std::size_t count = 100;
        auto inbox = w.alloc<std::uint64_t>(3 * count);
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), right = (me + 1) % ctx.n_pes(), left = (me + ctx.n_pes() - 1) % ctx.n_pes();
            std::vector<std::uint64_t> source(count);
            for (int c = 0; c < ctx.n_channels(); ++c) {
                const auto on_c = ctx.on_channel(c);
                CHECK(on_c.channel() == c);
                for (std::size_t i = 0; i < count; ++i) source[i] = test::mix(std::uint64_t(me), i, std::uint64_t(c));
                pgas::put_nbi(on_c, inbox + std::ptrdiff_t(c * count), source.data(), count, right);
                pgas::flush_local(on_c);
                source.assign(count, 0);  // reusable after flush_local
                if (c == 1) pgas::quiet(on_c, right);
            }
            pgas::quiet_all(ctx);
            pgas::barrier_all(ctx);
            for (int c = 0; c < 3; ++c)
                for (std::size_t i = 0; i < count; ++i)
                    REQUIRE(ctx.local(inbox)[c * count + i] == test::mix(std::uint64_t(left), i, std::uint64_t(c)));
        });
    });
}
