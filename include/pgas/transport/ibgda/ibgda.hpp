// pgas::ibgda: the transport whose GPU threads build mlx5 work requests and ring the NIC themselves.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/window.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/ibgda/access.hpp>
#include <pgas/transport/ibgda/completion.hpp>
#include <pgas/transport/ibgda/producer.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <cuda/std/bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
// Everything a context<ibgda> needs, filled by ibgda_domain (host side).
struct ibgda_params {
    int my_pe = 0;
    int n_pes = 0;
    std::uint64_t heap_bytes = 0;
    std::byte* heap = nullptr;              // this PE's heap, as the calling threads address it
    ibgda_qp* qps = nullptr;                // channels * n_pes, indexed by channel * n_pes + PE
    int channel = 0;                        // the channel this value posts to
    int channels = 1;                       // RC queue pairs per peer
    const ibgda_region* regions = nullptr;  // local memory the NIC may read/write; [0] is the heap
    int n_regions = 0;
    std::uint32_t doorbell_batch = 1;  // blocks an nbi op may leave un-rung (1: ring every post)
    runtime_state runtime;             // the world's timeout and peer-failure flag
};
}  // namespace detail

/// Device-side state of the IBGDA transport: pointers to this PE's queue pairs (k channels of one RC QP per peer,
/// itself included, each with its own send queue, doorbell record, doorbell and CQ) and registered regions, copied by
/// value into kernels, and the channel this value posts to. Mutable state lives in the QPs' memory (DESIGN.md §3).
/// Access is the memory-access policy (access.hpp); pgas::ibgda uses the real one.
///
/// Ordering: a QP executes in order at the target, so puts, atomics and signals to one PE on one channel land in issue
/// order; put_signal's signal follows its data on the same QP. Different channels are different QPs: no order between
/// them, and no shared slot, counter or doorbell. fence() posts a fenced NOP on every QP of the channel with work in
/// flight (later WQEs wait for earlier READs/atomics); quiet() posts a signalled NOP on every such QP and waits for its
/// CQE, which completes everything before it (RC completions are in order); quiet_pe() does that for one peer's QP,
/// quiet_all() for every channel's.
///
/// Registered windows (pgas::window_transport): a window op reads PE pe's row of the window's table from this PE's own
/// heap (the address and remote key of pe's buffer as pe's NIC registered it, written there by ibgda_domain) and posts
/// exactly the WQEs of the heap op on the same QP, so ordering, fence and quiet treat both alike.
template <class Access = ibgda_system_access>
class basic_ibgda {
public:
    /// The transport's name in diagnostics ("ibgda").
    static constexpr const char* name = "ibgda";
    /// Opts in to pgas::rma_transport.
    static constexpr bool provides_rma = true;
    /// Opts in to pgas::atomic_transport.
    static constexpr bool provides_atomics = true;
    /// Opts in to pgas::signal_transport.
    static constexpr bool provides_signals = true;
    /// Not a pgas::load_store_transport: ctx.peer() is nullptr.
    static constexpr bool provides_load_store = false;
    /// Opts in to pgas::window_transport: window ops resolve the target's registration from the window's table.
    static constexpr bool provides_windows = true;
    /// Constexpr facts about the transport (pgas::ibgda_traits).
    using traits = ibgda_traits;

    /// An empty transport (reaches no PE), as in a default-constructed context.
    basic_ibgda() = default;
    /// Over the queue pairs and regions ibgda_domain set up (ibgda_domain::context makes it).
    explicit basic_ibgda(const detail::ibgda_params& p, Access access = {}) : p_(p), access_(access) {}

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return p_.my_pe; }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return p_.n_pes; }
    /// Whether this transport reaches PE `pe` at all.
    PGAS_HD bool reachable(int pe) const { return pe >= 0 && pe < p_.n_pes && p_.qps != nullptr; }
    /// Bytes of each PE's symmetric heap.
    PGAS_HD std::uint64_t heap_bytes() const { return p_.heap_bytes; }
    /// This PE's own heap byte at symmetric `offset`.
    PGAS_HD void* local_address(std::uint64_t offset) const { return p_.heap + offset; }
    /// The memory-access policy (how WQEs, doorbells and CQEs are touched).
    PGAS_HD const Access& access() const { return access_; }
    /// The queue pair to PE `pe` on this value's channel (its state lives in QP memory, not in this value).
    PGAS_HD detail::ibgda_qp& queue_pair(int pe) const { return queue_pair(pe, p_.channel); }
    /// The queue pair to PE `pe` on channel `c`.
    PGAS_HD detail::ibgda_qp& queue_pair(int pe, int c) const { return p_.qps[c * p_.n_pes + pe]; }
    /// The channel this value posts to (pgas::channel_transport).
    PGAS_HD int channel() const { return p_.channel; }
    /// RC queue pairs per peer (ibgda_options::channels).
    PGAS_HD int channels() const { return p_.channels; }
    /// A copy posting to channel `c`'s queue pairs (device::context::on_channel checks the range).
    PGAS_HD basic_ibgda on_channel(int c) const {
        basic_ibgda bound = *this;
        bound.p_.channel = c;
        return bound;
    }

    // --- RMA: rank 0 of G posts, the group syncs before and after ----------

    /// Transport member behind pgas::put (every thread of `G` calls it; programs call pgas::put).
    template <class G>
    PGAS_HD void put(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) put_bytes(heap_target(dst, pe), src, bytes, pe, true, "put");
        G::sync();
    }
    /// Transport member behind pgas::put_nbi.
    template <class G>
    PGAS_HD void put_nbi(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) put_bytes(heap_target(dst, pe), src, bytes, pe, false, "put_nbi");
        G::sync();
    }
    /// Transport member behind pgas::get.
    template <class G>
    PGAS_HD void get(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) get_bytes(dst, heap_target(src, pe), bytes, pe, true, "get");
        G::sync();
    }
    /// Transport member behind pgas::get_nbi.
    // A get into unregistered memory is staged through scratch and so completes before returning.
    template <class G>
    PGAS_HD void get_nbi(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) get_bytes(dst, heap_target(src, pe), bytes, pe, false, "get_nbi");
        G::sync();
    }
    /// Transport member behind pgas::fence.
    template <class G>
    PGAS_HD void fence() const {
        G::sync();
        if (G::rank() == 0)
            for (int pe = 0; pe < p_.n_pes; ++pe)
                if (in_flight(pe)) post_nop(pe, mlx5::fm_ce_se::fence, "fence");
        G::sync();
    }
    /// Transport member behind pgas::quiet: every QP of this channel.
    template <class G>
    PGAS_HD void quiet() const {
        G::sync();
        if (G::rank() == 0) complete_channel(p_.channel, "quiet");
        G::sync();
    }
    /// Transport member behind pgas::quiet(ctx, pe): this channel's QP to `pe` only.
    template <class G>
    PGAS_HD void quiet_pe(int pe) const {
        G::sync();
        if (G::rank() == 0) complete(queue_pair(pe), "quiet");
        G::sync();
    }
    /// Transport member behind pgas::quiet_all: every QP of every channel.
    template <class G>
    PGAS_HD void quiet_all() const {
        G::sync();
        if (G::rank() == 0)
            for (int c = 0; c < p_.channels; ++c) complete_channel(c, "quiet_all");
        G::sync();
    }
    /// Transport member behind pgas::flush_local: as quiet (an RC NIC says it read a registered source only
    /// with the completion that follows the remote ACK; inline sources were reusable at once).
    template <class G>
    PGAS_HD void flush_local() const {
        G::sync();
        if (G::rank() == 0) complete_channel(p_.channel, "flush_local");
        G::sync();
    }

    // --- atomics: one thread ------------------------------------------------

    /// Transport member behind every fetching `atomic_*` call: performs `op` on the word at `offset` of PE `pe` (one
    /// thread) and returns its old value.
    template <class V>
    PGAS_HD V atomic(amo op, std::uint64_t offset, V operand, V expected, int pe) const {
        return atomic_at<V>(op, heap_target(offset, pe), operand, expected, pe);
    }
    /// Transport member: fetch-add, floating point included (pgas::atomic_transport requires it).
    template <class V>
    PGAS_HD V atomic_add(std::uint64_t offset, V operand, int pe) const {
        return atomic<V>(amo::fetch_add, offset, operand, V{}, pe);
    }

    // --- registered windows (pgas::window_transport): `table` names the window, `offset` is a byte offset into
    //     PE pe's buffer; semantics, completion and ordering as the heap members of the same name ------------

    /// Transport member behind pgas::put into a window.
    template <class G>
    PGAS_HD void window_put(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) put_bytes(window_target(table, dst, bytes, pe, "put"), src, bytes, pe, true, "put");
        G::sync();
    }
    /// Transport member behind pgas::put_nbi into a window.
    template <class G>
    PGAS_HD void window_put_nbi(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                int pe) const {
        G::sync();
        if (G::rank() == 0)
            put_bytes(window_target(table, dst, bytes, pe, "put_nbi"), src, bytes, pe, false, "put_nbi");
        G::sync();
    }
    /// Transport member behind pgas::get from a window.
    template <class G>
    PGAS_HD void window_get(void* dst, std::uint64_t table, std::uint64_t src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0) get_bytes(dst, window_target(table, src, bytes, pe, "get"), bytes, pe, true, "get");
        G::sync();
    }
    /// Transport member behind pgas::get_nbi from a window.
    template <class G>
    PGAS_HD void window_get_nbi(void* dst, std::uint64_t table, std::uint64_t src, std::size_t bytes, int pe) const {
        G::sync();
        if (G::rank() == 0)
            get_bytes(dst, window_target(table, src, bytes, pe, "get_nbi"), bytes, pe, false, "get_nbi");
        G::sync();
    }
    /// Transport member behind the fetching atomics on a window (one thread): the old value.
    template <class V>
    PGAS_HD V window_atomic(amo op, std::uint64_t table, std::uint64_t offset, V operand, V expected, int pe) const {
        return atomic_at<V>(op, window_target(table, offset, sizeof(V), pe, "atomic"), operand, expected, pe);
    }
    /// Transport member behind atomic_set and atomic_add on a window (one thread; no old value wanted).
    template <class V>
    PGAS_HD void window_atomic_update(amo op, std::uint64_t table, std::uint64_t offset, V operand, int pe) const {
        (void)atomic_at<V>(op, window_target(table, offset, sizeof(V), pe, "atomic"), operand, V{}, pe);
    }
    /// Transport member behind pgas::put_signal into a window (the signal word in the heap).
    template <class G>
    PGAS_HD void window_put_signal(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                   std::uint64_t sig, std::uint64_t value, signal_op op, int pe) const {
        G::sync();
        if (G::rank() == 0)
            put_then_signal(window_target(table, dst, bytes, pe, "put_signal"), src, bytes, sig, value, op, pe);
        G::sync();
    }
    /// Transport member behind pgas::put_signal_nbi into a window.
    template <class G>
    PGAS_HD void window_put_signal_nbi(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                       std::uint64_t sig, std::uint64_t value, signal_op op, int pe) const {
        G::sync();
        if (G::rank() == 0) {
            put_bytes(window_target(table, dst, bytes, pe, "put_signal_nbi"), src, bytes, pe, false, "put_signal_nbi");
            post_signal(sig, value, op, pe, mlx5::fm_ce_se::none, "put_signal_nbi");
        }
        G::sync();
    }

private:
    // Where an op lands: an address in the target NIC's space and the remote key that covers it.
    struct remote_target {
        std::uint64_t address;
        std::uint32_t key;
    };
    PGAS_HD remote_target heap_target(std::uint64_t offset, int pe) const {
        const auto& qp = queue_pair(pe);
        return {qp.remote_heap + offset, qp.rkey};
    }
    // PE pe's buffer of the window whose table is at heap offset `table`, byte `offset`: one load of the row from
    // this PE's own heap. Under PGAS_CHECKS a row no NIC registration filled (a released window) and a range past
    // the target's buffer are reported before anything is posted.
    PGAS_HD remote_target window_target(std::uint64_t table, std::uint64_t offset, std::size_t bytes, int pe,
                                        const char* call) const {
        const detail::window_row row = reinterpret_cast<const detail::window_row*>(p_.heap + table)[pe];
        if constexpr (PGAS_CHECKS) {
            if (row.remote == 0 && row.rkey == 0)
                detail::report(errc::transport_unavailable, call, p_.my_pe,
                               "window buffer not registered with the NIC (released, or registered where no "
                               "ibgda_domain saw it), target PE",
                               pe);
            if (offset > row.bytes || bytes > row.bytes - offset)
                detail::report(errc::invalid_argument, call, p_.my_pe,
                               "range past the end of the target's window buffer, last byte",
                               (long long)(offset + bytes) - 1);
        }
        return {row.remote + offset, row.rkey};
    }

    template <class V>
    PGAS_HD V atomic_at(amo op, remote_target at, V operand, V expected, int pe) const {
        static_assert(sizeof(V) == 4 || sizeof(V) == 8, "pgas: ibgda atomics take 4- or 8-byte words");
        using U = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
        if constexpr (std::is_floating_point_v<V>) {
            if (op == amo::fetch_add) {  // the NIC adds integers only: compare-swap until it sticks
                U seen = word_atomic<U>(amo::fetch, at, 0, 0, pe);
                for (;;) {
                    const U next = cuda::std::bit_cast<U>(V(cuda::std::bit_cast<V>(seen) + operand));
                    const U old = word_atomic<U>(amo::compare_swap, at, next, seen, pe);
                    if (old == seen) return cuda::std::bit_cast<V>(old);
                    seen = old;
                }
            }
        }
        return cuda::std::bit_cast<V>(
            word_atomic<U>(op, at, cuda::std::bit_cast<U>(operand), cuda::std::bit_cast<U>(expected), pe));
    }

public:
    // --- signals -------------------------------------------------------------

    /// Transport member behind pgas::signal.
    // One thread: set (an inline 8-byte WRITE) or add (ATOMIC_FA), after the
    // caller's earlier puts to pe on the same QP.
    PGAS_HD void signal(std::uint64_t offset, std::uint64_t value, signal_op op, int pe) const {
        post_signal(offset, value, op, pe, mlx5::fm_ce_se::none, "signal");
    }
    /// Transport member behind pgas::put_signal.
    template <class G>
    PGAS_HD void put_signal(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                            std::uint64_t value, signal_op op, int pe) const {
        G::sync();
        if (G::rank() == 0) put_then_signal(heap_target(dst, pe), src, bytes, sig, value, op, pe);
        G::sync();
    }
    /// Transport member behind pgas::put_signal_nbi.
    template <class G>
    PGAS_HD void put_signal_nbi(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                                std::uint64_t value, signal_op op, int pe) const {
        G::sync();
        if (G::rank() == 0) {
            put_bytes(heap_target(dst, pe), src, bytes, pe, false, "put_signal_nbi");
            post_signal(sig, value, op, pe, mlx5::fm_ce_se::none, "put_signal_nbi");
        }
        G::sync();
    }

private:
    // put_signal's body (rank 0): the data, then the signal on the same QP, whose CQE completes the data before
    // it: then src is reusable.
    PGAS_HD void put_then_signal(remote_target to, const void* src, std::size_t bytes, std::uint64_t sig,
                                 std::uint64_t value, signal_op op, int pe) const {
        put_bytes(to, src, bytes, pe, false, "put_signal");
        const std::uint64_t end = post_signal(sig, value, op, pe, mlx5::fm_ce_se::cq_update, "put_signal");
        detail::ibgda_wait_completed(access_, waiter(), queue_pair(pe), end, "put_signal");
    }

    PGAS_HD detail::ibgda_waiter waiter() const { return {p_.my_pe, p_.runtime}; }

    PGAS_HD static bool in_flight(const detail::ibgda_qp& qp) {
        return detail::ibgda_load(qp.reserved) != detail::ibgda_load(qp.completed);
    }
    PGAS_HD bool in_flight(int pe) const { return in_flight(queue_pair(pe)); }

    // A signalled NOP on `qp` if it has work in flight, waited for: everything posted there before is complete.
    PGAS_HD void complete(detail::ibgda_qp& qp, const char* call) const {
        if (!in_flight(qp)) return;
        detail::ibgda_wait_completed(access_, waiter(), qp, post_nop(qp, mlx5::fm_ce_se::cq_update, call), call);
    }
    PGAS_HD void complete_channel(int c, const char* call) const {
        for (int pe = 0; pe < p_.n_pes; ++pe) complete(queue_pair(pe, c), call);
    }

    // The lkey of registered local memory holding [address, address + bytes), or nothing.
    struct lookup_result {
        bool found;
        std::uint32_t key;
    };
    PGAS_HD lookup_result local_key(const void* address, std::size_t bytes) const {
        const auto a = reinterpret_cast<std::uint64_t>(address);
        for (int i = 0; i < p_.n_regions; ++i) {
            const auto& r = p_.regions[i];
            if (a >= r.base && a - r.base <= r.bytes && bytes <= r.bytes - (a - r.base)) return {true, r.key};
        }
        return {false, 0};
    }

    PGAS_HD detail::ibgda_post_options options(std::uint8_t flags, bool ring_now, bool hold = false) const {
        detail::ibgda_post_options o;
        o.flags = flags;
        o.ring_now = ring_now;
        o.hold_scratch = hold;
        o.doorbell_batch = p_.doorbell_batch;
        return o;
    }

    PGAS_HD std::uint64_t post_nop(int pe, std::uint8_t flags, const char* call) const {
        return post_nop(queue_pair(pe), flags, call);
    }
    PGAS_HD std::uint64_t post_nop(detail::ibgda_qp& qp, std::uint8_t flags, const char* call) const {
        return detail::ibgda_post(access_, waiter(), qp, 1, options(flags, true), call,
                                  [](const mlx5::wqe_header& h, std::uint64_t) { return mlx5::nop(h); });
    }

    PGAS_HD std::uint64_t post_inline(remote_target to, const void* src, std::uint32_t bytes, int pe,
                                      std::uint8_t flags, bool ring_now, const char* call) const {
        auto& qp = queue_pair(pe);
        const auto* payload = static_cast<const std::uint8_t*>(src);
        const unsigned blocks = (mlx5::inline_write_ds(bytes) + 3u) / 4u;
        return detail::ibgda_post(access_, waiter(), qp, blocks, options(flags, ring_now), call,
                                  [&](const mlx5::wqe_header& h, std::uint64_t) {
                                      return mlx5::rdma_write_inline(h, to.address, to.key, payload, bytes);
                                  });
    }

    // Blocking puts return when src is reusable: inline data at once, a
    // registered source after its WRITE's CQE.
    PGAS_HD void put_bytes(remote_target to, const void* src, std::size_t bytes, int pe, bool blocking,
                           const char* call) const {
        if (bytes == 0) return;
        auto& qp = queue_pair(pe);
        const std::uint64_t raddr = to.address;
        const auto* from = static_cast<const std::byte*>(src);
        if (bytes <= traits::inline_put_bytes) {
            post_inline(to, src, std::uint32_t(bytes), pe, 0, blocking, call);
            return;
        }
        const lookup_result key = local_key(src, bytes);
        if (!key.found) {  // not registered: the bytes travel inside the WQEs
            for (std::size_t done = 0; done < bytes; done += traits::inline_piece_bytes) {
                const std::size_t piece =
                    bytes - done < traits::inline_piece_bytes ? bytes - done : traits::inline_piece_bytes;
                post_inline({raddr + done, to.key}, from + done, std::uint32_t(piece), pe, 0, blocking, call);
            }
            return;
        }
        std::uint64_t end = 0;
        for (std::size_t done = 0; done < bytes; done += traits::max_message_bytes) {
            const std::size_t piece =
                bytes - done < traits::max_message_bytes ? bytes - done : traits::max_message_bytes;
            const bool last = done + piece == bytes;
            const auto laddr = reinterpret_cast<std::uint64_t>(from + done);
            end = detail::ibgda_post(
                access_, waiter(), qp, 1, options(blocking && last ? mlx5::fm_ce_se::cq_update : 0, blocking), call,
                [&](const mlx5::wqe_header& h, std::uint64_t) {
                    return mlx5::rdma_write(h, raddr + done, to.key, laddr, key.key, std::uint32_t(piece));
                });
        }
        if (blocking) detail::ibgda_wait_completed(access_, waiter(), qp, end, call);
    }

    PGAS_HD void get_bytes(void* dst, remote_target from, std::size_t bytes, int pe, bool blocking,
                           const char* call) const {
        if (bytes == 0) return;
        auto& qp = queue_pair(pe);
        const std::uint64_t raddr = from.address;
        auto* to = static_cast<std::byte*>(dst);
        const lookup_result key = local_key(dst, bytes);
        if (key.found) {
            std::uint64_t end = 0;
            for (std::size_t done = 0; done < bytes; done += traits::max_message_bytes) {
                const std::size_t piece =
                    bytes - done < traits::max_message_bytes ? bytes - done : traits::max_message_bytes;
                const bool last = done + piece == bytes;
                const auto laddr = reinterpret_cast<std::uint64_t>(to + done);
                end = detail::ibgda_post(
                    access_, waiter(), qp, 1, options(blocking && last ? mlx5::fm_ce_se::cq_update : 0, blocking), call,
                    [&](const mlx5::wqe_header& h, std::uint64_t) {
                        return mlx5::rdma_read(h, raddr + done, from.key, laddr, key.key, std::uint32_t(piece));
                    });
            }
            if (blocking) detail::ibgda_wait_completed(access_, waiter(), qp, end, call);
            return;
        }
        // Not registered: READ into the scratch of the WQE's own block, wait, copy out.
        constexpr std::size_t piece_max = traits::scratch_bytes_per_block;
        for (std::size_t done = 0; done < bytes; done += piece_max) {
            const std::size_t piece = bytes - done < piece_max ? bytes - done : piece_max;
            std::uint64_t start = 0;
            const std::uint64_t end =
                detail::ibgda_post(access_, waiter(), qp, 1, options(mlx5::fm_ce_se::cq_update, true, true), call,
                                   [&](const mlx5::wqe_header& h, std::uint64_t s) {
                                       start = s;
                                       return mlx5::rdma_read(h, raddr + done, from.key, scratch_address(qp, s),
                                                              qp.scratch_lkey, std::uint32_t(piece));
                                   });
            detail::ibgda_wait_completed(access_, waiter(), qp, end, call);
            std::memcpy(to + done, scratch_of(qp, start), piece);
            detail::ibgda_release_scratch(qp, start);
        }
    }

    PGAS_HD static std::byte* scratch_of(const detail::ibgda_qp& qp, std::uint64_t start) {
        return qp.scratch + (start & (qp.blocks - 1)) * traits::scratch_bytes_per_block;
    }
    PGAS_HD static std::uint64_t scratch_address(const detail::ibgda_qp& qp, std::uint64_t start) {
        return reinterpret_cast<std::uint64_t>(scratch_of(qp, start));
    }

    PGAS_HD std::uint64_t post_signal(std::uint64_t offset, std::uint64_t value, signal_op op, int pe,
                                      std::uint8_t flags, const char* call) const {
        auto& qp = queue_pair(pe);
        const remote_target to = heap_target(offset, pe);
        const std::uint64_t raddr = to.address;
        if (op == signal_op::set) return post_inline(to, &value, 8, pe, flags, true, call);
        return detail::ibgda_post(
            access_, waiter(), qp, 1, options(flags, true), call, [&](const mlx5::wqe_header& h, std::uint64_t s) {
                return mlx5::atomic_fetch_add(h, raddr, to.key, scratch_address(qp, s), qp.scratch_lkey, value);
            });
    }

    // One NIC atomic on a 4- or 8-byte word (U is the unsigned word type).
    // 8-byte add and compare-swap are the standard atomics; everything else is
    // a masked (extended) atomic: swap/set/and/or a masked compare-swap with
    // compare mask 0, xor a masked fetch-add whose every bit is a field.
    template <class U>
    PGAS_HD U word_atomic(amo op, remote_target at, U operand, U expected, int pe) const {
        constexpr bool wide = sizeof(U) == 8;
        auto& qp = queue_pair(pe);
        const std::uint64_t raddr = at.address;
        const std::uint32_t rkey = at.key;
        const bool fetches = op != amo::set;
        const bool standard = wide && (op == amo::fetch || op == amo::fetch_add || op == amo::compare_swap);
        const U ones = U(~U{0});
        const unsigned blocks = wide && !standard && op != amo::fetch_xor ? 2u : 1u;  // masked 8-byte CS
        std::uint64_t start = 0;
        const std::uint64_t end = detail::ibgda_post(
            access_, waiter(), qp, blocks,
            options(fetches ? mlx5::fm_ce_se::cq_update : mlx5::fm_ce_se::none, true, fetches), "atomic",
            [&](const mlx5::wqe_header& h, std::uint64_t s) {
                start = s;
                const std::uint64_t laddr = scratch_address(qp, s);
                const std::uint32_t lkey = qp.scratch_lkey;
                // (swap, compare, swap_mask, compare_mask) of the masked compare-swap for op
                U swap = operand, compare = 0, swap_mask = ones, compare_mask = 0;
                switch (op) {
                    case amo::fetch:
                        if constexpr (wide)
                            return mlx5::atomic_fetch_add(h, raddr, rkey, laddr, lkey, 0);
                        else
                            return mlx5::masked_fetch_add32(h, raddr, rkey, laddr, lkey, 0, 0);
                    case amo::fetch_add:
                        if constexpr (wide)
                            return mlx5::atomic_fetch_add(h, raddr, rkey, laddr, lkey, operand);
                        else
                            return mlx5::masked_fetch_add32(h, raddr, rkey, laddr, lkey, operand, 0);
                    case amo::fetch_xor:
                        if constexpr (wide)
                            return mlx5::masked_fetch_add64(h, raddr, rkey, laddr, lkey, operand, ones);
                        else
                            return mlx5::masked_fetch_add32(h, raddr, rkey, laddr, lkey, operand, ones);
                    case amo::compare_swap:
                        if constexpr (wide)
                            return mlx5::atomic_compare_swap(h, raddr, rkey, laddr, lkey, operand, expected);
                        compare = expected;
                        compare_mask = ones;
                        break;
                    case amo::fetch_and:
                        swap = 0;
                        swap_mask = U(~operand);
                        break;
                    case amo::fetch_or:
                        swap_mask = operand;
                        break;
                    case amo::set:
                    case amo::swap:
                        break;
                }
                if constexpr (wide)
                    return mlx5::masked_compare_swap64(h, raddr, rkey, laddr, lkey, swap, compare, swap_mask,
                                                       compare_mask);
                else
                    return mlx5::masked_compare_swap32(h, raddr, rkey, laddr, lkey, swap, compare, swap_mask,
                                                       compare_mask);
            });
        if (!fetches) return U{};
        detail::ibgda_wait_completed(access_, waiter(), qp, end, "atomic");
        U reply;
        std::memcpy(&reply, scratch_of(qp, start), sizeof reply);
        detail::ibgda_release_scratch(qp, start);
        const bool big_endian =
            standard ? traits::standard_atomic_reply_big_endian : traits::masked_atomic_reply_big_endian;
        if (big_endian) {
            if constexpr (wide)
                reply = mlx5::byte_swap64(reply);
            else
                reply = mlx5::byte_swap32(reply);
        }
        return reply;
    }

    detail::ibgda_params p_{};
    [[no_unique_address]] Access access_{};
};

/// The IBGDA transport: GPU threads build mlx5 work requests and ring the NIC's doorbell themselves (status:
/// docs/ibgda.md). Made by ibgda_domain::context.
using ibgda = basic_ibgda<>;

static_assert(std::is_trivially_copyable_v<ibgda>);
static_assert(transport<ibgda>);
static_assert(rma_transport<ibgda>);
static_assert(atomic_transport<ibgda>);
static_assert(signal_transport<ibgda>);
static_assert(!load_store_transport<ibgda>);
static_assert(channel_transport<ibgda>);
static_assert(completion_scope_transport<ibgda>);
static_assert(window_transport<ibgda>);

PGAS_NAMESPACE_END
