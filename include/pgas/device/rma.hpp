// One-sided put/get (blocking and _nbi), the single-element p/g and strided iput/iget, called from device code.
#pragma once

#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/device/context.hpp>
#include <pgas/transport/concepts.hpp>

#include <cstddef>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
template <class Tr>
PGAS_HD constexpr void require_rma() {
    if constexpr (!rma_transport<Tr>) diagnose_rma_transport<Tr>();  // names the missing clause
}
template <class T, class U>
PGAS_HD constexpr void require_same_element() {
    static_assert(std::is_same_v<std::remove_cv_t<T>, std::remove_cv_t<U>>,
                  "pgas: source and destination element types differ; use symmetric_cast to reinterpret");
    static_assert(std::is_trivially_copyable_v<std::remove_cv_t<T>>,
                  "pgas: put/get move bytes: the element type must be trivially copyable");
}
template <class Tr, class T>
PGAS_HD void check_rma(const device::context<Tr>& ctx, const char* call, std::uint64_t offset, std::size_t count,
                       int pe) {
    check_pe(ctx, call, pe);
    check_range(ctx, call, offset, std::uint64_t(count) * sizeof(T));
}
// put and put_nbi (Nbi): the same checks, then the transport's put or put_nbi.
template <bool Nbi, group G, class Tr, class T, class U>
PGAS_HD void checked_put(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> dst, const U* src,
                         std::size_t count, int pe) {
    require_rma<Tr>();
    require_same_element<T, U>();
    check_rma<Tr, T>(ctx, call, dst.offset(), count, pe);
    if constexpr (Nbi)
        ctx.transport.template put_nbi<G>(dst.offset(), src, count * sizeof(T), pe);
    else
        ctx.transport.template put<G>(dst.offset(), src, count * sizeof(T), pe);
}
// get and get_nbi (Nbi): the same checks, then the transport's get or get_nbi.
template <bool Nbi, group G, class Tr, class T, class U>
PGAS_HD void checked_get(const device::context<Tr>& ctx, const char* call, T* dst, symmetric_ptr<U> src,
                         std::size_t count, int pe) {
    require_rma<Tr>();
    require_same_element<T, U>();
    check_rma<Tr, T>(ctx, call, src.offset(), count, pe);
    if constexpr (Nbi)
        ctx.transport.template get_nbi<G>(dst, src.offset(), count * sizeof(T), pe);
    else
        ctx.transport.template get<G>(dst, src.offset(), count * sizeof(T), pe);
}
}  // namespace detail

/// Copies `count` elements from local `src` to `dst` on PE `pe` (blocking put).
/// - **Called by** every thread of `G` (pgas::thread by default, a tile, warp or block) with the same arguments.
/// - **Returns** when `src` may be reused; the data is visible at `pe` only after quiet (or barrier, or a
///   signal a reader waits for). Ordered with the caller's later operations to `pe` only by fence, with those to
///   other PEs only by quiet. Per transport (docs/memory-model.md): nvlink/host return once the stores are issued;
///   libfabric waits for the put's completion above 48 bytes; ibgda for a registered source's WRITE completion.
/// - @on_rma
/// - **Errors:** compile time: `T` and `U` differ (use symmetric_cast) or are not trivially copyable;
///   with PGAS_CHECKS, `pe` outside [0, n_pes) is errc::pe_out_of_range and a null `dst` or a range outside the
/// heap's user area errc::not_symmetric (thrown on the host transport, print and trap on a GPU: see @ref errors).
/// Where the put waits (libfabric, ibgda), errc::timeout after PGAS_TIMEOUT_MS or errc::peer_failed.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count, int pe) {
    detail::checked_put<false, G>(ctx, "put", dst, src, count, pe);
}

/// Copies `count` elements from local `src` to `dst` on PE `pe` without waiting (put, non-blocking).
/// - @by_group
/// - **Returns** at once: `src` must stay untouched until the caller's next quiet (or barrier), which completes the
///   put and makes it visible at `pe`. Ordering as put. On nvlink/host it is the same as put.
/// - @on_rma
/// - **Errors:** as put (compile time and PGAS_CHECKS); a full proxy ring makes libfabric's put_nbi wait
///   (errc::timeout, errc::peer_failed).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_nbi(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count, int pe) {
    detail::checked_put<true, G>(ctx, "put_nbi", dst, src, count, pe);
}

/// Copies `count` elements of `src` on PE `pe` into local `dst` (blocking get).
/// - @by_group
/// - **Returns** when `dst` holds the data, for every thread of `G`. It reads what `pe` made visible (after that PE's
///   quiet, or a signal the caller waited for); not ordered with the caller's earlier puts to `pe` unless a fence or
///   quiet sits between them.
/// - @on_rma
/// - **Errors:** compile time as put; @heap_checked{src}. On libfabric and ibgda it waits for the data
///   (errc::timeout, errc::peer_failed).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get(const device::context<Tr>& ctx, T* dst, symmetric_ptr<U> src, std::size_t count, int pe) {
    detail::checked_get<false, G>(ctx, "get", dst, src, count, pe);
}

/// Copies `count` elements of `src` on PE `pe` into local `dst` without waiting (get, non-blocking).
/// - @by_group
/// - **Returns** at once; `dst` is valid only after the caller's next quiet (some transports complete it before
///   returning: nvlink/host always, libfabric up to 48 bytes, ibgda into unregistered memory; do not rely on it).
/// - @on_rma
/// - **Errors:** as get.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get_nbi(const device::context<Tr>& ctx, T* dst, symmetric_ptr<U> src, std::size_t count, int pe) {
    detail::checked_get<true, G>(ctx, "get_nbi", dst, src, count, pe);
}

/// One thread writes one element, `value`, to `dst` on PE `pe`.
/// - @by_one
/// - **Returns** when the write is issued; visible at `pe` after quiet, like put. On load/store transports (nvlink,
///   host) a 4- or 8-byte arithmetic element or a 2-byte integer is a single relaxed system-scope atomic store, so a
///   peer may poll it with wait_until without a data race (or a torn value); elsewhere (libfabric, ibgda, route) it
///   is a one-element put: write a word another PE polls with atomic_set or a signal there.
/// - @on_rma
/// - **Errors:** @heap_checked{dst}.
template <class Tr, class T>
PGAS_HD void p(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_rma<Tr>();
    detail::check_rma<Tr, T>(ctx, "p", dst.offset(), 1, pe);
    if constexpr (load_store_transport<Tr> && detail::is_atomic_word<T>) {
        detail::atomic_ref<T, detail::thread_scope::system> word(*ctx.peer(dst, pe));
        word.store(value, detail::memory_order_relaxed);
    } else {
        ctx.transport.template put<thread>(dst.offset(), &value, sizeof(T), pe);
    }
}

/// One thread reads one element of `src` on PE `pe` and returns it.
/// - **Called by** one thread.
/// - **Returns** the value: on nvlink/host a 4- or 8-byte arithmetic element or a 2-byte integer is one relaxed
///   system-scope atomic load; elsewhere a one-element blocking get.
/// - @on_rma
/// - **Errors:** @heap_checked{src}. On libfabric and ibgda it waits for the reply (errc::timeout,
///   errc::peer_failed).
template <class Tr, class T>
PGAS_HD std::remove_cv_t<T> g(const device::context<Tr>& ctx, symmetric_ptr<T> src, int pe) {
    detail::require_rma<Tr>();
    detail::check_rma<Tr, T>(ctx, "g", src.offset(), 1, pe);
    using V = std::remove_cv_t<T>;
    if constexpr (load_store_transport<Tr> && detail::is_atomic_word<V>) {
        detail::atomic_ref<V, detail::thread_scope::system> word(*const_cast<V*>(ctx.peer(src, pe)));
        return word.load(detail::memory_order_relaxed);
    } else {
        V value;
        ctx.transport.template get<thread>(&value, src.offset(), sizeof(V), pe);
        return value;
    }
}

namespace detail {
// Strided forms: strides in elements, at least 1; the symmetric side spans (count - 1) * stride + 1 elements.
template <class Tr, class T>
PGAS_HD void check_strided(const device::context<Tr>& ctx, const char* call, std::uint64_t offset,
                           std::ptrdiff_t dst_stride, std::ptrdiff_t src_stride, std::ptrdiff_t symmetric_stride,
                           std::size_t count, int pe) {
    check_pe(ctx, call, pe);
    if constexpr (PGAS_CHECKS) {
        if (dst_stride < 1)
            report(errc::invalid_argument, call, ctx.my_pe(), "dst_stride must be >= 1, got", dst_stride);
        if (src_stride < 1)
            report(errc::invalid_argument, call, ctx.my_pe(), "src_stride must be >= 1, got", src_stride);
    }
    if (count == 0) return;
    check_range(ctx, call, offset, (std::uint64_t(count - 1) * std::uint64_t(symmetric_stride) + 1) * sizeof(T));
}
}  // namespace detail

/// Strided put (OpenSHMEM shmem_iput): copies `count` elements, `src[i * src_stride]` to `dst[i * dst_stride]` on PE
/// `pe` (strides in elements, at least 1).
/// - **Called by** every thread of `G` with the same arguments; the group's threads share the elements.
/// - **Returns** when `src` may be reused, for every thread of `G`; visible at `pe` after quiet, ordered like put.
///   On load/store transports (nvlink, host) it is a direct strided copy into the peer's memory, element by element
///   over the group's threads; on the others (libfabric, ibgda, route's far side) a loop of one-element blocking puts
///   through the transport (one command or WQE per element: use put on a packed buffer for bandwidth).
/// - @on_rma
/// - **Errors:** compile time as put; with PGAS_CHECKS, `pe` outside [0, n_pes) is errc::pe_out_of_range, a stride
///   below 1 errc::invalid_argument, a null `dst` or a strided span outside the heap's user area errc::not_symmetric
///   (thrown on the host transport, print and trap on a GPU). Where a put waits (libfabric, ibgda), errc::timeout or
///   errc::peer_failed.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void iput(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t src_stride, std::size_t count, int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_strided<Tr, T>(ctx, "iput", dst.offset(), dst_stride, src_stride, dst_stride, count, pe);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        if constexpr (load_store_transport<Tr>) {
            ctx.peer(dst, pe)[std::ptrdiff_t(i) * dst_stride] = src[std::ptrdiff_t(i) * src_stride];
        } else {
            ctx.transport.template put<thread>((dst + std::ptrdiff_t(i) * dst_stride).offset(),
                                               src + std::ptrdiff_t(i) * src_stride, sizeof(T), pe);
        }
    }
    G::sync();
}

/// Strided get (OpenSHMEM shmem_iget): copies `count` elements, `src[i * src_stride]` on PE `pe` to local
/// `dst[i * dst_stride]` (strides in elements, at least 1).
/// - **Called by** every thread of `G` with the same arguments; the group's threads share the elements.
/// - **Returns** when `dst` holds the data, for every thread of `G`; what it reads is as for get. On load/store
///   transports (nvlink, host) a direct strided copy from the peer's memory; on the others (libfabric, ibgda, route's
///   far side) a loop of one-element blocking gets through the transport (one round trip per element).
/// - @on_rma
/// - **Errors:** compile time as get; with PGAS_CHECKS, `pe` outside [0, n_pes) is errc::pe_out_of_range, a stride
///   below 1 errc::invalid_argument, a null `src` or a strided span outside the heap's user area errc::not_symmetric
///   (thrown on the host transport, print and trap on a GPU). On libfabric and ibgda it waits for the data
///   (errc::timeout, errc::peer_failed).
template <group G = thread, class Tr, class T, class U>
PGAS_HD void iget(const device::context<Tr>& ctx, T* dst, symmetric_ptr<U> src, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t src_stride, std::size_t count, int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_strided<Tr, T>(ctx, "iget", src.offset(), dst_stride, src_stride, src_stride, count, pe);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        if constexpr (load_store_transport<Tr>) {
            dst[std::ptrdiff_t(i) * dst_stride] = ctx.peer(src, pe)[std::ptrdiff_t(i) * src_stride];
        } else {
            ctx.transport.template get<thread>(dst + std::ptrdiff_t(i) * dst_stride,
                                               (src + std::ptrdiff_t(i) * src_stride).offset(), sizeof(T), pe);
        }
    }
    G::sync();
}

PGAS_NAMESPACE_END
