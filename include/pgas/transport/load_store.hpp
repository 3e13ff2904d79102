// RMA, atomics and signals for every transport whose peers' heaps are mapped (nvlink, host).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/memory_ops.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Implements the rma/atomic/signal members of a transport from one question
// its Derived answers: `peer_address(offset, pe)`. Every access is a plain
// load/store or a system-scope atomic on a mapped address, so the same code is
// NVLink P2P on the GPU and shared memory between threads on the host.
//
// Memory model (PTX / C++): fence and quiet are a seq_cst fence at system
// scope (fence.sc.sys on the GPU). A load/store peer has no outstanding
// operations beyond the caller's own stores, so after that fence every prior
// store is visible to every later access of any thread: this is both
// per-PE ordering (fence) and remote completion (quiet). put_signal syncs the
// group, then one thread issues a release update of the signal (release is
// cumulative over the group sync), so a reader that acquires the signal sees
// the data.
template <class Derived>
class load_store_ops {
public:
    static constexpr bool provides_rma = true;
    static constexpr bool provides_atomics = true;
    static constexpr bool provides_signals = true;
    static constexpr bool provides_load_store = true;

    template <class G>
    PGAS_HD void put(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        group_copy<G>(self().peer_address(dst, pe), src, bytes);
        G::sync();
    }
    template <class G>
    PGAS_HD void put_nbi(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        // No group sync: nbi promises neither src reuse nor visibility before quiet, whose own sync orders
        // every member's stores ahead of its fence (one __syncthreads less per put_nbi<block> + quiet<block>).
        group_copy<G>(self().peer_address(dst, pe), src, bytes);
    }
    template <class G>
    PGAS_HD void get(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        group_copy<G, true>(dst, self().peer_address(src, pe), bytes);
        G::sync();
    }
    template <class G>
    PGAS_HD void get_nbi(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        // As put_nbi: dst is the group's only after quiet (which syncs the group).
        group_copy<G, true>(dst, self().peer_address(src, pe), bytes);
    }
    // One system-scope fence for the whole group, not one per member: the sync before puts every member's
    // earlier stores ahead of rank 0's fence (fence.sc is cumulative, as put_signal's release below), the sync
    // after keeps every member's later operations behind it (NVSHMEM's block quiet has the same shape). A fence
    // in each of a block's threads cost ~0.35 us per put_nbi<block> + quiet<block> kernel on one H100 (bench/compare
    // put_nbi_grid 8 B: 3.30 -> 2.96 us; put_block 256 B: 2.89 -> 2.47 us).
    template <class G>
    PGAS_HD void fence() const {
        G::sync();
        if (G::rank() == 0) detail::atomic_thread_fence(detail::memory_order_seq_cst);
        G::sync();
    }
    template <class G>
    PGAS_HD void quiet() const {
        fence<G>();
    }
    // Every channel is this one path, and the fence covers every peer: the scopes are quiet itself.
    template <class G>
    PGAS_HD void quiet_pe(int) const {
        fence<G>();
    }
    template <class G>
    PGAS_HD void quiet_all() const {
        fence<G>();
    }
    // Local completion: each thread's copy has read its part of the source by the time its put_nbi returns (the
    // loads' values are in registers or already stored); the sync makes that true of every thread of the group.
    template <class G>
    PGAS_HD void flush_local() const {
        G::sync();
    }

    // One thread: the remote atomic `op` on a naturally aligned word.
    template <class V>
    PGAS_HD V atomic(amo op, std::uint64_t offset, V operand, V expected, int pe) const {
        detail::atomic_ref<V, detail::thread_scope::system> word(*static_cast<V*>(self().peer_address(offset, pe)));
        switch (op) {
            case amo::fetch:
                return word.load(detail::memory_order_relaxed);
            case amo::set:
                word.store(operand, detail::memory_order_relaxed);
                return V{};
            case amo::swap:
                return word.exchange(operand, detail::memory_order_relaxed);
            case amo::compare_swap:
                word.compare_exchange_strong(expected, operand, detail::memory_order_relaxed);
                return expected;  // old value either way
            case amo::fetch_add:
                return word.fetch_add(operand, detail::memory_order_relaxed);
            // Bitwise ops exist for integer words only (the device API refuses them on floats at compile time);
            // seq_cst as cuda::atomic_ref's default was: fence.sc.sys, then the atom
            case amo::fetch_and:
                if constexpr (std::is_integral_v<V>) return word.fetch_and(operand, detail::memory_order_seq_cst);
                break;
            case amo::fetch_or:
                if constexpr (std::is_integral_v<V>) return word.fetch_or(operand, detail::memory_order_seq_cst);
                break;
            case amo::fetch_xor:
                if constexpr (std::is_integral_v<V>) return word.fetch_xor(operand, detail::memory_order_seq_cst);
                break;
        }
        return V{};
    }
    template <class V>
    PGAS_HD V atomic_add(std::uint64_t offset, V operand, int pe) const {
        return atomic<V>(amo::fetch_add, offset, operand, V{}, pe);
    }

    // A release store or a release add (a `red` on the GPU: no round trip).
    PGAS_HD void signal(std::uint64_t offset, std::uint64_t value, signal_op op, int pe) const {
        auto* word = static_cast<std::uint64_t*>(self().peer_address(offset, pe));
        if (op == signal_op::set)
            detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*word).store(value,
                                                                                         detail::memory_order_release);
        else
            add_release(word, value);
    }
    template <class G>
    PGAS_HD void put_signal(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                            std::uint64_t value, signal_op op, int pe) const {
        group_copy<G>(self().peer_address(dst, pe), src, bytes);
        // The group sync puts every thread's stores before rank 0's release
        // signal, and release is cumulative: a PE that acquires the signal
        // sees the whole payload. No separate fence (a fence.sc.sys here cost
        // ~0.6-0.9 us on 2xH200, bench_coll_tune's fence forms).
        G::sync();
        if (G::rank() == 0) signal(sig, value, op, pe);
        G::sync();
    }
    template <class G>
    PGAS_HD void put_signal_nbi(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                                std::uint64_t value, signal_op op, int pe) const {
        put_signal<G>(dst, src, bytes, sig, value, op, pe);
    }

private:
    PGAS_HD const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace detail
PGAS_NAMESPACE_END
