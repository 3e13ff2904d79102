// Host transport: a team barrier that really waits, and waits that name a PE that stopped or left (put_signal, fence
// ordering, waits and tests, barriers and team syncs are shared cases: tests/common/signal_cases.hpp).
#include "support.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <cuda/atomic>

TEST_CASE("a team barrier really waits for every member") {
    pgas::world::run_threads(3, [](pgas::world& w) {
        const pgas::team all = w.team_world();
        const pgas::team pair = w.split_strided(all, 0, 2, 2);  // PEs 0 and 2
        auto mark = w.alloc<std::uint64_t>(1);
        auto ctx = w.context<pgas::host>();
        if (ctx.my_pe() == 2) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            pgas::p(ctx, mark, std::uint64_t(7), 0);
        }
        if (pair.is_member()) pgas::barrier(ctx, pair);
        if (ctx.my_pe() == 0) REQUIRE(*ctx.local(mark) == 7u);
        w.barrier();
    }, test::options());
}

// A wait on a loaded machine: each miss yields the CPU, and a yield can cost milliseconds when other threads are
// runnable (2 cores shared with a build: the fault table's stopped PE was named after 2.8-3.0 s instead of ~0.8 s,
// every check 256 yields apart). Here each miss sleeps 5 ms: the wait must still look at the heartbeats within a
// few dozen polls, not 256.
TEST_CASE("a wait whose polls yield slowly still names a stopped process soon after the heartbeat bound") {
    using namespace std::chrono;
    std::uint64_t own = pgas::detail::now_ns();
    std::uint64_t stopped = own - 600'000'000;  // silent for 600 ms: past the 500 ms bound already
    std::uint64_t* words[2] = {&own, &stopped};
    const pgas::detail::heartbeat_table table{words, 2, 0, 500'000'000};
    pgas::runtime_state runtime;
    runtime.timeout_ns = 60'000'000'000;
    runtime.heartbeats = &table;
    const auto start = steady_clock::now();
    const std::string what = test::error_of([&] {
        pgas::detail::poll_until(
            runtime, 0, "slow wait", [] { return false; }, [](std::uint64_t) { FAIL("timed out instead"); },
            pgas::detail::no_hook{}, [](unsigned) { std::this_thread::sleep_for(milliseconds(5)); });
    });
    const auto waited = duration_cast<milliseconds>(steady_clock::now() - start).count();
    CHECK_MESSAGE(what.find("PE 1 stopped responding") != std::string::npos, what);
    CHECK_MESSAGE(waited < 500, "named after " << waited << " ms");
}

// Waits that know whose write they wait for (a dissemination round: its partner's arrival) fail at once when that PE
// has left. A context of PE 0 with a heartbeat table of three: PE 1 has left, PE 2 is live.
namespace {
struct awaiting_ctx {
    pgas::runtime_state runtime;
    int my_pe() const { return 0; }
};

void arrive_after(std::uint64_t& counter, std::chrono::milliseconds delay) {
    std::this_thread::sleep_for(delay);
    cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>(counter).fetch_add(1, cuda::memory_order_release);
}

// PE 1 has left, PE 2 is live: a wait for PE 1's arrival fails at once with `named` in its text, one whose
// arrival lands between a failed poll and the check is not blamed, a wait for PE 2 or for no PE it knows waits.
void awaited_waits(awaiting_ctx& ctx, const std::string& named) {
    using namespace std::chrono;
    std::uint64_t counter = 0;
    SUBCASE("left without arriving: named at once, not after the 500 ms bound") {
        const auto start = steady_clock::now();
        const std::string what = test::error_of(
            [&] { pgas::detail::wait_address(ctx, "barrier", &counter, 0, pgas::cmp::ge, std::uint64_t{1}, 1); },
            pgas::errc::peer_failed);
        const auto waited = duration_cast<milliseconds>(steady_clock::now() - start).count();
        CHECK_MESSAGE(what.find(named) != std::string::npos, what);
        CHECK_MESSAGE(waited < 100, "named after " << waited << " ms");
    }
    SUBCASE("arrived, then left, between a failed poll and the check: the condition is tried again first") {
        bool arrived = false;
        const auto attempt = [&] { return arrived; };
        pgas::detail::poll_until(
            ctx.runtime, 0, "barrier", attempt, [](std::uint64_t) { FAIL("timed out instead"); },
            pgas::detail::no_hook{},
            [&](unsigned polls) { arrived = arrived || (polls & pgas::detail::poll_check_mask()) == 0; },
            [&] { pgas::detail::check_awaited(ctx.runtime, 0, "barrier", 1, attempt); });
        CHECK(arrived);
    }
    SUBCASE("a wait for a live PE, or for no PE it knows, still waits while another has left") {
        for (int awaited : {2, -1}) {
            CAPTURE(awaited);
            const std::uint64_t target = counter + 1;
            std::thread writer(arrive_after, std::ref(counter), milliseconds(100));
            CHECK(pgas::detail::wait_address(ctx, "barrier", &counter, 0, pgas::cmp::ge, target, awaited) == target);
            writer.join();
        }
    }
}
}  // namespace

TEST_CASE("a wait for a PE's arrival fails at once when that PE has left, and never blames one that arrived first") {
    std::uint64_t own = pgas::detail::now_ns(), live = own;
    std::uint64_t left = pgas::detail::heartbeat_left | own;
    std::uint64_t* words[3] = {&own, &left, &live};
    const pgas::detail::heartbeat_table table{words, 3, 0, 500'000'000};
    awaiting_ctx ctx;
    ctx.runtime.timeout_ns = 60'000'000'000;
    ctx.runtime.heartbeats = &table;
    awaited_waits(ctx, "barrier on PE 0: PE 1 has left (it destroyed its world) while this barrier waited for its "
                       "arrival");
}

// The same on a GPU heap, where kernels cannot read the table: the bootstrap watcher marks the PEs that left in
// runtime_state::left (mark_left_peers, every tick) and the wait reads that mark. Its host build runs here.
TEST_CASE("GPU heaps: the watcher marks a PE that left, and a wait for that PE's arrival names it at once") {
    std::uint64_t own = pgas::detail::now_ns(), live = own;
    std::uint64_t left = pgas::detail::heartbeat_left | own;
    std::uint64_t* words[3] = {&own, &left, &live};
    const pgas::detail::heartbeat_table table{words, 3, 0, 500'000'000};
    int marks[3] = {0, 0, 0};
    pgas::detail::mark_left_peers(table, marks);
    CHECK(marks[0] == 0);
    CHECK(marks[1] == 1);
    CHECK(marks[2] == 0);
    awaiting_ctx ctx;  // no heartbeat table: what a kernel sees
    ctx.runtime.timeout_ns = 60'000'000'000;
    ctx.runtime.left = marks;
    awaited_waits(ctx, "pgas: barrier on PE 0: stopped waiting: it needs the arrival of a PE that has left (destroyed "
                       "its world) while others still wait for it; PE 1");
}
