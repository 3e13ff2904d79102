// One process of a multi-process test world (started by pgasrun or by the tests): the scenario is argv[1].
//
//   ring                      put a ring shift over the shm heap with the host transport, check every byte; then
//                             team_node, an aligned alloc and 80 split teams made and destroyed
//   alloc_mismatch            PE 1 allocates another size; every PE must report the mismatch
//   window_processes          every PE registers a buffer of its own; the host transport between processes must
//                             refuse it on every PE with the text that says what is supported
//   die_in_init VICTIM WHEN   VICTIM exits (status 3) before init (WHEN=before), after joining the
//                             bootstrap (WHEN=joined), or in init while PE 1 has not joined yet (WHEN=admission:
//                             PE 1 starts 2.5 s late); the others must fail init with an error
//   die_in_barrier VICTIM KIND  after init, VICTIM exits in a host barrier (KIND=host) or a device
//                             barrier (KIND=device; device-unwatched: without the peer-failure flag and the heartbeats;
//                             device-after-send: the victim dies inside a host barrier the others skip);
//                             the others must fail with an error
//   leave VICTIM WHEN         VICTIM finalizes its world in good order and exits 0.
//                             WHEN=unentered: 50 ms after a host barrier, while the others wait in a device barrier it
//                             never enters; they print "barrier failed after N ms (peer_failed): <what()>", N from
//                             their entry. WHEN=entered: VICTIM enters the device barrier 200 ms after the others
//                             and leaves as soon as it returns (the last to enter finishes first, while others still
//                             wait in later rounds); the others then meet in a device barrier of their own team (every
//                             PE but VICTIM, the last PE) that PE 0 enters 200 ms late, and print "completed in N ms"
//   exit RANK CODE            RANK exits with CODE after init, the others stay busy (sleep)
//   unfinalized               PE 1 exits 0 after init without finalizing; the others put/quiet/get to it
//   timing                    host barriers, alloc+free and device barriers timed; PE 0 prints us per call
//   hostile_target            the job a hostile client attacks (hostile_client.cpp): the last rank waits (at most
//                             10 s) for the file $PGAS_TEST_GATE before init, so the root is still admitting while the
//                             client connects; then alloc, barriers, a ring of p/g, free; rank 0 prints its peak RSS
//                             ("root VmHWM N kB") and every PE "hostile target ok"
//
// A survivor that sees the expected pgas::error prints "expected error after N ms: <what()>" and exits 0.
#include <pgas/pgas.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <array>
#include <csignal>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
const auto started = clock_type::now();

long long elapsed_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - started).count();
}

int my_rank() { return std::atoi(std::getenv("PGAS_RANK") ? std::getenv("PGAS_RANK") : "0"); }

pgas::world_options options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{32} << 20;
    return o;
}

int expected(const pgas::error& e) {
    std::printf("expected error after %lld ms: %s\n", elapsed_ms(), e.what());
    std::fflush(stdout);
    return 0;
}

[[noreturn]] void die() {
    std::fflush(stdout);
    ::_exit(3);
}

std::uint64_t pattern(int pe, std::size_t i) { return (std::uint64_t(pe) << 40) ^ (i * 0x9e3779b97f4a7c15ull); }

int ring() {
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    const int me = ctx.my_pe(), n = ctx.n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    constexpr std::size_t count = 100000;  // crosses many pages
    auto inbox = w.alloc<std::uint64_t>(count);
    auto word = w.alloc<int>(n);
    std::vector<std::uint64_t> source(count);
    for (std::size_t i = 0; i < count; ++i) source[i] = pattern(me, i);
    pgas::put(ctx, inbox, source.data(), count, right);
    pgas::p(ctx, word + me, me + 1000, right);
    pgas::barrier_all(ctx);
    for (std::size_t i = 0; i < count; ++i)
        if (ctx.local(inbox)[i] != pattern(left, i)) {
            std::printf("PE %d: element %zu is %llx, expected %llx from PE %d\n", me, i,
                        (unsigned long long)ctx.local(inbox)[i], (unsigned long long)pattern(left, i), left);
            return 1;
        }
    if (ctx.local(word)[left] != left + 1000 || pgas::g(ctx, word + me, right) != me + 1000) {
        std::printf("PE %d: p/g across processes lost a value\n", me);
        return 1;
    }
    w.barrier();
    w.free(word);
    w.free(inbox);
    // Teams and alignment across processes: the node team found by host name, an aligned block at an aligned address in
    // every process's mapping of every heap, and split teams destroyed so that their slot is reused.
    const auto node = w.team_node();
    if (node.n_pes() != n || node.my_pe() != me) {
        std::printf("PE %d: team_node has %d PEs and index %d, expected %d and %d\n", me, node.n_pes(), node.my_pe(), n, me);
        return 1;
    }
    pgas::barrier(ctx, node);
    constexpr std::uintptr_t alignment = std::uintptr_t{1} << 20;
    auto aligned = w.alloc<std::uint64_t>(16, alignment);
    for (int q = 0; q < n; ++q)
        if (reinterpret_cast<std::uintptr_t>(ctx.peer(aligned, q)) % alignment != 0) {
            std::printf("PE %d: PE %d's aligned block is not 1 MiB aligned here\n", me, q);
            return 1;
        }
    for (int i = 0; i < 80; ++i) {  // more than team::max_slots
        auto t = w.split_strided(w.team_world(), i % n, 1, n - i % n);
        if (t.is_member()) pgas::barrier(ctx, t);
        w.destroy_team(t);
    }
    w.free(aligned);
    std::printf("ring ok on PE %d of %d\n", me, n);
    return 0;
}

int alloc_mismatch() {
    auto w = pgas::world::init(options());
    try {
        (void)w.alloc<int>(w.my_pe() == 1 ? 20 : 10);
        std::printf("PE %d: alloc did not report the mismatch\n", w.my_pe());
        return 1;
    } catch (const pgas::error& e) {
        if (e.code() != pgas::errc::collective_mismatch) throw;
        std::printf("mismatch reported: %s\n", e.what());
    }
    auto ok = w.alloc<int>(10);  // the world stays usable
    w.barrier();
    w.free(ok);
    return 0;
}

int window_processes() {
    auto w = pgas::world::init(options());
    std::vector<int> buffer(16);
    const std::string expected = "pgas: register_window on PE " + std::to_string(w.my_pe()) + ": PE " +
                                 std::to_string(w.my_pe() == 0 ? 1 : 0) +
                                 " is another process: the host transport reaches a window only between PEs that "
                                 "are threads of one process (init_local(n), run_threads); between processes "
                                 "allocate the buffer in the symmetric heap (alloc)";
    try {
        (void)w.register_window(buffer.data(), 16);
        std::printf("PE %d: register_window did not report the processes\n", w.my_pe());
        return 1;
    } catch (const pgas::error& e) {
        if (e.code() != pgas::errc::transport_unavailable || e.what() != expected) {
            std::printf("PE %d: wrong error text: %s\n", w.my_pe(), e.what());
            return 1;
        }
        std::printf("refused as expected: %s\n", e.what());
    }
    if (w.live_windows() != 0) return 1;
    auto ok = w.alloc<int>(10);  // the world stays usable
    w.barrier();
    w.free(ok);
    return 0;
}

int die_in_init(int victim, const std::string& when) {
    if (my_rank() == victim && when == "before") die();
    if (my_rank() == victim && when == "joined") {
        pgas::detail::tcp_bootstrap joined(pgas::read_launch_env());
        die();
    }
    if (when == "admission") {  // VICTIM dies 200 ms into init, PE 1 starts init 2.5 s late
        if (my_rank() == victim) std::thread([] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); die(); }).detach();
        if (my_rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    }
    try {
        auto w = pgas::world::init(options());
        std::printf("PE %d: init succeeded without PE %d\n", w.my_pe(), victim);
        return 1;
    } catch (const pgas::error& e) {
        return expected(e);
    }
}

int die_in_barrier(int victim, const std::string& kind) {
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    if (kind == "device-unwatched") {  // only the wait's own timeout is left: no peer-failure flag, no heartbeats
        ctx.runtime.abort_flag = nullptr;
        ctx.runtime.heartbeats = nullptr;
    }
    w.barrier();
    if (w.my_pe() == victim && kind == "device-after-send") {
        // Dies inside a host barrier the others never enter: its frame is sent, unread.
        std::thread([&w] {
            try {
                w.barrier();
            } catch (...) {
            }
        }).detach();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    if (w.my_pe() == victim) die();
    try {
        if (kind == "host")
            w.barrier();
        else
            pgas::barrier_all(ctx);
        std::printf("PE %d: the barrier completed without PE %d\n", w.my_pe(), victim);
        return 1;
    } catch (const pgas::error& e) {
        return expected(e);
    }
}

int leave(int victim, const std::string& when) {
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    const int me = w.my_pe();
    const auto leave_now = [&w] {
        { const pgas::world gone = std::move(w); }
        std::printf("left in good order\n");
        std::fflush(stdout);
        return 0;
    };
    const auto since = [](clock_type::time_point at) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - at).count();
    };
    if (when == "unentered") {
        w.barrier();
        if (me == victim) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            return leave_now();
        }
        const auto entered = clock_type::now();
        try {
            pgas::barrier_all(ctx);
            std::printf("PE %d: the barrier completed without PE %d\n", me, victim);
            return 1;
        } catch (const pgas::error& e) {
            std::printf("barrier failed after %lld ms (%s): %s\n", static_cast<long long>(since(entered)),
                        e.code() == pgas::errc::peer_failed ? "peer_failed" : "another code", e.what());
            return 0;
        }
    }
    if (victim != w.n_pes() - 1) return 2;  // the others' team is every PE but the last
    pgas::team others = w.split_strided(w.team_world(), 0, 1, w.n_pes() - 1);
    w.barrier();
    if (me == victim) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    pgas::barrier_all(ctx);
    if (me == victim) return leave_now();
    if (me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto entered = clock_type::now();
    pgas::barrier(ctx, others);
    std::printf("completed in %lld ms\n", static_cast<long long>(since(entered)));
    return 0;
}

int exit_with(int rank, int code) {
    auto w = pgas::world::init(options());
    if (w.my_pe() == rank) {
        std::printf("PE %d exits with %d\n", rank, code);
        std::fflush(stdout);
        ::_exit(code);
    }
    // No collective here: the others would see the death themselves and fail
    // first; this scenario is about pgasrun stopping processes that are busy.
    ::sleep(60);
    return 0;
}

// The paths that do not fail, timed (fault detection must not slow them down): host barriers, alloc+free pairs
// and device barriers over the shm heap; PE 0 prints microseconds per call.
int timing() {
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    const auto per_call = [&](int calls, auto&& call) {
        w.barrier();
        const auto start = clock_type::now();
        for (int i = 0; i < calls; ++i) call();
        return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / calls;
    };
    const double host = per_call(2000, [&] { w.barrier(); });
    const double alloc = per_call(500, [&] { w.free(w.alloc<std::uint64_t>(64)); });
    const double device = per_call(20000, [&] { pgas::barrier_all(ctx); });
    if (w.my_pe() == 0)
        std::printf("timing: host barrier %.1f us, alloc+free %.1f us, device barrier %.2f us\n", host, alloc, device);
    return 0;
}

// PE 1 _exits 0 after init without finalizing; the others put to it, quiet, get from it, print "PUT_DONE" and
// finalize; the job must not exit 0 once the root has recorded the death.
int unfinalized() {
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    auto word = w.alloc<int>(1);
    w.barrier();
    if (w.my_pe() == 1) {
        std::fflush(stdout);
        ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    pgas::p(ctx, word, 42, 1);
    pgas::quiet(ctx);
    std::printf("PUT_DONE %d\n", pgas::g(ctx, word, 1));
    std::fflush(stdout);
    return 0;
}

// Fault injection: VICTIM sends itself SIGNAL (KILL or STOP; LEAVE: it destroys its world in good order and
// exits 0, at barrier or device only) at STAGE (init: before world::init; admission: inside
// world::init once it joined, while the last rank has not; alloc, free, barrier: before that host collective; fd:
// inside an fd exchange, its descriptor message cut short; device: inside a loop of device barriers; collective:
// inside a loop of allreduces in launch_host; external: every PE prints "ready", VICTIM sleeps until the test kills it, the
// others wait in a host barrier). The survivors must fail with an error naming the victim; they print it
// with the time it took (in a loop of device barriers: since entering the barrier that failed) and exit 1, as a
// real program would.
int fault(const std::string& stage, const std::string& signal_name, int victim) {
    const int sig = signal_name == "STOP" ? SIGSTOP : SIGKILL;
    const bool leave = signal_name == "LEAVE";  // the victim destroys its world in good order there, and exits 0
    std::printf("pid %d\n", int(::getpid()));
    std::fflush(stdout);
    const bool me = my_rank() == victim;
    if (me && stage == "init") ::raise(sig);
    if (stage == "admission") {  // the victim joins; the last rank joins 600 ms later, after the signal
        if (me) std::thread([sig] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); ::raise(sig); }).detach();
        if (my_rank() == std::atoi(std::getenv("PGAS_WORLD_SIZE")) - 1)
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    const auto leave_now = [&w] {
        { const pgas::world gone = std::move(w); }
        std::printf("left in good order\n");
        std::fflush(stdout);
        return 0;
    };
    auto flag = w.alloc<std::uint64_t>(8);
    auto block = w.alloc<std::uint64_t>(16);
    w.barrier();
    auto before = clock_type::now();
    try {
        if (stage == "alloc") {
            if (me) ::raise(sig);
            (void)w.alloc<std::uint64_t>(16);
        } else if (stage == "free") {
            if (me) ::raise(sig);
            w.free(block);
        } else if (stage == "collective") {
            w.launch_host([&](const pgas::device::context<pgas::host>& pe) {
                for (int i = 0; i < 1000000; ++i) {
                    if (me && i == 100) ::raise(sig);
                    pgas::allreduce(pe, w.team_world(), flag, flag, 8, pgas::op::sum);
                }
            });
        } else if (stage == "barrier") {
            if (me && leave) return leave_now();
            if (me) ::raise(sig);
            w.barrier();
        } else if (stage == "fd") {  // the victim dies inside the fd exchange, midway through sending its descriptor
            const auto node = pgas::detail::discover_node(w.channel());
            const pgas::detail::tcp::unique_fd memfd(::memfd_create("pgas-test-fd", MFD_CLOEXEC));
            if (!me) {
                (void)pgas::detail::allgather_fds(w.channel(), memfd.get(), node);
            } else {  // allgather_fds's first steps, then 3 bytes of the 20 its note has, to the next PE
                const auto session = w.channel().allgather_value(std::array<unsigned char, 16>{})[0];
                w.channel().barrier();
                sockaddr_un address;
                const socklen_t length =
                    pgas::detail::fd_detail::socket_address(address, session, (victim + 1) % w.n_pes());
                const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (::connect(s, reinterpret_cast<sockaddr*>(&address), length) == 0) (void)!::write(s, "pga", 3);
                ::raise(sig);
            }
        } else if (stage == "external") {  // the test kills VICTIM from outside while the others wait
            std::printf("ready\n");
            std::fflush(stdout);
            if (me) ::sleep(60);
            w.barrier();
        } else if (stage == "device") {
            for (int i = 0; i < 1000000; ++i) {
                if (me && i == 100 && leave) return leave_now();
                if (me && i == 100) ::raise(sig);
                before = clock_type::now();
                pgas::barrier_all(ctx);
            }
        }
        if (stage != "init") {
            std::printf("PE %d: %s completed without PE %d\n", w.my_pe(), stage.c_str(), victim);
            return 2;
        }
    } catch (const pgas::error& e) {
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - before).count();
        std::printf("lost PE reported after %lld ms: %s\n", static_cast<long long>(took), e.what());
        std::fflush(stdout);
        return 1;
    }
    (void)flag;
    return 0;
}

// Peak resident set of this process (VmHWM in /proc/self/status), in KiB; -1 when unknown.
long peak_rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    if (f) std::fclose(f);
    return kib;
}

int hostile_target() {
    const char* gate = std::getenv("PGAS_TEST_GATE");
    const char* size_text = std::getenv("PGAS_WORLD_SIZE");
    if (gate && size_text && my_rank() == std::atoi(size_text) - 1)
        for (int i = 0; i < 1000 && ::access(gate, F_OK) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto w = pgas::world::init(options());
    auto ctx = w.context<pgas::host>();
    const int me = w.my_pe(), n = w.n_pes(), right = (me + 1) % n;
    auto words = w.alloc<int>(n);
    for (int i = 0; i < 5; ++i) w.barrier();
    pgas::p(ctx, words + me, me + 100, right);
    pgas::barrier_all(ctx);
    if (ctx.local(words)[(me + n - 1) % n] != (me + n - 1) % n + 100) {
        std::printf("PE %d: lost a value\n", me);
        return 1;
    }
    w.free(words);
    w.barrier();
    if (me == 0) std::printf("root VmHWM %ld kB\n", peak_rss_kib());
    std::printf("hostile target ok on PE %d of %d after %lld ms\n", me, n, elapsed_ms());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "";
    auto arg = [&](int i) { return argc > i ? std::string(argv[i]) : std::string(); };
    try {
        if (scenario == "ring") return ring();
        if (scenario == "alloc_mismatch") return alloc_mismatch();
        if (scenario == "window_processes") return window_processes();
        if (scenario == "die_in_init") return die_in_init(std::stoi(arg(2)), arg(3));
        if (scenario == "die_in_barrier") return die_in_barrier(std::stoi(arg(2)), arg(3));
        if (scenario == "leave") return leave(std::stoi(arg(2)), arg(3));
        if (scenario == "exit") return exit_with(std::stoi(arg(2)), std::stoi(arg(3)));
        if (scenario == "fault") return fault(arg(2), arg(3), std::stoi(arg(4)));
        if (scenario == "unfinalized") return unfinalized();
        if (scenario == "timing") return timing();
        if (scenario == "hostile_target") return hostile_target();
    } catch (const pgas::error& e) {
        if (scenario == "fault") {  // init itself failed: the loss was found during init
            std::printf("lost PE reported after %lld ms: %s\n", elapsed_ms(), e.what());
            return 1;
        }
        std::printf("unexpected error after %lld ms: %s\n", elapsed_ms(), e.what());
        return 1;
    } catch (const std::exception& e) {
        std::printf("unexpected error after %lld ms: %s\n", elapsed_ms(), e.what());
        return 1;
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", scenario.c_str());
    return 2;
}
