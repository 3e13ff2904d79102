// Registered windows over ibgda against the emulated NIC: the shared case (tests/common/window_cases.hpp: every op at
// element offsets into buffers the PEs allocated themselves, host memory here, each landing in the target PE's own
// buffer only), 4-byte and floating-point atomics, groups, another channel; the checks' exact texts; a refused
// registration failing every PE together; release.
#include "support.hpp"

#include "../common/window_cases.hpp"

#include <pgas/device/window.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr std::size_t elements = 64;
constexpr std::uint64_t untouched = 0x5555555555555555ull;

std::uint64_t value_of(int pe, std::size_t i, int round) { return test::mix(std::uint64_t(pe), i, std::uint64_t(round)); }

// One buffer per PE, every element `untouched` (so a stray write shows), as plain host vectors.
struct buffers {
    explicit buffers(int n) : data(std::size_t(n), std::vector<std::uint64_t>(elements, untouched)) {}
    std::vector<std::uint64_t*> pointers() {
        std::vector<std::uint64_t*> out;
        for (auto& d : data) out.push_back(d.data());
        return out;
    }
    std::vector<std::vector<std::uint64_t>> data;
};

// Every element of PE pe's buffer outside [first, first + count) still untouched.
void check_only(const std::vector<std::uint64_t>& buffer, std::size_t first, std::size_t count) {
    for (std::size_t i = 0; i < buffer.size(); ++i)
        if (i < first || i >= first + count) {
            CAPTURE(i);
            REQUIRE(buffer[i] == untouched);
        }
}

}  // namespace

PGAS_TEST_WINDOW_CASES(test::emulated_nic, test::emulated_nic_ring_cq);

TEST_CASE("ibgda windows: 4-byte and floating-point atomics, warps and blocks as groups, another channel") {
    constexpr int n = 2;
    auto w = pgas::world::init_local(n, test::options());
    auto o = test::emulated(64);
    o.channels = 2;
    pgas::ibgda_domain ib(w, o);
    std::vector<std::vector<std::uint32_t>> words(n, std::vector<std::uint32_t>(1000, 0));
    std::vector<std::vector<double>> sums(n, std::vector<double>(4, 0.0));
    auto win = w.register_window(std::vector<std::uint32_t*>{words[0].data(), words[1].data()}, 1000);
    auto totals = w.register_window(std::vector<double*>{sums[0].data(), sums[1].data()}, 4);
    test::launch(w, ib, [&](const test::ib_ctx& base) {
        const auto ctx = base.on_channel(1);
        const int me = ctx.my_pe(), other = 1 - me;
        std::vector<std::uint32_t> src(700);
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = std::uint32_t(value_of(me, i, 9));
        pgas::put_nbi<pgas::warp>(ctx, win + 300, src.data(), src.size(), other);
        pgas::quiet(ctx, other);
        CHECK(pgas::detail::ibgda_load(ctx.transport.queue_pair(other, 0).reserved) == 0);  // channel 1's QP only
        pgas::barrier_all(ctx);
        std::vector<std::uint32_t> back(700);
        pgas::get<pgas::block>(ctx, back.data(), win + 300, back.size(), other);
        for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == std::uint32_t(value_of(me, i, 9)));
        pgas::barrier_all(ctx);  // every get is done before the atomics change element 999
        for (int k = 0; k < 5; ++k) (void)pgas::atomic_fetch_add(ctx, win + 999, std::uint32_t{3}, 0);  // masked FA
        pgas::atomic_add(ctx, totals + 2, 0.25 + me, 0);  // compare-swap loop on the NIC
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
    });
    for (int pe = 0; pe < n; ++pe) {
        const auto& b = words[std::size_t(pe)];
        for (std::size_t i = 0; i < 300; ++i) REQUIRE(b[i] == 0);
        for (std::size_t i = 0; i < 700; ++i)  // element 999 of PE 0 also took 2 PEs x 5 fetch_adds of 3
            REQUIRE(b[300 + i] == std::uint32_t(value_of(1 - pe, i, 9)) + (pe == 0 && i == 699 ? 30u : 0u));
    }
    CHECK(sums[0][2] == 1.5);
    CHECK(sums[0][1] == 0.0);
    CHECK(sums[0][3] == 0.0);
    CHECK(sums[1][2] == 0.0);
    w.release_window(totals);
    w.release_window(win);
    CHECK(ib.emulated_nic().first_violation() == "");
}

TEST_CASE("ibgda windows: the checks name the call, the PE and the value, before any WQE") {
    auto w = pgas::world::init_local(2, test::options());
    pgas::ibgda_domain ib(w, test::emulated());
    buffers mine(2);
    auto win = w.register_window(mine.pointers(), elements);
    const auto stats_before = ib.emulated_nic().stats();
    auto ctx = ib.context(0);
    std::uint64_t v[5] = {1, 2, 3, 4, 5};
    auto expect = [&](auto&& call, pgas::errc code, const std::string& text) {
        CHECK(test::error_of(call, code) == text);
    };
    expect([&] { pgas::put(ctx, win + 60, v, 5, 1); }, pgas::errc::invalid_argument,
           "pgas: put on PE 0: range past the end of the window, last element 64");
    expect([&] { (void)pgas::atomic_fetch_add(ctx, win + 64, std::uint64_t{1}, 1); }, pgas::errc::invalid_argument,
           "pgas: atomic_fetch_add on PE 0: range past the end of the window, last element 64");
    expect([&] { pgas::p(ctx, win, std::uint64_t{1}, 2); }, pgas::errc::pe_out_of_range,
           "pgas: p on PE 0: target PE 2");
    expect([&] { pgas::put(ctx, pgas::window<std::uint64_t>{}, v, 1, 1); }, pgas::errc::not_symmetric,
           "pgas: put on PE 0: null window, table offset -1");
    // Below the device API: the transport checks the byte range against the target's registered buffer.
    expect([&] { ctx.transport.window_put_nbi<pgas::thread>(win.table_offset(), 508, v, 8, 1); },
           pgas::errc::invalid_argument,
           "pgas: put_nbi on PE 0: range past the end of the target's window buffer, last byte 515");
    CHECK(ib.emulated_nic().stats().wqes == stats_before.wqes);  // nothing was posted
    CHECK(mine.data[1][63] == untouched);

    // A handle kept past release_window: its rows are zero, the keys deregistered from the NIC.
    const std::uint64_t buffer1 = reinterpret_cast<std::uint64_t>(mine.data[1].data());
    const auto row = static_cast<const pgas::detail::window_row*>(ctx.transport.local_address(win.table_offset()))[1];
    CHECK(row.remote == buffer1);
    CHECK(row.bytes == elements * 8);
    CHECK(ib.emulated_nic().resolves(1, row.rkey, buffer1, elements * 8));
    CHECK_FALSE(ib.emulated_nic().resolves(1, row.rkey, buffer1, elements * 8 + 1));
    CHECK_FALSE(ib.emulated_nic().resolves(0, row.rkey, buffer1, 8));  // PE 1's buffer, not PE 0's
    w.release_window(win);
    CHECK_FALSE(ib.emulated_nic().resolves(1, row.rkey, buffer1, 8));
    expect([&] { pgas::put(ctx, win, v, 1, 1); }, pgas::errc::transport_unavailable,
           "pgas: put on PE 0: window buffer not registered with the NIC (released, or registered where no "
           "ibgda_domain saw it), target PE 1");
    CHECK(mine.data[1][0] == untouched);
}

TEST_CASE("ibgda windows: release completes WQEs not yet rung before it deregisters") {
    auto w = pgas::world::init_local(2, test::options());
    pgas::ibgda_domain ib(w, test::emulated(64, 16));  // nbi posts wait for 16 blocks before ringing
    buffers mine(2);
    auto win = w.register_window(mine.pointers(), elements);
    auto ctx = ib.context(0);
    const std::uint64_t v = 42;
    pgas::put_nbi(ctx, win + 7, &v, 1, 1);
    CHECK(ib.emulated_nic().executed(0, 1, 0) == 0);  // posted, not rung
    w.release_window(win);  // the domain's quiesce rings and completes it before deregistering
    CHECK(mine.data[1][7] == 42);
    check_only(mine.data[1], 7, 1);
    CHECK(ib.emulated_nic().first_violation() == "");
    const auto& qp = ctx.transport.queue_pair(1);
    CHECK(pgas::detail::ibgda_load(qp.completed) == pgas::detail::ibgda_load(qp.reserved));
    CHECK(pgas::detail::ibgda_load(qp.error) == 0);
}

TEST_CASE("ibgda windows: a window registered before the domain exists is reached through it") {
    auto w = pgas::world::init_local(2, test::options());
    buffers mine(2);
    auto win = w.register_window(mine.pointers(), elements);
    {
        pgas::ibgda_domain ib(w, test::emulated());
        CHECK(ib.live_windows() == 1);
        test::launch(w, ib, [&](const test::ib_ctx& ctx) {
            const int me = ctx.my_pe();
            pgas::p(ctx, win + 3, std::uint64_t(40 + me), 1 - me);
            pgas::quiet(ctx);
            pgas::barrier_all(ctx);
        });
        CHECK(mine.data[0][3] == 41);
        CHECK(mine.data[1][3] == 40);
        check_only(mine.data[0], 3, 1);
        check_only(mine.data[1], 3, 1);
    }
    w.release_window(win);  // no domain observes it any more: the world alone releases it
    CHECK(w.live_windows() == 0);
}

TEST_CASE("ibgda windows: a PE whose NIC refuses the registration fails every PE together, and nothing is left") {
    constexpr int n = 3;
    pgas::world::run_threads(n, [](pgas::world& w) {
        pgas::ibgda_domain ib(w, test::emulated());
        const int me = w.my_pe();
        std::vector<std::uint64_t> mine(elements, untouched);
        if (me == 1) ib.emulated_nic().refuse_next_registration(1);
        const std::string text =
            test::error_of([&] { (void)w.register_window(mine.data(), elements); }, pgas::errc::transport_unavailable);
        if (me == 1)
            CHECK(text == "pgas: register_window on PE 1: the emulated NIC refused to register the buffer (512 bytes; "
                          "ibgda_emulated_nic::refuse_next_registration)");
        else
            CHECK(text == "pgas: register_window on PE " + std::to_string(me) +
                              ": PE 1 could not register its buffer with its NIC (its own error says why); no window "
                              "was registered");
        CHECK(w.live_windows() == 0);
        CHECK(ib.live_windows() == 0);
        // The next registration works everywhere.
        auto win = w.register_window(mine.data(), elements);
        auto ctx = ib.context();
        pgas::p(ctx, win + me, std::uint64_t(me), (me + 1) % n);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        CHECK(mine[std::size_t((me + n - 1) % n)] == std::uint64_t((me + n - 1) % n));
        pgas::barrier_all(ctx);
        w.release_window(win);
    }, test::options());
}
