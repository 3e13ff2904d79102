// One-sided put/get (blocking and _nbi) and the single-element p/g, called from device code.
#pragma once

#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/device/context.hpp>
#include <pgas/transport/concepts.hpp>

#include <cstddef>
#include <type_traits>

#include <cuda/atomic>

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
PGAS_HD void check_rma(const device::context<Tr>& ctx, const char* call, std::uint64_t offset,
                       std::size_t count, int pe) {
    check_pe(ctx, call, pe);
    check_range(ctx, call, offset, std::uint64_t(count) * sizeof(T));
}
}  // namespace detail

// Copies count elements from local src to dst on PE pe. Called by every
// thread of G with the same arguments; returns when src may be reused. Not
// ordered with later puts to other PEs: use fence/quiet.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src, std::size_t count,
                 int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "put", dst.offset(), count, pe);
    ctx.transport.template put<G>(dst.offset(), src, count * sizeof(T), pe);
}

// As put, but may return before src is reusable; quiet completes it.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void put_nbi(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const U* src,
                     std::size_t count, int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "put_nbi", dst.offset(), count, pe);
    ctx.transport.template put_nbi<G>(dst.offset(), src, count * sizeof(T), pe);
}

// Copies count elements of src on PE pe into local dst; on return dst holds
// them, for every thread of G.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get(const device::context<Tr>& ctx, T* dst, symmetric_ptr<U> src, std::size_t count, int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "get", src.offset(), count, pe);
    ctx.transport.template get<G>(dst, src.offset(), count * sizeof(T), pe);
}

// As get, but dst is valid only after quiet.
template <group G = thread, class Tr, class T, class U>
PGAS_HD void get_nbi(const device::context<Tr>& ctx, T* dst, symmetric_ptr<U> src, std::size_t count,
                     int pe) {
    detail::require_rma<Tr>();
    detail::require_same_element<T, U>();
    detail::check_rma<Tr, T>(ctx, "get_nbi", src.offset(), count, pe);
    ctx.transport.template get_nbi<G>(dst, src.offset(), count * sizeof(T), pe);
}

// One thread writes one element to PE pe. On load/store transports a 4- or
// 8-byte element is a single relaxed atomic store, so a peer may poll it with
// wait_until without a data race.
template <class Tr, class T>
PGAS_HD void p(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe) {
    detail::require_rma<Tr>();
    detail::check_rma<Tr, T>(ctx, "p", dst.offset(), 1, pe);
    if constexpr (load_store_transport<Tr> && (sizeof(T) == 4 || sizeof(T) == 8) &&
                  std::is_arithmetic_v<T>) {
        cuda::atomic_ref<T, cuda::thread_scope_system> word(*ctx.peer(dst, pe));
        word.store(value, cuda::memory_order_relaxed);
    } else {
        ctx.transport.template put<thread>(dst.offset(), &value, sizeof(T), pe);
    }
}

// One thread reads one element of PE pe.
template <class Tr, class T>
PGAS_HD std::remove_cv_t<T> g(const device::context<Tr>& ctx, symmetric_ptr<T> src, int pe) {
    detail::require_rma<Tr>();
    detail::check_rma<Tr, T>(ctx, "g", src.offset(), 1, pe);
    using V = std::remove_cv_t<T>;
    if constexpr (load_store_transport<Tr> && (sizeof(V) == 4 || sizeof(V) == 8) &&
                  std::is_arithmetic_v<V>) {
        cuda::atomic_ref<V, cuda::thread_scope_system> word(*const_cast<V*>(ctx.peer(src, pe)));
        return word.load(cuda::memory_order_relaxed);
    } else {
        V value;
        ctx.transport.template get<thread>(&value, src.offset(), sizeof(V), pe);
        return value;
    }
}

PGAS_NAMESPACE_END
