// Remote atomics on 4- and 8-byte words, each called by one thread.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/device/context.hpp>
#include <pgas/transport/concepts.hpp>

#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
template <class Tr, class T>
PGAS_HD constexpr void require_atomic() {
    if constexpr (!atomic_transport<Tr>) diagnose_atomic_transport<Tr>();  // names the missing clause
    static_assert((sizeof(T) == 4 || sizeof(T) == 8) && std::is_arithmetic_v<T>,
                  "pgas: remote atomics take 4- or 8-byte integers or floating-point values");
}
template <class T>
PGAS_HD constexpr void require_bitwise() {
    static_assert(std::is_integral_v<T>, "pgas: bitwise atomics (and/or/xor) take integer types only");
}

// One thread: checks, then asks the transport. Relaxed: atomics order with
// other operations only through fence/quiet, as in OpenSHMEM.
template <class Tr, class T>
PGAS_HD void check_atomic_target(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> dst, int pe) {
    require_atomic<Tr, T>();
    check_pe(ctx, call, pe);
    check_range(ctx, call, dst.offset(), sizeof(T));
    check_aligned(ctx, call, dst.offset(), sizeof(T));
}

template <class Tr, class T>
PGAS_HD T atomic_op(const device::context<Tr>& ctx, const char* call, amo op, symmetric_ptr<T> dst, T operand,
                    T expected, int pe) {
    check_atomic_target(ctx, call, dst, pe);
    return ctx.transport.template atomic<T>(op, dst.offset(), operand, expected, pe);
}

// One thread, no old value wanted: the same checks, then the transport's
// atomic_update where it has one (complete at quiet; order it before a later
// op on the same word with fence, as OpenSHMEM's non-fetching atomics).
template <class Tr, class T>
PGAS_HD void atomic_update_op(const device::context<Tr>& ctx, const char* call, amo op, symmetric_ptr<T> dst, T operand,
                              int pe) {
    check_atomic_target(ctx, call, dst, pe);
    start_atomic_update(ctx.transport, op, dst.offset(), operand, pe);
}
}  // namespace detail

/// Atomically reads the word `src` on PE `pe`.
/// - @by_one
/// - **Returns** the value read once the atomic has been performed at `pe`. Relaxed: ordered with the caller's other
///   operations only through fence and quiet (as OpenSHMEM).
/// - @on_atomic
/// - @atomic_errors{src} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch(const device::context<Tr>& ctx, symmetric_ptr<T> src, int pe) {
    return detail::atomic_op(ctx, "atomic_fetch", amo::fetch, src, T{}, T{}, pe);
}
/// Atomically writes `value` into the word `dst` on PE `pe` (a word another PE may poll).
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @atomic_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_set(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::atomic_update_op(ctx, "atomic_set", amo::set, dst, T(value), pe);
}
/// Atomically writes `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @atomic_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_swap(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    return detail::atomic_op(ctx, "atomic_swap", amo::swap, dst, value, T{}, pe);
}
/// Atomically writes `value` into the word `dst` on PE `pe` if it equals `cond`.
/// - @by_one
/// - **Returns** the word's previous value, whether or not it was replaced once the atomic has been performed at
///   `pe`. Relaxed: ordered with the caller's other operations only through fence and quiet (as OpenSHMEM).
/// - @on_atomic
/// - @atomic_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_compare_swap(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> cond,
                              std::type_identity_t<T> value, int pe) {
    return detail::atomic_op(ctx, "atomic_compare_swap", amo::compare_swap, dst, value, cond, pe);
}
/// Atomically adds `value` to the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @atomic_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch_add(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value,
                           int pe) {
    return detail::atomic_op(ctx, "atomic_fetch_add", amo::fetch_add, dst, value, T{}, pe);
}
/// Atomically adds `value` to the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @atomic_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_add(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::atomic_update_op(ctx, "atomic_add", amo::fetch_add, dst, T(value), pe);
}
/// Atomically adds 1 to the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @atomic_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch_inc(const device::context<Tr>& ctx, symmetric_ptr<T> dst, int pe) {
    return detail::atomic_op(ctx, "atomic_fetch_inc", amo::fetch_add, dst, T{1}, T{}, pe);
}
/// Atomically adds 1 to the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @atomic_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_inc(const device::context<Tr>& ctx, symmetric_ptr<T> dst, int pe) {
    detail::atomic_update_op(ctx, "atomic_inc", amo::fetch_add, dst, T{1}, pe);
}
/// Atomically ands `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @bitwise_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch_and(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value,
                           int pe) {
    detail::require_bitwise<T>();
    return detail::atomic_op(ctx, "atomic_fetch_and", amo::fetch_and, dst, value, T{}, pe);
}
/// Atomically ands `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @bitwise_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_and(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_bitwise<T>();
    detail::atomic_update_op(ctx, "atomic_and", amo::fetch_and, dst, T(value), pe);
}
/// Atomically ors `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @bitwise_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch_or(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_bitwise<T>();
    return detail::atomic_op(ctx, "atomic_fetch_or", amo::fetch_or, dst, value, T{}, pe);
}
/// Atomically ors `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @bitwise_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_or(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_bitwise<T>();
    detail::atomic_update_op(ctx, "atomic_or", amo::fetch_or, dst, T(value), pe);
}
/// Atomically xors `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_old
/// - @on_atomic
/// - @bitwise_errors{dst} @reply_errors
template <class Tr, class T>
PGAS_HD T atomic_fetch_xor(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value,
                           int pe) {
    detail::require_bitwise<T>();
    return detail::atomic_op(ctx, "atomic_fetch_xor", amo::fetch_xor, dst, value, T{}, pe);
}
/// Atomically xors `value` into the word `dst` on PE `pe`.
/// - @by_one
/// - @returns_issued
/// - @on_atomic
/// - @bitwise_errors{dst} @inner_wait_errors
template <class Tr, class T>
PGAS_HD void atomic_xor(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_bitwise<T>();
    detail::atomic_update_op(ctx, "atomic_xor", amo::fetch_xor, dst, T(value), pe);
}

PGAS_NAMESPACE_END
