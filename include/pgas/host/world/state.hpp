// A world's state behind its handle: the heap, the bootstrap, the team slots, the abort flag and the peer watch.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/team.hpp>
#include <pgas/device/context.hpp>
#include <pgas/detail/heartbeat.hpp>
#include <pgas/host/bootstrap/tcp_store.hpp>
#include <pgas/host/heap/allocator.hpp>
#include <pgas/host/heap/gpu.hpp>
#include <pgas/host/heap/memory.hpp>
#include <pgas/host/nvtx.hpp>
#include <pgas/host/window/registry.hpp>
#include <pgas/host/world/options.hpp>
#include <pgas/host/env.hpp>
#include <pgas/detail/heap_layout.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The team sync slots of a world (0: the world team, 1: the node team, the rest for split teams): whether a split
// team holds each, and how many teams have held it (a destroyed team's copy carries an older generation).
struct team_slots {
    // The node team's slot: every node's team shares it, as the teams of one split do.
    static constexpr int node_slot = 1;
    std::array<bool, team::max_slots> live{};
    std::array<unsigned, team::max_slots> generation{};

    // The lowest free slot: every PE runs the same sequence of splits and destroys, so all pick the same.
    int next(const char* call, int pe) {
        for (int slot = node_slot + 1; slot < team::max_slots; ++slot) {
            if (live[std::size_t(slot)]) continue;
            live[std::size_t(slot)] = true;
            ++generation[std::size_t(slot)];
            return slot;
        }
        throw_error(errc::invalid_argument, pe, call,
                    "no team slot left: at most " + std::to_string(team::max_slots - node_slot - 1) +
                        " split teams may be alive at once (destroy_team frees one)");
    }
    // Throws naming `call` unless t is the world or node team or the live split team of its slot.
    void check_alive(const char* call, const team& t, int pe) const {
        const int slot = t.slot();
        if (slot == 0 || slot == node_slot) return;
        if (slot < 0 || slot >= team::max_slots || !live[std::size_t(slot)] ||
            generation[std::size_t(slot)] != t.generation())
            throw_error(errc::invalid_argument, t.bound_pe() >= 0 ? t.bound_pe() : pe, call,
                        "the team in slot " + std::to_string(slot) + " (generation " + std::to_string(t.generation()) +
                            ") was destroyed (destroy_team) or does not belong to this world");
    }
};

// Members are destroyed bottom-up: the bootstrap (whose watcher thread may
// call raise_abort on this state) goes first, the heap after it.
struct world_state {
    world_state() = default;
    world_state(const world_state&) = delete;
    world_state& operator=(const world_state&) = delete;
    // Finalize of a world of several processes: a peer failure that was recorded (or that the bootstrap
    // sees now) is reported, since it may never have surfaced through a call of this PE, which then lost
    // what it sent to that peer; and pgasrun learns that this world was finalized.
    // Only a world finalized in good order marks its heartbeat "left" (a wait of a peer names it so).
    ~world_state() {
        auto* tcp = dynamic_cast<tcp_bootstrap*>(bootstrap.get());
        if (!tcp) return;
        const std::string failure = tcp->failure_seen();
        const bool unwinding = std::uncaught_exceptions() > 0;
        if (!failure.empty() || unwinding || abort->load() != 0) heartbeat.abandon();
        if (!joined_launcher) return;
        if (!failure.empty() && !unwinding)
            std::fprintf(stderr,
                         "pgas: world finalize on PE %d: a peer failed while this world was live, and what "
                         "this PE sent it after may be lost: %s\n",
                         local_pes.front(), failure.c_str());
        launcher_status::say('f');
    }
    bool joined_launcher = false;      // world::init of several processes completed (launcher_status 'i')
    nvtx_range_end nvtx_finalize_end;  // first member: destroyed last (host/nvtx.hpp)
    std::vector<int> local_pes;
    int n_pes = 0;
    std::uint64_t heap_bytes = 0;
    std::uint64_t timeout_ns = 0;
    int channels = 1;
    heap_allocator allocator{0, 0};
    std::unique_ptr<heap_memory> memory;
    // Processes of a shared-memory heap: this one's stamp (marked left after
    // the bootstrap's watcher stopped, before the heap goes) and the table
    // waits read. Threads need none: a PE thread that ends raises the abort flag.
    heartbeat_stamp heartbeat;
    heartbeat_table heartbeats;
    // Live windows (register_window); made once the heap is, and gone before it.
    std::optional<window_registry> windows;
    team_slots slots;
    std::atomic<int> abort_flag{0};
    // The flag waits poll: abort_flag, or the one PE threads of run_threads share.
    std::atomic<int>* abort = &abort_flag;
    std::shared_ptr<detail::bootstrap> bootstrap;
    nvtx_range_begin nvtx_finalize_begin{"pgas::world::finalize"};  // last member: destroyed first

    // A new world's set-up, the world's constructor's body: its bootstrap, PEs, heap size, timeout and channels
    // (options, else the environment), the allocator, the heap `make_heap` builds, and the window registry
    // (`exhausted` reports a full heap).
    void open(std::shared_ptr<detail::bootstrap> channel, std::vector<int> pes, int world_pes,
              const world_options& options, const heap_factory& make_heap,
              std::function<void(const char*, std::uint64_t, std::size_t)> exhausted) {
        bootstrap = std::move(channel);
        local_pes = std::move(pes);
        n_pes = world_pes;
        heap_bytes = options.heap_bytes ? options.heap_bytes
                                        : env_size("PGAS_HEAP_SIZE", world_options::default_host_heap_bytes);
        if (heap_bytes <= heap_layout::user_offset)
            throw_error(errc::invalid_argument, -1, "world init",
                        "heap of " + std::to_string(heap_bytes) + " bytes is smaller than the " +
                            std::to_string(heap_layout::user_offset) + " bytes pgas reserves");
        const std::int64_t timeout_ms =
            options.timeout_ms >= 0 ? options.timeout_ms
                                    : std::int64_t(env_milliseconds("PGAS_TIMEOUT_MS", PGAS_DEFAULT_TIMEOUT_MS));
        timeout_ns = std::uint64_t(timeout_ms) * 1000000ull;
        channels = resolve_channels(options.channels, 1, "world init", local_pes.size() == 1 ? local_pes.front() : -1);
        allocator = heap_allocator(heap_layout::user_offset, heap_bytes);
        if (auto* shared = bootstrap->shared_abort_flag()) abort = shared;
        heap_request request{heap_bytes, local_pes, n_pes, bootstrap.get()};
        bootstrap::call_scope call(*bootstrap, host_call::init);
        memory = make_heap(request);
        windows.emplace(
            window_parts{bootstrap.get(), memory.get(), &allocator, local_pes, n_pes, std::move(exhausted)});
    }

    // Throws errc::heap_exhausted naming `call`, the request and the heap's free bytes (also the window registry's).
    [[noreturn]] void heap_exhausted(const char* call, std::uint64_t count, std::size_t element) const {
        throw_error(errc::heap_exhausted, local_pes.size() == 1 ? local_pes[0] : -1, call,
                    "requested " + std::to_string(count) + " elements of " + std::to_string(element) +
                        " bytes but the heap has " + std::to_string(allocator.free_bytes()) +
                        " bytes free (largest free block " + std::to_string(allocator.largest_free_block()) + ") of " +
                        std::to_string(heap_bytes) + "; raise PGAS_HEAP_SIZE");
    }

    // The timeout and failure flags every context of the world carries: on GPU heaps the mapped pinned flag, so
    // that kernels of any transport can poll it.
    // Whether [offset, +bytes) lies in a buffer world::register_symmetric mapped into a GPU heap.
    bool registered(std::uint64_t offset, std::uint64_t bytes) const {
        const auto* gpu = dynamic_cast<const gpu_heap_memory*>(memory.get());
        return gpu != nullptr && gpu->registrations().holds(offset, bytes);
    }

    device::runtime_state runtime() const {
        device::runtime_state r;
        r.timeout_ns = timeout_ns;
        r.abort_flag = reinterpret_cast<const volatile int*>(abort);
        if (auto* gpu = dynamic_cast<gpu_heap_memory*>(memory.get())) {
            r.abort_flag = gpu->abort_flag();
            r.left = gpu->left_flags();
            r.pes_per_gpu = gpu->pes_per_gpu();
        }
        if (heartbeats.words) r.heartbeats = &heartbeats;
        return r;
    }

    // The host-side flag (host transport) and, for GPU heaps, the mapped one kernels poll.
    void raise_abort(int failed_pe) {
        int expected = 0;
        abort->compare_exchange_strong(expected, failed_pe + 1);
        if (auto* gpu = dynamic_cast<gpu_heap_memory*>(memory.get())) {
            expected = 0;  // atomically, as waits on other threads read it (load_abort_flag)
            std::atomic_ref<int>(*const_cast<int*>(gpu->abort_flag())).compare_exchange_strong(expected, failed_pe + 1);
        }
    }
};

// Runs each(i) for i in [0, count) on a thread each, then rethrows the root-cause failure: the first that is
// not a peer_failed (a consequence of another), else the first peer_failed.
template <class Each>
void run_each(int count, Each&& each) {
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(count));
    std::vector<std::thread> threads;
    threads.reserve(std::size_t(count));
    for (int i = 0; i < count; ++i)
        threads.emplace_back([&, i] {
            try {
                each(i);
            } catch (...) {
                failures[std::size_t(i)] = std::current_exception();
            }
        });
    for (auto& t : threads) t.join();
    // The root cause is the failure that is not a consequence of another.
    std::exception_ptr first_consequence;
    for (auto& failure : failures) {
        if (!failure) continue;
        try {
            std::rethrow_exception(failure);
        } catch (const error& e) {
            if (e.code() == errc::peer_failed) {
                if (!first_consequence) first_consequence = failure;
                continue;
            }
            throw;
        }
    }
    if (first_consequence) std::rethrow_exception(first_consequence);
}

// A peer that dies between collectives stops this process's device
// waits (errc::peer_failed naming it) instead of leaving them to time out;
// one that is stopped (its connection stays open) by its heartbeat. The
// watcher stamps this process's word every tick. Host-side waits (the
// host transport's, whose heap the CPU reads) check the peers' stamps
// themselves while they wait. Kernels cannot read the host clock, so for
// a GPU heap the watcher checks them every tick and raises the flag
// kernels poll for a peer silent past the bound (only there: a check
// that runs while nobody waits would also fire on a process that was
// merely starved of CPU for the bound, which no wait had noticed).
inline void watch_peers(world_state& s, tcp_bootstrap& tcp, int rank) {
    if (std::uint64_t* const* words = s.memory->heartbeat_words()) {  // every peer's word mapped here
        s.heartbeats = {words, s.n_pes, rank, heartbeat_bound_ns(s.timeout_ns)};
        s.heartbeat.attach(words[rank]);
    }
    const bool kernels_wait = !s.memory->host_accessible();
    auto* gpu = dynamic_cast<gpu_heap_memory*>(s.memory.get());
    int* left_flags = gpu ? gpu->left_flags() : nullptr;  // runtime_state::left, which kernels read
    tcp.watch([state = &s](int failed_pe) { state->raise_abort(failed_pe); },
              [state = &s, kernels_wait, left_flags] {
                  state->heartbeat.beat();
                  if (!kernels_wait) return;
                  const int stopped = stale_peer(state->heartbeats, now_ns());
                  if (stopped >= 0) state->raise_abort(stopped);
                  mark_left_peers(state->heartbeats, left_flags);
              },
              [state = &s](std::uint64_t* silent_ns) {  // host collectives apply the same rule
                  return stale_peer(state->heartbeats, now_ns(), silent_ns);
              });
    launcher_status::say('i');
    s.joined_launcher = true;
}

}  // namespace detail
PGAS_NAMESPACE_END
