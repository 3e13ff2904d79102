// Device ops on registered windows (world::register_window): put/get (blocking and _nbi), p/g, put_signal, atomics.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/window.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/memory_ops.hpp>
#include <pgas/device/atomic.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/transport/concepts.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

// A window is reached one of two ways, whichever the transport has:
//  - by load/store (peer_pointer_transport: nvlink, host, route's near peers): its table row gives PE pe's buffer
//    as the caller may load and store it (the same process's memory, or a CUDA IPC mapping of a node-local
//    peer's). A window op is a group copy or an atomic on that address, as the load/store transports do for the
//    heap (transport/load_store.hpp), and fence/quiet order and complete it as they do heap ops: on nvlink and host
//    they are one system-scope fence, which covers every store.
//  - by name (window_transport: the libfabric proxy, ibgda): the op names the window's table offset and a byte
//    offset. The proxy's command carries both and its backend resolves them into PE pe's registered buffer (its key
//    and address) and posts fi_write/fi_read/fi_atomic; ibgda reads PE pe's row of the table (the address and
//    remote key pe's NIC registered, written there by ibgda_domain) and posts the heap op's WQEs with them. Either
//    way it is ordered and completed by fence/quiet exactly as the same transport's heap ops.
namespace detail {
// Windows by name, where the transport maps no peer memory (route<nvlink, libfabric> maps its near peers and
// keeps the load/store path).
template <class Tr>
inline constexpr bool window_by_name = window_transport<Tr> && !peer_pointer_transport<Tr>;

template <class Tr>
PGAS_HD constexpr void require_window() {
    static_assert(peer_pointer_transport<Tr> || window_transport<Tr>,
                  "pgas: this transport reaches no registered windows (it neither maps peer memory, as nvlink, host "
                  "and route's near peers do, nor resolves windows by name, as the libfabric proxy and ibgda do: "
                  "see pgas::window_transport; use the symmetric heap there)");
}

// The checks every window op makes under PGAS_CHECKS: a live-looking window, pe in range, `count` elements inside
// the buffer.
template <class Tr, class T>
PGAS_HD void check_window(const device::context<Tr>& ctx, const char* call, window<T> w, std::size_t count, int pe) {
    require_window<Tr>();
    check_pe(ctx, call, pe);
    if constexpr (PGAS_CHECKS) {
        if (!w) report(errc::not_symmetric, call, ctx.my_pe(), "null window, table offset", -1);
        check_range(ctx, call, w.table_offset(), std::uint64_t(ctx.n_pes()) * sizeof(window_row));
        if (w.offset() > w.size() || count > w.size() - w.offset())
            report(errc::invalid_argument, call, ctx.my_pe(), "range past the end of the window, last element",
                   (long long)(w.offset() + count) - 1);
    }
}

// Byte offset of w's element in every PE's buffer (what a command by name carries).
template <class T>
PGAS_HD std::uint64_t window_bytes(window<T> w) {
    return w.offset() * sizeof(T);
}

// The caller's row for PE pe of window w: one load from the caller's own heap.
template <class Tr>
PGAS_HD const window_row& window_row_of(const device::context<Tr>& ctx, std::uint64_t table, int pe) {
    return ctx.local(symmetric_ptr<const window_row>(offset_tag{}, table))[pe];
}

// PE pe's element w.offset() as the caller may load/store it, after the checks (under PGAS_CHECKS): a live-looking
// window, pe in range, `count` elements inside the buffer, a buffer mapped here.
template <class Tr, class T>
PGAS_HD T* window_target(const device::context<Tr>& ctx, const char* call, window<T> w, std::size_t count, int pe) {
    check_window(ctx, call, w, count, pe);
    const window_row& row = window_row_of(ctx, w.table_offset(), pe);
    if constexpr (PGAS_CHECKS) {
        if (row.address == nullptr)
            report(errc::transport_unavailable, call, ctx.my_pe(),
                   "window buffer not mapped here (not load/store reachable, or released), target PE", pe);
    }
    return reinterpret_cast<T*>(row.address) + w.offset();
}

template <class T>
PGAS_HD constexpr void require_window_word() {
    static_assert((sizeof(T) == 4 || sizeof(T) == 8) && std::is_arithmetic_v<T>,
                  "pgas: atomics on a window take 4- or 8-byte integers or floating-point values");
}

// A fetching atomic on a window by name: one proxy command whose old value comes back.
template <class Tr, class T>
PGAS_HD T window_atomic(const device::context<Tr>& ctx, const char* call, amo op, window<T> w, T operand, T expected,
                        int pe) {
    require_window_word<T>();
    check_window(ctx, call, w, 1, pe);
    return ctx.transport.template window_atomic<T>(op, w.table_offset(), window_bytes(w), operand, expected, pe);
}

template <class Tr, class T>
PGAS_HD T* window_word(const device::context<Tr>& ctx, const char* call, window<T> w, int pe) {
    require_window_word<T>();
    T* word = window_target(ctx, call, w, 1, pe);
    if constexpr (PGAS_CHECKS) {
        if (reinterpret_cast<std::uintptr_t>(word) % sizeof(T) != 0)
            report(errc::misaligned, call, ctx.my_pe(), "window element not naturally aligned, element",
                   (long long)w.offset());
    }
    return word;
}
}  // namespace detail

/// The caller's own buffer of window `w`, at element w.offset(): what it passed to world::register_window.
/// - **Called by** any thread, on its own; nothing is communicated.
/// - **Returns** the pointer (valid until world::release_window).
/// - **Transports:** those that reach windows (nvlink, host, route, libfabric, ibgda); another fails to compile
///   ("pgas: this transport reaches no registered windows ...").
/// - **Errors:** with PGAS_CHECKS a null window or an offset past its end (errc::not_symmetric,
///   errc::invalid_argument: thrown on the host transport, print and trap on a GPU).
template <class Tr, class T>
PGAS_HD T* window_local(const device::context<Tr>& ctx, window<T> w) {
    return detail::window_target(ctx, "window_local", w, 0, ctx.my_pe());
}

/// PE `pe`'s buffer of window `w`, at element w.offset(), as a pointer the caller may load from and store to, or
/// nullptr where that buffer is not mapped here (as ctx.peer for the heap; on route, non-null for near peers only).
/// - **Called by** any thread, on its own; nothing is communicated.
/// - **Returns** the pointer or nullptr.
/// - **Transports:** those that reach windows (nvlink, host, route, libfabric, ibgda); another fails to compile.
///   Over libfabric and ibgda a peer's buffer is non-null only where it is the same process's memory (PEs as
///   threads).
/// - **Errors:** with PGAS_CHECKS, `pe` out of range (errc::pe_out_of_range), a null window (errc::not_symmetric).
template <class Tr, class T>
PGAS_HD T* window_peer(const device::context<Tr>& ctx, window<T> w, int pe) {
    detail::require_window<Tr>();
    detail::check_pe(ctx, "window_peer", pe);
    if constexpr (PGAS_CHECKS) {
        if (!w) detail::report(errc::not_symmetric, "window_peer", ctx.my_pe(), "null window, table offset", -1);
    }
    std::byte* base = detail::window_row_of(ctx, w.table_offset(), pe).address;
    return base == nullptr ? nullptr : reinterpret_cast<T*>(base) + w.offset();
}

/// Copies `count` elements from local `src` into window `dst` on PE `pe` (blocking put into a registered buffer).
/// - **Called by** every thread of `G` (pgas::thread by default, a tile, warp or block) with the same arguments.
/// - **Returns** when `src` may be reused (the stores are issued; over libfabric, as the heap's put: a payload
///   of up to 48 bytes travels in the command, a larger one is waited for); visible at `pe` after quiet (or a
///   barrier, or a signal a reader waits for), ordered with the caller's later operations to `pe` by fence,
///   exactly as put into the heap on the same transport.
/// - **Transports:** nvlink, host, route (its near peers; a far peer's buffer is not mapped) by load/store;
///   libfabric through its proxy (a command naming the window; the proxy posts fi_write with the target PE's key
///   of the window's buffer, registered by libfabric_domain); ibgda by the GPU's own WQEs (an RDMA WRITE, inline
///   or from registered memory as for the heap, to the address and remote key of the target PE's buffer that
///   ibgda_domain registered with its NIC, read from the window's table); another fails to compile: "pgas: this
///   transport reaches no registered windows ...".
/// - **Errors:** compile time: `T` and `U` differ or are not trivially copyable; with PGAS_CHECKS, `pe` out of range
///   (errc::pe_out_of_range), a null window (errc::not_symmetric), elements past the window's end
///   (errc::invalid_argument), a buffer not mapped here (errc::transport_unavailable, load/store transports);
///   thrown on the host transport, print and trap on a GPU. Over libfabric the proxy checks the range against the
///   target PE's registered buffer before posting anything and fails (its waiters report it) when it lies outside;
///   over ibgda, with PGAS_CHECKS, a row no NIC registration filled (a released window) is
///   errc::transport_unavailable and a range past the target's buffer errc::invalid_argument, before any WQE.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put(const device::context<Tr>& ctx, window<T> dst, const U* src, std::size_t count, int pe) {
    detail::require_same_element<T, U>();
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "put", dst, count, pe);
        ctx.transport.template window_put<G>(dst.table_offset(), detail::window_bytes(dst), src, count * sizeof(T), pe);
    } else {
        detail::group_copy<G>(detail::window_target(ctx, "put", dst, count, pe), src, count * sizeof(T));
        G::sync();
    }
}

/// As put into a window, without waiting: `src` must stay untouched until the caller's next quiet.
/// - @by_group
/// - **Returns** at once (the stores are issued); complete and visible at `pe` after quiet.
/// - **Transports:** as put into a window.
/// - **Errors:** as put into a window.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_nbi(const device::context<Tr>& ctx, window<T> dst, const U* src, std::size_t count, int pe) {
    detail::require_same_element<T, U>();
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "put_nbi", dst, count, pe);
        ctx.transport.template window_put_nbi<G>(dst.table_offset(), detail::window_bytes(dst), src, count * sizeof(T),
                                                 pe);
    } else {
        detail::group_copy<G>(detail::window_target(ctx, "put_nbi", dst, count, pe), src, count * sizeof(T));
    }
}

/// Copies `count` elements of window `src` on PE `pe` into local `dst` (blocking get from a registered buffer).
/// - @by_group
/// - **Returns** when `dst` holds the data, for every thread of `G`; it reads what `pe` made visible (its quiet, or
///   a signal the caller waited for).
/// - **Transports:** as put into a window.
/// - **Errors:** as put into a window.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get(const device::context<Tr>& ctx, T* dst, window<U> src, std::size_t count, int pe) {
    detail::require_same_element<T, U>();
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "get", src, count, pe);
        ctx.transport.template window_get<G>(dst, src.table_offset(), detail::window_bytes(src), count * sizeof(T), pe);
    } else {
        detail::group_copy<G, true>(dst, detail::window_target(ctx, "get", src, count, pe), count * sizeof(T));
        G::sync();
    }
}

/// As get from a window, without waiting: `dst` is the caller's only after its next quiet.
/// - @by_group
/// - **Returns** at once (on nvlink/host the loads are done, but do not rely on it).
/// - **Transports:** as put into a window.
/// - **Errors:** as put into a window.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get_nbi(const device::context<Tr>& ctx, T* dst, window<U> src, std::size_t count, int pe) {
    detail::require_same_element<T, U>();
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "get_nbi", src, count, pe);
        ctx.transport.template window_get_nbi<G>(dst, src.table_offset(), detail::window_bytes(src), count * sizeof(T),
                                                 pe);
    } else {
        detail::group_copy<G, true>(dst, detail::window_target(ctx, "get_nbi", src, count, pe), count * sizeof(T));
    }
}

/// One thread writes one element, `value`, into window `dst` on PE `pe`.
/// - @by_one
/// - **Returns** when the write is issued; visible after quiet. A 4- or 8-byte arithmetic element is one relaxed
///   system-scope atomic store, so a peer may poll it.
/// - **Transports:** as put into a window.
/// - **Errors:** as put into a window.
template <class Tr, class T>
PGAS_HD void p(const device::context<Tr>& ctx, window<T> dst, std::type_identity_t<T> value, int pe) {
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "p", dst, 1, pe);
        ctx.transport.template window_put<thread>(dst.table_offset(), detail::window_bytes(dst), &value, sizeof(T), pe);
        return;
    }
    T* target = detail::window_target(ctx, "p", dst, 1, pe);
    if constexpr ((sizeof(T) == 4 || sizeof(T) == 8) && std::is_arithmetic_v<T>)
        detail::atomic_ref<T, detail::thread_scope::system>(*target).store(value, detail::memory_order_relaxed);
    else
        *target = value;
}

/// One thread reads one element of window `src` on PE `pe` and returns it.
/// - **Called by** one thread.
/// - **Returns** the value (a relaxed system-scope atomic load for 4- and 8-byte arithmetic elements).
/// - **Transports:** as put into a window.
/// - **Errors:** as put into a window.
template <class Tr, class T>
PGAS_HD std::remove_cv_t<T> g(const device::context<Tr>& ctx, window<T> src, int pe) {
    using V = std::remove_cv_t<T>;
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "g", src, 1, pe);
        V value{};
        ctx.transport.template window_get<thread>(&value, src.table_offset(), detail::window_bytes(src), sizeof(V), pe);
        return value;
    }
    V* source = const_cast<V*>(detail::window_target(ctx, "g", src, 1, pe));
    if constexpr ((sizeof(V) == 4 || sizeof(V) == 8) && std::is_arithmetic_v<V>)
        return detail::atomic_ref<V, detail::thread_scope::system>(*source).load(detail::memory_order_relaxed);
    else
        return detail::load_peer(source);
}

/// Copies `count` elements from local `src` into window `dst` on PE `pe`, then applies `op value` to the signal
/// word `sig` in the symmetric heap of `pe`: a PE that sees the signal's new value (signal_wait_until) sees the
/// data (DeepEP's shape: payload into a framework-owned buffer, flag in symmetric memory).
/// - @by_group
/// - **Returns** when `src` may be reused. The group's stores come before rank 0's release update of the signal.
/// - **Transports:** as put into a window, and the transport must model pgas::signal_transport.
/// - **Errors:** as put into a window; for `sig` as put_signal (errc::not_symmetric, errc::misaligned).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal(const device::context<Tr>& ctx, window<T> dst, const U* src, std::size_t count,
                        symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe) {
    detail::require_signal<Tr>();
    detail::require_same_element<T, U>();
    detail::check_signal(ctx, "put_signal", sig);
    if constexpr (detail::window_by_name<Tr>) {
        detail::check_window(ctx, "put_signal", dst, count, pe);
        ctx.transport.template window_put_signal<G>(dst.table_offset(), detail::window_bytes(dst), src,
                                                    count * sizeof(T), sig.offset(), value, op, pe);
        return;
    }
    detail::group_copy<G>(detail::window_target(ctx, "put_signal", dst, count, pe), src, count * sizeof(T));
    // As the load/store transports' put_signal: the group sync puts every member's stores before rank 0's release.
    G::sync();
    if (G::rank() == 0) ctx.transport.signal(sig.offset(), value, op, pe);
    G::sync();
}

/// The same as put_signal into a window (its stores are issued before it returns; quiet completes nothing more).
/// - @by_group
/// - **Returns** when the data is stored and the signal updated.
/// - **Transports:** as put_signal into a window.
/// - **Errors:** as put_signal into a window.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_signal_nbi(const device::context<Tr>& ctx, window<T> dst, const U* src, std::size_t count,
                            symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe) {
    if constexpr (detail::window_by_name<Tr>) {
        detail::require_signal<Tr>();
        detail::require_same_element<T, U>();
        detail::check_signal(ctx, "put_signal_nbi", sig);
        detail::check_window(ctx, "put_signal_nbi", dst, count, pe);
        ctx.transport.template window_put_signal_nbi<G>(dst.table_offset(), detail::window_bytes(dst), src,
                                                        count * sizeof(T), sig.offset(), value, op, pe);
    } else {
        put_signal<G>(ctx, dst, src, count, sig, value, op, pe);
    }
}

/// Atomically reads the word of window `src` on PE `pe`.
/// - @by_one
/// - **Returns** the value; relaxed (ordered with other operations only by fence and quiet), as the heap's atomics.
/// - **Transports:** as put into a window.
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type; with PGAS_CHECKS as put
///   into a window, and a word not naturally aligned (errc::misaligned).
template <class Tr, class T>
PGAS_HD T atomic_fetch(const device::context<Tr>& ctx, window<T> src, int pe) {
    if constexpr (detail::window_by_name<Tr>)
        return detail::window_atomic(ctx, "atomic_fetch", amo::fetch, src, T{}, T{}, pe);
    else
        return detail::atomic_ref<T, detail::thread_scope::system>(*detail::window_word(ctx, "atomic_fetch", src, pe))
            .load(detail::memory_order_relaxed);
}

/// Atomically writes `value` into the word of window `dst` on PE `pe` (a word another PE may poll).
/// - **Called by** one thread.
/// - **Returns** once the store is performed (relaxed); visible after quiet.
/// - **Transports:** as put into a window.
/// - **Errors:** as atomic_fetch on a window.
template <class Tr, class T>
PGAS_HD void atomic_set(const device::context<Tr>& ctx, window<T> dst, std::type_identity_t<T> value, int pe) {
    if constexpr (detail::window_by_name<Tr>) {
        detail::require_window_word<T>();
        detail::check_window(ctx, "atomic_set", dst, 1, pe);
        ctx.transport.template window_atomic_update<T>(amo::set, dst.table_offset(), detail::window_bytes(dst), value,
                                                       pe);
        return;
    }
    detail::atomic_ref<T, detail::thread_scope::system>(*detail::window_word(ctx, "atomic_set", dst, pe))
        .store(value, detail::memory_order_relaxed);
}

/// Atomically adds `value` to the word of window `dst` on PE `pe` and returns the old value.
/// - @by_one
/// - **Returns** the old value (relaxed).
/// - **Transports:** as put into a window.
/// - **Errors:** as atomic_fetch on a window.
template <class Tr, class T>
PGAS_HD T atomic_fetch_add(const device::context<Tr>& ctx, window<T> dst, std::type_identity_t<T> value, int pe) {
    if constexpr (detail::window_by_name<Tr>)
        return detail::window_atomic(ctx, "atomic_fetch_add", amo::fetch_add, dst, T(value), T{}, pe);
    else
        return detail::atomic_ref<T, detail::thread_scope::system>(
                   *detail::window_word(ctx, "atomic_fetch_add", dst, pe))
            .fetch_add(value, detail::memory_order_relaxed);
}

/// Atomically adds `value` to the word of window `dst` on PE `pe`, no old value wanted.
/// - **Called by** one thread.
/// - **Returns** once the add is performed (relaxed); visible after quiet.
/// - **Transports:** as put into a window.
/// - **Errors:** as atomic_fetch on a window.
template <class Tr, class T>
PGAS_HD void atomic_add(const device::context<Tr>& ctx, window<T> dst, std::type_identity_t<T> value, int pe) {
    if constexpr (detail::window_by_name<Tr>) {
        detail::require_window_word<T>();
        detail::check_window(ctx, "atomic_add", dst, 1, pe);
        ctx.transport.template window_atomic_update<T>(amo::fetch_add, dst.table_offset(), detail::window_bytes(dst),
                                                       value, pe);
    } else {
        (void)atomic_fetch_add(ctx, dst, value, pe);
    }
}

/// Atomically replaces the word of window `dst` on PE `pe` with `value` if it equals `expected`; returns the old
/// value either way.
/// - **Called by** one thread.
/// - **Returns** the old value (relaxed).
/// - **Transports:** as put into a window.
/// - **Errors:** as atomic_fetch on a window.
template <class Tr, class T>
PGAS_HD T atomic_compare_swap(const device::context<Tr>& ctx, window<T> dst, std::type_identity_t<T> expected,
                              std::type_identity_t<T> value, int pe) {
    if constexpr (detail::window_by_name<Tr>)
        return detail::window_atomic(ctx, "atomic_compare_swap", amo::compare_swap, dst, T(value), T(expected), pe);
    detail::atomic_ref<T, detail::thread_scope::system>(*detail::window_word(ctx, "atomic_compare_swap", dst, pe))
        .compare_exchange_strong(expected, value, detail::memory_order_relaxed);
    return expected;
}

PGAS_NAMESPACE_END
