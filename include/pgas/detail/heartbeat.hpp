// Heartbeats between the processes of one node: who stamps, who reads, and when a silent peer counts as stopped.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/clock.hpp>
#include <pgas/detail/heap_layout.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Why: a process stopped by SIGSTOP (or a debugger, or a frozen cgroup)
// keeps its bootstrap connection open, so the bootstrap's watcher never sees
// it go; the others' device-side waits then ran into their timeout with a
// diagnostic naming the wait, not the PE. Each process of a
// multi-process world on one node instead stamps its heartbeat word (where
// the heap puts it: heap_layout::heartbeat_offset of a shared-memory heap, a
// shared page beside a GPU heap; heap_memory::heartbeat_words) with the host
// clock (steady_clock: CLOCK_MONOTONIC, one clock for the whole node) from its
// bootstrap watcher, every heartbeat_period_ns. Two readers apply one rule
// (stale_peer): a host-side wait that has lasted longer than the period
// compares its peers' stamps with its own clock every 16 polls and names the
// first one older than the bound (errc::peer_failed with the silence in ms);
// and the watcher itself, every tick, raises the peer-failure flag for such a
// peer, which ends device-side waits too (kernels cannot read host clocks).

// Stamps that are not times: not yet beating (the heap's zeros: the owner
// has not finished init) and left (its world was destroyed in good order; a
// peer still waiting on it has a bug of its own: a wait that knows it waits for
// that PE names it at once, any other wait after the bound, check_heartbeats).
inline constexpr std::uint64_t heartbeat_none = 0;
// Left: this bit and the time it left (steady clock ns stay far below 2^63), so that a reader that finds
// several left names the first (the others may have finished because of it).
inline constexpr std::uint64_t heartbeat_left = std::uint64_t{1} << 63;
// How often a process stamps (its bootstrap watcher's wake-up, ~50 ms).
inline constexpr std::uint64_t heartbeat_period_ns = 50'000'000;
// The least silence that counts as stopped: 10 periods, so that a process
// descheduled on a loaded machine is not taken for a stopped one.
inline constexpr std::uint64_t heartbeat_min_bound_ns = 500'000'000;

// The bound for a wait timeout: max(500 ms, timeout / 4); 0 (no check)
// when waits never time out (PGAS_TIMEOUT_MS=0, e.g. under a debugger).
inline std::uint64_t heartbeat_bound_ns(std::uint64_t timeout_ns) {
    if (timeout_ns == 0) return 0;
    return timeout_ns / 4 > heartbeat_min_bound_ns ? timeout_ns / 4 : heartbeat_min_bound_ns;
}

inline detail::atomic_ref<std::uint64_t, detail::thread_scope::system> heartbeat_word(std::uint64_t* word) {
    return detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*word);
}

// The word inside a shared-memory heap.
inline std::uint64_t* heap_heartbeat_word(std::byte* heap_base) {
    return reinterpret_cast<std::uint64_t*>(heap_base + heap_layout::heartbeat_offset);
}

// What a reader needs: every PE's heartbeat word, the bound, and the reader's
// own PE (skipped). Built by the world of a multi-process heap that has
// heartbeat words; runtime_state::heartbeats points at it.
struct heartbeat_table {
    std::uint64_t* const* words = nullptr;  // by world PE
    int n_pes = 0;
    int self = -1;
    std::uint64_t bound_ns = 0;
};

// This process's stamp: beat() from the bootstrap watcher; marks the word
// left when destroyed (after the watcher has stopped, before the heap is unmapped).
class heartbeat_stamp {
public:
    heartbeat_stamp() = default;
    heartbeat_stamp(const heartbeat_stamp&) = delete;
    heartbeat_stamp& operator=(const heartbeat_stamp&) = delete;
    // Release: a reader that acquires "left" sees every write this PE made before (has_left).
    ~heartbeat_stamp() {
        if (own_) heartbeat_word(own_).store(heartbeat_left | now_ns(), detail::memory_order_release);
    }

    void attach(std::uint64_t* own_word) {
        own_ = own_word;
        beat();
    }
    void beat() const {
        if (own_) heartbeat_word(own_).store(now_ns(), detail::memory_order_relaxed);
    }
    // The world failed: it did not leave in good order, and its peers learn of it from the bootstrap (a peer
    // waiting would otherwise name this PE as the one that left, not the one that failed first).
    void abandon() { own_ = nullptr; }

private:
    std::uint64_t* own_ = nullptr;
};

// The rule both readers apply: the first peer whose stamp, as of `now`, is
// older than the table's bound, with its silence in *silent_ns; -1 if none
// (or no bound: PGAS_TIMEOUT_MS=0). Stamps that are not times never count.
inline int stale_peer(const heartbeat_table& table, std::uint64_t now, std::uint64_t* silent_ns = nullptr) {
    if (table.bound_ns == 0 || table.words == nullptr) return -1;
    for (int q = 0; q < table.n_pes; ++q) {
        if (q == table.self) continue;
        const std::uint64_t stamp = heartbeat_word(table.words[q]).load(detail::memory_order_relaxed);
        if (stamp == heartbeat_none || (stamp & heartbeat_left) != 0 || stamp >= now) continue;
        if (now - stamp <= table.bound_ns) continue;
        if (silent_ns) *silent_ns = now - stamp;
        return q;
    }
    return -1;
}

// The peer that left (destroyed its world) first, -1 if none.
inline int left_peer(const heartbeat_table& table) {
    if (table.words == nullptr) return -1;
    int first = -1;
    std::uint64_t first_at = ~std::uint64_t{0};
    for (int q = 0; q < table.n_pes; ++q) {
        const std::uint64_t stamp =
            q == table.self ? 0 : heartbeat_word(table.words[q]).load(detail::memory_order_relaxed);
        if ((stamp & heartbeat_left) != 0 && stamp < first_at) {
            first = q;
            first_at = stamp;
        }
    }
    return first;
}

// Whether PE `q` has left (destroyed its world in good order), read with acquire: a wait that then still finds
// its condition false knows that what q wrote before it left (its arrival) did not satisfy it, and never will.
inline bool has_left(const heartbeat_table& table, int q) {
    if (table.words == nullptr || q < 0 || q >= table.n_pes || q == table.self || table.words[q] == nullptr)
        return false;
    return (heartbeat_word(table.words[q]).load(detail::memory_order_acquire) & heartbeat_left) != 0;
}

// The watcher's side of runtime_state::left (GPU heaps): every peer found left is marked in `left` (by world PE;
// nothing when null), with release, so that a kernel that reads the mark with acquire and then still finds its
// condition false knows the left PE's last writes did not satisfy it (has_left's reasoning, one hop longer).
inline void mark_left_peers(const heartbeat_table& table, int* left) {
    if (left == nullptr) return;
    for (int q = 0; q < table.n_pes; ++q)
        if (has_left(table, q))
            detail::atomic_ref<int, detail::thread_scope::system>(left[q]).store(1, detail::memory_order_release);
}

// A wait's error for peer q, silent for `silent` ns (more than the table's bound).
[[noreturn]] inline void report_stopped(const heartbeat_table& table, const char* call, int pe, int q,
                                        std::uint64_t silent) {
    throw_error(errc::peer_failed, pe, call,
                "PE " + std::to_string(q) + " stopped responding: no heartbeat for " +
                    std::to_string(silent / 1000000) + " ms (bound " + std::to_string(table.bound_ns / 1000000) +
                    " ms: max(500 ms, PGAS_TIMEOUT_MS / 4)); the process is stopped (SIGSTOP, a debugger) "
                    "or starved of CPU");
}

// The error of a wait for PE `awaited`'s write (a dissemination round: its arrival) that found it left with the
// condition still false. The awaited PE may itself have caught an error of this kind, or a stopped peer's, and
// finalized (its partner left or stopped; its own waiters then learn only of its leave): so a stopped peer is
// named first, as in check_heartbeats (a peer stale for the awaited PE is stale here too: one clock, one bound),
// and a PE that left before the awaited one is named beside it.
[[noreturn]] inline void report_awaited_left(const heartbeat_table& table, const char* call, int pe, int awaited) {
    std::uint64_t silent = 0;
    if (const int q = stale_peer(table, now_ns(), &silent); q >= 0) report_stopped(table, call, pe, q, silent);
    std::string text = "PE " + std::to_string(awaited) + " has left (it destroyed its world) while this " + call +
                       " waited for its arrival; a PE must not finalize while others still wait for it";
    const int first = left_peer(table);
    if (first >= 0 && first != awaited) {
        const auto at = [&](int q) {
            return heartbeat_word(table.words[q]).load(detail::memory_order_relaxed) & ~heartbeat_left;
        };
        const std::uint64_t first_at = at(first), awaited_at = at(awaited);
        char before[64];
        std::snprintf(before, sizeof before, "; PE %d left first, %.1f ms before it", first,
                      double(awaited_at > first_at ? awaited_at - first_at : 0) / 1e6);
        text += before;
    }
    throw_error(errc::peer_failed, pe, call, text);
}

// Host side of poll_until, every 16 polls (poll_check_mask) once the wait has lasted a
// heartbeat period: throws errc::peer_failed naming the first peer whose
// stamp is older than the bound, or, once the wait itself has lasted the
// bound, the first peer that has left: a wait of the others then ran into
// its timeout naming neither the PE nor that it left. Not
// at once: such a wait does not know whose write it waits for, and may still be
// waiting for a live peer that is merely slow while another has finished and
// left (a dissemination barrier's last round), so a leave counts like a
// silence, past the same bound. A wait that knows its awaited PE (a
// dissemination round) asks has_left for that one PE at every check instead,
// and fails at once (wait.hpp check_awaited). n relaxed loads of lines their
// owners write every 50 ms: nothing beside the yields of 16 host polls.
inline void check_heartbeats(const heartbeat_table& table, const char* call, int pe, std::uint64_t now,
                             std::uint64_t waited_ns) {
    if (waited_ns < heartbeat_period_ns) return;
    std::uint64_t silent = 0;
    const int q = stale_peer(table, now, &silent);
    // A stopped peer first: a peer that named it before this wait did may have left since (its world destroyed
    // after the error), and that is not the cause.
    if (q < 0 && table.bound_ns != 0 && waited_ns > table.bound_ns)
        if (const int gone = left_peer(table); gone >= 0)
            throw_error(errc::peer_failed, pe, call,
                        "PE " + std::to_string(gone) + " has left: it destroyed its world while this wait, " +
                            std::to_string(waited_ns / 1000000) +
                            " ms old, had not completed (bound max(500 ms, PGAS_TIMEOUT_MS / 4)); a PE must not "
                            "finalize while others still wait for it");
    if (q >= 0) report_stopped(table, call, pe, q, silent);
}

}  // namespace detail
PGAS_NAMESPACE_END
