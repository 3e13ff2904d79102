// Registered windows on IBGDA: each local PE's buffer registered with its NIC (dma-buf or ibv_reg_mr on hardware,
// a key of the emulated NIC's own), and every PE's address and key written into the window's table rows.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/ibgda/emulated_nic.hpp>
#include <pgas/host/ibgda/options.hpp>
#include <pgas/host/ibgda/verbs.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/host/ibgda/hardware.hpp>
#include <pgas/host/ibgda/queue_pairs.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The window layer of ibgda_domain (its window_observer side): registration inside the collective
// register_window, deregistration once the domain has quiesced its QPs and met every PE.
class ibgda_windows : public ibgda_hardware_queue_pairs {
protected:
    using ibgda_hardware_queue_pairs::ibgda_hardware_queue_pairs;
    ~ibgda_windows() = default;

    // What each local PE tells the others about its registration of a window's buffer.
    struct window_card {
        std::uint64_t address = 0;  // the buffer in its NIC's address space (its virtual address)
        std::uint64_t bytes = 0;
        std::int64_t pid = 0;
        std::uint32_t rkey = 0;
        std::int32_t pe = -1;
        std::int32_t gpu = -1;  // the GPU whose memory it is, -1 for host memory
        std::int32_t ok = 0;
    };
    // This domain's registrations of one window: per local PE its key (emulated) or memory region (hardware).
    struct window_registration {
        std::uint64_t table = 0;
        std::vector<window_card> cards;  // every PE's, by world PE (the emulated NIC resolves them all)
#if PGAS_HAVE_RDMA_CORE
        std::vector<ibv_mr*> regions;  // per local PE; null where not registered
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
                reg.regions[std::size_t(local)] =
                    verbs_.at(std::size_t(local))->register_memory(buffer, w.bytes, buf.fd, buf.offset);
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
    void register_window_buffers(const registered_window& w, std::span<detail::window_row> rows) {
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

    // Drops this domain's registrations of window `table` (the caller quiesced its QPs and met every PE).
    void release_window_buffers(std::uint64_t table) {
        auto at = windows_.begin();
        while (at != windows_.end() && at->table != table) ++at;
        if (at == windows_.end()) return;
        deregister(*at);
        windows_.erase(at);
    }

    std::vector<window_registration> windows_;
};

}  // namespace detail
PGAS_NAMESPACE_END
