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

// Each concept is the conjunction of named clauses (transport_clause::*),
// and each has a diagnose_* function that static_asserts the clauses one by
// one with a message naming the missing member, as stdexec's
// __diagnose_sender_concept_failure does: device/ calls it where an op needs
// a capability the transport does not model, so the error says "has no
// get_nbi<G>" rather than only "does not model rma_transport". Group-templated
// members are checked for every kind of group: thread, warp, block and a tile.
namespace transport_clause {
template <class T>
concept trivially_copyable = std::is_trivially_copyable_v<T>;
template <class T>
concept name = requires {
    { T::name } -> std::convertible_to<const char*>;
};
template <class T>
concept my_pe = requires(const T& t) {
    { t.my_pe() } -> std::same_as<int>;
};
template <class T>
concept n_pes = requires(const T& t) {
    { t.n_pes() } -> std::same_as<int>;
};
template <class T>
concept reachable = requires(const T& t, int pe) {
    { t.reachable(pe) } -> std::same_as<bool>;
};
template <class T>
concept local_address = requires(const T& t, std::uint64_t offset) {
    { t.local_address(offset) } -> std::same_as<void*>;
};
template <class T>
concept heap_bytes = requires(const T& t) {
    { t.heap_bytes() } -> std::same_as<std::uint64_t>;
};

template <class T, class G>
concept put = requires(const T& t, const void* src, std::size_t bytes, std::uint64_t offset, int pe) {
    t.template put<G>(offset, src, bytes, pe);
};
template <class T, class G>
concept put_nbi = requires(const T& t, const void* src, std::size_t bytes, std::uint64_t offset, int pe) {
    t.template put_nbi<G>(offset, src, bytes, pe);
};
template <class T, class G>
concept get = requires(const T& t, void* dst, std::size_t bytes, std::uint64_t offset, int pe) {
    t.template get<G>(dst, offset, bytes, pe);
};
template <class T, class G>
concept get_nbi = requires(const T& t, void* dst, std::size_t bytes, std::uint64_t offset, int pe) {
    t.template get_nbi<G>(dst, offset, bytes, pe);
};
template <class T, class G>
concept fence = requires(const T& t) {
    t.template fence<G>();
};
template <class T, class G>
concept quiet = requires(const T& t) {
    t.template quiet<G>();
};
template <class T, class G>
concept rma = put<T, G> && put_nbi<T, G> && get<T, G> && get_nbi<T, G> && fence<T, G> && quiet<T, G>;

template <class T>
concept atomic = requires(const T& t, amo op, std::uint64_t offset, int pe) {
    {
        t.template atomic<std::uint64_t>(op, offset, std::uint64_t{}, std::uint64_t{}, pe)
        } -> std::same_as<std::uint64_t>;
};
template <class T>
concept atomic_add = requires(const T& t, std::uint64_t offset, int pe) {
    { t.template atomic_add<float>(offset, 1.0f, pe) } -> std::same_as<float>;
};

template <class T>
concept signal = requires(const T& t, std::uint64_t offset, std::uint64_t value, signal_op op, int pe) {
    t.signal(offset, value, op, pe);
};
template <class T, class G>
concept put_signal = requires(const T& t, const void* src, std::size_t bytes, std::uint64_t offset, std::uint64_t value,
                              signal_op op, int pe) {
    t.template put_signal<G>(offset, src, bytes, offset, value, op, pe);
};
template <class T, class G>
concept put_signal_nbi = requires(const T& t, const void* src, std::size_t bytes, std::uint64_t offset,
                                  std::uint64_t value, signal_op op, int pe) {
    t.template put_signal_nbi<G>(offset, src, bytes, offset, value, op, pe);
};

template <class T>
concept peer_address = requires(const T& t, std::uint64_t offset, int pe) {
    { t.peer_address(offset, pe) } -> std::same_as<void*>;
};

}  // namespace transport_clause

namespace detail {
// A clause over a group holds for every kind of group a device op may be
// called by: thread, warp, block and a tile (Clause is a type: concepts
// cannot be template arguments).
template <template <class, class> class Clause, class T>
inline constexpr bool every_group =
    Clause<T, thread>::value&& Clause<T, warp>::value&& Clause<T, block>::value&& Clause<T, tile<8>>::value;
template <class T, class G>
struct rma_clause : std::bool_constant<transport_clause::rma<T, G>> {};
template <class T, class G>
struct put_signal_clause
    : std::bool_constant<transport_clause::put_signal<T, G> && transport_clause::put_signal_nbi<T, G>> {};
}  // namespace detail

/// A transport is the trivially copyable device-side state of one way to reach
/// peers; device::context<T> carries it into kernels by value. It opts in to
/// each capability with a constexpr flag and must then also have the members
/// that capability needs (stdexec style: opt-in plus structure).
///
///   T::name                      "nvlink", "host", ...
///   my_pe(), n_pes()             world PE of the caller and world size
///   reachable(pe)                whether this transport reaches that PE at all
///   local_address(offset)        the caller's own heap byte at a symmetric offset
///   heap_bytes()                 size of each PE's symmetric heap
template <class T>
concept transport = transport_clause::trivially_copyable<T> && transport_clause::name<T> &&
    transport_clause::my_pe<T> && transport_clause::n_pes<T> && transport_clause::reachable<T> &&
    transport_clause::local_address<T> && transport_clause::heap_bytes<T>;

/// put/get (blocking and _nbi) of bytes between local memory and a symmetric
/// offset on `pe`, called by every thread of group G; fence/quiet by G. Each
/// for G = thread, warp, block and tile<N>.
template <class T>
concept rma_transport = transport<T> && T::provides_rma && detail::every_group<detail::rma_clause, T>;

/// One thread performs op on a naturally aligned 4- or 8-byte word on `pe`.
template <class T>
concept atomic_transport =
    transport<T> && T::provides_atomics && transport_clause::atomic<T> && transport_clause::atomic_add<T>;

/// Optional: a transport that can start an atomic nobody reads the old value of
/// (add, inc, and, or, xor, set) without waiting for it; quiet completes it. A
/// proxy saves the reply round trip and the ring slot a reply holds; the others
/// compute the old value anyway (detail::start_atomic_update falls back to atomic).
template <class T, class V>
concept atomic_update_transport = atomic_transport<T> &&
    requires(const T& t, amo op, std::uint64_t offset, V operand, int pe) {
    t.template atomic_update<V>(op, offset, operand, pe);
};

/// Signals: 64-bit words updated (set/add) after the data of a put is visible;
/// put_signal(_nbi) for every kind of group.
template <class T>
concept signal_transport = transport<T> && T::provides_signals && transport_clause::signal<T> &&
    detail::every_group<detail::put_signal_clause, T>;

/// Some peers' heaps may be mapped: peer_address(offset, pe) is a pointer the
/// caller may load from and store to, or nullptr when pe is not reachable that
/// way (route<nvlink, X>: its near peers only). ctx.peer() answers from it, and
/// the collectives keep their load/store paths for a team whose every member is mapped.
template <class T>
concept peer_pointer_transport = transport<T> && transport_clause::peer_address<T>;

/// Channels: the transport has `channels()` independent queues per peer (ibgda: RC queue pairs, the proxy: rings;
/// nvlink and host: one path whatever the channel) and a value is bound to one of them, `channel()`;
/// `on_channel(c)` is a copy bound to channel c. Operations of different channels never wait for each other's
/// queue slots or doorbells; ordering (fence, put_signal) and quiet hold per channel. Optional: a transport without
/// it has one channel (device::context::n_channels() is then 1).
template <class T>
concept channel_transport = transport<T> && requires(const T& t, int c) {
    { t.channel() } -> std::same_as<int>;
    { t.channels() } -> std::same_as<int>;
    { t.on_channel(c) } -> std::same_as<T>;
};

namespace transport_clause {
template <class T, class G>
concept completion_scopes = requires(const T& t, int pe) {
    t.template quiet_pe<G>(pe);
    t.template quiet_all<G>();
    t.template flush_local<G>();
};
}  // namespace transport_clause
namespace detail {
template <class T, class G>
struct completion_scopes_clause : std::bool_constant<transport_clause::completion_scopes<T, G>> {};
}  // namespace detail

/// Completion scopes finer and coarser than quiet<G>() (which completes the value's channel, every peer):
/// quiet_pe<G>(pe) one peer on the channel, quiet_all<G>() every channel, flush_local<G>() the sources of the
/// channel's earlier nbi puts reusable (pgas::quiet(ctx, pe), pgas::quiet_all, pgas::flush_local). Optional: the
/// device layer falls back to quiet<G>() for a transport without them (every built-in one has them).
template <class T>
concept completion_scope_transport = rma_transport<T> && detail::every_group<detail::completion_scopes_clause, T>;

/// Registered windows reached by name (the libfabric proxy): `window_put<G>`/`window_get<G>` and their _nbi forms,
/// `window_atomic`, `window_atomic_update` and `window_put_signal<G>` take the window's table offset and a byte offset
/// into PE pe's buffer, which the transport resolves into that buffer itself (the proxy's backend holds every PE's
/// registration). The load/store transports (peer_pointer_transport) reach windows through the table's rows
/// instead; device/window.hpp picks whichever the transport has.
template <class T>
concept window_transport = transport<T> && T::provides_windows &&
    requires(const T& t, std::uint64_t table, std::uint64_t offset, const void* src, void* dst, std::size_t bytes,
             int pe) {
    t.template window_put_nbi<thread>(table, offset, src, bytes, pe);
    t.template window_get_nbi<thread>(dst, table, offset, bytes, pe);
};

// Every reachable peer's heap is mapped (nvlink, host): a peer_pointer_transport
// whose peer_address is non-null for every PE it reaches.
template <class T>
concept load_store_transport = peer_pointer_transport<T> && T::provides_load_store;

// The diagnostics: each static_assert names one clause; the instantiation
// context names the transport (and the group G where there is one).
namespace detail {
template <class T>
PGAS_HD constexpr void diagnose_transport() {
    static_assert(transport_clause::trivially_copyable<T>,
                  "pgas: a transport must be trivially copyable (it travels into kernels by value)");
    static_assert(transport_clause::name<T>, "pgas: the transport has no `static constexpr const char* name`");
    static_assert(transport_clause::my_pe<T>, "pgas: the transport has no `int my_pe() const`");
    static_assert(transport_clause::n_pes<T>, "pgas: the transport has no `int n_pes() const`");
    static_assert(transport_clause::reachable<T>, "pgas: the transport has no `bool reachable(int pe) const`");
    static_assert(transport_clause::local_address<T>,
                  "pgas: the transport has no `void* local_address(std::uint64_t offset) const`");
    static_assert(transport_clause::heap_bytes<T>, "pgas: the transport has no `std::uint64_t heap_bytes() const`");
}

template <class T, class G>
PGAS_HD constexpr void diagnose_rma_members() {
    static_assert(transport_clause::put<T, G>,
                  "pgas: the transport opts in to RMA but has no put<G>(std::uint64_t offset, const void* src, "
                  "std::size_t bytes, int pe) const for this group G");
    static_assert(transport_clause::put_nbi<T, G>,
                  "pgas: the transport opts in to RMA but has no put_nbi<G>(std::uint64_t offset, const void* src, "
                  "std::size_t bytes, int pe) const for this group G");
    static_assert(transport_clause::get<T, G>,
                  "pgas: the transport opts in to RMA but has no get<G>(void* dst, std::uint64_t offset, "
                  "std::size_t bytes, int pe) const for this group G");
    static_assert(transport_clause::get_nbi<T, G>,
                  "pgas: the transport opts in to RMA but has no get_nbi<G>(void* dst, std::uint64_t offset, "
                  "std::size_t bytes, int pe) const for this group G");
    static_assert(transport_clause::fence<T, G>,
                  "pgas: the transport opts in to RMA but has no fence<G>() const for this group G");
    static_assert(transport_clause::quiet<T, G>,
                  "pgas: the transport opts in to RMA but has no quiet<G>() const for this group G");
}

// The opt-in flag first (an honest "cannot"), then each member for each kind of group.
template <class T>
PGAS_HD constexpr void diagnose_rma_transport() {
    diagnose_transport<T>();
    if constexpr (transport<T>) {
        static_assert(T::provides_rma,
                      "pgas: this transport cannot put/get: it does not model pgas::rma_transport "
                      "(provides_rma is false; the transport type is named in the instantiation above)");
        if constexpr (T::provides_rma) {
            diagnose_rma_members<T, thread>();
            diagnose_rma_members<T, warp>();
            diagnose_rma_members<T, block>();
            diagnose_rma_members<T, tile<8>>();
        }
    }
}

template <class T>
PGAS_HD constexpr void diagnose_atomic_transport() {
    diagnose_transport<T>();
    if constexpr (transport<T>) {
        static_assert(T::provides_atomics,
                      "pgas: this transport cannot do remote atomics: it does not model pgas::atomic_transport "
                      "(provides_atomics is false; the transport type is named in the instantiation above)");
        if constexpr (T::provides_atomics) {
            static_assert(transport_clause::atomic<T>,
                          "pgas: the transport opts in to atomics but has no atomic<V>(amo op, std::uint64_t "
                          "offset, V operand, V compare, int pe) const returning V");
            static_assert(transport_clause::atomic_add<T>,
                          "pgas: the transport opts in to atomics but has no atomic_add<V>(std::uint64_t offset, "
                          "V value, int pe) const returning V");
        }
    }
}

template <class T, class G>
PGAS_HD constexpr void diagnose_put_signal_members() {
    static_assert(transport_clause::put_signal<T, G>,
                  "pgas: the transport opts in to signals but has no put_signal<G>(std::uint64_t offset, const "
                  "void* src, std::size_t bytes, std::uint64_t sig, std::uint64_t value, signal_op op, int pe) "
                  "const for this group G");
    static_assert(transport_clause::put_signal_nbi<T, G>,
                  "pgas: the transport opts in to signals but has no put_signal_nbi<G>(std::uint64_t offset, "
                  "const void* src, std::size_t bytes, std::uint64_t sig, std::uint64_t value, signal_op op, "
                  "int pe) const for this group G");
}

template <class T>
PGAS_HD constexpr void diagnose_signal_transport() {
    diagnose_transport<T>();
    if constexpr (transport<T>) {
        static_assert(T::provides_signals,
                      "pgas: this transport cannot signal: it does not model pgas::signal_transport "
                      "(provides_signals is false; the transport type is named in the instantiation above)");
        if constexpr (T::provides_signals) {
            static_assert(transport_clause::signal<T>,
                          "pgas: the transport opts in to signals but has no signal(std::uint64_t sig, "
                          "std::uint64_t value, signal_op op, int pe) const");
            diagnose_put_signal_members<T, thread>();
            diagnose_put_signal_members<T, warp>();
            diagnose_put_signal_members<T, block>();
            diagnose_put_signal_members<T, tile<8>>();
        }
    }
}
}  // namespace detail

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

namespace detail {
// The completion scopes, through the transport's own members where it has them (completion_scope_transport),
// else through quiet<G>(), which completes at least as much.
template <class G, class Tr>
PGAS_HD void transport_quiet_pe(const Tr& t, int pe) {
    if constexpr (completion_scope_transport<Tr>)
        t.template quiet_pe<G>(pe);
    else
        t.template quiet<G>();
}
template <class G, class Tr>
PGAS_HD void transport_quiet_all(const Tr& t) {
    if constexpr (completion_scope_transport<Tr>)
        t.template quiet_all<G>();
    else
        t.template quiet<G>();
}
template <class G, class Tr>
PGAS_HD void transport_flush_local(const Tr& t) {
    if constexpr (completion_scope_transport<Tr>)
        t.template flush_local<G>();
    else
        t.template quiet<G>();
}
}  // namespace detail

PGAS_NAMESPACE_END
