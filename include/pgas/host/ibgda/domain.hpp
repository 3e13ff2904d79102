// pgas::ibgda_domain: the host side of IBGDA for a world: queue pairs, registration, connection, NIC or emulator.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/env.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/ibgda/emulated_nic.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/host/ibgda/verbs.hpp>
#include <pgas/core/window.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include <unistd.h>

PGAS_NAMESPACE_BEGIN

/// How pgas::ibgda_domain sets itself up.
struct ibgda_options {
    /// Which NIC serves the queue pairs.
    enum class nic_kind {
        hardware,  ///< an mlx5 NIC through rdma-core (errc::transport_unavailable where there is none)
        emulated,  ///< ibgda_emulated_nic: a host thread plays the NIC (tests, CI, the GPU protocol suite)
    };
    /// A hardware NIC (default) or the emulated one.
    nic_kind nic = nic_kind::hardware;
    /// RC queue pairs per peer, one per channel (device::context::on_channel), each with its own send queue,
    /// doorbell record, doorbell and CQ; in [1, pgas::max_channels]; 0: the world's (world_options::channels,
    /// PGAS_CHANNELS; default 1).
    int channels = 0;
    /// Building blocks (64 bytes) per send queue: a power of two in [4, 2^15].
    std::uint32_t send_queue_blocks = 256;
    /// nbi puts/gets ring the doorbell once this many blocks are pending (and
    /// at quiet/fence or any blocking op); 1 rings on every post.
    std::uint32_t doorbell_batch = 1;
    /// CQEs per completion queue: 1 is a collapsed CQ (what DEVX setups use);
    /// more is a ring read by owner bit (what rdma-core's verbs CQs are), at
    /// least send_queue_blocks so it cannot overrun. Emulated NIC only.
    std::uint32_t cq_entries = 1;
    /// Memory for queues, doorbell records, CQEs, counters and scratch: it must
    /// be reachable by the producers (host threads, or the GPU: pass
    /// cudaHostAlloc'd mapped memory) and by the NIC. Default: zeroed host memory.
    std::function<void*(std::size_t)> allocate;
    /// Frees what allocate returned (set both or neither).
    std::function<void(void*)> deallocate;
    /// How many buffers besides the heap register_buffer may add per PE.
    int max_registered_buffers = 14;
    /// Hardware: map the send queues, CQs, doorbell records and the UAR
    /// doorbell into the GPU (cudaHostRegister) so kernels can produce. When the
    /// UAR cannot be mapped (cudaHostRegisterIoMemory refused), a CPU thread
    /// rings it for them, and the log says so.
    bool map_for_gpu = true;
    /// Timeout and peer-failure flag of the contexts; empty: the world's. A
    /// kernel needs a flag in memory it can read (the world's is host memory).
    std::optional<runtime_state> runtime;
};

/// Owns IBGDA for the local PEs of a world: per local PE and channel one RC
/// queue pair to every PE (itself included), connected through the world's bootstrap (the
/// peers' heap addresses, keys and QP numbers are all-gathered), the heap
/// registered for remote access, and the NIC that serves them. Build it after
/// the world's allocations are usable and destroy it before the world.
///
///   pgas::ibgda_options o; o.nic = pgas::ibgda_options::nic_kind::emulated;
///   pgas::ibgda_domain ib(w, o);
///   w.launch_host([&](const auto& host_ctx) { auto ctx = ib.context(host_ctx.my_pe()); ... });
///
/// Registered windows (world::register_window) are reached by the GPU's own WQEs: the domain is the world's
/// window_observer (attached while it lives, as libfabric_domain is), so inside the collective register_window each
/// PE's buffer is registered with its NIC — on hardware GPU memory as a dma-buf first
/// (cuMemGetHandleForAddressRange, ibv_reg_dmabuf_mr), else ibv_reg_mr (nvidia-peermem for GPU memory, plain for
/// host memory); on the emulated NIC a key of its own that the NIC resolves — and every PE's address and remote
/// key go into the window's table rows, where a window op finds them with one load from its own heap. When one PE
/// cannot register, every PE throws errc::transport_unavailable together and no window exists. Windows registered
/// before the domain was built are registered by its constructor; release_window completes the domain's QPs
/// (host threads only where they may produce: the emulated NIC, a host-mapped doorbell), waits for every PE, then
/// deregisters.
///
/// Collective: every process (or SPMD thread) of the world constructs it in the same order as its other
/// collective calls; a bad option throws errc::invalid_argument, no RDMA NIC (hardware) errc::transport_unavailable.
class ibgda_domain : private window_observer {
public:
    /// The options this builder takes (host/transport_builder.hpp).
    using options = ibgda_options;

    /// Sets up IBGDA for every local PE of `w` (collective; see the class).
    ibgda_domain(world& w, ibgda_options options = {}) : options_(std::move(options)) {
        const int my_first_pe = w.n_local_pes() == 1 ? w.my_pe() : -1;
        const std::uint32_t blocks = options_.send_queue_blocks;
        if (blocks < ibgda_traits::min_send_queue_blocks || blocks > ibgda_traits::max_send_queue_blocks ||
            (blocks & (blocks - 1)) != 0)
            detail::throw_error(errc::invalid_argument, my_first_pe, "ibgda_domain",
                                "send_queue_blocks must be a power of two in [4, 32768], got " + std::to_string(blocks));
        if (options_.doorbell_batch == 0) options_.doorbell_batch = 1;
        channels_ = options_.channels != 0 ? detail::resolve_channels(options_.channels, 1, "ibgda_domain", my_first_pe)
                                           : w.channels();
        // Every participant must make the same QPs: a peer's QP of channel c is where ours of channel c connects.
        for (const int other : w.channel().allgather_value(channels_))
            if (other != channels_)
                detail::throw_error(errc::collective_mismatch, my_first_pe, "ibgda_domain",
                                    "channels = " + std::to_string(channels_) + " here but " + std::to_string(other) +
                                        " on another participant; set PGAS_CHANNELS the same everywhere");
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
            (void)detail::ibgda_pick_device(my_first_pe);
#if PGAS_HAVE_RDMA_CORE
            build_hardware(w);
#endif
        } else {
            build_emulated(w);
        }
        world_ = &w;
        w.attach_window_observer(*this);  // collective: the windows live now are registered here
    }

    ibgda_domain(const ibgda_domain&) = delete;
    ibgda_domain& operator=(const ibgda_domain&) = delete;

    ~ibgda_domain() {
        if (world_) world_->detach_window_observer(*this);
        if (nic_) nic_->stop();
        stop_cpu_doorbell_ = true;
        if (cpu_doorbell_.joinable()) cpu_doorbell_.join();
        for (void* p : gpu_registrations_) cudaHostUnregister(p);
#if PGAS_HAVE_RDMA_CORE
        verbs_.clear();  // QPs, CQs and registrations before the memory they use
#endif
        for (void* p : allocations_) options_.deallocate(p);
    }

    /// Local PEs of the world this domain serves.
    int n_local_pes() const { return int(pes_.size()); }
    /// RC queue pairs per peer, one per channel (ibgda_options::channels).
    int channels() const { return channels_; }

    /// The context of local PE `local` (kernels take it by value).
    device::context<ibgda> context(int local = 0) const { return context_with(ibgda_system_access{}, local); }

    /// The same over another access policy (tests record the producer's steps).
    template <class Access>
    device::context<basic_ibgda<Access>> context_with(Access access, int local = 0) const {
        device::context<basic_ibgda<Access>> ctx;
        ctx.transport = basic_ibgda<Access>(params(local), access);
        ctx.runtime = runtime_;
        return ctx;
    }

    /// Lets the NIC use [address, address + bytes) of local PE `local` as a put
    /// source or get destination (anything else goes inline or through scratch).
    /// Not collective; contexts taken afterwards see it.
    void register_buffer(int local, void* address, std::size_t bytes) {
        auto& pe = pes_.at(std::size_t(local));
        if (pe.n_regions >= 2 + options_.max_registered_buffers)
            detail::throw_error(errc::invalid_argument, pe.pe, "ibgda_domain::register_buffer",
                                "more than " + std::to_string(options_.max_registered_buffers) + " buffers registered");
        const std::uint32_t key = 0x5c000000u | std::uint32_t(pe.pe << 8) | std::uint32_t(pe.n_regions);
#if PGAS_HAVE_RDMA_CORE
        if (!nic_) {  // hardware: a real registration
            ibv_mr* mr = verbs_.at(std::size_t(local))->register_memory(address, bytes);
            pe.regions[pe.n_regions++] = {reinterpret_cast<std::uint64_t>(address), bytes, mr->lkey};
            return;
        }
#endif
        pe.regions[pe.n_regions++] = {reinterpret_cast<std::uint64_t>(address), bytes, key};
        nic_->add_local_region({pe.pe, reinterpret_cast<std::uint64_t>(address), bytes, key});
    }

    /// Windows (world::register_window) registered with this domain's NICs and not yet released (world::live_windows
    /// counts the world's).
    std::size_t live_windows() const { return windows_.size(); }

    /// The emulated NIC (options.nic == emulated): statistics, error injection.
    /// Throws errc::invalid_argument on a hardware domain.
    ibgda_emulated_nic& emulated_nic() const {
        if (!nic_)
            detail::throw_error(errc::invalid_argument, -1, "ibgda_domain::emulated_nic",
                                "this domain drives a hardware NIC, not the emulated one");
        return *nic_;
    }

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
        for (const auto& a : by_pe)
            nic_->add_remote_region({a.pe, a.heap, a.heap_bytes, a.rkey});

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
                                        std::uint64_t(blocks) * ibgda_traits::scratch_bytes_per_block, qp->scratch_lkey});
                // The peer end of this connection is `to`'s QP back to us: its
                // number identifies the target, as the RC connection would.
                const std::uint32_t remote_qpn = emulated_qpn(to, pe.pe, n, c);
                nic_->attach(qp, pe.pe, int((remote_qpn - 0x100u) / std::uint32_t(n) % std::uint32_t(n)), c);
            }
            pes_.push_back(pe);
        }
        nic_->start();
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
            auto& verbs = *verbs_.emplace_back(std::make_unique<detail::ibgda_verbs>(pe.pe, detail::ibgda_pick_device(pe.pe)));
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
                    detail::throw_error(errc::transport_unavailable, pe.pe, "ibgda_domain",
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
                verbs_[l]->connect(queues[l][std::size_t(c * n + to)].qp,
                                   qpns[std::size_t(to) * per_pe + std::size_t(c) * std::size_t(n) + std::size_t(pe.pe)],
                                   remote);
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
            if (!map(qp.send_queue, std::size_t(qp.blocks) * 64, plain) || !map(qp.cqe, std::size_t(qp.cq_entries) * 64, plain) ||
                !map(qp.doorbell_record, 8, plain) || !map(qp.cq_doorbell_record, 8, plain))
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
                    std::fprintf(stderr, "pgas ibgda: PE %d: the GPU cannot map the UAR doorbell "
                                         "(cudaHostRegisterIoMemory refused); a CPU thread rings it for the GPU\n", pe.pe);
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

    // --- registered windows (window_observer) ---------------------------------------------------------------------

    // What each local PE tells the others about its registration of a window's buffer.
    struct window_card {
        std::uint64_t address = 0;  // the buffer in its NIC's address space (its virtual address)
        std::uint64_t bytes = 0;
        std::int64_t pid = 0;
        std::uint32_t rkey = 0;
        std::int32_t pe = -1;
        std::int32_t gpu = -1;      // the GPU whose memory it is, -1 for host memory
        std::int32_t ok = 0;
    };
    // This domain's registrations of one window: per local PE its key (emulated) or memory region (hardware).
    struct window_registration {
        std::uint64_t table = 0;
        std::vector<window_card> cards;  // every PE's, by world PE (the emulated NIC resolves them all)
#if PGAS_HAVE_RDMA_CORE
        std::vector<ibv_mr*> regions;    // per local PE; null where not registered
#endif
    };

    // The emulated NIC's key of window `id` (unique per PE among live windows: ids grow; the heap's keys are 0x5a...).
    static std::uint32_t emulated_window_key(std::uint32_t id) { return 0x5d000000u | (id & 0xffffffu); }

    static int gpu_of(const void* p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            (void)cudaGetLastError();  // no GPU, or memory CUDA does not know: host memory
            return -1;
        }
        return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
    }

    // Registers local PE `local`'s buffer with its NIC; fills the card's key. Throws pgas::error naming
    // register_window and the PE.
    void register_buffer_with_nic(int local, const registered_window& w, window_registration& reg, window_card& card) {
        void* buffer = w.buffers[std::size_t(local)];
        card.gpu = gpu_of(buffer);
#if PGAS_HAVE_RDMA_CORE
        if (!nic_) {  // hardware: dma-buf first for GPU memory, then ibv_reg_mr (peermem, or host memory)
            const dmabuf buf = card.gpu >= 0 ? dmabuf_of(buffer, w.bytes) : dmabuf{};
            try {
                reg.regions[std::size_t(local)] = verbs_.at(std::size_t(local))->register_memory(buffer, w.bytes, buf.fd,
                                                                                                  buf.offset);
            } catch (const error& e) {
                if (buf.fd >= 0) ::close(buf.fd);
                detail::throw_error(errc::transport_unavailable, card.pe, "register_window",
                                    std::string("the NIC cannot register the buffer (") +
                                        (card.gpu >= 0 ? "GPU memory: dma-buf, then nvidia-peermem" : "host memory") +
                                        "): " + e.what());
            }
            if (buf.fd >= 0) ::close(buf.fd);
            card.rkey = reg.regions[std::size_t(local)]->rkey;
            return;
        }
#else
        (void)reg;
#endif
        if (nic_->take_refusal(card.pe))
            detail::throw_error(errc::transport_unavailable, card.pe, "register_window",
                                "the emulated NIC refused to register the buffer (" + std::to_string(w.bytes) +
                                    " bytes; ibgda_emulated_nic::refuse_next_registration)");
        card.rkey = emulated_window_key(w.id);
    }

    // Drops this domain's registrations of `reg` (its local PEs', and on the emulated NIC every PE's key).
    void deregister(window_registration& reg) {
        if (nic_) {
            for (const auto& card : reg.cards)
                if (card.ok) nic_->remove_remote_region(card.pe, card.rkey);
        }
#if PGAS_HAVE_RDMA_CORE
        for (std::size_t local = 0; local < reg.regions.size(); ++local)
            if (reg.regions[local]) verbs_.at(local)->deregister(reg.regions[local]);
#endif
    }

    // window_observer: every local PE registers its buffer, every participant learns every verdict (one that
    // cannot register fails all of them together, as the world's own checks do), then every PE's address and key
    // go into the table's rows (and, emulated, into the NIC's remote regions).
    void window_registered(const registered_window& w, std::span<detail::window_row> rows) override {
        const int n_local = int(pes_.size());
        const int me = n_local == 1 ? pes_.front().pe : -1;
        window_registration reg;
        reg.table = w.table;
#if PGAS_HAVE_RDMA_CORE
        reg.regions.assign(std::size_t(n_local), nullptr);
#endif
        std::vector<window_card> mine(static_cast<std::size_t>(n_local));
        std::exception_ptr failure;
        for (int local = 0; local < n_local; ++local) {
            auto& card = mine[std::size_t(local)];
            card.pe = pes_[std::size_t(local)].pe;
            card.pid = std::int64_t(::getpid());
            card.address = reinterpret_cast<std::uint64_t>(w.buffers[std::size_t(local)]);
            card.bytes = w.bytes;
            if (failure) continue;
            try {
                register_buffer_with_nic(local, w, reg, card);
                card.ok = 1;
            } catch (const error&) {
                failure = std::current_exception();
            }
        }
        std::vector<window_card> gathered(mine.size() * std::size_t(world_->channel().size()));
        world_->channel().allgather(mine.data(), gathered.data(), mine.size() * sizeof(window_card));
        auto give_up = [&] {
#if PGAS_HAVE_RDMA_CORE
            for (std::size_t local = 0; local < reg.regions.size(); ++local)
                if (reg.regions[local]) verbs_.at(local)->deregister(reg.regions[local]);
#endif
        };
        if (failure) {
            give_up();
            std::rethrow_exception(failure);
        }
        reg.cards.assign(std::size_t(n_pes_), window_card{});
        for (const auto& card : gathered) {
            if (!card.ok) {
                give_up();
                detail::throw_error(errc::transport_unavailable, me, "register_window",
                                    "PE " + std::to_string(card.pe) +
                                        " could not register its buffer with its NIC (its own error says why); no "
                                        "window was registered");
            }
            if (nic_ && card.pid != mine.front().pid) {
                give_up();
                detail::throw_error(errc::transport_unavailable, me, "register_window",
                                    "PE " + std::to_string(card.pe) +
                                        " is another process: the emulated NIC is a thread of each process and "
                                        "reaches only the buffers of PEs that are threads of one process; no window "
                                        "was registered");
            }
            reg.cards.at(std::size_t(card.pe)) = card;
        }
        for (const auto& card : reg.cards) {
            rows[std::size_t(card.pe)].remote = card.address;
            rows[std::size_t(card.pe)].rkey = card.rkey;
            if (nic_) nic_->add_remote_region({card.pe, card.address, card.bytes, card.rkey, card.gpu});
        }
        windows_.push_back(std::move(reg));
    }

    // window_observer: quiesce (complete every QP of the local PEs, where host threads may produce; the program
    // completed its kernels, as release_window requires), wait for every PE, then deregister: no WQE still names
    // the window's keys anywhere. A QP already in error reports to its own callers, not here.
    void window_releasing(std::uint64_t table) override {
        auto at = windows_.begin();
        while (at != windows_.end() && at->table != table) ++at;
        if (host_may_produce_)
            for (int local = 0; local < n_local_pes(); ++local) {
                try {
                    context(local).transport.template quiet_all<thread>();
                } catch (const error&) {
                }
            }
        world_->channel().barrier();
        if (at == windows_.end()) return;
        deregister(*at);
        windows_.erase(at);
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
    struct doorbell_relay {
        std::uint64_t* shadow;
        std::uint64_t* uar;
        std::uint64_t last;
    };
    std::vector<doorbell_relay> doorbell_relays_;
    std::vector<void*> gpu_registrations_;
    std::atomic<bool> stop_cpu_doorbell_{false};
    std::thread cpu_doorbell_;
    runtime_state runtime_;
    int n_pes_ = 0;
    int channels_ = 1;
    world* world_ = nullptr;
    std::vector<window_registration> windows_;
    bool host_may_produce_ = true;  // false where a doorbell pointer is the GPU's only (map_for_gpu)
};

/// The host side of the ibgda transport is ibgda_domain (host/transport_builder.hpp's contract).
template <>
struct transport_builder<ibgda> {
    /// ibgda_domain.
    using type = ibgda_domain;
};
static_assert(detail::diagnose_transport_builder<ibgda>());

PGAS_NAMESPACE_END
