// The IBGDA completion path: collapsed-CQ polling with 16-bit counter wrap-around, waits, error CQEs -> diagnostics.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/transport/ibgda/cqe.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Who is waiting, and the world's timeout and peer-failure flag that every
// IBGDA wait checks (through detail::poll_until, like every other wait).
struct ibgda_waiter {
    int my_pe = 0;
    runtime_state runtime;
};

PGAS_HD inline std::uint64_t ibgda_load(const ibgda_counter& c) {
    return detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(const_cast<std::uint64_t&>(c.value))
        .load(detail::memory_order_acquire);
}
PGAS_HD inline void ibgda_store(ibgda_counter& c, std::uint64_t v) {
    detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(c.value).store(v, detail::memory_order_release);
}

// "pgas: <call> on PE <me>: ibgda work request to PE <pe> failed: <op> (WQE <n>,
// QP 0x<qpn>) completed with syndrome 0x<s> (<name>), vendor syndrome 0x<v>".
PGAS_HD inline void report_ibgda_error(const char* call, int my_pe, const ibgda_qp& qp, ibgda_error e) {
    NV_IF_TARGET(NV_IS_HOST,
                 (char text[256]; std::snprintf(
                      text, sizeof text,
                      "ibgda work request to PE %d failed: %s (WQE %u, QP 0x%x) completed with syndrome 0x%02x "
                      "(%s), vendor syndrome 0x%02x",
                      qp.pe, mlx5::opcode_name(e.wqe_opcode), unsigned(e.wqe_counter), unsigned(qp.qpn),
                      unsigned(e.syndrome), mlx5::syndrome_name(e.syndrome), unsigned(e.vendor_syndrome));
                  throw_error(errc::transport_unavailable, my_pe, call, text);),
                 (printf("pgas: %s on PE %d: ibgda work request to PE %d failed: %s (WQE %u, QP 0x%x) completed with "
                         "syndrome 0x%02x (%s), vendor syndrome 0x%02x\n",
                         call, my_pe, qp.pe, mlx5::opcode_name(e.wqe_opcode), unsigned(e.wqe_counter), unsigned(qp.qpn),
                         unsigned(e.syndrome), mlx5::syndrome_name(e.syndrome), unsigned(e.vendor_syndrome));
                  __trap();))
}

namespace ibgda_cq {
// Accounts one CQE (its tail already read): latches and reports an error, or
// advances `completed` to the end of the WQE it names. The 16-bit WQE counter
// is resolved against the oldest uncompleted block; a CQE behind it (already
// accounted for) is recognised because the ring holds at most 2^15 blocks.
// Returns false when the caller must report the latched error.
PGAS_HD inline bool account(ibgda_qp& qp, const std::uint64_t* cqe, mlx5::cqe_tail tail, std::uint8_t syndrome,
                            std::uint8_t vendor_syndrome) {
    if (tail.is_error()) {
        ibgda_error e;
        e.syndrome = syndrome;
        e.vendor_syndrome = vendor_syndrome;
        e.wqe_opcode = tail.wqe_opcode();
        e.wqe_counter = tail.wqe_counter();
        std::uint64_t expected = 0;
        detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(qp.error.value)
            .compare_exchange_strong(expected, e.pack(), detail::memory_order_acq_rel);
        return false;
    }
    (void)cqe;
    const std::uint64_t done = ibgda_load(qp.completed);
    const std::uint16_t ahead = std::uint16_t(tail.wqe_counter() - std::uint16_t(done));
    if (ahead >= qp.blocks) return true;  // a CQE already accounted for
    const std::uint64_t start = done + ahead;
    const std::uint64_t end =
        detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(qp.wqe_end[start & (qp.blocks - 1)])
            .load(detail::memory_order_relaxed);
    // The block may already hold a newer WQE if other pollers moved on and a
    // producer reused it: then its end is a ring ahead, and this CQE is stale.
    if (end <= start || end - start > mlx5::max_wqe_building_blocks) return true;
    detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(qp.completed.value)
        .fetch_max(end, detail::memory_order_acq_rel);
    return true;
}
}  // namespace ibgda_cq

// Reads the QP's CQ and advances `completed` to the end of the newest
// completed WQE. Any thread may call it at any time. A collapsed CQ is one
// CQE that every completion rewrites: read it, fetch-max. A ring CQ is
// consumed in order, one thread at a time (the others return at once: the one
// polling advances `completed` for all), CQE by CQE while the owner bit says
// the NIC wrote it in this pass, then the consumer index is published. An
// error CQE is latched in qp.error and reported to this and every later caller.
template <class Access>
PGAS_HD void ibgda_poll(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, const char* call) {
    if (const std::uint64_t latched = ibgda_load(qp.error))
        report_ibgda_error(call, w.my_pe, qp, ibgda_error::unpack(latched));
    auto error_bytes = [&](const std::uint64_t* cqe, std::uint8_t& syndrome, std::uint8_t& vendor) {
        syndrome = access.read_cqe_byte(cqe, mlx5::cqe_field::syndrome);
        vendor = access.read_cqe_byte(cqe, mlx5::cqe_field::vendor_syndrome);
    };
    if (qp.cq_entries == 1) {
        const mlx5::cqe_tail tail{access.read_cqe_tail(qp.cqe)};
        if (tail.opcode() == mlx5::cqe_opcode::invalid) return;
        std::uint8_t syndrome = 0, vendor = 0;
        if (tail.is_error()) error_bytes(qp.cqe, syndrome, vendor);
        if (!ibgda_cq::account(qp, qp.cqe, tail, syndrome, vendor))
            report_ibgda_error(call, w.my_pe, qp, ibgda_error::unpack(ibgda_load(qp.error)));
        return;
    }
    detail::atomic_ref<std::uint64_t, detail::thread_scope::system> poller(qp.cq_poller.value);
    std::uint64_t idle = 0;
    if (!poller.compare_exchange_strong(idle, 1, detail::memory_order_acquire)) return;
    bool failed = false;
    std::uint64_t consumed = qp.cq_consumed.value;
    const std::uint64_t first = consumed;
    for (;;) {
        const std::uint64_t* cqe = qp.cqe + (consumed & (qp.cq_entries - 1)) * 8u;
        const mlx5::cqe_tail tail{access.read_cqe_tail(cqe)};
        const bool pass_parity = ((consumed / qp.cq_entries) & 1u) != 0;
        if (tail.opcode() == mlx5::cqe_opcode::invalid || tail.owner() != pass_parity) break;
        std::uint8_t syndrome = 0, vendor = 0;
        if (tail.is_error()) error_bytes(cqe, syndrome, vendor);
        ++consumed;
        if (!ibgda_cq::account(qp, cqe, tail, syndrome, vendor)) {
            failed = true;
            break;
        }
    }
    if (consumed != first) {
        ibgda_store(qp.cq_consumed, consumed);
        access.write_cq_doorbell_record(qp.cq_doorbell_record, mlx5::be32(std::uint32_t(consumed & 0xffffffu)));
    }
    poller.store(0, detail::memory_order_release);
    if (failed) report_ibgda_error(call, w.my_pe, qp, ibgda_error::unpack(ibgda_load(qp.error)));
}

// The common wait: detail::poll_until with the CQ polled before every retry
// of ready(); a timeout names what it waited for and the QP's counters.
template <class Access, class Ready>
PGAS_HD void ibgda_wait(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, const char* call, const char* what,
                        Ready&& ready) {
    poll_until(
        w.runtime, w.my_pe, call, ready,
        [&](std::uint64_t waited_ms) {
            PGAS_WAIT_TIMED_OUT(
                call, w.my_pe, waited_ms,
                "%s on the ibgda QP to PE %d (WQE blocks reserved %llu, published %llu, completed %llu)", what, qp.pe,
                (unsigned long long)ibgda_load(qp.reserved), (unsigned long long)ibgda_load(qp.ready),
                (unsigned long long)ibgda_load(qp.completed));
        },
        [&] { ibgda_poll(access, w, qp, call); });
}

// Waits until every WQE of the QP below `end` has completed.
template <class Access>
PGAS_HD void ibgda_wait_completed(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, std::uint64_t end,
                                  const char* call) {
    ibgda_wait(access, w, qp, call, "a completion from the NIC", [&] { return ibgda_load(qp.completed) >= end; });
}

}  // namespace detail
PGAS_NAMESPACE_END
