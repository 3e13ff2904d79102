// pgas::ibgda_domain: the host side of IBGDA for a world: queue pairs, registration, connection, NIC or emulator.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/ibgda/emulated_nic.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/transport/ibgda/verbs.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

PGAS_NAMESPACE_BEGIN

struct ibgda_options {
    enum class nic_kind {
        hardware,  // an mlx5 NIC through rdma-core (errc::transport_unavailable where there is none)
        emulated,  // ibgda_emulated_nic: a host thread plays the NIC (tests, CI, the GPU protocol suite)
    };
    nic_kind nic = nic_kind::hardware;
    // Building blocks (64 bytes) per send queue: a power of two in [4, 2^15].
    std::uint32_t send_queue_blocks = 256;
    // nbi puts/gets ring the doorbell once this many blocks are pending (and
    // at quiet/fence or any blocking op); 1 rings on every post.
    std::uint32_t doorbell_batch = 1;
    // CQEs per completion queue: 1 is a collapsed CQ (what DEVX setups use);
    // more is a ring read by owner bit (what rdma-core's verbs CQs are), at
    // least send_queue_blocks so it cannot overrun. Emulated NIC only.
    std::uint32_t cq_entries = 1;
    // Memory for queues, doorbell records, CQEs, counters and scratch: it must
    // be reachable by the producers (host threads, or the GPU: pass
    // cudaHostAlloc'd mapped memory) and by the NIC. Default: zeroed host memory.
    std::function<void*(std::size_t)> allocate;
    std::function<void(void*)> deallocate;
    // How many buffers besides the heap register_buffer may add per PE.
    int max_registered_buffers = 14;
    // Timeout and peer-failure flag of the contexts; empty: the world's. A
    // kernel needs a flag in memory it can read (the world's is host memory).
    std::optional<device::runtime_state> runtime;
};

// Owns IBGDA for the local PEs of a world: per local PE one RC queue pair to
// every PE (itself included), connected through the world's bootstrap (the
// peers' heap addresses, keys and QP numbers are all-gathered), the heap
// registered for remote access, and the NIC that serves them. Build it after
// the world's allocations are usable and destroy it before the world.
//
//   pgas::ibgda_options o; o.nic = pgas::ibgda_options::nic_kind::emulated;
//   pgas::ibgda_domain ib(w, o);
//   w.launch_host([&](const auto& host_ctx) { auto ctx = ib.context(host_ctx.my_pe()); ... });
class ibgda_domain {
public:
    ibgda_domain(world& w, ibgda_options options = {}) : options_(std::move(options)) {
        const int my_first_pe = w.n_local_pes() == 1 ? w.my_pe() : -1;
        const std::uint32_t blocks = options_.send_queue_blocks;
        if (blocks < ibgda_traits::min_send_queue_blocks || blocks > ibgda_traits::max_send_queue_blocks ||
            (blocks & (blocks - 1)) != 0)
            detail::throw_error(errc::invalid_argument, my_first_pe, "ibgda_domain",
                                "send_queue_blocks must be a power of two in [4, 32768], got " + std::to_string(blocks));
        if (options_.doorbell_batch == 0) options_.doorbell_batch = 1;
        const std::uint32_t cqes = options_.cq_entries;
        if (cqes == 0 || (cqes & (cqes - 1)) != 0 || (cqes > 1 && cqes < blocks) || cqes > (1u << 22))
            detail::throw_error(errc::invalid_argument, my_first_pe, "ibgda_domain",
                                "cq_entries must be 1 (collapsed) or a power of two >= send_queue_blocks, got " +
                                    std::to_string(cqes));
        if (!options_.allocate) {
            options_.allocate = [](std::size_t bytes) {
                void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
                if (p) std::memset(p, 0, bytes);
                return p;
            };
            options_.deallocate = [](void* p) { std::free(p); };
        }
        if (options_.nic == ibgda_options::nic_kind::hardware) {
            // Fails here, with the reason, on machines without an RDMA NIC.
            const std::string device = detail::ibgda_pick_device(my_first_pe);
            detail::throw_error(errc::transport_unavailable, my_first_pe, "ibgda_domain",
                                "found RDMA device " + device +
                                    " but the hardware backend (DEVX queue pairs with GPU-mapped doorbells) is not "
                                    "implemented yet; see docs/ibgda.md");
        }
        build_emulated(w);
    }

    ibgda_domain(const ibgda_domain&) = delete;
    ibgda_domain& operator=(const ibgda_domain&) = delete;

    ~ibgda_domain() {
        if (nic_) nic_->stop();
        for (void* p : allocations_) options_.deallocate(p);
    }

    int n_local_pes() const { return int(pes_.size()); }

    // The context of local PE `local` (kernels take it by value).
    device::context<ibgda> context(int local = 0) const { return context_with(ibgda_system_access{}, local); }

    // The same over another access policy (tests record the producer's steps).
    template <class Access>
    device::context<basic_ibgda<Access>> context_with(Access access, int local = 0) const {
        device::context<basic_ibgda<Access>> ctx;
        ctx.transport = basic_ibgda<Access>(params(local), access);
        ctx.runtime = runtime_;
        return ctx;
    }

    // Lets the NIC use [address, address + bytes) of local PE `local` as a put
    // source or get destination (anything else goes inline or through scratch).
    // Not collective; contexts taken afterwards see it.
    void register_buffer(int local, void* address, std::size_t bytes) {
        auto& pe = pes_.at(std::size_t(local));
        if (pe.n_regions >= 2 + options_.max_registered_buffers)
            detail::throw_error(errc::invalid_argument, pe.pe, "ibgda_domain::register_buffer",
                                "more than " + std::to_string(options_.max_registered_buffers) + " buffers registered");
        const std::uint32_t key = 0x5c000000u | std::uint32_t(pe.pe << 8) | std::uint32_t(pe.n_regions);
        pe.regions[pe.n_regions++] = {reinterpret_cast<std::uint64_t>(address), bytes, key};
        nic_->add_local_region({pe.pe, reinterpret_cast<std::uint64_t>(address), bytes, key});
    }

    // The emulated NIC (options.nic == emulated): statistics, error injection.
    ibgda_emulated_nic& emulated_nic() const { return *nic_; }

private:
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

    static std::uint32_t emulated_qpn(int from, int to, int n) { return 0x000100u + std::uint32_t(from * n + to); }
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
        for (const auto& a : by_pe)
            nic_->add_remote_region({a.pe, a.heap, a.heap_bytes, a.rkey});

        for (int l = 0; l < w.n_local_pes(); ++l) {
            local_pe pe;
            pe.pe = w.local_pe(l);
            pe.heap = w.heap_memory().local_base(l);
            pe.qps = allocate<detail::ibgda_qp>(std::size_t(n));
            pe.regions = allocate<detail::ibgda_region>(std::size_t(2 + options_.max_registered_buffers));
            pe.regions[0] = {reinterpret_cast<std::uint64_t>(pe.heap), w.heap_bytes(), emulated_heap_key(pe.pe)};
            pe.n_regions = 1;
            nic_->add_local_region({pe.pe, pe.regions[0].base, pe.regions[0].bytes, pe.regions[0].key});
            for (int to = 0; to < n; ++to) {
                auto* qp = new (&pe.qps[to]) detail::ibgda_qp();
                qp->blocks = blocks;
                qp->qpn = emulated_qpn(pe.pe, to, n);
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
                                        std::uint64_t(blocks) * ibgda_traits::scratch_bytes_per_block, qp->scratch_lkey});
                // The peer end of this connection is `to`'s QP back to us: its
                // number identifies the target, as the RC connection would.
                const std::uint32_t remote_qpn = emulated_qpn(to, pe.pe, n);
                nic_->attach(qp, pe.pe, int((remote_qpn - 0x100u) / std::uint32_t(n)));
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
        p.regions = pe.regions;
        p.n_regions = pe.n_regions;
        p.doorbell_batch = options_.doorbell_batch;
        p.timeout_ns = runtime_.timeout_ns;
        p.abort_flag = runtime_.abort_flag;
        return p;
    }
    ibgda_options options_;
    std::vector<void*> allocations_;
    std::vector<local_pe> pes_;
    std::unique_ptr<ibgda_emulated_nic> nic_;
    device::runtime_state runtime_;
    int n_pes_ = 0;
};

PGAS_NAMESPACE_END
