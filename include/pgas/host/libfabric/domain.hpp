// pgas::libfabric_domain: the host-side RAII object that boots the libfabric proxy transport on a world.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/bootstrap/node.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/host/libfabric/backend.hpp>
#include <pgas/host/libfabric/provider.hpp>
#include <pgas/transport/libfabric/libfabric.hpp>
#include <pgas/host/proxy/service.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN

/// Collective: every process (or SPMD thread) of the world constructs it, in
/// the same order as its other collective calls. For each local PE it opens a
/// libfabric RDM endpoint, registers that PE's heap, exchanges addresses and
/// keys through the world's bootstrap, allocates the PE's proxy rings (one per
/// channel, libfabric_options::channels) and starts its proxy thread, which
/// drains them all (proxy::service says why one thread). Destruction is collective too: it waits until this
/// PE's commands completed, meets the others (their operations targeting this
/// PE need its proxy polling until then), then stops the threads.
///
///   pgas::libfabric_domain fabric(w);                 // PGAS_FI_PROVIDER / best found
///   auto ctx = fabric.context();                      // device::context<pgas::libfabric>
///   kernel<<<...>>>(ctx, ...);  // or, host PEs: use ctx on the PE's thread
///
/// Producers are GPU threads when the heap is GPU memory, or when
/// libfabric_options::gpu_producers asks for it over a host-memory heap (a
/// provider without FI_HMEM for CUDA cannot expose a GPU heap; kernels then
/// work on the host heap, which this domain registers with cudaHostRegister
/// for them): rings and staging buffers go to mapped pinned memory of the
/// PE's GPU, and the context carries device addresses and a mapped copy of
/// the world's peer-failure flag.
///
/// Not included by pgas/pgas.hpp (it needs libfabric's headers and library):
/// include <pgas/host/libfabric/domain.hpp> and link pgas::libfabric.
///
/// Registered windows (world::register_window) are reached through the fabric: each PE's buffer is registered
/// with the provider (fi_mr_regattr: FI_HMEM with iface CUDA for GPU memory, which needs a provider opened with
/// FI_HMEM, i.e. a GPU heap on shm or another FI_HMEM provider; plain for host memory) and the keys and addresses
/// exchanged, so the proxy resolves a window command into fi_write/fi_read/fi_atomic on the target's buffer. The
/// domain learns of windows from the world (it is the world's window_observer, attached while it lives) rather
/// than through a register_window of its own: one call registers a window for every transport of the world,
/// one handle names it, and windows registered before the domain was built are registered by its constructor.
///
/// Construction throws pgas::error naming the reason when no provider passes the checks (every candidate and
/// why it failed), and on every PE when one PE's endpoint cannot open (errc::peer_failed).
class libfabric_domain : private window_observer {
public:
    /// The options this builder takes (host/transport_builder.hpp).
    using options = libfabric_options;

    /// Boots the libfabric proxy transport for every local PE of `w` (collective; see the class).
    explicit libfabric_domain(world& w, libfabric_options options = {}) : world_(&w), options_(std::move(options)) {
        const int n_local = w.n_local_pes();
        const bool gpu_heap = !w.heap_memory().host_accessible();
        const bool gpu_producers = gpu_heap || options_.gpu_producers;
        const bool single_host = all_on_one_host();
        // A PE whose selection fails still joins the agreement, so the others
        // fail at once with its reason instead of waiting for the bootstrap's timeout.
        ofi::info_ptr info;
        std::exception_ptr failure;
        try {
            info = ofi::select_provider(options_, single_host, gpu_heap, n_local == 1 ? w.my_pe() : -1);
        } catch (const error&) {
            failure = std::current_exception();
        }
        agree_on_provider(info ? info->fabric_attr->prov_name : "");
        if (failure) std::rethrow_exception(failure);

        std::vector<ofi::address_card> mine;
        try {
            open_endpoints(w, gpu_heap, gpu_producers, info.get(), mine);
        } catch (const error&) {
            // Still join the exchange (a card with pe = -1), so the others fail now, not at a timeout.
            failure = std::current_exception();
            mine.assign(std::size_t(n_local), ofi::address_card{});
            for (auto& card : mine) card.pe = -1;
        }
        // Every participant drives the same number of PEs (as world's collectives assume).
        std::vector<ofi::address_card> gathered(mine.size() * std::size_t(w.channel().size()));
        w.channel().allgather(mine.data(), gathered.data(), mine.size() * sizeof(ofi::address_card));
        std::vector<ofi::address_card> by_pe(std::size_t(w.n_pes()));
        if (failure) std::rethrow_exception(failure);
        for (std::size_t i = 0; i < gathered.size(); ++i)
            if (gathered[i].pe < 0)
                detail::throw_error(
                    errc::peer_failed, n_local == 1 ? w.my_pe() : -1, "libfabric_domain",
                    "participant " + std::to_string(i / mine.size()) + " could not open its libfabric endpoint");
        for (const auto& card : gathered) by_pe.at(std::size_t(card.pe)) = card;
        for (auto& pe : pes_) pe->backend->connect(by_pe);
        for (auto& pe : pes_) {
            typename proxy::service<ofi::fabric_backend>::options o;
            o.cpu = options_.proxy_cpu;
            o.yield_after_idle_ns = options_.proxy_yield_after_idle_ns;
            if (abort_mirror_) {
                o.abort_source = world_->runtime().abort_flag;
                o.abort_mirror = abort_mirror_.get();
            }
            pe->proxy = std::make_unique<proxy::service<ofi::fabric_backend>>(*pe->backend, *pe->ring,
                                                                              pe->backend->card().pe, o);
        }
        w.channel().barrier();  // every proxy polls before anyone's first operation
        if (w.local_pe(0) == 0) announce();
        w.attach_window_observer(*this);  // collective: the windows live now are registered here
    }

    libfabric_domain(const libfabric_domain&) = delete;
    libfabric_domain& operator=(const libfabric_domain&) = delete;

    ~libfabric_domain() {
        world_->detach_window_observer(*this);
        try {
            const std::uint64_t timeout_ns = world_->runtime().timeout_ns;
            const auto limit =
                timeout_ns ? std::chrono::milliseconds(timeout_ns / 1000000) : std::chrono::milliseconds(30000);
            for (auto& pe : pes_) pe->proxy->wait_idle(limit);
            world_->channel().barrier();
        } catch (...) {
            // A peer is gone or a proxy failed: stop anyway, never throw from here.
        }
        for (auto& pe : pes_) pe->proxy->stop();
    }

    /// The context local PE `local`'s kernels (or host thread) receive.
    device::context<libfabric> context(int local = 0) const {
        const auto& pe = *pes_.at(std::size_t(local));
        device::context<libfabric> ctx;
        ctx.runtime = world_->runtime();
        if (abort_mirror_device_) ctx.runtime.abort_flag = abort_mirror_device_;
        std::byte* base = pe.device_base ? pe.device_base : world_->heap_memory().local_base(local);
        ctx.transport =
            libfabric(pe.ring->view(ctx.runtime), base, world_->local_pe(local), world_->n_pes(), world_->heap_bytes());
        return ctx;
    }

    /// Proxy rings per PE, one per channel (libfabric_options::channels).
    int channels() const { return pes_.front()->ring->channels(); }

    /// Whether kernels are this domain's producers (GPU heap, or libfabric_options::gpu_producers).
    bool gpu_producers() const { return pes_.front()->ring->who() == proxy::producers::gpu; }

    /// The provider every PE uses ("shm", "tcp;ofi_rxm", ...), its domain and mr_mode.
    std::string provider() const { return pes_.front()->backend->provider(); }
    /// The provider's domain (e.g. the network interface).
    std::string domain_name() const { return pes_.front()->backend->domain_name(); }
    /// The provider's memory-registration mode bits (FI_MR_*).
    std::uint64_t mr_mode() const { return pes_.front()->backend->mr_mode(); }
    /// "flush" or "complete" (libfabric_options::put_delivery).
    std::string put_delivery() const { return pes_.front()->backend->put_delivery(); }

    /// How the heap meets the fabric: hmem (a GPU heap registered with
    /// FI_HMEM, the provider reaches GPU memory itself), staged (kernels over
    /// a host heap, GPU buffers copied through pinned memory) or host.
    libfabric_heap_path heap_path() const {
        if (pes_.front()->backend->heap_hmem()) return libfabric_heap_path::hmem;
        return gpu_producers() ? libfabric_heap_path::staged : libfabric_heap_path::host;
    }

    /// GPU bytes local PE `local`'s proxy copied through pinned host memory (0: none staged).
    std::uint64_t staged_gpu_bytes(int local = 0) const {
        return pes_.at(std::size_t(local))->backend->staged_gpu_bytes();
    }

    /// One line saying which path the proxy takes with this provider, as
    /// logged at start-up: "pgas: libfabric shm: GPU heap registered with FI_HMEM ...".
    std::string describe_heap_path() const {
        const std::string head = "pgas: libfabric " + provider() + ": ";
        switch (heap_path()) {
            case libfabric_heap_path::hmem:
                return head +
                       "GPU heap registered with FI_HMEM (the proxy's fi_write/fi_read/fi_atomic reach GPU "
                       "memory directly, no staging copies; put delivery " +
                       put_delivery() + ")";
            case libfabric_heap_path::staged:
                return head +
                       "kernels drive the proxy over a host heap; GPU buffers outside it are staged through "
                       "pinned host memory (" +
                       (ofi::provider_has_hmem(provider())
                            ? "this provider has FI_HMEM: a GPU heap would go direct)"
                            : "this provider has no FI_HMEM: a GPU heap cannot be registered with it)");
            case libfabric_heap_path::host:
                break;
        }
        return head + "host heap, host PEs (put delivery " + put_delivery() + ")";
    }

    /// Non-empty once local PE `local`'s proxy failed (the text its producers report).
    std::string failure(int local = 0) const { return pes_.at(std::size_t(local))->proxy->failure(); }

    /// Test hook: local PE `local`'s proxy thread exits as if it had died.
    void simulate_proxy_death(int local = 0) { pes_.at(std::size_t(local))->proxy->simulate_death(); }

    /// Windows registered with local PE `local`'s fabric domain and not yet released (world::live_windows counts
    /// the world's).
    std::size_t live_windows(int local = 0) const { return pes_.at(std::size_t(local))->backend->live_windows(); }

private:
    // window_observer: every local PE registers its buffer, every participant learns every verdict (so a PE that
    // cannot register fails all of them together, as the world's own checks do), then the keys are exchanged. The
    // proxy's backend resolves them on the host, so the table's rows stay as the world wrote them.
    void window_registered(const registered_window& w, std::span<detail::window_row>) override {
        const int n_local = world_->n_local_pes();
        std::vector<ofi::window_card> mine(static_cast<std::size_t>(n_local));
        std::exception_ptr failure;
        for (int local = 0; local < n_local; ++local) {
            mine[std::size_t(local)].pe = world_->local_pe(local);
            if (failure) continue;
            try {
                mine[std::size_t(local)] = pes_[std::size_t(local)]->backend->register_window(
                    w.table, w.id, w.buffers[std::size_t(local)], w.bytes);
            } catch (const error&) {
                failure = std::current_exception();
            }
        }
        std::vector<ofi::window_card> gathered(mine.size() * std::size_t(world_->channel().size()));
        world_->channel().allgather(mine.data(), gathered.data(), mine.size() * sizeof(ofi::window_card));
        auto release_mine = [&] {
            for (auto& pe : pes_) pe->backend->release_window(w.table);
        };
        if (failure) {
            release_mine();
            std::rethrow_exception(failure);
        }
        std::vector<ofi::window_card> by_pe(std::size_t(world_->n_pes()));
        for (const auto& card : gathered) {
            if (!card.ok) {
                release_mine();
                detail::throw_error(errc::transport_unavailable, n_local == 1 ? world_->my_pe() : -1, "register_window",
                                    "PE " + std::to_string(card.pe) +
                                        " could not register its buffer with libfabric "
                                        "provider " +
                                        provider() + " (its own error says why); no window was registered");
            }
            by_pe.at(std::size_t(card.pe)) = card;
        }
        for (auto& pe : pes_) pe->backend->connect_window(w.table, by_pe);
    }

    // window_observer: the buffers are deregistered (fi_close) once this PE's proxies are idle and every PE is
    // (a barrier): no command still names the window anywhere.
    void window_releasing(std::uint64_t table) override {
        const std::uint64_t timeout_ns = world_->runtime().timeout_ns;
        const auto limit =
            timeout_ns ? std::chrono::milliseconds(timeout_ns / 1000000) : std::chrono::milliseconds(30000);
        for (auto& pe : pes_) pe->proxy->wait_idle(limit);
        world_->channel().barrier();
        for (auto& pe : pes_) pe->backend->release_window(table);
    }

    void open_endpoints(world& w, bool gpu_heap, bool gpu_producers, const fi_info* info,
                        std::vector<ofi::address_card>& mine) {
        const int n_local = w.n_local_pes();
        const int channels = options_.channels != 0 ? detail::resolve_channels(options_.channels, 1, "libfabric_domain",
                                                                               n_local == 1 ? w.my_pe() : -1)
                                                    : w.channels();
        int current = -1;
        if (gpu_producers && !gpu_heap) {
            if (cudaGetDevice(&current) != cudaSuccess)
                detail::throw_error(errc::cuda, n_local == 1 ? w.my_pe() : -1, "libfabric_domain",
                                    "gpu_producers needs a CUDA device (none is current)");
            open_abort_mirror(n_local == 1 ? w.my_pe() : -1);
        }
        for (int local = 0; local < n_local; ++local) {
            // A GPU heap: the ring and staging memory belong to that PE's GPU;
            // GPU producers over a host heap: to the GPU current now.
            const int cuda_device =
                gpu_heap ? device_of(w.heap_memory().local_base(local), w.local_pe(local)) : current;
            const detail::device_guard on_device(cuda_device, w.local_pe(local), "libfabric_domain");
            auto pe = std::make_unique<local_pe>();
            if (gpu_producers && !gpu_heap)
                pe->register_heap(w.heap_memory().local_base(local), w.heap_bytes(), w.local_pe(local));
            ofi::fabric_backend::setup s;
            s.pe = w.local_pe(local);
            s.n_pes = w.n_pes();
            s.heap_base = w.heap_memory().local_base(local);
            s.heap_bytes = w.heap_bytes();
            s.heap_is_gpu = gpu_heap;
            s.gpu_producers = gpu_producers;
            s.cuda_device = cuda_device;
            s.force_staging = options_.stage_local_buffers;
            s.max_in_flight = options_.ring_capacity * 2 * std::uint32_t(channels);
            s.bounce_chunk_bytes = options_.bounce_chunk_bytes;
            s.bounce_chunks = options_.bounce_chunks;
            s.flush_delivery = ofi::flush_delivery(options_, info, s.pe);
            s.flush_every = std::max<std::uint32_t>(1, options_.ring_capacity / 4);
            s.coalesce_bytes = options_.coalesce_bytes;
            // Half the world's timeout: the stuck op is named before the waits give up.
            s.stall_report_ns = std::int64_t(w.runtime().timeout_ns / 2);
            pe->backend = std::make_unique<ofi::fabric_backend>(info, s);
            pe->ring = std::make_unique<proxy::ring_memory>(
                options_.ring_capacity, gpu_producers ? proxy::producers::gpu : proxy::producers::host_threads, s.pe,
                channels);
            mine.push_back(pe->backend->card());
            pes_.push_back(std::move(pe));
        }
    }

    struct local_pe {
        std::unique_ptr<ofi::fabric_backend> backend;
        std::unique_ptr<proxy::ring_memory> ring;
        std::unique_ptr<proxy::service<ofi::fabric_backend>> proxy;
        std::byte* host_base = nullptr;    // a host heap this domain registered for kernels
        std::byte* device_base = nullptr;  // its address in kernels (null: the heap's own)
        ~local_pe() {
            proxy.reset();  // the thread stops before the fabric closes
            if (host_base) cudaHostUnregister(host_base);
        }
        // Kernels reach a host heap once it is registered (mapped); one
        // registered by someone else already is used as it is.
        void register_heap(std::byte* base, std::uint64_t bytes, int pe) {
            const cudaError_t rc = cudaHostRegister(base, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
            if (rc == cudaSuccess) {
                host_base = base;
            } else if (rc == cudaErrorHostMemoryAlreadyRegistered) {
                (void)cudaGetLastError();
            } else {
                detail::throw_error(
                    errc::cuda, pe, "libfabric_domain",
                    std::string("cudaHostRegister of the host heap for GPU producers: ") + cudaGetErrorString(rc));
            }
            void* device = nullptr;
            const cudaError_t got = cudaHostGetDevicePointer(&device, base, 0);
            if (got != cudaSuccess)
                detail::throw_error(
                    errc::cuda, pe, "libfabric_domain",
                    std::string("cudaHostGetDevicePointer of the host heap: ") + cudaGetErrorString(got));
            device_base = static_cast<std::byte*>(device);
        }
    };

    // The mapped copy of the world's peer-failure flag that kernels poll
    // (the world's own is pageable memory when the heap is on the host).
    void open_abort_mirror(int pe) {
        int* host = nullptr;
        if (cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable) !=
            cudaSuccess)
            detail::throw_error(errc::cuda, pe, "libfabric_domain", "cudaHostAlloc of the peer-failure flag failed");
        *host = detail::load_abort_flag(world_->runtime().abort_flag);
        abort_mirror_.reset(host);
        void* device = nullptr;
        if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess)
            detail::throw_error(errc::cuda, pe, "libfabric_domain",
                                "cudaHostGetDevicePointer of the peer-failure flag failed");
        abort_mirror_device_ = static_cast<const volatile int*>(device);
    }

    struct pinned_deleter {
        void operator()(int* p) const { cudaFreeHost(p); }
    };

    static int device_of(const void* address, int pe) {
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess || attributes.type != cudaMemoryTypeDevice)
            detail::throw_error(errc::cuda, pe, "libfabric_domain", "cannot find the GPU of this PE's heap");
        return attributes.device;
    }

    // World PE 0's process says once per distinct path (the PEs agreed on the
    // provider, and the heap is one kind for all) whether GPU memory goes over
    // FI_HMEM or is staged; host-only domains stay quiet (CI makes hundreds).
    void announce() const {
        if (heap_path() == libfabric_heap_path::host) return;
        static std::mutex lock;
        static std::set<std::string> said;
        const std::string line = describe_heap_path();
        const std::lock_guard<std::mutex> hold(lock);
        if (said.insert(line).second) std::fprintf(stderr, "%s\n", line.c_str());
    }

    // Collective: whether every participant shares this node (detail::discover_node's meaning of a node).
    bool all_on_one_host() const { return detail::discover_node(world_->channel()).size() == world_->channel().size(); }

    void agree_on_provider(const char* name) const {
        struct provider_name {
            char text[64];
        } mine{};
        std::strncpy(mine.text, name, sizeof(mine.text) - 1);
        auto all = world_->channel().allgather_value(mine);
        if (mine.text[0] == '\0') return;  // this participant's own error follows
        for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i].text[0] == '\0')
                detail::throw_error(errc::peer_failed, world_->n_local_pes() == 1 ? world_->my_pe() : -1,
                                    "libfabric_domain",
                                    "participant " + std::to_string(i) + " found no usable libfabric provider");
        for (std::size_t i = 0; i < all.size(); ++i)
            if (std::strncmp(all[i].text, mine.text, sizeof(mine.text)) != 0)
                detail::throw_error(
                    errc::collective_mismatch, world_->n_local_pes() == 1 ? world_->my_pe() : -1, "libfabric_domain",
                    std::string("this process chose provider '") + mine.text + "' but participant " +
                        std::to_string(i) + " chose '" + all[i].text + "'; set PGAS_FI_PROVIDER the same everywhere");
    }

    world* world_;
    libfabric_options options_;
    std::unique_ptr<int, pinned_deleter> abort_mirror_;  // outlives the proxy threads that write it
    const volatile int* abort_mirror_device_ = nullptr;
    std::vector<std::unique_ptr<local_pe>> pes_;
};

/// The host side of the libfabric transport is libfabric_domain (host/transport_builder.hpp's contract).
template <>
struct transport_builder<libfabric> {
    /// libfabric_domain.
    using type = libfabric_domain;
};
static_assert(detail::diagnose_transport_builder<libfabric>());

PGAS_NAMESPACE_END
