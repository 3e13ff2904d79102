// put_signal, signal and signal_wait_until: data plus a 64-bit flag that becomes visible only after it.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/detail/watched_words.hpp>
#include <pgas/device/rma.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

namespace detail {
template <class Tr>
PGAS_HD constexpr void require_signal() {
    if constexpr (!signal_transport<Tr>) diagnose_signal_transport<Tr>();  // names the missing clause
}
template <class Tr>
PGAS_HD void check_signal(const device::context<Tr>& ctx, const char* call, symmetric_ptr<std::uint64_t> sig) {
    check_range(ctx, call, sig.offset(), sizeof(std::uint64_t));
    check_aligned(ctx, call, sig.offset(), sizeof(std::uint64_t));
}
// put_signal and put_signal_nbi (Nbi): the same checks, then the transport's put_signal or put_signal_nbi.
template <bool Nbi, group G, class Tr, class T, class U>
PGAS_HD void checked_put_signal(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> dst, const U* src,
                                std::size_t count, symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op,
                                int pe) {
    require_signal<Tr>();
    require_same_element<T, U>();
    check_rma<Tr, T>(ctx, call, dst.offset(), count, pe);
    check_signal(ctx, call, sig);
    if constexpr (Nbi)
        ctx.transport.template put_signal_nbi<G>(dst.offset(), src, count * sizeof(T), sig.offset(), value, op, pe);
    else
        ctx.transport.template put_signal<G>(dst.offset(), src, count * sizeof(T), sig.offset(), value, op, pe);
}
}  // namespace detail

/// Copies `count` elements from local `src` to `dst` on PE `pe`, then applies `op value` to the signal word
/// `sig` on `pe`: a PE that sees the signal's new value (signal_wait_until, wait_until) sees the data.
/// - @by_group
/// - **Returns** when `src` may be reused (libfabric: after the data's completion above 48 bytes; ibgda: after the
///   signal's completion). The signal is ordered after this put's data on every transport, and after the caller's
///   earlier operations: on nvlink/host its group's earlier stores (release), on libfabric every earlier command,
///   on ibgda and route only earlier operations to the same `pe` (docs/memory-model.md).
/// - @on_signal
/// - **Errors:** compile time: `T` and `U` differ or are not trivially copyable; with PGAS_CHECKS, `pe` out of range
///   (errc::pe_out_of_range), a null or out-of-heap `dst` or `sig` (errc::not_symmetric), `sig` not 8-byte aligned
///   (errc::misaligned). Where it waits (libfabric, ibgda), errc::timeout after PGAS_TIMEOUT_MS or errc::peer_failed.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count,
                        symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe) {
    detail::checked_put_signal<false, G>(ctx, "put_signal", dst, src, count, sig, value, op, pe);
}

/// As put_signal, but returns at once: `src` must stay untouched until the caller's next quiet.
/// - @by_group
/// - **Returns** at once; the signal still becomes visible only after the data. quiet completes both.
/// - @on_signal
/// - **Errors:** as put_signal (a full proxy ring makes libfabric wait).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal_nbi(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count,
                            symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe) {
    detail::checked_put_signal<true, G>(ctx, "put_signal_nbi", dst, src, count, sig, value, op, pe);
}

/// One thread applies `op value` (set or add) to the signal word `sig` on PE `pe`.
/// - **Called by** one thread.
/// - **Returns** once the update is issued; it becomes visible after the caller's earlier puts to `pe` (release).
///   Per transport: nvlink/host order it after the calling thread's earlier stores, libfabric after every earlier
///   command of the PE, ibgda and route after earlier operations to `pe` only. Complete at the next quiet.
/// - @on_signal
/// - **Errors:** with PGAS_CHECKS, `pe` out of range (errc::pe_out_of_range), a null or out-of-heap `sig`
///   (errc::not_symmetric), `sig` not 8-byte aligned (errc::misaligned).
template <class Tr>
PGAS_HD void signal(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op,
                    int pe) {
    detail::require_signal<Tr>();
    detail::check_pe(ctx, "signal", pe);
    detail::check_signal(ctx, "signal", sig);
    ctx.transport.signal(sig.offset(), value, op, pe);
}

/// Reads the caller's own signal word `sig` (acquire: data put with the value read is visible).
/// - @by_anyone
/// - **Transports:** every transport (a local load).
/// - **Errors:** with PGAS_CHECKS, a null or out-of-heap `sig` (errc::not_symmetric), `sig` not 8-byte aligned
///   (errc::misaligned).
template <class Tr>
PGAS_HD std::uint64_t signal_fetch(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig) {
    detail::check_signal(ctx, "signal_fetch", sig);
    return detail::load_acquire(ctx.local(sig));
}

/// Waits until the caller's own signal word `sig` satisfies `seen <op> value` and returns the value seen.
/// - @by_waiters
/// - **Returns** the value that satisfied the condition (acquire): data put with that signal (put_signal, or puts
///   before a signal) is then visible to the caller.
/// - **Transports:** every transport (polls local memory).
/// - **Errors:** with PGAS_CHECKS, a null or out-of-heap `sig` (errc::not_symmetric), `sig` not 8-byte aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout, naming the heap offset, the
///   condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr>
PGAS_HD std::uint64_t signal_wait_until(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig, cmp op,
                                        std::uint64_t value) {
    return detail::wait_word(ctx, detail::watch_lone(ctx, "signal_wait_until", sig, op, value), 0);
}

PGAS_NAMESPACE_END
