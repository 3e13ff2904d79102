// Ordering and synchronisation: fence, quiet, wait_until/test (+all/any/some and their _vector forms), team sync and
// barrier.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/detail/dissemination.hpp>
#include <pgas/device/detail/watched_words.hpp>
#include <pgas/device/signal.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

// ---- ordering and completion ----

/// Orders the caller's earlier puts, atomics and signals to each PE before its later ones to that PE, on the
/// context's channel; it completes nothing (quiet does). nvlink/host: a system-scope fence; libfabric: a marker
/// the proxy does not pass until earlier commands complete; ibgda: a fenced NOP per busy queue pair.
/// - @by_group @on_rma
/// - **Errors:** none of its own (ibgda and a full proxy ring may wait: errc::timeout, errc::peer_failed).
template <group G = thread, class Tr>
PGAS_HD void fence(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    ctx.transport.template fence<G>();
}

/// Completes every earlier put/get/atomic/signal of the group's threads on the context's channel, to every PE:
/// their data is visible at the targets, `_nbi` gets have landed and their buffers may be reused. Other channels
/// are not waited for (quiet_all is); nvlink/host cover every channel (one path).
/// - @by_group @on_rma
/// - @wait_errors (libfabric, ibgda), or the diagnostic of a failed operation.
template <group G = thread, class Tr>
PGAS_HD void quiet(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    ctx.transport.template quiet<G>();
}

/// As quiet, but only for operations to PE `pe` (ibgda waits for that peer's queue pair alone; the other
/// transports complete at least as much as quiet(ctx) does).
/// - @by_group @on_rma (without pgas::completion_scope_transport's members: quiet(ctx)).
/// - **Errors:** @pe_checked; those of quiet.
template <group G = thread, class Tr>
PGAS_HD void quiet(const device::context<Tr>& ctx, int pe) {
    detail::require_rma<Tr>();
    detail::check_pe(ctx, "quiet", pe);
    detail::transport_quiet_pe<G>(ctx.transport, pe);
}

/// quiet on each of the ctx.n_channels() channels: completes every earlier operation of the group's threads on any
/// context of this PE (what barrier does first).
/// - @by_group @on_rma (without pgas::completion_scope_transport's members: quiet(ctx)).
/// - **Errors:** those of quiet.
template <group G = thread, class Tr>
PGAS_HD void quiet_all(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    detail::transport_quiet_all<G>(ctx.transport);
}

/// Local completion: the sources of the group's earlier put_nbi and put_signal_nbi on the context's channel may be
/// reused on return; nothing about delivery or `_nbi` gets (quiet). nvlink/host: a group sync; libfabric and ibgda
/// wait as quiet (the proxy and the NIC read a large registered source only while completing the put).
/// - @by_group @on_rma (without pgas::completion_scope_transport's members: quiet(ctx)).
/// - **Errors:** those of quiet where it waits (libfabric, ibgda).
template <group G = thread, class Tr>
PGAS_HD void flush_local(const device::context<Tr>& ctx) {
    detail::require_rma<Tr>();
    detail::transport_flush_local<G>(ctx.transport);
}

// ---- waits and tests on the caller's own words ----

/// Waits until the caller's own word `ivar` satisfies `seen <op> value`; returns the value seen (acquire: what its
/// writer released before it is visible).
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD T wait_until(const device::context<Tr>& ctx, symmetric_ptr<T> ivar, cmp op, std::type_identity_t<T> value) {
    return detail::wait_word(ctx, detail::watch_lone(ctx, "wait_until", ivar, op, T(value)), 0);
}

/// Whether the caller's own word `ivar` satisfies `seen <op> value` now (acquire).
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD bool test(const device::context<Tr>& ctx, symmetric_ptr<T> ivar, cmp op, std::type_identity_t<T> value) {
    return detail::watch_lone(ctx, "test", ivar, op, T(value)).holds(0);
}

/// Waits until every selected word of `ivars[0, count)` satisfies `seen <op> value` (each read with acquire).
/// @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD void wait_until_all(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                            const int* status, cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "wait_until_all", ivars, count, status, op, detail::same_value<T>{value});
    detail::wait_words<detail::match::all>(ctx, words);
}

/// Whether every selected word of `ivars[0, count)` satisfies `seen <op> value` now. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD bool test_all(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count, const int* status,
                      cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "test_all", ivars, count, status, op, detail::same_value<T>{value});
    return words.template scan<detail::match::all>() == count;
}

/// Index of the first selected word of `ivars[0, count)` that satisfies `seen <op> value` now, or `count` when none
/// does. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD std::size_t test_any(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                             const int* status, cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "test_any", ivars, count, status, op, detail::same_value<T>{value});
    return words.template scan<detail::match::any>();
}

/// Writes the indices of the selected words of `ivars[0, count)` that satisfy `seen <op> value` now to `indices[]`
/// (room for `count`) and returns how many there are. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD std::size_t test_some(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                              std::size_t* indices, const int* status, cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "test_some", ivars, count, status, op, detail::same_value<T>{value});
    return words.template scan<detail::match::some>(indices);
}

/// Waits until some selected word of `ivars[0, count)` satisfies `seen <op> value` and returns its index (read with
/// acquire; `count` at once when no word is selected). @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD std::size_t wait_until_any(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                   const int* status, cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "wait_until_any", ivars, count, status, op, detail::same_value<T>{value});
    return detail::wait_words<detail::match::any>(ctx, words);
}

/// Waits until at least one selected word of `ivars[0, count)` satisfies `seen <op> value`; writes the indices of
/// all that do to `indices[]` (room for `count`) and returns how many (0 at once when none is selected). @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD std::size_t wait_until_some(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                    std::size_t* indices, const int* status, cmp op, std::type_identity_t<T> value) {
    const auto words = detail::watch(ctx, "wait_until_some", ivars, count, status, op, detail::same_value<T>{value});
    return detail::wait_words<detail::match::some>(ctx, words, indices);
}

// ---- the _vector forms (OpenSHMEM 1.5): word i compared with values[i], local memory holding `count` values ----

/// wait_until_all with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD void wait_until_all_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                   const int* status, cmp op, const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "wait_until_all_vector", ivars, count, status, op, values);
    detail::wait_words<detail::match::all>(ctx, words);
}

/// test_all with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD bool test_all_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                             const int* status, cmp op, const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "test_all_vector", ivars, count, status, op, values);
    return words.template scan<detail::match::all>() == count;
}

/// test_any with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD std::size_t test_any_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                    const int* status, cmp op, const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "test_any_vector", ivars, count, status, op, values);
    return words.template scan<detail::match::any>();
}

/// test_some with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_anyone @on_every
/// - @word_errors
template <class Tr, class T>
PGAS_HD std::size_t test_some_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                     std::size_t* indices, const int* status, cmp op,
                                     const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "test_some_vector", ivars, count, status, op, values);
    return words.template scan<detail::match::some>(indices);
}

/// wait_until_any with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD std::size_t wait_until_any_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                          const int* status, cmp op, const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "wait_until_any_vector", ivars, count, status, op, values);
    return detail::wait_words<detail::match::any>(ctx, words);
}

/// wait_until_some with one comparison value per word: word i must satisfy `seen <op> values[i]`. @status_mask
/// - @by_waiters @on_every
/// - @word_errors @timeout_errors
template <class Tr, class T>
PGAS_HD std::size_t wait_until_some_vector(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                           std::size_t* indices, const int* status, cmp op,
                                           const std::type_identity_t<T>* values) {
    const auto words = detail::watch(ctx, "wait_until_some_vector", ivars, count, status, op, values);
    return detail::wait_words<detail::match::some>(ctx, words, indices);
}

// ---- team synchronisation ----

/// Team synchronisation without completing outstanding puts (as nvshmem_team_sync): returns once every member of
/// `t` has arrived (dissemination, ceil(log2 n) rounds). Earlier puts are then complete and visible on nvlink/host
/// and libfabric, not on ibgda and route (arrivals are ordered only per PE): use barrier for that.
/// - **Called by** every thread of `G` on every member PE of `t`; one group per PE at a time per team. @on_signal
/// - **Errors:** @sync_errors
template <group G = thread, class Tr>
PGAS_HD void sync(const device::context<Tr>& ctx, team t) {
    detail::require_signal<Tr>();
    G::sync();
    if (G::rank() == 0) detail::disseminate(ctx, t, "sync");
    G::sync();
}

/// sync over every PE of the world (ctx.world_team()).
/// - **Called by** every thread of `G` on every PE; otherwise as sync.
template <group G = thread, class Tr>
PGAS_HD void sync_all(const device::context<Tr>& ctx) {
    sync<G>(ctx, ctx.world_team());
}

/// quiet_all, then sync: on return every member's earlier operations (on every channel) are complete and visible
/// everywhere, on every transport (on nvlink/host at the cost of sync, which already gives this).
/// - **Called by** every thread of `G` on every member PE of `t`; one group per PE at a time per team. @on_signal
/// - **Errors:** @sync_errors; those of quiet.
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
/// - **Called by** every thread of `G` on every PE; otherwise as barrier.
template <group G = thread, class Tr>
PGAS_HD void barrier_all(const device::context<Tr>& ctx) {
    barrier<G>(ctx, ctx.world_team());
}

PGAS_NAMESPACE_END
