// The public contract of a transport: concepts for identity, RMA, atomics, signals and load/store.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

// A transport is the trivially copyable device-side state of one way to reach
// peers; device::context<T> carries it into kernels by value. It opts in to
// each capability with a constexpr flag and must then also have the members
// that capability needs (stdexec style: opt-in plus structure).
//
//   T::name                      "nvlink", "host", ...
//   my_pe(), n_pes()             world PE of the caller and world size
//   reachable(pe)                whether this transport reaches that PE at all
//   local_address(offset)        the caller's own heap byte at a symmetric offset
//   heap_bytes()                 size of each PE's symmetric heap
template <class T>
concept transport = std::is_trivially_copyable_v<T> &&
                    requires(const T& t, int pe, std::uint64_t offset) {
                        { T::name } -> std::convertible_to<const char*>;
                        { t.my_pe() } -> std::same_as<int>;
                        { t.n_pes() } -> std::same_as<int>;
                        { t.reachable(pe) } -> std::same_as<bool>;
                        { t.local_address(offset) } -> std::same_as<void*>;
                        { t.heap_bytes() } -> std::same_as<std::uint64_t>;
                    };

// put/get (blocking and _nbi) of bytes between local memory and a symmetric
// offset on `pe`, called by every thread of group G; fence/quiet by G.
template <class T>
concept rma_transport =
    transport<T> && T::provides_rma &&
    requires(const T& t, void* dst, const void* src, std::size_t bytes, std::uint64_t offset, int pe) {
        t.template put<thread>(offset, src, bytes, pe);
        t.template put_nbi<thread>(offset, src, bytes, pe);
        t.template get<thread>(dst, offset, bytes, pe);
        t.template get_nbi<thread>(dst, offset, bytes, pe);
        t.template fence<thread>();
        t.template quiet<thread>();
    };

// One thread performs op on a naturally aligned 4- or 8-byte word on `pe`.
template <class T>
concept atomic_transport =
    transport<T> && T::provides_atomics &&
    requires(const T& t, amo op, std::uint64_t offset, int pe) {
        { t.template atomic<std::uint64_t>(op, offset, std::uint64_t{}, std::uint64_t{}, pe) }
            -> std::same_as<std::uint64_t>;
        { t.template atomic_add<float>(offset, 1.0f, pe) } -> std::same_as<float>;
    };

// Optional: a transport that can start an atomic nobody reads the old value of
// (add, inc, and, or, xor, set) without waiting for it; quiet completes it. A
// proxy saves the reply round trip and the ring slot a reply holds; the others
// compute the old value anyway (detail::start_atomic_update falls back to atomic).
template <class T, class V>
concept atomic_update_transport =
    atomic_transport<T> && requires(const T& t, amo op, std::uint64_t offset, V operand, int pe) {
        t.template atomic_update<V>(op, offset, operand, pe);
    };

// Signals: 64-bit words updated (set/add) after the data of a put is visible.
template <class T>
concept signal_transport =
    transport<T> && T::provides_signals &&
    requires(const T& t, const void* src, std::size_t bytes, std::uint64_t offset, std::uint64_t value,
             signal_op op, int pe) {
        t.signal(offset, value, op, pe);
        t.template put_signal<thread>(offset, src, bytes, offset, value, op, pe);
        t.template put_signal_nbi<thread>(offset, src, bytes, offset, value, op, pe);
    };

// Peers' heaps are mapped: peer_address(offset, pe) is a pointer the caller
// may load from and store to, or nullptr when pe is not reachable that way.
template <class T>
concept load_store_transport = transport<T> && T::provides_load_store &&
                               requires(const T& t, std::uint64_t offset, int pe) {
                                   { t.peer_address(offset, pe) } -> std::same_as<void*>;
                               };

namespace detail {
template <class>
inline constexpr bool dependent_false = false;

template <class T, class V>
PGAS_HD void start_atomic_update(const T& t, amo op, std::uint64_t offset, V operand, int pe) {
    if constexpr (atomic_update_transport<T, V>) {
        t.template atomic_update<V>(op, offset, operand, pe);
    } else {
        (void)t.template atomic<V>(op, offset, operand, V{}, pe);
    }
}
}  // namespace detail

PGAS_NAMESPACE_END
