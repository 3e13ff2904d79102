// The hardware side of ibgda_domain: queue pairs on an mlx5 NIC through rdma-core, connected through the world's
// bootstrap and mapped into the GPU, GPU memory registered as dma-bufs, and the CPU doorbell where the GPU cannot
// ring the NIC's.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/ibgda/emulated_nic.hpp>
#include <pgas/host/ibgda/options.hpp>
#include <pgas/host/ibgda/verbs.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/host/ibgda/queue_pairs.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The layer of ibgda_domain that drives a hardware NIC; without rdma-core's headers it holds only the state that
// ~ibgda_domain releases (nothing to release then).
class ibgda_hardware_queue_pairs : public ibgda_queue_pairs {
protected:
    using ibgda_queue_pairs::ibgda_queue_pairs;
    ~ibgda_hardware_queue_pairs() = default;

    // The CPU doorbell stops, then the GPU's mappings go (~ibgda_domain, before the registrations and memory).
    void stop_cpu_doorbell_and_unmap() {
        stop_cpu_doorbell_ = true;
        if (cpu_doorbell_.joinable()) cpu_doorbell_.join();
        for (void* p : gpu_registrations_) cudaHostUnregister(p);
    }

#if PGAS_HAVE_RDMA_CORE
    // The mlx5 NIC through rdma-core (verbs.hpp). Never run here: there is no
    // RDMA device on the machines this was written on (docs/ibgda.md).
    void build_hardware(world& w) {
        const int n = w.n_pes();
        n_pes_ = n;
        runtime_ = options_.runtime ? *options_.runtime : w.runtime();
        std::vector<detail::ibgda_verbs_address> mine;
        std::vector<std::uint32_t> my_qpns;
        std::vector<std::vector<detail::ibgda_verbs::queue>> queues;
        for (int l = 0; l < w.n_local_pes(); ++l) {
            local_pe pe;
            pe.pe = w.local_pe(l);
            pe.heap = w.heap_memory().local_base(l);
            auto& verbs =
                *verbs_.emplace_back(std::make_unique<detail::ibgda_verbs>(pe.pe, detail::ibgda_pick_device(pe.pe)));
            const dmabuf heap_buf = w.heap_memory().host_accessible() ? dmabuf{} : dmabuf_of(pe.heap, w.heap_bytes());
            ibv_mr* heap_mr = verbs.register_memory(pe.heap, w.heap_bytes(), heap_buf.fd, heap_buf.offset);
            if (heap_buf.fd >= 0) ::close(heap_buf.fd);  // the registration holds the dma-buf
            pe.qps = allocate<detail::ibgda_qp>(std::size_t(n) * std::size_t(channels_));
            pe.regions = allocate<detail::ibgda_region>(std::size_t(2 + options_.max_registered_buffers));
            pe.regions[0] = {reinterpret_cast<std::uint64_t>(pe.heap), w.heap_bytes(), heap_mr->lkey};
            pe.n_regions = 1;
            auto address = verbs.address();
            address.rkey = heap_mr->rkey;
            address.heap = reinterpret_cast<std::uint64_t>(pe.heap);
            address.heap_bytes = w.heap_bytes();
            mine.push_back(address);
            auto& made = queues.emplace_back();
            for (int c = 0; c < channels_; ++c)
                for (int to = 0; to < n; ++to) {
                    const auto q = verbs.create_queue(options_.send_queue_blocks);
                    made.push_back(q);
                    auto* qp = new (&pe.qps[c * n + to]) detail::ibgda_qp();
                    qp->blocks = q.dv_qp.sq.wqe_cnt;
                    if (qp->blocks > ibgda_traits::max_send_queue_blocks || (qp->blocks & (qp->blocks - 1)) != 0)
                        detail::throw_error(
                            errc::transport_unavailable, pe.pe, "ibgda_domain",
                            "send queue of " + std::to_string(qp->blocks) + " blocks is not a power of two <= 32768");
                    qp->qpn = q.qp->qp_num;
                    qp->send_queue = static_cast<std::uint32_t*>(q.dv_qp.sq.buf);
                    qp->doorbell_record = reinterpret_cast<std::uint32_t*>(q.dv_qp.dbrec);
                    qp->doorbell = static_cast<std::uint64_t*>(q.dv_qp.bf.reg);
                    qp->doorbell_is_mmio = 1;
                    qp->cqe = static_cast<std::uint64_t*>(q.dv_cq.buf);
                    qp->cq_entries = q.dv_cq.cqe_cnt;
                    qp->cq_doorbell_record = reinterpret_cast<std::uint32_t*>(q.dv_cq.dbrec);
                    qp->wqe_end = allocate<std::uint64_t>(qp->blocks);
                    qp->held = allocate<std::uint32_t>(qp->blocks);
                    const std::size_t scratch_bytes = std::size_t(qp->blocks) * ibgda_traits::scratch_bytes_per_block;
                    qp->scratch = allocate<std::byte>(scratch_bytes);
                    qp->scratch_lkey = verbs.register_memory(qp->scratch, scratch_bytes)->lkey;
                    qp->pe = to;
                    my_qpns.push_back(qp->qpn);
                }
            pes_.push_back(pe);
        }
        // Connect: every PE's address, and every PE's QP number towards every PE.
        const std::size_t ranks = std::size_t(w.channel().size());
        std::vector<detail::ibgda_verbs_address> addresses(mine.size() * ranks);
        w.channel().allgather(mine.data(), addresses.data(), mine.size() * sizeof(mine[0]));
        std::vector<std::uint32_t> qpns(my_qpns.size() * ranks);
        w.channel().allgather(my_qpns.data(), qpns.data(), my_qpns.size() * sizeof(std::uint32_t));
        // Participants drive equal numbers of PEs in world-PE order (init_local, one PE per process). PE `to`'s
        // numbers start at to * channels * n, channel by channel: its QP back to us on channel c is at
        // to * channels * n + c * n + us.
        const std::size_t per_pe = std::size_t(channels_) * std::size_t(n);
        for (std::size_t l = 0; l < pes_.size(); ++l) {
            auto& pe = pes_[l];
            for (int c = 0; c < channels_; ++c)
                for (int to = 0; to < n; ++to) {
                    const auto& remote = addresses[std::size_t(to)];
                    auto& qp = pe.qps[c * n + to];
                    qp.remote_heap = remote.heap;
                    qp.rkey = remote.rkey;
                    verbs_[l]->connect(
                        queues[l][std::size_t(c * n + to)].qp,
                        qpns[std::size_t(to) * per_pe + std::size_t(c) * std::size_t(n) + std::size_t(pe.pe)], remote);
                }
            if (options_.map_for_gpu) map_for_gpu(pe);
        }
    }

    // A dma-buf of GPU memory for ibv_reg_dmabuf_mr: the fd of the host pages spanning [address, address + bytes)
    // (the driver exports page-aligned ranges only) and the address's offset into it; fd -1 when the driver cannot
    // (then the registration falls back to nvidia-peermem). The driver function is looked up through the runtime,
    // so programs that never take this path need no libcuda at load time.
    struct dmabuf {
        int fd = -1;
        std::uint64_t offset = 0;
    };
    static dmabuf dmabuf_of(const void* address, std::uint64_t bytes) {
        using get_handle = CUresult (*)(void*, CUdeviceptr, std::size_t, CUmemRangeHandleType, unsigned long long);
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess || fn == nullptr)
            return {};
        const auto page = std::uint64_t(::sysconf(_SC_PAGESIZE));
        const auto at = reinterpret_cast<std::uint64_t>(address);
        const std::uint64_t first = at / page * page, end = (at + bytes + page - 1) / page * page;
        int fd = -1;
        if (reinterpret_cast<get_handle>(fn)(&fd, CUdeviceptr(first), std::size_t(end - first),
                                             CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) != CUDA_SUCCESS) {
            (void)cudaGetLastError();
            return {};
        }
        return {fd, at - first};
    }

    // Maps what the producers touch into the GPU; pointers stay valid on the
    // host (UVA), so the same QP state serves both. The UAR page is I/O memory.
    void map_for_gpu(local_pe& pe) {
        auto map = [&](void* address, std::size_t bytes, unsigned flags) -> bool {
            auto page = reinterpret_cast<std::uintptr_t>(address) & ~std::uintptr_t(4095);
            const std::size_t span = (reinterpret_cast<std::uintptr_t>(address) + bytes - page + 4095) / 4096 * 4096;
            const cudaError_t e = cudaHostRegister(reinterpret_cast<void*>(page), span, flags);
            if (e == cudaErrorHostMemoryAlreadyRegistered) {
                cudaGetLastError();
                return true;
            }
            if (e != cudaSuccess) {
                cudaGetLastError();
                return false;
            }
            gpu_registrations_.push_back(reinterpret_cast<void*>(page));
            return true;
        };
        const unsigned plain = cudaHostRegisterMapped | cudaHostRegisterPortable;
        for (int i = 0; i < n_pes_ * channels_; ++i) {
            auto& qp = pe.qps[i];
            if (!map(qp.send_queue, std::size_t(qp.blocks) * 64, plain) ||
                !map(qp.cqe, std::size_t(qp.cq_entries) * 64, plain) || !map(qp.doorbell_record, 8, plain) ||
                !map(qp.cq_doorbell_record, 8, plain))
                detail::throw_error(errc::cuda, pe.pe, "ibgda_domain", "cudaHostRegister of the mlx5 queues failed");
            if (map(qp.doorbell, 8, plain | cudaHostRegisterIoMemory)) {
                // Where the GPU does not share host addresses for I/O memory,
                // the doorbell pointer becomes the GPU's (host threads then must
                // not produce on this domain).
                void* device = nullptr;
                if (cudaHostGetDevicePointer(&device, qp.doorbell, 0) == cudaSuccess && device != nullptr) {
                    if (device != static_cast<void*>(qp.doorbell)) host_may_produce_ = false;
                    qp.doorbell = static_cast<std::uint64_t*>(device);
                }
                cudaGetLastError();
            } else {
                if (!cpu_doorbell_.joinable())
                    std::fprintf(stderr,
                                 "pgas ibgda: PE %d: the GPU cannot map the UAR doorbell "
                                 "(cudaHostRegisterIoMemory refused); a CPU thread rings it for the GPU\n",
                                 pe.pe);
                auto* shadow = allocate<std::uint64_t>(8);
                doorbell_relays_.push_back({shadow, qp.doorbell, 0});
                qp.doorbell = shadow;
                qp.doorbell_is_mmio = 0;
            }
        }
        if (!doorbell_relays_.empty() && !cpu_doorbell_.joinable())
            cpu_doorbell_ = std::thread([this] { relay_doorbells(); });
    }

    // The CPU doorbell: copies each new value the producers wrote to a shadow
    // word into the UAR register (one 8-byte MMIO store).
    void relay_doorbells() {
        while (!stop_cpu_doorbell_) {
            for (auto& r : doorbell_relays_) {
                const std::uint64_t v = std::atomic_ref<std::uint64_t>(*r.shadow).load(std::memory_order_acquire);
                if (v != r.last) {
                    r.last = v;
                    *reinterpret_cast<volatile std::uint64_t*>(r.uar) = v;
                }
            }
            std::this_thread::yield();
        }
    }
#endif

    struct doorbell_relay {
        std::uint64_t* shadow;
        std::uint64_t* uar;
        std::uint64_t last;
    };
    std::vector<doorbell_relay> doorbell_relays_;
    std::vector<void*> gpu_registrations_;
    std::atomic<bool> stop_cpu_doorbell_{false};
    std::thread cpu_doorbell_;
    bool host_may_produce_ = true;  // false where a doorbell pointer is the GPU's only (map_for_gpu)
};

}  // namespace detail
PGAS_NAMESPACE_END
