// The queue pairs of an ibgda_domain's local PEs: their memory, the state the domain's layers share, and their
// wiring to the emulated NIC (hardware.hpp wires them to an mlx5 NIC).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/ibgda/emulated_nic.hpp>
#include <pgas/host/ibgda/options.hpp>
#include <pgas/host/ibgda/verbs.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The bottom layer of ibgda_domain. It releases nothing by itself: ~ibgda_domain stops the NIC and frees the
// queue memory in the one order that is safe (the NIC and its registrations before the memory they use).
class ibgda_queue_pairs {
protected:
    explicit ibgda_queue_pairs(ibgda_options options) : options_(std::move(options)) {}
    ~ibgda_queue_pairs() = default;

    struct local_pe {
        int pe = 0;
        std::byte* heap = nullptr;
        detail::ibgda_qp* qps = nullptr;
        detail::ibgda_region* regions = nullptr;
        int n_regions = 0;
    };

    // What each PE tells the others: where its heap is, under which key, and
    // the number of its QP to each PE.
    struct announcement {
        std::uint64_t heap = 0;
        std::uint64_t heap_bytes = 0;
        std::uint32_t rkey = 0;
        std::int32_t pe = -1;
    };

    template <class T>
    T* allocate(std::size_t count) {
        void* p = options_.allocate(sizeof(T) * count);
        if (!p) detail::throw_error(errc::system, -1, "ibgda_domain", "queue memory allocation failed");
        allocations_.push_back(p);
        return static_cast<T*>(p);
    }

    // Channel 0's numbers are those of a domain of one channel; channel c's follow n * n later.
    static std::uint32_t emulated_qpn(int from, int to, int n, int c) {
        return 0x000100u + std::uint32_t((c * n + from) * n + to);
    }
    static std::uint32_t emulated_heap_key(int pe) { return 0x5a000000u | std::uint32_t(pe); }

    void build_emulated(world& w) {
        const int n = w.n_pes();
        n_pes_ = n;
        const std::uint32_t blocks = options_.send_queue_blocks;
        nic_ = std::make_unique<ibgda_emulated_nic>();
        runtime_ = options_.runtime ? *options_.runtime : w.runtime();
        // Announce every local PE; all processes drive the same number of PEs.
        std::vector<announcement> mine;
        for (int l = 0; l < w.n_local_pes(); ++l) {
            announcement a;
            a.pe = w.local_pe(l);
            a.heap = reinterpret_cast<std::uint64_t>(w.heap_memory().local_base(l));
            a.heap_bytes = w.heap_bytes();
            a.rkey = emulated_heap_key(a.pe);
            mine.push_back(a);
        }
        std::vector<announcement> all(mine.size() * std::size_t(w.channel().size()));
        w.channel().allgather(mine.data(), all.data(), mine.size() * sizeof(announcement));
        std::vector<announcement> by_pe(static_cast<std::size_t>(n));
        for (const auto& a : all) by_pe.at(std::size_t(a.pe)) = a;
        for (const auto& a : by_pe) nic_->add_remote_region({a.pe, a.heap, a.heap_bytes, a.rkey});

        for (int l = 0; l < w.n_local_pes(); ++l) {
            local_pe pe;
            pe.pe = w.local_pe(l);
            pe.heap = w.heap_memory().local_base(l);
            pe.qps = allocate<detail::ibgda_qp>(std::size_t(n) * std::size_t(channels_));
            pe.regions = allocate<detail::ibgda_region>(std::size_t(2 + options_.max_registered_buffers));
            pe.regions[0] = {reinterpret_cast<std::uint64_t>(pe.heap), w.heap_bytes(), emulated_heap_key(pe.pe)};
            pe.n_regions = 1;
            nic_->add_local_region({pe.pe, pe.regions[0].base, pe.regions[0].bytes, pe.regions[0].key});
            for (int c = 0; c < channels_; ++c)
                for (int to = 0; to < n; ++to) {
                    auto* qp = new (&pe.qps[c * n + to]) detail::ibgda_qp();
                    qp->blocks = blocks;
                    qp->qpn = emulated_qpn(pe.pe, to, n, c);
                    qp->send_queue = allocate<std::uint32_t>(std::size_t(blocks) * 16);
                    qp->doorbell_record = allocate<std::uint32_t>(16);
                    qp->doorbell = allocate<std::uint64_t>(8);
                    qp->cq_entries = options_.cq_entries;
                    qp->cqe = allocate<std::uint64_t>(std::size_t(8) * qp->cq_entries);
                    for (std::uint32_t e = 0; e < qp->cq_entries; ++e)
                        qp->cqe[8 * e + 7] = mlx5::cqe_tail::make(mlx5::cqe_opcode::invalid, false, 0, 0, 0).raw;
                    qp->cq_doorbell_record = allocate<std::uint32_t>(16);
                    qp->wqe_end = allocate<std::uint64_t>(blocks);
                    qp->held = allocate<std::uint32_t>(blocks);
                    qp->scratch = allocate<std::byte>(std::size_t(blocks) * ibgda_traits::scratch_bytes_per_block);
                    qp->scratch_lkey = 0x5b000000u | (qp->qpn & 0xffffffu);
                    qp->remote_heap = by_pe[std::size_t(to)].heap;
                    qp->rkey = by_pe[std::size_t(to)].rkey;
                    qp->pe = to;
                    nic_->add_local_region({pe.pe, reinterpret_cast<std::uint64_t>(qp->scratch),
                                            std::uint64_t(blocks) * ibgda_traits::scratch_bytes_per_block,
                                            qp->scratch_lkey});
                    // The peer end of this connection is `to`'s QP back to us: its
                    // number identifies the target, as the RC connection would.
                    const std::uint32_t remote_qpn = emulated_qpn(to, pe.pe, n, c);
                    nic_->attach(qp, pe.pe, int((remote_qpn - 0x100u) / std::uint32_t(n) % std::uint32_t(n)), c);
                }
            pes_.push_back(pe);
        }
        nic_->start();
    }

    detail::ibgda_params params(int local) const {
        const auto& pe = pes_.at(std::size_t(local));
        detail::ibgda_params p;
        p.my_pe = pe.pe;
        p.n_pes = n_pes_;
        p.heap_bytes = pe.regions[0].bytes;
        p.heap = pe.heap;
        p.qps = pe.qps;
        p.channel = 0;
        p.channels = channels_;
        p.regions = pe.regions;
        p.n_regions = pe.n_regions;
        p.doorbell_batch = options_.doorbell_batch;
        p.runtime = runtime_;
        return p;
    }

    ibgda_options options_;
    std::vector<void*> allocations_;
    std::vector<local_pe> pes_;
    std::unique_ptr<ibgda_emulated_nic> nic_;
#if PGAS_HAVE_RDMA_CORE
    std::vector<std::unique_ptr<detail::ibgda_verbs>> verbs_;
#endif
    runtime_state runtime_;
    int n_pes_ = 0;
    int channels_ = 1;
    world* world_ = nullptr;  // set once the domain is built (it is then the world's window_observer)
};

}  // namespace detail
PGAS_NAMESPACE_END
