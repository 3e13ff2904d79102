// put_signal, signal and signal_wait_until: data plus a 64-bit flag that becomes visible only after it.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/device/context.hpp>
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
}  // namespace detail

// Copies count elements to dst on pe, then applies `op value` to the signal
// word sig on pe. A PE that sees the signal's new value (signal_wait_until)
// sees the data. Called by every thread of G; src reusable on return.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count,
                        symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe) {
    detail::require_signal<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "put_signal", dst.offset(), count, pe);
    detail::check_signal(ctx, "put_signal", sig);
    ctx.transport.template put_signal<G>(dst.offset(), src, count * sizeof(T), sig.offset(), value, op, pe);
}

// As put_signal, but may return before src is reusable (quiet completes it).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal_nbi(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src,
                            std::size_t count, symmetric_ptr<std::uint64_t> sig, std::uint64_t value,
                            signal_op op, int pe) {
    detail::require_signal<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "put_signal_nbi", dst.offset(), count, pe);
    detail::check_signal(ctx, "put_signal_nbi", sig);
    ctx.transport.template put_signal_nbi<G>(dst.offset(), src, count * sizeof(T), sig.offset(), value, op,
                                             pe);
}

// One thread applies `op value` to the signal word on pe, ordered after the
// caller's earlier puts to pe (release).
template <class Tr>
PGAS_HD void signal(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig, std::uint64_t value,
                    signal_op op, int pe) {
    detail::require_signal<Tr>();
    detail::check_pe(ctx, "signal", pe);
    detail::check_signal(ctx, "signal", sig);
    ctx.transport.signal(sig.offset(), value, op, pe);
}

// Reads the local signal word (acquire).
template <class Tr>
PGAS_HD std::uint64_t signal_fetch(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig) {
    detail::check_signal(ctx, "signal_fetch", sig);
    return detail::load_acquire(ctx.local(sig));
}

// Waits until the local signal word satisfies `seen <op> value` and returns
// the value seen; data put with that signal is then visible. Any number of
// threads may wait; each returns on its own.
template <class Tr>
PGAS_HD std::uint64_t signal_wait_until(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig,
                                        cmp op, std::uint64_t value) {
    detail::check_signal(ctx, "signal_wait_until", sig);
    return detail::wait_local(ctx, "signal_wait_until", ctx.local(sig), op, value);
}

PGAS_NAMESPACE_END
