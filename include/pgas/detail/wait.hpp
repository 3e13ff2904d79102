// The one polling loop behind every wait: acquire loads, back-off, timeout and peer-failure checks.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/detail/clock.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda/atomic>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

template <class T>
PGAS_HD T load_acquire(const T* address) {
    cuda::atomic_ref<T, cuda::thread_scope_system> word(*const_cast<T*>(address));
    return word.load(cuda::memory_order_acquire);
}


template <class T>
PGAS_HD double as_double(T v) {
    return double(v);
}

// Names the PE, the heap offset, the condition and the value seen.
template <class T>
PGAS_HD void report_wait_timeout(const char* call, int pe, std::uint64_t offset, cmp op, T expected,
                                 T seen, std::uint64_t waited_ms) {
    NV_IF_TARGET(
        NV_IS_HOST,
        (throw_error(errc::timeout, pe, call,
                     "no progress after " + std::to_string(waited_ms) + " ms waiting for heap offset " +
                         std::to_string(offset) + " " + to_string(op) + " " +
                         std::to_string(expected) + " (seen " + std::to_string(seen) +
                         "); raise PGAS_TIMEOUT_MS if the wait is legitimate");),
        (if constexpr (std::is_floating_point_v<T>) {
            printf("pgas: %s on PE %d: timed out after %llu ms waiting for heap offset %llu %s %g "
                   "(seen %g)\n",
                   call, pe, (unsigned long long)waited_ms, (unsigned long long)offset, to_string(op),
                   as_double(expected), as_double(seen));
        } else {
            printf("pgas: %s on PE %d: timed out after %llu ms waiting for heap offset %llu %s %lld "
                   "(seen %lld)\n",
                   call, pe, (unsigned long long)waited_ms, (unsigned long long)offset, to_string(op),
                   (long long)expected, (long long)seen);
        } __trap();))
}

// The one polling loop of every pgas wait: calls attempt() until it returns
// true; every 256 polls checks the peer-failure flag and the clock, and
// calls on_timeout(waited_ms) once the context's timeout has passed. The
// clock is first read at that first check, not on the first miss: a
// %globaltimer read sat between a barrier's first poll and its second and
// cost every 2-PE barrier ~0.55 us on 2xH200 (bench_coll_tune barrier2:
// red.release + inline polls 1.31 us, through this loop 1.86 us). Timeouts
// therefore count from the 256th poll.
//
// Ctx is a device::context (a layer above, so named only by what is used
// here): its `runtime` (a pgas::runtime_state), my_pe() and, for
// wait_local, transport.local_address().
template <class Ctx, class Attempt, class OnTimeout>
PGAS_HD void poll_until(const Ctx& ctx, const char* call, Attempt&& attempt, OnTimeout&& on_timeout) {
    if (attempt()) return;
    std::uint64_t start = 0;
    bool started = false;
    for (unsigned polls = 1;; ++polls) {
        if (attempt()) return;
        relax();
        if ((polls & 255u) != 0) continue;
        if (ctx.runtime.abort_flag && *ctx.runtime.abort_flag != 0)
            report(errc::peer_failed, call, ctx.my_pe(), "stopped waiting: failed PE", *ctx.runtime.abort_flag - 1);
        const std::uint64_t now = now_ns();
        if (!started) {
            start = now;
            started = true;
        } else if (ctx.runtime.timeout_ns != 0 && now - start > ctx.runtime.timeout_ns) {
            on_timeout((now - start) / 1000000);
        }
    }
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
enum class polling { acquire, relaxed };

template <class T>
PGAS_HD T load_relaxed_word(const T* address) {
    cuda::atomic_ref<T, cuda::thread_scope_system> word(*const_cast<T*>(address));
    return word.load(cuda::memory_order_relaxed);
}

template <polling Ordering = polling::acquire, class T, class Ctx>
PGAS_HD T wait_address(const Ctx& ctx, const char* call, const T* address, std::uint64_t offset,
                       cmp op, T value) {
    T seen{};
    poll_until(
        ctx, call,
        [&] {
            if constexpr (Ordering == polling::acquire)
                seen = load_acquire(address);
            else
                seen = load_relaxed_word(address);
            return compare(seen, op, value);
        },
        [&](std::uint64_t waited_ms) {
            report_wait_timeout(call, ctx.my_pe(), offset, op, value, seen, waited_ms);
        });
    return seen;
}

// The heap offset of an address in the caller's own heap, for diagnostics.
template <class Ctx>
PGAS_HD std::uint64_t local_offset(const Ctx& ctx, const void* address) {
    return std::uint64_t(static_cast<const char*>(address) - static_cast<const char*>(ctx.transport.local_address(0)));
}

template <polling Ordering = polling::acquire, class T, class Ctx>
PGAS_HD T wait_local(const Ctx& ctx, const char* call, const T* address, cmp op, T value) {
    return wait_address<Ordering>(ctx, call, address, local_offset(ctx, address), op, value);
}

}  // namespace detail
PGAS_NAMESPACE_END
