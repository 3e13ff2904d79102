// Ordering and synchronisation: fence, quiet, wait_until/test (+all/any/some and their _vector forms), team sync and barrier.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/signal.hpp>

#include <cstddef>
#include <cstdint>

#include <cuda/atomic>

PGAS_NAMESPACE_BEGIN

/// Orders the caller's earlier puts, atomics and signals to each PE before its later ones to that PE, on the
/// context's channel (operations on different channels are not ordered with each other: use quiet_all).
///
/// - **Called by** every thread of `G` with the same arguments.
/// - **Returns** once the order is established; it completes nothing and says nothing about operations to
///   different PEs (quiet does). Per transport: nvlink/host a group sync and a system-scope sequentially consistent
///   fence (the same as quiet), libfabric a marker after which the proxy starts nothing until every earlier command
///   completed, ibgda a fenced NOP on every queue pair with work in flight, route Near's fence then Far's.
/// - **Transports:** every pgas::rma_transport (every built-in one); with another the call fails to compile: "pgas:
///   this transport cannot put/get: it does not model pgas::rma_transport".
/// - **Errors:** none of its own (ibgda and a full proxy ring may wait: errc::timeout, errc::peer_failed).
template <group G = thread, class Tr>
PGAS_HD void fence(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    ctx.transport.template fence<G>();
}

/// Completes every earlier put/get/atomic/signal the caller issued on the context's channel, to every PE: their
/// data is visible at the targets, `_nbi` gets have landed and every buffer they named may be reused.
///
/// - **Called by** every thread of `G` with the same arguments; it covers the operations of the group's threads
///   (call it from a group containing every thread whose operations must complete, e.g. pgas::block).
/// - **Scope:** the channel of `ctx` (ctx.channel(); 0 unless made by ctx.on_channel). Operations issued on other
///   channels are not waited for (quiet_all waits for them); with one channel (the default) that is everything.
/// - **Returns** when all of them are complete. Per transport: nvlink/host a group sync and a system-scope fence
///   (which covers every channel: they are one path); libfabric waits until the proxy completed every command of
///   the channel's ring reserved so far (remote delivery); ibgda posts a signalled NOP on each of the channel's
///   busy queue pairs and waits for its completion; route Near's quiet, then Far's.
/// - **Transports:** every pgas::rma_transport (every built-in one); with another the call fails to compile: "pgas:
///   this transport cannot put/get: it does not model pgas::rma_transport".
/// - **Errors:** on libfabric and ibgda it waits: errc::timeout after PGAS_TIMEOUT_MS, errc::peer_failed, or the
///   diagnostic of a failed operation (a proxy that stopped, an error completion of the NIC naming the request).
template <group G = thread, class Tr>
PGAS_HD void quiet(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    ctx.transport.template quiet<G>();
}

/// Completes every earlier put/get/atomic/signal the caller issued to PE `pe` on the context's channel: their data
/// is visible at `pe`, `_nbi` gets from `pe` have landed and their buffers may be reused. Operations to other PEs
/// or on other channels may still be in flight.
///
/// - **Called by** every thread of `G` with the same arguments; it covers the operations of the group's threads.
/// - **Returns** when they are complete. Per transport: ibgda waits only for the channel's queue pair to `pe` (a
///   signalled NOP there, if it has work in flight: other peers' queues are not touched); libfabric waits as
///   quiet(ctx) does (one ring per channel retires its commands in order, so `pe`'s last one completes with every
///   earlier command of the ring: a stronger wait, not a weaker one); nvlink/host as quiet(ctx); route the quiet of
///   the transport serving `pe`.
/// - **Transports:** every pgas::rma_transport; one without pgas::completion_scope_transport's members gets
///   quiet(ctx) (which completes at least this).
/// - **Errors:** with PGAS_CHECKS, `pe` outside [0, n_pes) is errc::pe_out_of_range (thrown on the host transport,
///   print and trap on a GPU); the waits' errors of quiet.
template <group G = thread, class Tr>
PGAS_HD void quiet(const device::context<Tr>& ctx, int pe) {
    detail::require_rma<Tr>();
    detail::check_pe(ctx, "quiet", pe);
    detail::transport_quiet_pe<G>(ctx.transport, pe);
}

/// Completes every earlier put/get/atomic/signal of the caller on every channel to every PE: quiet(ctx) for each
/// of the ctx.n_channels() channels (what quiet meant before channels, and what barrier does first).
///
/// - **Called by** every thread of `G` with the same arguments; it covers the operations of the group's threads
///   on any context of this PE (whatever channel `ctx` is bound to).
/// - **Returns** when all of them are complete. Per transport: ibgda a signalled NOP on every busy queue pair of
///   every channel, waited for; libfabric waits for every channel's ring; nvlink/host as quiet(ctx); route Near's
///   quiet_all, then Far's.
/// - **Transports:** every pgas::rma_transport; one without pgas::completion_scope_transport's members gets
///   quiet(ctx) (it then has one channel).
/// - **Errors:** those of quiet.
template <group G = thread, class Tr>
PGAS_HD void quiet_all(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    detail::transport_quiet_all<G>(ctx.transport);
}

/// Local completion: the source buffers of the caller's earlier put_nbi and put_signal_nbi on the context's channel
/// may be reused (overwritten, freed) on return; it promises nothing about their delivery (quiet does), and
/// nothing about `_nbi` gets (their destinations are valid only after quiet). NVSHMEM's nvshmemx flush, NCCL's
/// gin.flush.
///
/// - **Called by** every thread of `G` with the same arguments; it covers the put_nbi calls of the group's threads.
/// - **Returns** once every such source has been read. Per transport: nvlink/host a group sync and nothing more
///   (each thread's copy has read its part of the source when its put_nbi returns; the sync covers the group's
///   other threads), so it is cheaper than quiet; libfabric and ibgda wait as quiet(ctx) does: the proxy reads a
///   source larger than a command's 48-byte payload only while it completes the put, and an RC NIC reports having
///   read a registered source only by the completion that follows the remote acknowledgement (smaller ibgda sources,
///   and those outside registered memory, travel inside the WQE and were reusable when put_nbi returned); route
///   Near's flush_local, then Far's.
/// - **Transports:** every pgas::rma_transport; one without pgas::completion_scope_transport's members gets
///   quiet(ctx).
/// - **Errors:** those of quiet where it waits (libfabric, ibgda).
template <group G = thread, class Tr>
PGAS_HD void flush_local(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    detail::transport_flush_local<G>(ctx.transport);
}

namespace detail {
template <class T>
PGAS_HD constexpr void require_waitable() {
    static_assert((sizeof(T) == 4 || sizeof(T) == 8) && std::is_arithmetic_v<T>,
                  "pgas: waits and tests take 4- or 8-byte integers or floating-point values");
}
template <class Tr, class T>
PGAS_HD void check_ivar(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> ivar,
                        std::size_t count) {
    check_range(ctx, call, ivar.offset(), std::uint64_t(count) * sizeof(T));
    check_aligned(ctx, call, ivar.offset(), sizeof(T));
}
template <class T>
PGAS_HD bool selected(const int* status, std::size_t i) {
    return status == nullptr || status[i] == 0;
}
}  // namespace detail

/// Waits until the caller's own word `ivar` satisfies `seen <op> value` and returns the value seen.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Returns** the value that satisfied the condition (acquire: what its writer made visible before writing it,
///   with a release such as put_signal's or a p after a fence, is visible to the caller).
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivar` (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset, the
///   condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD T wait_until(const device::context<Tr>& ctx, symmetric_ptr<T> ivar, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "wait_until", ivar, 1);
    return detail::wait_local(ctx, "wait_until", ctx.local(ivar), op, value);
}

/// Whether the caller's own word `ivar` satisfies `seen <op> value` now (acquire; it does not wait).
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivar` (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD bool test(const device::context<Tr>& ctx, symmetric_ptr<T> ivar, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test", ivar, 1);
    return compare(detail::load_acquire(ctx.local(ivar)), op, value);
}

/// Waits until every selected word of `ivars[0, count)` (the caller's own) satisfies `seen <op> value`. `status` may
/// be null (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Returns** when every selected word has satisfied the condition (each read with acquire).
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset, the
///   condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD void wait_until_all(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                            const int* status, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "wait_until_all", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i))
            detail::wait_local(ctx, "wait_until_all", ctx.local(ivars + i), op, value);
}

/// Whether every selected word of `ivars[0, count)` satisfies `seen <op> value` now (no wait). `status` may be null
/// (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD bool test_all(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                      const int* status, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_all", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && !compare(detail::load_acquire(ctx.local(ivars + i)), op, value))
            return false;
    return true;
}

/// Index of the first selected word of `ivars[0, count)` that satisfies `seen <op> value` now, or `count` when
/// none does (no wait). `status` may be null (every word selected) or hold `count` flags: word i is selected when
/// status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD std::size_t test_any(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                             const int* status, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_any", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && compare(detail::load_acquire(ctx.local(ivars + i)), op, value))
            return i;
    return count;
}

/// Writes the indices of the selected words of `ivars[0, count)` that satisfy `seen <op> value` now to
/// `indices[]` (room for `count`) and returns how many there are (no wait). `status` may be null (every word
/// selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD std::size_t test_some(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                              std::size_t* indices, const int* status, cmp op, std::type_identity_t<T> value) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_some", ivars, count);
    std::size_t found = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && compare(detail::load_acquire(ctx.local(ivars + i)), op, value))
            indices[found++] = i;
    return found;
}

namespace detail {
// Polls `attempt` until it reports progress, with every wait's timeout and
// peer-failure checks; on timeout reports the first selected ivar.
template <class Tr, class T, class Attempt>
PGAS_HD void spin(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> first, cmp op, T value,
                  Attempt&& attempt) {
    poll_until(ctx, call, attempt, [&](std::uint64_t waited_ms) {
        report_wait_timeout(call, ctx.my_pe(), first.offset(), op, value, load_acquire(ctx.local(first)), waited_ms);
    });
}
}  // namespace detail

/// Waits until some selected word of `ivars[0, count)` satisfies `seen <op> value` and returns its index
/// (`count` at once when no word is selected). `status` may be null (every word selected) or hold `count` flags: word
/// i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Returns** the index of a word that satisfied the condition (read with acquire).
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset, the
///   condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD std::size_t wait_until_any(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                   const int* status, cmp op, std::type_identity_t<T> value) {
    std::size_t found = count;
    bool any_selected = false;
    for (std::size_t i = 0; i < count; ++i) any_selected |= detail::selected<T>(status, i);
    if (!any_selected) return count;
    detail::spin(ctx, "wait_until_any", ivars, op, T(value), [&] {
        found = test_any(ctx, ivars, count, status, op, value);
        return found != count;
    });
    return found;
}

/// Waits until at least one selected word of `ivars[0, count)` satisfies `seen <op> value`; writes the indices of
/// all that do to `indices[]` (room for `count`) and returns how many (0 at once when none is selected). `status` may
/// be null (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset, the
///   condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD std::size_t wait_until_some(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                    std::size_t* indices, const int* status, cmp op,
                                    std::type_identity_t<T> value) {
    std::size_t found = 0;
    bool any_selected = false;
    for (std::size_t i = 0; i < count; ++i) any_selected |= detail::selected<T>(status, i);
    if (!any_selected) return 0;
    detail::spin(ctx, "wait_until_some", ivars, op, T(value), [&] {
        found = test_some(ctx, ivars, count, indices, status, op, value);
        return found != 0;
    });
    return found;
}

// ---- the *_vector forms (OpenSHMEM 1.5): one comparison value per word ----

namespace detail {
template <class T>
PGAS_HD std::size_t first_selected(const int* status, std::size_t count) {
    std::size_t i = 0;
    while (i < count && !selected<T>(status, i)) ++i;
    return i;
}
}  // namespace detail

/// Waits until every selected word i of `ivars[0, count)` (the caller's own) satisfies `seen <op> values[i]`
/// (OpenSHMEM 1.5 shmem_wait_until_all_vector). `values` is local memory holding `count` comparison values;
/// `status` may be null (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Returns** when every selected word has satisfied its condition (each read with acquire).
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset of the
///   word waited for, the condition with its value and the value seen; errc::peer_failed at once when another PE
///   failed.
template <class Tr, class T>
PGAS_HD void wait_until_all_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                   const int* status, cmp op, const std::type_identity_t<T>* values) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "wait_until_all_vector", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i))
            detail::wait_local(ctx, "wait_until_all_vector", ctx.local(ivars + i), op, values[i]);
}

/// Whether every selected word i of `ivars[0, count)` satisfies `seen <op> values[i]` now (no wait; OpenSHMEM 1.5
/// shmem_test_all_vector). `status` may be null (every word selected) or hold `count` flags: word i is selected
/// when status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD bool test_all_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                             const int* status, cmp op, const std::type_identity_t<T>* values) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_all_vector", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && !compare(detail::load_acquire(ctx.local(ivars + i)), op, values[i]))
            return false;
    return true;
}

/// Index of the first selected word i of `ivars[0, count)` that satisfies `seen <op> values[i]` now, or `count`
/// when none does (no wait; OpenSHMEM 1.5 shmem_test_any_vector). `status` may be null (every word selected) or
/// hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD std::size_t test_any_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                    const int* status, cmp op, const std::type_identity_t<T>* values) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_any_vector", ivars, count);
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && compare(detail::load_acquire(ctx.local(ivars + i)), op, values[i]))
            return i;
    return count;
}

/// Writes the indices of the selected words i of `ivars[0, count)` that satisfy `seen <op> values[i]` now to
/// `indices[]` (room for `count`) and returns how many there are (no wait; OpenSHMEM 1.5 shmem_test_some_vector).
/// `status` may be null (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any thread, on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned).
template <class Tr, class T>
PGAS_HD std::size_t test_some_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                     std::size_t* indices, const int* status, cmp op,
                                     const std::type_identity_t<T>* values) {
    detail::require_waitable<T>();
    detail::check_ivar(ctx, "test_some_vector", ivars, count);
    std::size_t found = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (detail::selected<T>(status, i) && compare(detail::load_acquire(ctx.local(ivars + i)), op, values[i]))
            indices[found++] = i;
    return found;
}

/// Waits until some selected word i of `ivars[0, count)` satisfies `seen <op> values[i]` and returns its index
/// (`count` at once when no word is selected; OpenSHMEM 1.5 shmem_wait_until_any_vector). `status` may be null
/// (every word selected) or hold `count` flags: word i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Returns** the index of a word that satisfied its condition (read with acquire).
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset of the
///   first selected word, its condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD std::size_t wait_until_any_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                          const int* status, cmp op, const std::type_identity_t<T>* values) {
    const std::size_t first = detail::first_selected<T>(status, count);
    if (first == count) return count;
    std::size_t found = count;
    detail::spin(ctx, "wait_until_any_vector", ivars + first, op, T(values[first]), [&] {
        found = test_any_vector(ctx, ivars, count, status, op, values);
        return found != count;
    });
    return found;
}

/// Waits until at least one selected word i of `ivars[0, count)` satisfies `seen <op> values[i]`; writes the
/// indices of all that do to `indices[]` (room for `count`) and returns how many (0 at once when none is selected;
/// OpenSHMEM 1.5 shmem_wait_until_some_vector). `status` may be null (every word selected) or hold `count` flags:
/// word i is selected when status[i] == 0.
///
/// - **Called by** any number of threads; each waits and returns on its own.
/// - **Transports:** every transport (it reads the caller's own memory).
/// - **Errors:** compile time: `T` must be a 4- or 8-byte integer or floating-point type ("pgas: waits and tests take
///   ..."); with PGAS_CHECKS, a null or out-of-heap `ivars` range (errc::not_symmetric), a word not naturally aligned
///   (errc::misaligned). After PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset of the
///   first selected word, its condition and the value seen; errc::peer_failed at once when another PE failed.
template <class Tr, class T>
PGAS_HD std::size_t wait_until_some_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                           std::size_t* indices, const int* status, cmp op,
                                           const std::type_identity_t<T>* values) {
    const std::size_t first = detail::first_selected<T>(status, count);
    if (first == count) return 0;
    std::size_t found = 0;
    detail::spin(ctx, "wait_until_some_vector", ivars + first, op, T(values[first]), [&] {
        found = test_some_vector(ctx, ivars, count, indices, status, op, values);
        return found != 0;
    });
    return found;
}

namespace detail {
// The dissemination rounds of sync/barrier, run by one thread per PE:
// ceil(log2 n) rounds; in round r member i adds 1 to the round-r arrival
// counter of member (i + 2^r) mod n and waits until its own counter reaches
// this call's epoch. Counters only grow, so repeated calls need no reset.
// Each wait knows whose arrival it waits for, member (i - 2^r) mod n: on the
// host it fails at once, naming that PE, when it has left (check_awaited in
// detail/wait.hpp; a wait that does not know names a leave only after the
// heartbeat bound, since another member may have finished and left legitimately).
//
// Each arrival is the transport's signal add: on a load/store transport a
// release add (detail::add_release, a `red`), and each wait an acquire poll of
// the caller's own memory, which is all a barrier needs:
// every member's earlier writes happen before every member's later accesses.
// Measured on 2xH200 (bench_nvlink barrier_all/thread): quiet's SC fence +
// release signal + acquire wait 2.6 us; a release fetch_add 2.0 us; the
// release `red` of add_release with poll_until 1.9-1.95 us. The bare form
// (red.release.sys + an inline ld.acquire loop, bench_coll_tune barrier2)
// takes 1.24-1.33 us, red + poll_until 1.70 us: about 0.45 us is in the wait
// loop and 0.25 us in this function's bookkeeping, not yet found.
// Announcing locally and
// polling the partner's word across NVLink measured 1.9 us but lets a member
// read a peer's heap after that peer may have left (and freed it): not used.
// On other transports the caller completes its operations first and the
// transport's signal carries the ordering.
//
// The words are parameters so that the collectives can run one independent
// barrier per block of a multi-block kernel (coll/detail/part.hpp): the local
// epoch at epoch_offset, round r's arrival counter at arrival_offset(r).
template <class Tr, class ArrivalOffset>
PGAS_HD void disseminate_over(const device::context<Tr>& ctx, team t, const char* call, std::uint64_t epoch_offset,
                              ArrivalOffset arrival_offset) {
    t = t.bound_to(ctx.my_pe());
    const int me = t.my_pe();
    const int n = t.n_pes();
    if (me < 0) report(errc::pe_out_of_range, call, ctx.my_pe(), "caller is not a member of team slot", t.slot());
    if (n <= 1) return;
    auto* epoch = static_cast<std::uint64_t*>(ctx.transport.local_address(epoch_offset));
    std::uint64_t target = 0;
    for (int round = 0, distance = 1; distance < n; ++round, distance <<= 1) {
        const std::uint64_t word = arrival_offset(round);
        const int to = t.world_pe((me + distance) % n);
        ctx.transport.signal(word, 1, signal_op::add, to);
        // The epoch is read after the first arrival is on its way: it is
        // local and only this thread touches it, so its load latency overlaps
        // the arrival's flight instead of preceding it.
        if (round == 0) target = ++*epoch;
        wait_local(ctx, call, static_cast<const std::uint64_t*>(ctx.transport.local_address(word)), cmp::ge, target,
                   t.world_pe((me + n - distance) % n));
    }
}

// The team's own barrier words (heap_layout's team sync slot).
template <class Tr>
PGAS_HD void disseminate(const device::context<Tr>& ctx, team t, const char* call) {
    const int slot = t.slot();
    disseminate_over(ctx, t, call, heap_layout::epoch_offset(slot),
                     [slot](int round) { return heap_layout::arrival_offset(slot, round); });
}
}  // namespace detail

/// Team synchronisation without completing outstanding puts (as nvshmem_team_sync): returns once every member
/// of `t` has arrived.
///
/// Dissemination: ceil(log2 n) rounds; in round r each member adds 1 to the round-r arrival counter of member
/// (i + 2^r) mod n and waits until its own counter reaches this call's epoch. Counters only grow, so repeated calls
/// need no reset.
///
/// - **Called by** every thread of `G` on every member PE of `t`; one group per PE at a time per team.
/// - **Returns** when every member has arrived. What it guarantees about earlier puts depends on the transport:
///   on nvlink/host (release arrivals, acquire waits) and libfabric (each arrival starts after every earlier
///   command completed) they are complete and visible; on ibgda and route they are not (arrivals are ordered only
///   with operations to the same PE): use barrier.
/// - **Transports:** every pgas::signal_transport (every built-in one; route when Near and Far both are); with
///   another the call fails to compile: "pgas: this transport cannot signal: it does not model
///   pgas::signal_transport".
/// - **Errors:** the caller not a member of `t`: errc::pe_out_of_range (always checked). After PGAS_TIMEOUT_MS
///   without the condition: errc::timeout naming the heap offset, the condition and the value seen; errc::peer_failed
///   at once when another PE failed, or (host-side waits of processes on one node) when the member whose arrival a
///   round waits for has left (destroyed its world) without arriving: "PE 3 has left ... while this sync waited for
///   its arrival".
template <group G = thread, class Tr>
PGAS_HD void sync(const device::context<Tr>& ctx, team t) {
    detail::require_signal<Tr>();
    G::sync();
    if (G::rank() == 0) detail::disseminate(ctx, t, "sync");
    G::sync();
}

/// sync over every PE of the world (ctx.world_team()).
///
/// - **Called by** every thread of `G` on every PE.
/// - **Returns**, **Transports**, **Errors:** as sync.
template <group G = thread, class Tr>
PGAS_HD void sync_all(const device::context<Tr>& ctx) {
    sync<G>(ctx, ctx.world_team());
}

/// quiet_all, then sync: on return every member's earlier operations (on every channel) are complete and visible
/// everywhere.
///
/// - **Called by** every thread of `G` on every member PE of `t`; one group per PE at a time per team.
/// - **Returns** when every member has arrived after completing its earlier puts, atomics and signals (on every
///   transport; on nvlink/host it costs the same as sync, which already gives this).
/// - **Transports:** every pgas::signal_transport (every built-in one; route when Near and Far both are); with
///   another the call fails to compile: "pgas: this transport cannot signal: it does not model
///   pgas::signal_transport".
/// - **Errors:** the caller not a member of `t`: errc::pe_out_of_range (always checked); errors of quiet. After
///   PGAS_TIMEOUT_MS without the condition: errc::timeout naming the heap offset, the condition and the value seen;
///   errc::peer_failed at once when another PE failed, or when a member whose arrival it waits for has left (as sync).
template <group G = thread, class Tr>
PGAS_HD void barrier(const device::context<Tr>& ctx, team t) {
    detail::require_signal<Tr>();
    G::sync();
    if (G::rank() == 0) {
        if constexpr (!load_store_transport<Tr>) detail::transport_quiet_all<thread>(ctx.transport);  // every channel
        detail::disseminate(ctx, t, "barrier");
    }
    G::sync();
}

/// barrier over every PE of the world (ctx.world_team()).
///
/// - **Called by** every thread of `G` on every PE.
/// - **Returns**, **Transports**, **Errors:** as barrier.
template <group G = thread, class Tr>
PGAS_HD void barrier_all(const device::context<Tr>& ctx) {
    barrier<G>(ctx, ctx.world_team());
}

PGAS_NAMESPACE_END
