// The one polling loop behind every wait (heap words, proxy ring, IBGDA completions): back-off, timeout, peer failure,
// one diagnostic.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/clock.hpp>
#include <pgas/detail/heartbeat.hpp>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

template <class T>
PGAS_HD T load_acquire(const T* address) {
    detail::atomic_ref<T, detail::thread_scope::system> word(*const_cast<T*>(address));
    return word.load(detail::memory_order_acquire);
}

// The peer-failure flag (runtime_state::abort_flag: failed PE + 1, 0 while none). Other host threads write it
// while waits poll it (a PE thread that throws, the bootstrap watcher, the proxy's mirror copy), so the host
// reads it atomically: a plain volatile read of it is a data race (ThreadSanitizer's report in the sanitizer
// lane, tests/sanitizers). The GPU keeps its volatile load of the mapped page.
PGAS_HD inline int load_abort_flag(const volatile int* flag) {
    NV_IF_TARGET(NV_IS_DEVICE, (return *flag;), (return load_acquire(const_cast<const int*>(flag));))
}

// The one diagnostic of a wait that timed out, on the host and on the GPU:
//   pgas: <call> on PE <pe>: timed out after <ms> ms waiting for <what>; raise PGAS_TIMEOUT_MS if the wait is
//   legitimate
// where <what> is what_format (a string literal, printf's format) filled
// with its arguments. On the host it throws pgas::error (errc::timeout); on
// the GPU it prints the line and traps. A macro so that the format stays one
// literal, which device printf needs.
#define PGAS_WAIT_TIMED_OUT(call, pe, waited_ms, what_format, ...)                                         \
    NV_IF_TARGET(NV_IS_HOST,                                                                               \
                 (char pgas_text_[512]; std::snprintf(pgas_text_, sizeof pgas_text_,                       \
                                                      "timed out after %llu ms waiting for " what_format   \
                                                      "; raise PGAS_TIMEOUT_MS if the wait is legitimate", \
                                                      (unsigned long long)(waited_ms), __VA_ARGS__);       \
                  ::pgas::detail::throw_error(::pgas::errc::timeout, pe, call, pgas_text_);),              \
                 (printf("pgas: %s on PE %d: timed out after %llu ms waiting for " what_format             \
                         "; raise PGAS_TIMEOUT_MS if the wait is legitimate\n",                            \
                         call, pe, (unsigned long long)(waited_ms), __VA_ARGS__);                          \
                  __trap();))

// A wait on a lone heap word: names the PE, the heap offset, the condition and the value seen.
template <class T>
PGAS_HD void report_wait_timeout(const char* call, int pe, std::uint64_t offset, cmp op, T expected, T seen,
                                 std::uint64_t waited_ms) {
    if constexpr (std::is_floating_point_v<T>) {
        PGAS_WAIT_TIMED_OUT(call, pe, waited_ms, "heap offset %llu %s %g (seen %g)", (unsigned long long)offset,
                            to_string(op), double(expected), double(seen));
    } else {
        PGAS_WAIT_TIMED_OUT(call, pe, waited_ms, "heap offset %llu %s %lld (seen %lld)", (unsigned long long)offset,
                            to_string(op), (long long)expected, (long long)seen);
    }
}

// The same for word `index` of the caller's array (`ivars[index] at heap offset ...`). A function of its own, not
// an argument of the one above: with a run-time index every collective kernel held both formats (stack frame 56 ->
// 64 bytes; alltoall_on_stream 8 B 4.69 -> 4.81 us on 2xH200); split, they match the kernels before it (ptxas).
template <class T>
PGAS_HD void report_word_timeout(const char* call, int pe, std::size_t index, std::uint64_t offset, cmp op, T expected,
                                 T seen, std::uint64_t waited_ms) {
    if constexpr (std::is_floating_point_v<T>) {
        PGAS_WAIT_TIMED_OUT(call, pe, waited_ms, "ivars[%llu] at heap offset %llu %s %g (seen %g)",
                            (unsigned long long)index, (unsigned long long)offset, to_string(op), double(expected),
                            double(seen));
    } else {
        PGAS_WAIT_TIMED_OUT(call, pe, waited_ms, "ivars[%llu] at heap offset %llu %s %lld (seen %lld)",
                            (unsigned long long)index, (unsigned long long)offset, to_string(op), (long long)expected,
                            (long long)seen);
    }
}

// What a wait may add to the plain spin of poll_until, each a callable:
// progress() runs before every retry and drives what the condition waits for
// (the IBGDA CQ poll); back_off(polls) runs after every miss; check() runs
// every poll_check_mask() + 1 polls beside the peer-failure check and may end the wait with its
// own diagnostic (a stopped proxy).
struct no_hook {
    PGAS_HD void operator()() const {}
};
// The default back-off: relax() (a yield on the host, nothing on the GPU).
struct relax_back_off {
    PGAS_HD void operator()(unsigned) const { relax(); }
};

// How many polls apart a wait runs its checks (peer failure, check(), the clock, heartbeats), as a mask. The GPU:
// every 256, where a poll is a few cycles and a %globaltimer read is not free. The host: every 16, since each miss
// yields the CPU, and on a loaded machine a yield can cost milliseconds: 256 of them between checks named a stopped
// process after 2.6-3.0 s instead of the heartbeat bound's ~0.8 s (the fault table on 2 cores shared with a build).
// A clock read and the abort flag every 16 yields cost nothing beside the yields themselves.
PGAS_HD inline unsigned poll_check_mask() { NV_IF_TARGET(NV_IS_DEVICE, (return 255u;), (return 15u;)) }

// The one polling loop of every pgas wait (heap words, the proxy ring, IBGDA
// completions): calls attempt() until it returns true; every 256 polls (16 on the host: poll_check_mask) checks
// the peer-failure flag, check() and the clock, on the host the peers'
// heartbeats (detail/heartbeat.hpp: a stopped process, errc::peer_failed
// naming it), and calls on_timeout(waited_ms) once runtime's timeout has passed. The clock is first read at that
// first check, not on the first miss (a %globaltimer read there cost every 2-PE barrier ~0.55 us on 2xH200), so
// timeouts count from the first check.
template <class Attempt, class OnTimeout, class Progress = no_hook, class BackOff = relax_back_off,
          class Check = no_hook>
PGAS_HD void poll_until(const runtime_state& runtime, int pe, const char* call, Attempt&& attempt,
                        OnTimeout&& on_timeout, Progress&& progress = {}, BackOff&& back_off = {}, Check&& check = {}) {
    if (attempt()) return;
    std::uint64_t start = 0;
    bool started = false;
    for (unsigned polls = 1;; ++polls) {
        progress();
        if (attempt()) return;
        back_off(polls);
        if ((polls & poll_check_mask()) != 0) continue;
        if (runtime.abort_flag)
            if (const int failed = load_abort_flag(runtime.abort_flag); failed != 0)
                report(errc::peer_failed, call, pe, "stopped waiting: failed PE", failed - 1);
        check();
        const std::uint64_t now = now_ns();
        if (!started) {
            start = now;
            started = true;
            continue;
        }
        // Host only: GPU heaps carry no table, and %globaltimer is not the host's clock.
        NV_IF_TARGET(NV_IS_HOST,
                     (if (runtime.heartbeats) check_heartbeats(*runtime.heartbeats, call, pe, now, now - start);))
        if (runtime.timeout_ns != 0 && now - start > runtime.timeout_ns) on_timeout((now - start) / 1000000);
    }
}

// The same for a device::context (a layer above, so named only by what is
// used here: its `runtime` and my_pe()).
template <class Ctx, class Attempt, class OnTimeout>
PGAS_HD void poll_until(const Ctx& ctx, const char* call, Attempt&& attempt, OnTimeout&& on_timeout) {
    poll_until(ctx.runtime, ctx.my_pe(), call, attempt, on_timeout);
}

// poll_until's check() for a wait that knows whose write it waits for: world PE `awaited` (a dissemination
// round: its partner's arrival; -1: unknown, nothing checked). Host only, with a heartbeat table: when that PE
// has left (its world destroyed in good order) and attempt() still fails after that was seen, the write will never
// come, and the wait fails at once naming it (errc::peer_failed), not after the heartbeat bound. The condition is tried
// after the left state is read, so a PE that arrived and then left is never blamed (its arrival happens before its left
// stamp: heartbeat_stamp's release, has_left's acquire). Kernels cannot read the table (GPU heaps keep it in host
// pages); there the bootstrap watcher marks a PE that left in runtime.left every tick (mark_left_peers), and the wait
// reads that mark the same way: on a GPU heap a PE that left is named within a tick (~50 ms) instead of the
// wait's timeout.
template <class Attempt>
PGAS_HD void check_awaited(const runtime_state& runtime, int pe, const char* call, int awaited, Attempt& attempt) {
    if (awaited < 0) return;
    NV_IF_TARGET(NV_IS_HOST, (if (runtime.heartbeats && has_left(*runtime.heartbeats, awaited) && !attempt())
                                  report_awaited_left(*runtime.heartbeats, call, pe, awaited);))
    if (runtime.left && load_acquire(const_cast<const int*>(runtime.left) + awaited) != 0 && !attempt())
        report(errc::peer_failed, call, pe,
               "stopped waiting: it needs the arrival of a PE that has left (destroyed its world) while others still "
               "wait for it; PE",
               awaited);
}

// Spins until `*address <op> value` holds and returns the value that made it
// hold (acquire: later reads see what the writer wrote before its release).
// Polls with ld.acquire: on 2xH200 relaxed polls plus one acquire fence on
// success made the p ping-pong 0.62 us slower (1.33 vs 0.71 us one-way), so
// system-scope fences are kept off every wait path.
// address may be local or (on load/store transports) a peer's; offset is its
// symmetric heap offset, for the timeout diagnostic.
//
// polling::relaxed polls with relaxed system-scope loads instead, for waits
// whose caller needs no acquire (the LL credits): an acquire load at system
// scope also invalidates L1, which costs every later load of the caller.
//
// awaited: the world PE whose write makes the condition hold, when the caller
// knows it (check_awaited: fails at once when it has left); -1 when not.
enum class polling { acquire, relaxed };

template <class T>
PGAS_HD T load_relaxed_word(const T* address) {
    detail::atomic_ref<T, detail::thread_scope::system> word(*const_cast<T*>(address));
    return word.load(detail::memory_order_relaxed);
}

// Polls *address until `op value` holds and returns the value that made it hold; on timeout calls
// report(seen, waited_ms).
template <polling Ordering = polling::acquire, class T, class Ctx, class Report>
PGAS_HD T wait_address_reporting(const Ctx& ctx, const char* call, const T* address, cmp op, T value, int awaited,
                                 Report report) {
    T seen{};
    auto attempt = [&] {
        if constexpr (Ordering == polling::acquire)
            seen = load_acquire(address);
        else
            seen = load_relaxed_word(address);
        return compare(seen, op, value);
    };
    poll_until(
        ctx.runtime, ctx.my_pe(), call, attempt, [&](std::uint64_t waited_ms) { report(seen, waited_ms); }, no_hook{},
        relax_back_off{}, [&] { check_awaited(ctx.runtime, ctx.my_pe(), call, awaited, attempt); });
    return seen;
}

// A wait on a lone word at heap offset `offset` (named so by a timeout).
template <polling Ordering = polling::acquire, class T, class Ctx>
PGAS_HD T wait_address(const Ctx& ctx, const char* call, const T* address, std::uint64_t offset, cmp op, T value,
                       int awaited = -1) {
    return wait_address_reporting<Ordering>(ctx, call, address, op, value, awaited, [&](T seen, std::uint64_t ms) {
        report_wait_timeout(call, ctx.my_pe(), offset, op, value, seen, ms);
    });
}

// The heap offset of an address in the caller's own heap, for diagnostics.
template <class Ctx>
PGAS_HD std::uint64_t local_offset(const Ctx& ctx, const void* address) {
    return std::uint64_t(static_cast<const char*>(address) - static_cast<const char*>(ctx.transport.local_address(0)));
}

template <polling Ordering = polling::acquire, class T, class Ctx>
PGAS_HD T wait_local(const Ctx& ctx, const char* call, const T* address, cmp op, T value, int awaited = -1) {
    return wait_address<Ordering>(ctx, call, address, local_offset(ctx, address), op, value, awaited);
}

}  // namespace detail
PGAS_NAMESPACE_END
