// The producer side of the proxy ring: slot reservation, credits, publication and the waits on the proxy.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/detail/clock.hpp>
#include <pgas/device/context.hpp>
#include <pgas/transport/proxy/command.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <cuda/atomic>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace proxy {

namespace detail {

template <class T>
PGAS_HD T load_acquire(const T* address) {
    cuda::atomic_ref<T, cuda::thread_scope_system> word(*const_cast<T*>(address));
    return word.load(cuda::memory_order_acquire);
}
template <class T>
PGAS_HD void store_release(T* address, T value) {
    cuda::atomic_ref<T, cuda::thread_scope_system> word(*address);
    word.store(value, cuda::memory_order_release);
}

#if defined(__CUDACC__)
__device__ inline unsigned lane_id() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
#endif

}  // namespace detail

// The trivially copyable view of one PE's ring that device code (or a host
// PE thread) pushes into. Memory: `slots` and `control` are host memory the
// proxy thread polls and writes (cudaHostAlloc'd and mapped when producers
// are GPU threads); `tail`, the reservation counter, is touched only by
// producers (device memory on a GPU, so its atomics never cross PCIe).
struct ring_view {
    command* slots = nullptr;
    const control_block* control = nullptr;
    std::uint64_t* tail = nullptr;
    std::uint64_t* credit = nullptr;  // producers' cached lower bound of control->released (next to tail)
    std::uint32_t capacity = 0;       // a power of two
    int pe = -1;
    device::runtime_state runtime;

    // Reserves one slot per calling thread and returns its ticket. On the GPU
    // the converged lanes of a warp make one atomic add (the lowest lane
    // reserves for all, each takes base + its rank among them): a warp of
    // independent puts costs one round trip to the counter, not 32.
    PGAS_HD std::uint64_t reserve() const {
        NV_IF_TARGET(
            NV_IS_DEVICE,
            (const unsigned mask = __activemask(); const unsigned lane = detail::lane_id();
             const unsigned leader = unsigned(__ffs(int(mask))) - 1u;
             const unsigned rank = unsigned(__popc(mask & ((1u << lane) - 1u)));
             unsigned long long base = 0;
             if (lane == leader) {
                 cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> counter(*tail);
                 base = counter.fetch_add(std::uint64_t(__popc(mask)), cuda::memory_order_relaxed);
             } base = __shfl_sync(mask, base, int(leader));
             return std::uint64_t(base) + rank;),
            (cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system> counter(*tail);
             return counter.fetch_add(1, cuda::memory_order_relaxed);))
    }

    // The slot of ticket t, once the ring has a credit for it: a full ring
    // makes the producer wait here (never overwrite, never drop).
    // The cached credit is checked first: from a GPU, `released` is a read
    // across PCIe, needed only when the cache says the ring may be full.
    // Any value stored in the cache was `released` at some point, so racing
    // producers can only make it stale (lower), never wrong.
    PGAS_HD command& acquire_slot(std::uint64_t ticket, const char* call) const {
        cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system> cached(*credit);
        if (ticket >= cached.load(cuda::memory_order_relaxed) + capacity) {
            spin(call, "a free ring slot (ring full)", ticket, [&] {
                const std::uint64_t released = detail::load_acquire(&control->released);
                cached.store(released, cuda::memory_order_release);  // passes the proxy's release on
                return ticket < released + capacity;
            });
        }
        // Acquire even on the cached path: the proxy's reads of this slot's
        // previous command happen before our writes (its release of `released`).
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
        return slots[ticket & (capacity - 1)];
    }

    // Hands the filled slot to the proxy.
    PGAS_HD void publish(command& slot, std::uint64_t ticket) const { detail::store_release(&slot.seq, ticket + 1); }

    // Reserve + credit + fill + publish; returns the ticket. The command is
    // built in registers and written with 16-byte stores (7 PCIe writes from
    // a GPU instead of one per field), then published.
    template <class Fill>
    PGAS_HD std::uint64_t push(const char* call, Fill&& fill) const {
        const std::uint64_t ticket = reserve();
        command local{};
        fill(local);
        command& slot = acquire_slot(ticket, call);
        write_body(slot, local);
        publish(slot, ticket);
        return ticket;
    }

    // Waits until every command up to and including ticket has completed.
    PGAS_HD void wait_completed(std::uint64_t ticket, const char* call) const {
        spin(call, "completion", ticket, [&] { return detail::load_acquire(&control->completed) > ticket; });
    }

    // Waits for the reply of a flag_reply command, copies `bytes` of it out
    // and acknowledges it (which frees the slot).
    PGAS_HD void take_reply(std::uint64_t ticket, void* out, std::size_t bytes, const char* call) const {
        command& slot = slots[ticket & (capacity - 1)];
        spin(call, "the reply", ticket, [&] { return detail::load_acquire(&slot.reply) == ticket + 1; });
        std::uint64_t words[inline_bytes / 8];  // word loads: one PCIe read per 8 bytes, not per byte
        const auto* from = reinterpret_cast<const std::uint64_t*>(slot.payload);
        for (std::size_t i = 0; i < (bytes + 7) / 8; ++i) words[i] = from[i];
        std::memcpy(out, words, bytes);
        detail::store_release(&slot.ack, ticket + 1);
    }

    // The polling loop of every wait on the proxy: the same back-off,
    // timeout and peer-failure checks as pgas::detail::wait_local, plus the
    // proxy's own state: a failed or stopped proxy ends the wait with its
    // message, and a proxy that makes no progress times out naming the ticket.
    template <class Ready>
    PGAS_HD void spin(const char* call, const char* what, std::uint64_t ticket, Ready&& ready) const {
        if (ready()) return;
        const std::uint64_t start = pgas::detail::now_ns();
        for (unsigned polls = 1;; ++polls) {
            if (ready()) return;
            back_off(polls);
            if ((polls & 255u) != 0) continue;
            if (runtime.abort_flag && *runtime.abort_flag != 0)
                pgas::detail::report(errc::peer_failed, call, pe, "stopped waiting: failed PE", *runtime.abort_flag - 1);
            const std::uint32_t status = detail::load_acquire(&control->status);
            if (status != status_running) fail_stopped(call, status);
            const std::uint64_t waited = pgas::detail::now_ns() - start;
            if (runtime.timeout_ns != 0 && waited > runtime.timeout_ns) fail_timeout(call, what, ticket, waited);
        }
    }

private:
    // One step of back-off in spin. On the GPU this must be a yield point:
    // with independent thread scheduling the lanes of one warp that took
    // different paths (a compare_swap retry loop, a reservation split by the
    // credit check) run as separate groups, and a group in a tight polling
    // loop with no sleep is not guaranteed to give the warp to the others.
    // A lane that has published a fetching command and only has to read its
    // reply and ack it (the ack is what frees its slot, and `released`
    // advances in ticket order) would then never run while its warp-mates
    // poll `released` for a slot only that ack can free: the ring stays full
    // for good (completed - released == capacity). __nanosleep suspends the
    // polling group and lets the scheduler run the warp's other groups. A
    // poll already costs a PCIe round trip (~1 us), so a sleep of at most
    // 256 ns adds little to the wake-up.
    PGAS_HD static void back_off(unsigned polls) {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (const unsigned shift = polls < 4u ? polls : 4u; __nanosleep(16u << shift);),
                     ((void)polls; pgas::detail::relax();))
    }

    // Everything from `ack` on (the proxy no longer reads a slot it released).
    PGAS_HD static void write_body(command& slot, const command& local) {
        constexpr std::size_t first = offsetof(command, ack);
        static_assert(first % 16 == 0 && sizeof(command) % 16 == 0);
        NV_IF_TARGET(NV_IS_DEVICE,
                     (auto* dst = reinterpret_cast<uint4*>(reinterpret_cast<char*>(&slot) + first);
                      const auto* src = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(&local) + first);
                      for (std::size_t i = 0; i < (sizeof(command) - first) / 16; ++i) dst[i] = src[i];),
                     (std::memcpy(reinterpret_cast<char*>(&slot) + first, reinterpret_cast<const char*>(&local) + first,
                                  sizeof(command) - first);))
    }

    PGAS_HD void fail_stopped(const char* call, std::uint32_t status) const {
        NV_IF_TARGET(NV_IS_HOST,
                     (pgas::detail::throw_error(
                          errc::transport_unavailable, pe, call,
                          status == status_failed ? std::string("the proxy thread failed: ") + control->error
                                                  : std::string("the proxy thread has stopped (domain destroyed?)"));),
                     (printf("pgas: %s on PE %d: the proxy thread %s: %s\n", call, pe,
                             status == status_failed ? "failed" : "has stopped",
                             status == status_failed ? control->error : "domain destroyed?");
                      __trap();))
    }
    PGAS_HD void fail_timeout(const char* call, const char* what, std::uint64_t ticket, std::uint64_t waited) const {
        const auto completed = (unsigned long long)detail::load_acquire(&control->completed);
        const auto released = (unsigned long long)detail::load_acquire(&control->released);
        const auto beat = (unsigned)detail::load_acquire(&control->heartbeat);
        // The oldest command not completed yet is still in its slot: name it.
        const command& oldest = slots[completed & (capacity - 1)];
        const bool stuck = detail::load_acquire(&oldest.seq) == completed + 1;
        const char* op = stuck ? to_string(oldest.op) : "none published";
        const int to = stuck ? oldest.pe : -1;
        const auto bytes = (unsigned long long)(stuck ? oldest.bytes : 0);
        const auto offset = (unsigned long long)(stuck ? oldest.remote : 0);
        NV_IF_TARGET(
            NV_IS_HOST,
            (pgas::detail::throw_error(
                 errc::timeout, pe, call,
                 "no progress after " + std::to_string(waited / 1000000) + " ms waiting for " + what +
                     " of proxy command " + std::to_string(ticket) + " (proxy completed " +
                     std::to_string(completed) + ", released " + std::to_string(released) + ", heartbeat " +
                     std::to_string(beat) + "; oldest outstanding: " + op + " of " + std::to_string(bytes) +
                     " bytes to PE " + std::to_string(to) + " at heap offset " + std::to_string(offset) +
                     "); is the proxy thread alive, the peer reachable? raise PGAS_TIMEOUT_MS if the wait is "
                     "legitimate");),
            (printf("pgas: %s on PE %d: timed out after %llu ms waiting for %s of proxy command %llu "
                    "(proxy completed %llu, released %llu, heartbeat %u; oldest outstanding: %s of %llu bytes to "
                    "PE %d at heap offset %llu); is the proxy thread alive, the peer reachable?\n",
                    call, pe, (unsigned long long)(waited / 1000000), what, (unsigned long long)ticket, completed,
                    released, beat, op, bytes, to, offset);
             __trap();))
    }
};

}  // namespace proxy
PGAS_NAMESPACE_END
