// Registered windows over libfabric: this PE's buffer of each window registered with the domain, and every peer's
// key and address of it, which the proxy resolves window commands against.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/libfabric/endpoint.hpp>
#include <pgas/host/libfabric/provider.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// What one PE publishes about its buffer of a registered window (libfabric_domain exchanges them).
struct window_card {
    std::uint64_t address;  // the buffer's virtual address (used when the provider wants FI_MR_VIRT_ADDR)
    std::uint64_t key;
    std::uint64_t bytes;
    std::int32_t pe;
    std::int32_t ok;  // 0: this PE could not register its buffer (its own error says why)
};

// Where a transfer lands at its PE: the heap's or a window's key, the address that offset 0 is posted as, the
// bytes the remote range must lie in, and the window (its table offset; proxy::no_window for the heap).
struct target {
    std::uint64_t base, key, limit, window;
};

// The window layer of fabric_backend (proxy::window_backend's registration side). Registration and release run
// on a host thread inside the world's collective calls; the proxy thread looks windows up (find_window).
class fabric_windows : public fabric_endpoint {
public:
    // Registers this PE's buffer of window `window` (table offset; `id` its world serial) with the domain: FI_HMEM
    // with iface CUDA and the buffer's device for GPU memory (the endpoint must have FI_HMEM), plain for host
    // memory. Returns what the peers need (connect_window). Throws pgas::error naming register_window and the PE.
    window_card register_window(std::uint64_t window, std::uint32_t id, void* buffer, std::uint64_t bytes) {
        const bool gpu = is_gpu_memory(buffer);
        if (gpu && !(info_->caps & FI_HMEM))
            fail(errc::transport_unavailable, s_.pe, "register_window",
                 "the buffer (" + std::to_string(bytes) + " bytes) is GPU memory, and libfabric provider " +
                     provider() +
                     " was opened without FI_HMEM, so fi_mr_regattr cannot register it: a window of GPU memory over "
                     "the libfabric proxy needs FI_HMEM (a provider built with CUDA, chosen for a GPU heap); register "
                     "host memory, or use a GPU heap on an FI_HMEM provider");
        const std::uint64_t key = window_key_base + id;
        fid_mr* mr = register_memory(buffer, bytes, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, key, gpu,
                                     "a window's buffer", "register_window");
        window_card card{};
        card.address = reinterpret_cast<std::uint64_t>(buffer);
        card.key = fi_mr_key(mr);
        card.bytes = bytes;
        card.pe = s_.pe;
        card.ok = 1;
        const std::lock_guard<std::mutex> hold(windows_lock_);
        windows_[window].mr = mr;
        return card;
    }

    // Takes every PE's card of window `window` (indexed by world PE): from now on the proxy resolves it. Addresses
    // as the heap's (connect): the buffer's virtual address under FI_MR_VIRT_ADDR, else offsets from 0.
    void connect_window(std::uint64_t window, const std::vector<window_card>& cards) {
        std::vector<remote_buffer> peers(cards.size());
        for (std::size_t pe = 0; pe < cards.size(); ++pe)
            peers[pe] = {(mr_mode_ & FI_MR_VIRT_ADDR) ? cards[pe].address : 0, cards[pe].key, cards[pe].bytes};
        const std::lock_guard<std::mutex> hold(windows_lock_);
        windows_[window].peers = std::move(peers);
    }

    // Deregisters this PE's buffer of window `window` (fi_close) and forgets the peers' keys; the caller made
    // sure no command names it any more (libfabric_domain: its proxies idle, then a barrier).
    void release_window(std::uint64_t window) {
        fid_mr* mr = nullptr;
        {
            const std::lock_guard<std::mutex> hold(windows_lock_);
            auto at = windows_.find(window);
            if (at == windows_.end()) return;
            mr = at->second.mr;
            windows_.erase(at);
        }
        if (mr) fi_close(&mr->fid);
    }

    // Windows registered with this PE's domain and not yet released.
    std::size_t live_windows() const {
        const std::lock_guard<std::mutex> hold(windows_lock_);
        return windows_.size();
    }

protected:
    using fabric_endpoint::fabric_endpoint;
    ~fabric_windows() = default;

    // PE pe's buffer of window `window` into `t`; false when this domain never connected that window (registered
    // before the domain existed is impossible: the domain registers those at its construction) or released it.
    bool find_window(int pe, std::uint64_t window, target& t) const {
        const std::lock_guard<std::mutex> hold(windows_lock_);
        auto at = windows_.find(window);
        if (at == windows_.end() || std::size_t(pe) >= at->second.peers.size()) return false;
        const remote_buffer& b = at->second.peers[std::size_t(pe)];
        t = {b.base, b.key, b.bytes, window};
        return true;
    }

    // Every window's registration, after the endpoint closed and before the heap's (fabric_backend::close).
    void close_windows() {
        for (auto& [table, entry] : windows_)
            if (entry.mr) fi_close(&entry.mr->fid);
        windows_.clear();
    }

private:
    // A peer's buffer of a window, as connect_window stored it.
    struct remote_buffer {
        std::uint64_t base = 0, key = 0, bytes = 0;
    };
    struct window_entry {
        fid_mr* mr = nullptr;  // this PE's buffer's registration
        std::vector<remote_buffer> peers;
    };
    // Keys this backend asks for (providers without FI_MR_PROV_KEY use them): heap 1, staging 2, windows from here
    // plus their world serial (unique in the process, so in each of its domains).
    static constexpr std::uint64_t window_key_base = 0x10000;

    static bool is_gpu_memory(const void* p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            (void)cudaGetLastError();  // no GPU, or memory CUDA does not know: host memory
            return false;
        }
        return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
    }

    // Registered windows by table offset: written by the host thread that registers or releases one, read by the
    // proxy thread for each window command (an uncontended lock: windows change only in collective calls).
    mutable std::mutex windows_lock_;
    std::unordered_map<std::uint64_t, window_entry> windows_;
};

}  // namespace ofi
PGAS_NAMESPACE_END
