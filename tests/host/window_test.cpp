// Host transport: registered windows (world::register_window / release_window, device/window.hpp): the shared case
// (tests/common/window_cases.hpp: every op on buffers the PEs allocated themselves) for PE threads of one world and
// SPMD threads, the handle and its table, SPMD registration, and the bad-input errors.
#include "support.hpp"

#include "../common/window_cases.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

// One buffer per PE, each its own heap allocation of the program (not the symmetric heap), filled with a marker.
struct buffers {
    std::vector<std::unique_ptr<std::uint64_t[]>> memory;
    std::vector<std::uint64_t*> pointers;
    buffers(int n, std::size_t count) {
        for (int pe = 0; pe < n; ++pe) {
            memory.emplace_back(new std::uint64_t[count]);
            for (std::size_t i = 0; i < count; ++i) memory.back()[i] = ~std::uint64_t{0};
            pointers.push_back(memory.back().get());
        }
    }
};

}  // namespace

PGAS_TEST_WINDOW_CASES(test::host_threads, test::host_spmd);

TEST_CASE("register_window: the handle's size and offset, its table in the heap, window_local and window_peer") {
    test::for_each_pe_count([](int n) {
        constexpr std::size_t count = 64;
        auto w = pgas::world::init_local(n, test::options());
        buffers mine(n, count);
        const std::uint64_t heap_free = w.heap_free_bytes();
        const auto win = w.register_window(mine.pointers, count);
        CHECK(win.size() == count);
        CHECK(win.offset() == 0);
        CHECK(w.live_windows() == 1);
        CHECK(w.heap_free_bytes() < heap_free);  // the per-PE table lives in the heap
        w.launch_host([&](const test::ctx& ctx) {
            CHECK(pgas::window_local(ctx, win) == mine.pointers[std::size_t(ctx.my_pe())]);
            for (int q = 0; q < n; ++q) CHECK(pgas::window_peer(ctx, win + 5, q) == mine.pointers[std::size_t(q)] + 5);
        });
        w.release_window(win);
        CHECK(w.live_windows() == 0);
        CHECK(w.heap_free_bytes() == heap_free);
    });
}

TEST_CASE("register_window in SPMD threads: each PE passes its own buffer, every PE gets the same handle") {
    constexpr int n = 4;
    constexpr std::size_t count = 100;
    std::vector<pgas::window<float>> handles(n);
    pgas::world::run_threads(n, [&](pgas::world& w) {
        const int me = w.my_pe();
        std::vector<float> buffer(count, -1.0f);  // allocated by this PE's thread, at its own address
        const auto win = w.register_window(buffer.data(), count);
        handles[std::size_t(me)] = win;
        const auto ctx = w.context<pgas::host>();
        std::vector<float> src(count);
        for (std::size_t i = 0; i < count; ++i) src[i] = float(me) + float(i) / 1000.0f;
        pgas::put<pgas::block>(ctx, win, src.data(), count, (me + 1) % n);
        pgas::barrier_all(ctx);
        for (std::size_t i = 0; i < count; ++i) REQUIRE(buffer[i] == float((me + n - 1) % n) + float(i) / 1000.0f);
        pgas::barrier_all(ctx);
        w.release_window(win);
        // A second window reuses the released table block, under a new id.
        const auto again = w.register_window(buffer.data(), count);
        CHECK(again.table_offset() == win.table_offset());
        CHECK(again.id() != win.id());
        w.release_window(again);
    }, test::options());
    for (const auto& h : handles) CHECK(h == handles[0]);
}

TEST_CASE("bad input: a null pointer is named by its PE, every other PE names that PE, the world stays usable") {
    std::vector<std::string> texts(3);
    pgas::world::run_threads(3, [&](pgas::world& w) {
        std::vector<int> buffer(10);
        int* mine = w.my_pe() == 1 ? nullptr : buffer.data();
        texts[std::size_t(w.my_pe())] = test::error_of([&] { (void)w.register_window(mine, 10); }, pgas::errc::invalid_argument);
        CHECK(w.live_windows() == 0);
        const auto ok = w.register_window(buffer.data(), 10);  // nothing was left half-registered
        w.release_window(ok);
    }, test::options());
    CHECK(texts[1] == "pgas: register_window on PE 1: null pointer (40 bytes)");
    for (int pe : {0, 2})
        CHECK(texts[std::size_t(pe)] == "pgas: register_window on PE " + std::to_string(pe) +
                                            ": PE 1 passed a buffer it cannot register (its own error says why); no "
                                            "window was registered");
}

TEST_CASE("bad input: different sizes across PEs are reported by every PE") {
    std::vector<std::string> texts(3);
    pgas::world::run_threads(3, [&](pgas::world& w) {
        std::vector<double> buffer(20);
        const int count = w.my_pe() == 2 ? 20 : 10;
        texts[std::size_t(w.my_pe())] =
            test::error_of([&] { (void)w.register_window(buffer.data(), count); }, pgas::errc::collective_mismatch);
    }, test::options());
    CHECK(texts[0] == "pgas: register_window on PE 0: bytes = 80 here but 160 on PE 2");
    CHECK(texts[1] == "pgas: register_window on PE 1: bytes = 80 here but 160 on PE 2");
    CHECK(texts[2] == "pgas: register_window on PE 2: bytes = 160 here but 80 on PE 0");
}

TEST_CASE("bad input: a count <= 0, one buffer for several local PEs, a buffer list of the wrong length") {
    auto w = pgas::world::init_local(2, test::options());
    std::vector<int> a(4), b(4);
    CHECK(test::error_of([&] { (void)w.register_window(std::vector<int*>{a.data(), b.data()}, 0); },
                     pgas::errc::invalid_argument) == "pgas: register_window on PE 0: element count must be positive, got 0");
    CHECK(test::error_of([&] { (void)w.register_window(std::vector<int*>{a.data(), b.data()}, -3); },
                     pgas::errc::invalid_argument) == "pgas: register_window on PE 0: element count must be positive, got -3");
    CHECK(test::error_of([&] { (void)w.register_window(a.data(), 4); }, pgas::errc::invalid_argument) ==
          "pgas: register_window: this world drives 2 PEs: pass one buffer per local PE (register_window(std::vector<T*>, "
          "count))");
    CHECK(test::error_of([&] { (void)w.register_window(std::vector<int*>{a.data()}, 4); }, pgas::errc::invalid_argument) ==
          "pgas: register_window: one buffer per local PE: got 1 for 2 local PEs");
    CHECK(w.live_windows() == 0);
}

// register_symmetric maps cuMemCreate buffers into a GPU heap (tests/gpu/gpu_window_test.cu); on a host heap each
// PE is told so and what to use instead, and nothing else changes.
TEST_CASE("bad input: register_symmetric and unregister_symmetric on the host transport name the call and the PE") {
    pgas::world::run_threads(2, [&](pgas::world& w) {
        std::vector<int> mine(64);
        const std::string on = "pgas: register_symmetric on PE " + std::to_string(w.my_pe()) + ": ";
        CHECK(test::error_of([&] { (void)w.register_symmetric(mine.data(), 64); }, pgas::errc::transport_unavailable) ==
              on + "needs a GPU heap (CUDA VMM): on a host heap use alloc, or register_window");
        CHECK(test::error_of([&] { w.unregister_symmetric(pgas::symmetric_ptr<int>{}); },
                             pgas::errc::transport_unavailable) ==
              "pgas: unregister_symmetric on PE " + std::to_string(w.my_pe()) +
                  ": needs a GPU heap (CUDA VMM): on a host heap use alloc, or register_window");
        auto block = w.alloc<int>(64);  // the world goes on
        w.free(block);
    });
}

TEST_CASE("bad input: releasing a window twice, a null window, or another world's window") {
    pgas::world::run_threads(2, [&](pgas::world& w) {
        std::vector<int> buffer(8);
        const auto win = w.register_window(buffer.data(), 8);
        w.release_window(win);
        const std::string pe = std::to_string(w.my_pe());
        CHECK(test::error_of([&] { w.release_window(win); }, pgas::errc::invalid_argument) ==
              "pgas: release_window on PE " + pe + ": window (table offset " + std::to_string(win.table_offset()) +
                  ", id " + std::to_string(win.id()) + ") is not a live window of this world (released twice, never registered, or from another "
                  "world)");
        CHECK(test::error_of([&] { w.release_window(pgas::window<int>()); }, pgas::errc::invalid_argument) ==
              "pgas: release_window on PE " + pe +
                  ": window (table offset null, id 0) is not a live window of this world (released twice, never "
                  "registered, or from another world)");
    }, test::options());
    auto other = pgas::world::init_local(1, test::options());
    auto w = pgas::world::init_local(1, test::options());
    int x[2] = {};
    auto a = w.register_window(x, 2);
    auto b = other.register_window(x, 1);  // same table offset, another world
    CHECK(b.table_offset() == a.table_offset());
    CHECK(test::error_of([&] { other.release_window(a); }, pgas::errc::invalid_argument) ==
          "pgas: release_window on PE 0: window (table offset " + std::to_string(a.table_offset()) +
              ", id " + std::to_string(a.id()) + ") is not a live window of this world (released twice, never registered, or from another world)");
    (void)b;
}

TEST_CASE("bad input: PEs releasing different windows are found on every PE") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(2, [&](pgas::world& w) {
        std::vector<int> x(4), y(4);
        const auto a = w.register_window(x.data(), 4);
        const auto b = w.register_window(y.data(), 4);
        const std::string text =
            test::error_of([&] { w.release_window(w.my_pe() == 0 ? a : b); }, pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(text, "release_window on PE " + std::to_string(w.my_pe()) + ": window table offset = "),
                      text);
        ++errors;
        w.release_window(a);
        w.release_window(b);
    }, test::options());
    CHECK(errors == 2);
}

TEST_CASE("bad input (PGAS_CHECKS): a window op past the buffer's end, to a PE out of range, on a released window") {
    auto w = pgas::world::init_local(2, test::options());
    std::vector<int> a(10), b(10);
    const auto win = w.register_window(std::vector<int*>{a.data(), b.data()}, 10);
    const auto ctx = w.context<pgas::host>(0);
    int src[16] = {1, 2, 3, 4};  // room for the refused 11-element get: no out-of-bounds path for the compiler to see
    CHECK(test::error_of([&] { pgas::put(ctx, win + 8, src, 4, 1); }, pgas::errc::invalid_argument) ==
          "pgas: put on PE 0: range past the end of the window, last element 11");
    CHECK(test::error_of([&] { pgas::get(ctx, src, win, 11, 1); }, pgas::errc::invalid_argument) ==
          "pgas: get on PE 0: range past the end of the window, last element 10");
    CHECK(test::error_of([&] { pgas::p(ctx, win, 1, 2); }, pgas::errc::pe_out_of_range) == "pgas: p on PE 0: target PE 2");
    CHECK(test::error_of([&] { (void)pgas::g(ctx, pgas::window<int>(), 1); }, pgas::errc::not_symmetric) ==
          "pgas: g on PE 0: null window, table offset -1");
    pgas::put(ctx, win + 6, src, 4, 1);  // the last four elements: fine
    CHECK(b[9] == 4);
    w.release_window(win);
    CHECK(test::error_of([&] { pgas::put(ctx, win, src, 1, 1); }, pgas::errc::transport_unavailable) ==
          "pgas: put on PE 0: window buffer not mapped here (not load/store reachable, or released), target PE 1");
}

TEST_CASE("register_window on a route<host, host> context: puts to near and far peers land in their buffers") {
    pgas::world::run_threads(4, [&](pgas::world& w) {
        const int me = w.my_pe();
        pgas::transport_builder_t<pgas::route<pgas::host, pgas::host>> routes(w, {.near_pes = pgas::pe_range{me / 2 * 2, 2}});
        const auto ctx = routes.context();
        std::vector<int> buffer(4, -1);
        const auto win = w.register_window(buffer.data(), 4);
        for (int q = 0; q < 4; ++q) pgas::p(ctx, win + me, 10 * me + q, q);  // near (me ^ 1) and far peers alike
        pgas::barrier_all(ctx);
        for (int q = 0; q < 4; ++q) CHECK(buffer[std::size_t(q)] == 10 * q + me);
        pgas::barrier_all(ctx);
        w.release_window(win);
    }, test::options());
}
