// pgas::ibgda_domain: the host side of IBGDA for a world (the layers behind it: queue_pairs.hpp, hardware.hpp,
// windows.hpp): options checked, the NIC chosen, contexts handed out, buffers and windows registered.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/env.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/ibgda/emulated_nic.hpp>
#include <pgas/host/ibgda/options.hpp>
#include <pgas/host/ibgda/windows.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/host/ibgda/verbs.hpp>
#include <pgas/core/window.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include <cuda_runtime.h>

PGAS_NAMESPACE_BEGIN

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
class ibgda_domain : private detail::ibgda_windows, private window_observer {
public:
    /// The options this builder takes (host/transport_builder.hpp).
    using options = ibgda_options;

    /// Sets up IBGDA for every local PE of `w` (collective; see the class).
    ibgda_domain(world& w, ibgda_options options = {}) : detail::ibgda_windows(std::move(options)) {
        const int my_first_pe = w.n_local_pes() == 1 ? w.my_pe() : -1;
        const std::uint32_t blocks = options_.send_queue_blocks;
        if (blocks < ibgda_traits::min_send_queue_blocks || blocks > ibgda_traits::max_send_queue_blocks ||
            (blocks & (blocks - 1)) != 0)
            detail::throw_error(
                errc::invalid_argument, my_first_pe, "ibgda_domain",
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
            detail::throw_error(
                errc::invalid_argument, my_first_pe, "ibgda_domain",
                "cq_entries must be 1 (collapsed) or a power of two >= send_queue_blocks, got " + std::to_string(cqes));
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
        stop_cpu_doorbell_and_unmap();
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
    // window_observer: the windows layer registers every local PE's buffer and fills the table's rows.
    void window_registered(const registered_window& w, std::span<detail::window_row> rows) override {
        register_window_buffers(w, rows);
    }

    // window_observer: quiesce (complete every QP of the local PEs, where host threads may produce; the program
    // completed its kernels, as release_window requires), wait for every PE, then deregister: no WQE still names
    // the window's keys anywhere. A QP already in error reports to its own callers, not here.
    void window_releasing(std::uint64_t table) override {
        if (host_may_produce_)
            for (int local = 0; local < n_local_pes(); ++local) {
                try {
                    context(local).transport.template quiet_all<thread>();
                } catch (const error&) {
                }
            }
        world_->channel().barrier();
        release_window_buffers(table);
    }
};

/// The host side of the ibgda transport is ibgda_domain (host/transport_builder.hpp's contract).
template <>
struct transport_builder<ibgda> {
    /// ibgda_domain.
    using type = ibgda_domain;
};
static_assert(detail::diagnose_transport_builder<ibgda>());

PGAS_NAMESPACE_END
