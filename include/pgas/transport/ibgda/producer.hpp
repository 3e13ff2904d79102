// The IBGDA producer: warp-aggregated send-queue reservation, WQE writes, in-order publication and doorbells.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/detail/atomic_ref.hpp>
#include <pgas/transport/ibgda/completion.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <cstdint>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// How one WQE is to be posted.
struct ibgda_post_options {
    std::uint8_t flags = mlx5::fm_ce_se::none;  // fence / CQ update requested by the op
    bool ring_now = true;                       // false: the doorbell may wait for doorbell_batch blocks (nbi ops)
    bool hold_scratch = false;                  // the op reads its block's scratch after completion (fetches)
    std::uint32_t doorbell_batch = 1;
};

// A reservation of building blocks [start, start + blocks) in one QP's send
// queue, and the aggregate the calling warp made of it: lanes that posted to
// the same QP at the same time share one atomic and one doorbell, and the
// group's leader publishes [group_start, group_end).
struct ibgda_reservation {
    std::uint64_t start = 0;
    std::uint64_t group_start = 0;
    std::uint64_t group_end = 0;
    unsigned peers = 1;  // lanes of the group (bit mask), 1 on the host
    bool leader = true;
};

// Called by each posting thread on its own (any number of threads of a warp,
// diverged or not). On the GPU the lanes that target the same QP with the same
// WQE size are aggregated (__match_any_sync): one fetch-add reserves for all.
PGAS_HD inline ibgda_reservation ibgda_reserve(ibgda_qp& qp, unsigned blocks) {
    ibgda_reservation r;
    NV_IF_TARGET(
        NV_IS_DEVICE,
        (const unsigned active = __activemask();
         const unsigned peers = __match_any_sync(active, reinterpret_cast<unsigned long long>(&qp) | blocks);
         unsigned lane_id; asm("mov.u32 %0, %%laneid;"
                               : "=r"(lane_id));
         const int leader = __ffs(peers) - 1; const unsigned rank = __popc(peers & ((1u << lane_id) - 1u));
         const unsigned total = __popc(peers) * blocks; unsigned long long base = 0;
         if (int(lane_id) == leader) base =
             detail::atomic_ref<std::uint64_t, detail::thread_scope::device>(qp.reserved.value)
                 .fetch_add(total, detail::memory_order_relaxed);
         base = __shfl_sync(peers, base, leader); r.start = base + std::uint64_t(rank) * blocks; r.group_start = base;
         r.group_end = base + total; r.peers = peers; r.leader = int(lane_id) == leader;),
        (r.start = detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(qp.reserved.value)
                       .fetch_add(blocks, detail::memory_order_relaxed);
         r.group_start = r.start; r.group_end = r.start + blocks;))
    return r;
}

// The WQE covering the last block of each half of the ring asks for a CQE, so
// that completions (and with them free slots) arrive at least twice per ring
// even when every op is unsignalled.
PGAS_HD constexpr bool ibgda_needs_signal(std::uint64_t start, unsigned blocks, std::uint32_t ring_blocks) {
    const std::uint64_t half = ring_blocks / 2;
    return start / half != (start + blocks) / half;
}

// Waits until the blocks are free: the WQEs that used them a ring ago have
// completed, and no fetch still reads the scratch of the first block.
template <class Access>
PGAS_HD void ibgda_wait_slot(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, std::uint64_t start,
                             unsigned blocks, const char* call) {
    const std::uint64_t end = start + blocks;
    const std::uint64_t need = end > qp.blocks ? end - qp.blocks : 0;
    auto& held = qp.held[start & (qp.blocks - 1)];
    ibgda_wait(access, w, qp, call, "a free send queue slot (send queue full)", [&] {
        return ibgda_load(qp.completed) >= need &&
               detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(held).load(
                   detail::memory_order_acquire) == 0;
    });
}

// Publishes blocks [start, end) in order: waits until every earlier block is
// published, then, when asked or when doorbell_batch blocks are pending,
// updates the doorbell record and rings with the last WQE's first 8 bytes.
template <class Access>
PGAS_HD void ibgda_publish(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, std::uint64_t start,
                           std::uint64_t end, std::uint64_t doorbell_value, bool ring_now, std::uint32_t doorbell_batch,
                           const char* call) {
    ibgda_wait(access, w, qp, call, "earlier WQEs to be published", [&] { return ibgda_load(qp.ready) == start; });
    const std::uint64_t rung = ibgda_load(qp.rung);
    if (ring_now || end - rung >= doorbell_batch) {
        access.fence_before_doorbell_record();
        access.write_doorbell_record(qp.doorbell_record + 1, mlx5::be32(std::uint32_t(end & 0xffffu)));
        access.fence_before_doorbell();
        access.ring_doorbell(qp.doorbell, doorbell_value, qp.doorbell_is_mmio != 0);
        ibgda_store(qp.rung, end);
    }
    ibgda_store(qp.ready, end);
}

// Posts one WQE of `blocks` building blocks: build(header, start) returns it.
// Returns the end counter of the WQE (wait for it with ibgda_wait_completed
// when options.flags asked for a CQE, or a later signalled WQE's end).
template <class Access, class Build>
PGAS_HD std::uint64_t ibgda_post(const Access& access, const ibgda_waiter& w, ibgda_qp& qp, unsigned blocks,
                                 ibgda_post_options options, const char* call, Build&& build) {
    const ibgda_reservation r = ibgda_reserve(qp, blocks);
    std::uint8_t flags = options.flags;
    if (ibgda_needs_signal(r.start, blocks, qp.blocks)) flags |= mlx5::fm_ce_se::cq_update;
    bool ring_now = options.ring_now || (flags & mlx5::fm_ce_se::cq_update) != 0;
    ibgda_wait_slot(access, w, qp, r.start, blocks, call);
    const std::uint32_t mask = qp.blocks - 1;
    if (options.hold_scratch)
        detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(qp.held[r.start & mask])
            .store(1, detail::memory_order_relaxed);
    const mlx5::wqe wqe = build(mlx5::wqe_header{std::uint16_t(r.start), qp.qpn, flags}, r.start);
    detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(qp.wqe_end[r.start & mask])
        .store(r.start + blocks, detail::memory_order_relaxed);
    for (unsigned b = 0; b < blocks; ++b)
        access.write_block(qp.send_queue + ((r.start + b) & mask) * 16u, wqe.word + 16u * b);
    std::uint64_t doorbell_value = wqe.doorbell_value();
    NV_IF_TARGET(NV_IS_DEVICE,
                 (__syncwarp(r.peers); ring_now = __any_sync(r.peers, ring_now); const int last = 31 - __clz(r.peers);
                  doorbell_value = __shfl_sync(r.peers, doorbell_value, last);),
                 ())
    if (r.leader)
        ibgda_publish(access, w, qp, r.group_start, r.group_end, doorbell_value, ring_now, options.doorbell_batch,
                      call);
    NV_IF_TARGET(NV_IS_DEVICE, (__syncwarp(r.peers);), ())
    return r.start + blocks;
}

// Releases the scratch of a fetch's block after its value was read.
PGAS_HD inline void ibgda_release_scratch(ibgda_qp& qp, std::uint64_t start) {
    detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(qp.held[start & (qp.blocks - 1)])
        .store(0, detail::memory_order_release);
}

}  // namespace detail
PGAS_NAMESPACE_END
