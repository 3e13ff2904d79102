// RMA, atomics and signals of every proxy transport, as commands pushed into the ring (any backend).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/transport/proxy/command.hpp>
#include <pgas/transport/proxy/ring.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace proxy {

// Implements the rma/atomic/signal members of a transport from one question
// its Derived answers: `ring()`, the ring_view of the caller's PE. A group
// call is one command pushed by the group's rank 0; independent threads'
// commands share reservations per warp (ring_view::reserve).
//
// Semantics and completion, as OpenSHMEM/NVSHMEM's proxy path:
//  - put: a payload of up to 48 bytes (inline_bytes) travels inside the command, so put
//    returns as soon as it is pushed; a larger one waits for its completion
//    (the backend reads the source). put_nbi never waits: its source must
//    stay untouched until quiet. GPU sources larger than that must be
//    global memory (the proxy copies them with the copy engine).
//  - get: up to 48 bytes come back in the command's reply; larger ones land
//    in dst directly (global memory on the GPU). get_nbi completes at quiet.
//  - channels: the PE has one ring per channel; ring() is the value's own.
//    Every op pushes into it, and fence/quiet/signal order and complete
//    within it only.
//  - quiet: returns once the proxy completed every command of the channel's
//    ring reserved so far (with remote visibility: the backend completes puts
//    only when delivered). No marker is pushed: an idle ring makes the proxy
//    flush on its own, and a marker cost a second trip over PCIe. quiet_pe
//    is the same wait (the ring retires in order, all peers together);
//    quiet_all waits for every channel's ring; flush_local is quiet (a source
//    beyond the inline payload is read while the put completes: blocking put
//    waits for the same).
//  - fence: a marker after which the proxy starts nothing of the ring until
//    every earlier command of it completed.
//  - signal: starts only after every earlier command completed (release).
//  - put_signal: the signal is posted only once the data is delivered.
//  - atomics: fetching ones wait for their reply (in a reply entry, not the
//    ring slot); the non-fetching forms
//    (atomic_update: add, inc, and, or, xor, set) are pushed and complete at
//    quiet, ordered before later ops on the same word by fence.
template <class Derived>
class proxy_ops {
public:
    static constexpr bool provides_rma = true;
    static constexpr bool provides_atomics = true;
    static constexpr bool provides_signals = true;
    static constexpr bool provides_load_store = false;
    static constexpr bool provides_windows = true;  // pgas::window_transport: the backend resolves them

    template <class G>
    PGAS_HD void put(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        put_to<G>(no_window, dst, src, bytes, pe, "put");
    }
    template <class G>
    PGAS_HD void put_nbi(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        put_nbi_to<G>(no_window, dst, src, bytes, pe, "put_nbi");
    }
    template <class G>
    PGAS_HD void get(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        get_from<G>(dst, no_window, src, bytes, pe, true, "get");
    }
    template <class G>
    PGAS_HD void get_nbi(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        get_from<G>(dst, no_window, src, bytes, pe, false, "get_nbi");
    }

    // Registered windows (pgas::window_transport): the same commands with flag_window, naming the window by its
    // table offset and the target by a byte offset into PE pe's buffer; the proxy's backend resolves both into the
    // buffer's registered address and key at pe (and checks the range there). Semantics, completion and ordering
    // as the heap forms above: a window command is one more command of the ring.
    template <class G>
    PGAS_HD void window_put(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        put_to<G>(table, dst, src, bytes, pe, "put");
    }
    template <class G>
    PGAS_HD void window_put_nbi(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                int pe) const {
        put_nbi_to<G>(table, dst, src, bytes, pe, "put_nbi");
    }
    template <class G>
    PGAS_HD void window_get(void* dst, std::uint64_t table, std::uint64_t src, std::size_t bytes, int pe) const {
        get_from<G>(dst, table, src, bytes, pe, true, "get");
    }
    template <class G>
    PGAS_HD void window_get_nbi(void* dst, std::uint64_t table, std::uint64_t src, std::size_t bytes, int pe) const {
        get_from<G>(dst, table, src, bytes, pe, false, "get_nbi");
    }
    template <class V>
    PGAS_HD V window_atomic(amo op, std::uint64_t table, std::uint64_t offset, V operand, V expected, int pe) const {
        return atomic_at<V>(op, table, offset, operand, expected, pe);
    }
    template <class V>
    PGAS_HD void window_atomic_update(amo op, std::uint64_t table, std::uint64_t offset, V operand, int pe) const {
        push_atomic(op, table, offset, operand, V{}, pe, 0, 0);
    }
    template <class G>
    PGAS_HD void window_put_signal(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                   std::uint64_t sig, std::uint64_t value, signal_op op, int pe) const {
        put_signal_to<G>(table, dst, src, bytes, sig, value, op, pe, true, "put_signal");
    }
    template <class G>
    PGAS_HD void window_put_signal_nbi(std::uint64_t table, std::uint64_t dst, const void* src, std::size_t bytes,
                                       std::uint64_t sig, std::uint64_t value, signal_op op, int pe) const {
        put_signal_to<G>(table, dst, src, bytes, sig, value, op, pe, false, "put_signal_nbi");
    }
    template <class G>
    PGAS_HD void fence() const {
        G::sync();
        if (G::rank() == 0) marker(op_code::fence, "fence");
        G::sync();
    }
    template <class G>
    PGAS_HD void quiet() const {
        G::sync();
        if (G::rank() == 0) ring().wait_reserved("quiet");
        G::sync();
    }
    template <class G>
    PGAS_HD void quiet_pe(int) const {
        quiet<G>();
    }
    template <class G>
    PGAS_HD void quiet_all() const {
        G::sync();
        if (G::rank() == 0)
            for (int c = 0; c < int(ring().channels); ++c) ring().on_channel(c).wait_reserved("quiet_all");
        G::sync();
    }
    template <class G>
    PGAS_HD void flush_local() const {
        G::sync();
        if (G::rank() == 0) ring().wait_reserved("flush_local");
        G::sync();
    }

    // One thread: the remote atomic `op` on a naturally aligned 4/8-byte word,
    // waiting for its old value (set has none: pushed and left to quiet).
    template <class V>
    PGAS_HD V atomic(amo op, std::uint64_t offset, V operand, V expected, int pe) const {
        return atomic_at<V>(op, no_window, offset, operand, expected, pe);
    }
    template <class V>
    PGAS_HD V atomic_add(std::uint64_t offset, V operand, int pe) const {
        return atomic<V>(amo::fetch_add, offset, operand, V{}, pe);
    }
    // An atomic nobody reads the old value of: pushed and left to quiet
    // (atomic_update_transport), like a put_nbi.
    template <class V>
    PGAS_HD void atomic_update(amo op, std::uint64_t offset, V operand, int pe) const {
        push_atomic(op, no_window, offset, operand, V{}, pe, 0, 0);
    }

    PGAS_HD void signal(std::uint64_t offset, std::uint64_t value, signal_op op, int pe) const {
        ring().push("signal", [&](command& c) {
            header(c, op_code::signal, pe, offset, sizeof(std::uint64_t), 0);
            c.sig_op = op;
            c.operand = value;
        });
    }
    template <class G>
    PGAS_HD void put_signal(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                            std::uint64_t value, signal_op op, int pe) const {
        put_signal_to<G>(no_window, dst, src, bytes, sig, value, op, pe, true, "put_signal");
    }
    template <class G>
    PGAS_HD void put_signal_nbi(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                                std::uint64_t value, signal_op op, int pe) const {
        put_signal_to<G>(no_window, dst, src, bytes, sig, value, op, pe, false, "put_signal_nbi");
    }

private:
    // The bodies shared by the heap forms (window = no_window) and the window forms.
    template <class G>
    PGAS_HD void put_to(std::uint64_t window, std::uint64_t dst, const void* src, std::size_t bytes, int pe,
                        const char* call) const {
        G::sync();
        if (G::rank() == 0) {
            const std::uint64_t t = push_put(op_code::put, window, dst, src, bytes, pe, 0, 0, signal_op::set, call);
            if (bytes > inline_bytes) ring().wait_completed(t, call);
        }
        G::sync();
    }
    template <class G>
    PGAS_HD void put_nbi_to(std::uint64_t window, std::uint64_t dst, const void* src, std::size_t bytes, int pe,
                            const char* call) const {
        G::sync();
        if (G::rank() == 0) push_put(op_code::put, window, dst, src, bytes, pe, 0, 0, signal_op::set, call);
        G::sync();
    }
    template <class G>
    PGAS_HD void get_from(void* dst, std::uint64_t window, std::uint64_t src, std::size_t bytes, int pe, bool blocking,
                          const char* call) const {
        G::sync();
        if (G::rank() == 0) get_one(dst, window, src, bytes, pe, blocking, call);
        G::sync();
    }
    template <class G>
    PGAS_HD void put_signal_to(std::uint64_t window, std::uint64_t dst, const void* src, std::size_t bytes,
                               std::uint64_t sig, std::uint64_t value, signal_op op, int pe, bool blocking,
                               const char* call) const {
        G::sync();
        if (G::rank() == 0) {
            const std::uint64_t t = push_put(op_code::put_signal, window, dst, src, bytes, pe, sig, value, op, call);
            if (blocking && bytes > inline_bytes) ring().wait_completed(t, call);
        }
        G::sync();
    }
    template <class V>
    PGAS_HD V atomic_at(amo op, std::uint64_t window, std::uint64_t offset, V operand, V expected, int pe) const {
        if (op == amo::set) {
            push_atomic(op, window, offset, operand, expected, pe, 0, 0);
            return V{};
        }
        const std::uint32_t entry = ring().claim_reply("atomic");
        const std::uint64_t t = push_atomic(op, window, offset, operand, expected, pe, flag_reply, entry);
        V old{};
        ring().take_reply(t, entry, &old, sizeof(V), "atomic");
        return old;
    }

    PGAS_HD const ring_view& ring() const { return static_cast<const Derived&>(*this).ring(); }

    // flag_device_memory when a GPU thread names local memory: the proxy must stage it.
    PGAS_HD static std::uint8_t memory_flag() { NV_IF_TARGET(NV_IS_DEVICE, (return flag_device_memory;), (return 0;)) }

    template <class V>
    PGAS_HD static std::uint64_t bits(V v) {
        std::uint64_t out = 0;
        std::memcpy(&out, &v, sizeof(V));
        return out;
    }

    PGAS_HD static void header(command& c, op_code op, int pe, std::uint64_t remote, std::size_t bytes,
                               std::uint8_t flags, std::uint64_t window = no_window) {
        c.op = op;
        c.flags = window == no_window ? flags : std::uint8_t(flags | flag_window);
        c.window = window;
        c.pe = pe;
        c.remote = remote;
        c.bytes = bytes;
    }

    template <class V>
    PGAS_HD std::uint64_t push_atomic(amo op, std::uint64_t window, std::uint64_t offset, V operand, V expected, int pe,
                                      std::uint8_t flags, std::uint32_t entry) const {
        return ring().push("atomic", [&](command& c) {
            header(c, op_code::atomic, pe, offset, sizeof(V), flags, window);
            c.reply_entry = entry;
            c.amo_op = op;
            c.kind = kind_of<V>();
            c.operand = bits(operand);
            c.compare = bits(expected);
        });
    }

    PGAS_HD std::uint64_t push_put(op_code op, std::uint64_t window, std::uint64_t dst, const void* src,
                                   std::size_t bytes, int pe, std::uint64_t sig, std::uint64_t value, signal_op sop,
                                   const char* call) const {
        return ring().push(call, [&](command& c) {
            const bool small = bytes <= inline_bytes;
            header(c, op, pe, dst, bytes, small ? flag_inline : memory_flag(), window);
            c.local = reinterpret_cast<std::uint64_t>(src);
            c.compare = sig;
            c.operand = value;
            c.sig_op = sop;
            if (small) {
                const auto* from = static_cast<const unsigned char*>(src);
                for (std::size_t i = 0; i < bytes; ++i) c.payload[i] = from[i];
            }
        });
    }

    PGAS_HD void get_one(void* dst, std::uint64_t window, std::uint64_t src, std::size_t bytes, int pe, bool blocking,
                         const char* call) const {
        const bool small = bytes <= inline_bytes;
        const std::uint32_t entry = small ? ring().claim_reply(call) : 0;
        const std::uint64_t t = ring().push(call, [&](command& c) {
            header(c, op_code::get, pe, src, bytes, small ? std::uint8_t(flag_inline | flag_reply) : memory_flag(),
                   window);
            c.reply_entry = entry;
            c.local = reinterpret_cast<std::uint64_t>(dst);
        });
        if (small) {
            ring().take_reply(t, entry, dst, bytes, call);  // small gets are blocking even as _nbi
        } else if (blocking) {
            ring().wait_completed(t, call);
        }
    }

    PGAS_HD std::uint64_t marker(op_code op, const char* call) const {
        return ring().push(call, [&](command& c) { header(c, op, -1, 0, 0, 0); });
    }
};

}  // namespace proxy
PGAS_NAMESPACE_END
