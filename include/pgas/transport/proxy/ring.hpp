// The producer side of the proxy ring: slot reservation, credits, publication and the waits on the proxy.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/clock.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/transport/proxy/command.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <pthread.h>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace proxy {

namespace detail {

using pgas::detail::load_acquire;
template <class T>
PGAS_HD void store_release(T* address, T value) {
    pgas::detail::atomic_ref<T, pgas::detail::thread_scope::system> word(*address);
    word.store(value, pgas::detail::memory_order_release);
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
// PE thread) pushes into. Memory: `slots`, `control` and `replies` are host
// memory the proxy thread polls and writes (cudaHostAlloc'd and mapped when
// producers are GPU threads); `tail` (the reservation counter), `credit` and
// `reply_claims` are touched only by producers (device memory on a GPU, so
// their atomics never cross PCIe).
struct ring_view {
    command* slots = nullptr;
    const control_block* control = nullptr;
    std::uint64_t* tail = nullptr;
    std::uint64_t* credit = nullptr;  // producers' cached lower bound of control->completed (next to tail)
    reply_entry* replies = nullptr;
    std::uint32_t* reply_claims = nullptr;  // one bit per reply entry: claimed
    std::uint32_t capacity = 0;             // a power of two
    std::uint32_t reply_count = 0;          // a multiple of 32
    int pe = -1;
    std::uint16_t channel = 0;      // which of the PE's rings this is
    std::uint16_t channels = 1;     // rings of the PE, one per channel
    std::uint64_t ring_stride = 0;  // bytes from one ring's control block (and slots) to the next one's
    runtime_state runtime;

    // Bits of a ticket's token (what the proxy hands the backend and writes into reply tags) that name the channel.
    static constexpr unsigned channel_shift = 48;

    // The view of the PE's ring of channel c: the rings lie ring_stride apart (control block and slots) and their
    // reservation counters tail_stride words apart; the reply pool is the PE's, shared (a thread waits for one reply
    // at a time, so one entry per resident thread serves every channel). No memory access.
    static constexpr std::ptrdiff_t tail_stride = 8;  // one 64-byte line per channel's tail and credit
    PGAS_HD ring_view on_channel(int c) const {
        ring_view v = *this;
        const std::ptrdiff_t steps = std::ptrdiff_t(c) - std::ptrdiff_t(channel);
        v.slots = reinterpret_cast<command*>(reinterpret_cast<char*>(slots) + steps * std::ptrdiff_t(ring_stride));
        v.control = reinterpret_cast<const control_block*>(reinterpret_cast<const char*>(control) +
                                                           steps * std::ptrdiff_t(ring_stride));
        v.tail = tail + steps * tail_stride;
        v.credit = credit + steps * tail_stride;
        v.channel = std::uint16_t(c);
        return v;
    }
    // The token of a ticket of this ring: unique among the PE's rings.
    PGAS_HD std::uint64_t token(std::uint64_t ticket) const {
        return (std::uint64_t(channel) << channel_shift) | ticket;
    }

    // A ticket and the cached credit read alongside it.
    struct reservation {
        std::uint64_t ticket;
        std::uint64_t credit;
    };

    // Reserves one slot per calling thread. On the GPU the converged lanes of
    // a warp make one atomic add (the lowest lane reserves for all, each takes
    // base + its rank among them): a warp of independent puts costs one round
    // trip to the counter, not 32. The cached credit is read while that add
    // is in flight (an acquire load waits for nothing before it), so the
    // credit check costs no round trip of its own (0.20 us on H200,
    // gpu_push_parts). Any value stored in the cache was `completed` at some
    // point, so racing producers can only make it stale (lower), never wrong;
    // the acquire orders our writes to the slot after the proxy's last reads
    // of its previous command, through the release chain proxy -> cache.
    PGAS_HD reservation reserve() const {
        pgas::detail::atomic_ref<std::uint64_t, pgas::detail::thread_scope::system> cached(*credit);
        NV_IF_TARGET(
            NV_IS_DEVICE,
            (const unsigned mask = __activemask(); const unsigned lane = detail::lane_id();
             const unsigned leader = unsigned(__ffs(int(mask))) - 1u;
             const unsigned rank = unsigned(__popc(mask & ((1u << lane) - 1u))); unsigned long long base = 0;
             if (lane == leader) {
                 pgas::detail::atomic_ref<std::uint64_t, pgas::detail::thread_scope::device> counter(*tail);
                 base = counter.fetch_add(std::uint64_t(__popc(mask)), pgas::detail::memory_order_relaxed);
             } const std::uint64_t seen = cached.load(pgas::detail::memory_order_acquire);
             base = __shfl_sync(mask, base, int(leader)); return reservation{std::uint64_t(base) + rank, seen};),
            (pgas::detail::atomic_ref<std::uint64_t, pgas::detail::thread_scope::system> counter(*tail);
             const std::uint64_t ticket = counter.fetch_add(1, pgas::detail::memory_order_relaxed);
             return reservation{ticket, cached.load(pgas::detail::memory_order_acquire)};))
    }

    // The slot of a reserved ticket, once the ring has a credit for it: a
    // full ring makes the producer wait here (never overwrite, never drop).
    // It waits only for the proxy to complete earlier commands, which depends
    // on no other producer but those of earlier tickets (published without
    // waiting on anyone), so a full ring cannot deadlock. From a GPU,
    // `completed` is a read across PCIe, needed only when the cached credit
    // says the ring may be full.
    PGAS_HD command& acquire_slot(reservation r, const char* call) const {
        if (r.ticket >= r.credit + capacity) {
            pgas::detail::atomic_ref<std::uint64_t, pgas::detail::thread_scope::system> cached(*credit);
            spin(call, "a free ring slot (ring full)", r.ticket, [&] {
                const std::uint64_t completed = detail::load_acquire(&control->completed);
                cached.store(completed, pgas::detail::memory_order_release);  // passes the proxy's release on
                return r.ticket < completed + capacity;
            });
        }
        return slots[r.ticket & (capacity - 1)];
    }

    // Hands the filled slot to the proxy.
    PGAS_HD void publish(command& slot, std::uint64_t ticket) const { detail::store_release(&slot.seq, ticket + 1); }

    // Reserve + credit + fill + publish; returns the ticket. The command is
    // built in registers and written with 16-byte stores (7 PCIe writes from
    // a GPU instead of one per field), then published.
    template <class Fill>
    PGAS_HD std::uint64_t push(const char* call, Fill&& fill) const {
        const reservation r = reserve();
        command local{};
        fill(local);
        command& slot = acquire_slot(r, call);
        write_body(slot, local);
        publish(slot, r.ticket);
        return r.ticket;
    }

    // Waits until every command up to and including ticket has completed.
    PGAS_HD void wait_completed(std::uint64_t ticket, const char* call) const {
        spin(call, "completion", ticket, [&] { return detail::load_acquire(&control->completed) > ticket; });
    }

    // Waits until every command reserved so far (by any producer of this
    // ring) has completed: quiet. A reserved ticket is always published
    // without waiting on anything but earlier tickets, so this ends.
    // The counter's read and the first read of `completed` are in flight
    // together (a relaxed load, then an acquire one, which later reads wait
    // for but earlier ones do not): from a GPU the counter then costs no
    // device-memory round trip of its own (0.20 us on H200, gpu_push_parts).
    PGAS_HD void wait_reserved(const char* call) const {
        pgas::detail::atomic_ref<std::uint64_t, pgas::detail::thread_scope::system> counter(*tail);
        const std::uint64_t reserved = counter.load(pgas::detail::memory_order_relaxed);
        const std::uint64_t completed = detail::load_acquire(&control->completed);
        if (completed >= reserved) return;
        wait_completed(reserved - 1, call);
    }

    // Claims a free reply entry for a command that will have a reply. The
    // search starts at an entry that is the caller's own in practice (its
    // hardware thread slot on a GPU: no two resident threads share one, and
    // the pool has one entry per resident thread; a hash of the thread on the
    // host), so the first claim nearly always succeeds.
    PGAS_HD std::uint32_t claim_reply(const char* call) const {
        std::uint32_t index = reply_hint() % reply_count;
        spin(call, "a free reply entry", 0, [&] {
            for (std::uint32_t tries = 0; tries < 32; ++tries, index = (index + 1) % reply_count) {
                pgas::detail::atomic_ref<std::uint32_t, pgas::detail::thread_scope::system> word(
                    reply_claims[index / 32]);
                const std::uint32_t bit = 1u << (index % 32);
                if ((word.fetch_or(bit, pgas::detail::memory_order_acquire) & bit) == 0) return true;
            }
            return false;
        });
        return index;
    }

    // Waits for the reply of ticket in the claimed entry, copies `bytes` of
    // it out and frees the entry.
    PGAS_HD void take_reply(std::uint64_t ticket, std::uint32_t entry, void* out, std::size_t bytes,
                            const char* call) const {
        reply_entry& reply = replies[entry];
        spin(call, "the reply", ticket, [&] { return detail::load_acquire(&reply.tag) == token(ticket) + 1; });
        std::uint64_t words[inline_bytes / 8];  // word loads: one PCIe read per 8 bytes, not per byte
        const auto* from = reinterpret_cast<const std::uint64_t*>(reply.payload);
        for (std::size_t i = 0; i < (bytes + 7) / 8; ++i) words[i] = from[i];
        std::memcpy(out, words, bytes);
        pgas::detail::atomic_ref<std::uint32_t, pgas::detail::thread_scope::system> word(reply_claims[entry / 32]);
        word.fetch_and(~(1u << (entry % 32)), pgas::detail::memory_order_release);
    }

    // Every wait on the proxy is detail::poll_until with the ring's back-off
    // (below), and the proxy's own state checked beside the peer-failure flag:
    // a failed or stopped proxy ends the wait with its message, and a proxy
    // that makes no progress times out naming the ticket.
    template <class Ready>
    PGAS_HD void spin(const char* call, const char* what, std::uint64_t ticket, Ready&& ready) const {
        pgas::detail::poll_until(
            runtime, pe, call, ready, [&](std::uint64_t waited_ms) { fail_timeout(call, what, ticket, waited_ms); },
            pgas::detail::no_hook{}, [](unsigned polls) { back_off(polls); },
            [&] {
                const std::uint32_t status = detail::load_acquire(&control->status);
                if (status != status_running) fail_stopped(call, status);
            });
    }

private:
    // Where claim_reply starts looking: on a GPU the caller's hardware thread
    // slot (SM, warp slot, lane), unique among resident threads; on the host
    // the thread's handle, spread by a multiplicative hash.
    PGAS_HD static std::uint32_t reply_hint() {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (unsigned sm, warp; asm volatile("mov.u32 %0, %%smid;"
                                                      : "=r"(sm));
                      asm volatile("mov.u32 %0, %%warpid;"
                                   : "=r"(warp));
                      return (sm * 64u + warp) * 32u + detail::lane_id();),
                     (return std::uint32_t((std::uint64_t(pthread_self()) * 0x9E3779B97F4A7C15ull) >> 32);))
    }

    // One step of back-off in spin. On the GPU it sleeps: lanes of one warp
    // that took different paths poll as separate groups, and a sleeping group
    // lets the scheduler run the others. (A ring whose credits waited for
    // producers to acknowledge replies hung here on 2xH200 even so: lanes
    // waiting for credit starved the lane whose acknowledgement they needed.
    // Replies now go to reply entries, so no wait depends on another
    // producer.) A poll already costs a PCIe round trip (~1.3 us measured on
    // H200), so a sleep of at most 256 ns adds little to the wake-up.
    PGAS_HD static void back_off(unsigned polls) {
        NV_IF_TARGET(NV_IS_DEVICE, (const unsigned shift = polls < 4u ? polls : 4u; __nanosleep(16u << shift);),
                     ((void)polls; pgas::detail::relax();))
    }

    // Everything from `op` on (seq is published last; the proxy no longer reads a completed slot).
    PGAS_HD static void write_body(command& slot, const command& local) {
        constexpr std::size_t first = offsetof(command, op);
        static_assert(first % 16 == 0 && sizeof(command) % 16 == 0);
        NV_IF_TARGET(NV_IS_DEVICE,
                     (auto* dst = reinterpret_cast<uint4*>(reinterpret_cast<char*>(&slot) + first);
                      const auto* src = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(&local) + first);
                      for (std::size_t i = 0; i < (sizeof(command) - first) / 16; ++i) dst[i] = src[i];),
                     (std::memcpy(reinterpret_cast<char*>(&slot) + first, reinterpret_cast<const char*>(&local) + first,
                                  sizeof(command) - first);))
        // The window's name sits before `op` (the header's one free word): written only by commands that name
        // one, so a heap command costs no extra store across PCIe.
        if (local.flags & flag_window) slot.window = local.window;
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
    PGAS_HD void fail_timeout(const char* call, const char* what, std::uint64_t ticket, std::uint64_t waited_ms) const {
        const auto completed = (unsigned long long)detail::load_acquire(&control->completed);
        const auto beat = (unsigned)detail::load_acquire(&control->heartbeat);
        // The oldest command not completed yet is still in its slot: name it.
        const command& oldest = slots[completed & (capacity - 1)];
        const bool stuck = detail::load_acquire(&oldest.seq) == completed + 1;
        const char* op = stuck ? to_string(oldest.op) : "none published";
        const int to = stuck ? oldest.pe : -1;
        const auto bytes = (unsigned long long)(stuck ? oldest.bytes : 0);
        const auto offset = (unsigned long long)(stuck ? oldest.remote : 0);
        PGAS_WAIT_TIMED_OUT(call, pe, waited_ms,
                            "%s of proxy command %llu (proxy completed %llu, heartbeat %u; oldest outstanding: %s of "
                            "%llu bytes to PE %d at heap offset %llu; is the proxy thread alive, the peer reachable?)",
                            what, (unsigned long long)ticket, completed, beat, op, bytes, to, offset);
    }
};

}  // namespace proxy
PGAS_NAMESPACE_END
