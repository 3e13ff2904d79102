// The symmetric heap on GPU memory: CUDA VMM chunks of every node-local PE mapped into one VA range.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/cuda/driver.hpp>
#include <pgas/host/bootstrap/fd_exchange.hpp>
#include <pgas/host/heap/memory.hpp>
#include <pgas/host/heap/registration_area.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

using heap_factory = std::function<std::unique_ptr<heap_memory>(const heap_request&)>;

// A PE's GPU as the world compares them: its ordinal in the PE's process (for reachability checks) and its UUID,
// which names one GPU whatever ordinal CUDA_VISIBLE_DEVICES gives it in each process.
struct gpu_identity {
    int ordinal = -1;
    std::array<char, 16> uuid{};

    static gpu_identity of(int device, int pe, const char* call) {
        gpu_identity g;
        g.ordinal = device;
        cudaDeviceProp prop{};
        check_cuda(cudaGetDeviceProperties(&prop, device), pe, call, "cudaGetDeviceProperties");
        std::memcpy(g.uuid.data(), prop.uuid.bytes, g.uuid.size());
        return g;
    }
};

// The most PEs that share one GPU among `gpus` (one entry per PE).
inline int most_pes_on_one_gpu(const std::vector<gpu_identity>& gpus) {
    int most = gpus.empty() ? 1 : 0;
    for (const gpu_identity& g : gpus) {
        const auto same =
            std::count_if(gpus.begin(), gpus.end(), [&](const gpu_identity& o) { return o.uuid == g.uuid; });
        most = std::max(most, int(same));
    }
    return most;
}

// One VA range of n_pes * stride bytes; PE p's heap is mapped at
// base + p * stride, on every GPU of the process, so the NVLink transport
// turns (offset, pe) into an address with one multiply-add. Each PE's stride
// holds its heap (heap_span bytes, mapped at init) and then a registration
// area of address space only, where world::register_symmetric maps users'
// cuMemCreate buffers at offsets every PE shares (host/heap/registration.hpp). The physical
// chunk of each PE is cuMemCreate'd on its GPU and made accessible to the
// process's GPUs (that is where NVLink/P2P reachability is checked).
// Two ways to get there: one process drives every GPU (init_local(devices):
// all chunks are its own), or one process per GPU (world::init_gpu: each
// exports its chunk as a POSIX fd, the node's processes swap them over a Unix
// socket and map each other's chunks at the same offsets).
class gpu_heap_memory final : public heap_memory {
public:
    // Default heap per PE when neither world_options nor PGAS_HEAP_SIZE says:
    // large enough for the 256 MiB messages of the benchmarks, far below an H200's 141 GB.
    static constexpr std::uint64_t default_bytes = std::uint64_t{1} << 30;
    // Address space (no memory) after each PE's heap for registered buffers: 16 GiB per PE.
    static constexpr std::uint64_t registration_space = std::uint64_t{16} << 30;

    gpu_heap_memory(const heap_request& request, std::vector<int> devices)
        : devices_(std::move(devices)), local_pes_(request.local_pes), n_pes_(request.n_pes) {
        check_cu(driver().cuInit(0), -1, "world init", "cuInit");
        if (request.channel->size() > 1) {
            join_processes(request);
            return;
        }
        for (std::size_t i = 0; i < devices_.size(); ++i) {
            int count = 0;
            check_cuda(cudaGetDeviceCount(&count), int(i), "world::init_local", "cudaGetDeviceCount");
            if (devices_[i] < 0 || devices_[i] >= count)
                throw_error(errc::invalid_argument, int(i), "world::init_local",
                            "CUDA device " + std::to_string(devices_[i]) + " does not exist (" + std::to_string(count) +
                                " visible)");
            check_cuda(cudaSetDevice(devices_[i]), int(i), "world::init_local", "cudaSetDevice");
            check_cuda(cudaFree(nullptr), int(i), "world::init_local", "creating the primary context");
        }
        check_reachability();
        std::vector<gpu_identity> gpus;
        for (int device : devices_) gpus.push_back(gpu_identity::of(device, -1, "world::init_local"));
        pes_per_gpu_ = most_pes_on_one_gpu(gpus);
        const std::uint64_t alignment = granularity();
        lay_out(request.heap_bytes, alignment);
        check_cu(driver().cuMemAddressReserve(&base_, stride_ * std::uint64_t(n_pes_), alignment, 0, 0), -1,
                 "world::init_local", "cuMemAddressReserve");
        for (int pe = 0; pe < n_pes_; ++pe) map_chunk(pe);
        grant_access();
        for (int pe = 0; pe < n_pes_; ++pe) zero(pe, 0, heap_span_);
        // The peer-failure flag kernels poll: pinned, mapped host memory (UVA
        // makes the host address valid on every GPU).
        check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&abort_flag_), sizeof(int),
                                 cudaHostAllocMapped | cudaHostAllocPortable),
                   -1, "world::init_local", "cudaHostAlloc of the abort flag");
        *abort_flag_ = 0;
        bases_.resize(std::size_t(n_pes_));
        for (int pe = 0; pe < n_pes_; ++pe) bases_[std::size_t(pe)] = pe_base(pe);
    }

    gpu_heap_memory(const gpu_heap_memory&) = delete;
    gpu_heap_memory& operator=(const gpu_heap_memory&) = delete;

    ~gpu_heap_memory() override {
        for (std::size_t i = 0; i < devices_.size(); ++i) {
            cudaSetDevice(devices_[i]);
            cudaDeviceSynchronize();
        }
        while (!mapped_.empty()) unmap_registration(mapped_.begin()->first);
        for (int pe = 0; base_ != 0 && pe < mapped_heaps_; ++pe) driver().cuMemUnmap(pe_address(pe, 0), heap_span_);
        for (auto handle : handles_) driver().cuMemRelease(handle);
        if (base_ != 0) driver().cuMemAddressFree(base_, stride_ * std::uint64_t(n_pes_));
        if (abort_flag_ != nullptr) cudaFreeHost(abort_flag_);
        if (left_flags_ != nullptr) cudaFreeHost(left_flags_);
        for (void* page : heartbeat_pages_) ::munmap(page, page_bytes_);
    }

    std::byte* local_base(int local) const override { return pe_base(local_pes_[std::size_t(local)]); }
    std::byte* const* peer_bases(int) const override { return bases_.data(); }
    void zero(int local, std::uint64_t offset, std::uint64_t bytes) override {
        const device_guard on_device(devices_[std::size_t(local)], local, "alloc");
        check_cuda(cudaMemset(local_base(local) + offset, 0, bytes), local, "alloc", "cudaMemset of the new block");
        check_cuda(cudaDeviceSynchronize(), local, "alloc", "cudaDeviceSynchronize after clearing");
    }
    bool host_accessible() const override { return false; }
    // Several processes: each one's word in a shared page of host memory (share_heartbeat_pages).
    std::uint64_t* const* heartbeat_words() const override {
        return heartbeats_.empty() ? nullptr : heartbeats_.data();
    }

    std::byte* base() const { return reinterpret_cast<std::byte*>(base_); }
    std::uint64_t stride() const { return stride_; }
    /// The node's processes (one per PE) that share this heap; empty for one process.
    const node_group& node() const { return node_; }

    /// The bytes of each PE's part that device-side checks accept, for a heap of `heap_bytes`: the heap, and up to
    /// the end of the highest live registration (a context made before a registration does not reach it).
    std::uint64_t addressable_bytes(std::uint64_t heap_bytes) const { return area_.end_of_last().value_or(heap_bytes); }
    /// Where registrations sit in each PE's part.
    const registration_area& registrations() const { return area_; }

    /// Maps `handle` ([0, bytes) of its allocation) at `offset` of PE `pe`'s part, as part of the registration at
    /// `offset` (of `slot` bytes in every PE's part, an offset registrations().place gave); `me` and `call` name the
    /// caller in errors. The mapping holds its own reference to the allocation: the caller releases `handle`.
    void map_registration(std::uint64_t offset, std::uint64_t slot, int pe, CUmemGenericAllocationHandle handle,
                          std::uint64_t bytes, int me, const char* call) {
        area_.take(offset, slot);
        auto& mapped = mapped_[offset];
        check_cu(driver().cuMemMap(pe_address(pe, offset), bytes, 0, handle, 0), me, call,
                 ("cuMemMap of PE " + std::to_string(pe) + "'s buffer").c_str());
        mapped.emplace_back(pe, bytes);
    }

    /// Every GPU of this process may read and write the registration at `offset` in every PE's part.
    void grant_registration(std::uint64_t offset, int me, const char* call) const {
        const std::vector<CUmemAccessDesc> access = read_write_access(devices_);
        for (const auto& [pe, bytes] : mapped_.at(offset))
            check_cu(driver().cuMemSetAccess(pe_address(pe, offset), bytes, access.data(), access.size()), me, call,
                     ("cuMemSetAccess for PE " + std::to_string(pe) + "'s buffer").c_str());
    }

    /// Unmaps what the registration at `offset` mapped (the users' allocations stay theirs) and frees its slot.
    void unmap_registration(std::uint64_t offset) {
        if (const auto found = mapped_.find(offset); found != mapped_.end()) {
            for (const auto& [pe, bytes] : found->second) (void)driver().cuMemUnmap(pe_address(pe, offset), bytes);
            mapped_.erase(found);
        }
        area_.release(offset);
    }
    int device_of(int local) const { return devices_[std::size_t(local)]; }
    // Set to failed PE + 1 by world::abort_waits; device waits poll it.
    volatile int* abort_flag() const { return abort_flag_; }
    /// By world PE: non-zero once that PE has left (several processes only; null for one process).
    int* left_flags() const { return left_flags_; }
    /// The most PEs of the world on one GPU (runtime_state::pes_per_gpu).
    int pes_per_gpu() const { return pes_per_gpu_; }

private:
    static std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

    std::byte* pe_base(int pe) const { return reinterpret_cast<std::byte*>(pe_address(pe, 0)); }
    CUdeviceptr pe_address(int pe, std::uint64_t offset) const { return base_ + stride_ * std::uint64_t(pe) + offset; }

    // Each PE's part: its heap (heap_bytes rounded up to `granularity`), then the registration area.
    void lay_out(std::uint64_t heap_bytes, std::uint64_t granularity) {
        heap_span_ = round_up(heap_bytes, granularity);
        stride_ = heap_span_ + round_up(registration_space, granularity);
        area_ = registration_area(heap_span_, stride_);
    }

    CUmemAllocationProp chunk_properties(int device, bool exportable) const {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        // Exportable as a POSIX fd so another process can map the chunk.
        prop.requestedHandleTypes = exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
        return prop;
    }

    std::uint64_t granularity() const {
        std::uint64_t largest = 0;
        for (std::size_t i = 0; i < devices_.size(); ++i) {
            auto prop = chunk_properties(devices_[i], false);
            std::size_t g = 0;
            check_cu(driver().cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), int(i),
                     "world::init_local", "cuMemGetAllocationGranularity");
            largest = g > largest ? g : largest;
        }
        return largest;
    }

    // Every pair of this process's GPUs must reach each other by load/store;
    // otherwise name the pair instead of faulting in a kernel later.
    void check_reachability() const {
        for (std::size_t a = 0; a < devices_.size(); ++a)
            for (std::size_t b = 0; b < devices_.size(); ++b) {
                if (a == b || devices_[a] == devices_[b]) continue;
                int can = 0;
                check_cuda(cudaDeviceCanAccessPeer(&can, devices_[a], devices_[b]), int(a), "world::init_local",
                           "cudaDeviceCanAccessPeer");
                if (!can)
                    throw_error(errc::transport_unavailable, int(a), "world::init_local",
                                "PE " + std::to_string(a) + " (GPU " + std::to_string(devices_[a]) +
                                    ") cannot load/store PE " + std::to_string(b) + "'s memory (GPU " +
                                    std::to_string(devices_[b]) + "): no NVLink/P2P path between them");
            }
    }

    // One process per GPU: this process owns one PE's chunk on devices_[0];
    // the others' chunks arrive as POSIX fds from the node's processes.
    void join_processes(const heap_request& request) {
        bootstrap& channel = *request.channel;
        const int me = request.local_pes.at(0);
        const int device = devices_.at(0);
        check_cuda(cudaSetDevice(device), me, "world::init_gpu", "cudaSetDevice");
        check_cuda(cudaFree(nullptr), me, "world::init_gpu", "creating the primary context");
        const node_group node = discover_node(channel);
        if (node.size() != n_pes_)
            throw_error(errc::transport_unavailable, me, "world::init_gpu",
                        "the NVLink transport spans one node, but only " + std::to_string(node.size()) + " of " +
                            std::to_string(n_pes_) + " PEs run on this one");
        // Reachability: every pair of the node's GPUs (ordinals as this process sees them).
        const auto peer_gpus = channel.allgather_value(gpu_identity::of(device, me, "world::init_gpu"));
        pes_per_gpu_ = most_pes_on_one_gpu(peer_gpus);
        for (int pe = 0; pe < n_pes_; ++pe) {
            const int other = peer_gpus[std::size_t(pe)].ordinal;
            int can = 1;
            if (other != device)
                check_cuda(cudaDeviceCanAccessPeer(&can, device, other), me, "world::init_gpu",
                           "cudaDeviceCanAccessPeer");
            if (!can)
                throw_error(errc::transport_unavailable, me, "world::init_gpu",
                            "PE " + std::to_string(me) + " (GPU " + std::to_string(device) + ") cannot load/store PE " +
                                std::to_string(pe) + "'s memory (GPU " + std::to_string(other) +
                                "): no NVLink/P2P path between them");
        }
        const auto granularities = channel.allgather_value(granularity());
        std::uint64_t largest = 0;
        for (auto g : granularities) largest = g > largest ? g : largest;
        lay_out(request.heap_bytes, largest);
        node_ = node;
        check_cu(driver().cuMemAddressReserve(&base_, stride_ * std::uint64_t(n_pes_), largest, 0, 0), me,
                 "world::init_gpu", "cuMemAddressReserve");
        CUmemGenericAllocationHandle own{};
        auto prop = chunk_properties(device, true);
        check_cu(driver().cuMemCreate(&own, heap_span_, &prop, 0), me, "world::init_gpu",
                 ("cuMemCreate of an exportable " + std::to_string(heap_span_) + "-byte heap").c_str());
        handles_.push_back(own);
        int exported = -1;
        check_cu(driver().cuMemExportToShareableHandle(&exported, own, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), me,
                 "world::init_gpu", "cuMemExportToShareableHandle");
        const std::vector<int> fds = allgather_fds(channel, exported, node);
        ::close(exported);
        std::vector<CUmemGenericAllocationHandle> handles_by_pe(static_cast<std::size_t>(n_pes_));
        for (int i = 0; i < node.size(); ++i) {
            const int pe = node.ranks[std::size_t(i)];
            CUmemGenericAllocationHandle handle = own;
            if (pe != me) {
                check_cu(driver().cuMemImportFromShareableHandle(
                             &handle, reinterpret_cast<void*>(std::intptr_t(fds[std::size_t(i)])),
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                         me, "world::init_gpu", ("importing PE " + std::to_string(pe) + "'s heap").c_str());
                handles_.push_back(handle);
            }
            handles_by_pe[std::size_t(pe)] = handle;
            ::close(fds[std::size_t(i)]);
        }
        // Mapped in PE order, so that the destructor unmaps exactly the first mapped_heaps_ parts.
        for (int pe = 0; pe < n_pes_; ++pe) {
            check_cu(driver().cuMemMap(pe_address(pe, 0), heap_span_, 0, handles_by_pe[std::size_t(pe)], 0), me,
                     "world::init_gpu", "cuMemMap");
            ++mapped_heaps_;
        }
        grant_access();
        zero(0, 0, heap_span_);
        share_heartbeat_pages(channel, node, me);
        channel.barrier();  // every chunk is clear before anyone writes into a peer's
        check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&abort_flag_), sizeof(int),
                                 cudaHostAllocMapped | cudaHostAllocPortable),
                   me, "world::init_gpu", "cudaHostAlloc of the abort flag");
        *abort_flag_ = 0;
        // Which peers have left (runtime_state::left), beside the abort flag and like it mapped for kernels.
        check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&left_flags_), sizeof(int) * std::size_t(n_pes_),
                                 cudaHostAllocMapped | cudaHostAllocPortable),
                   me, "world::init_gpu", "cudaHostAlloc of the left flags");
        std::memset(left_flags_, 0, sizeof(int) * std::size_t(n_pes_));
        bases_.resize(std::size_t(n_pes_));
        for (int pe = 0; pe < n_pes_; ++pe) bases_[std::size_t(pe)] = pe_base(pe);
    }

    // A GPU heap's host threads cannot stamp words in GPU memory without CUDA
    // calls that queue behind running kernels, so each process of the node
    // shares one page of host memory (a memfd, passed like the chunks) that
    // holds its heartbeat word, and maps every peer's.
    void share_heartbeat_pages(bootstrap& channel, const node_group& node, int me) {
        const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
        tcp::unique_fd own(::memfd_create("pgas-heartbeat", MFD_CLOEXEC));
        if (!own || ::ftruncate(own.get(), off_t(page)) != 0)
            throw_error(errc::system, me, "world::init_gpu",
                        "cannot make the heartbeat page: " + std::string(std::strerror(errno)));
        const std::vector<int> fds = allgather_fds(channel, own.get(), node);
        heartbeats_.assign(std::size_t(n_pes_), nullptr);
        for (int i = 0; i < node.size(); ++i) {
            const int fd = fds[std::size_t(i)];
            void* at = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            ::close(fd);
            if (at == MAP_FAILED)
                throw_error(errc::system, me, "world::init_gpu",
                            "cannot map PE " + std::to_string(node.ranks[std::size_t(i)]) +
                                "'s heartbeat page: " + std::strerror(errno));
            heartbeat_pages_.push_back(at);
            heartbeats_[std::size_t(node.ranks[std::size_t(i)])] = static_cast<std::uint64_t*>(at);
        }
        page_bytes_ = page;
    }

    void map_chunk(int pe) {
        const int device = devices_[std::size_t(pe)];
        CUmemGenericAllocationHandle handle{};
        auto prop = chunk_properties(device, true);
        if (driver().cuMemCreate(&handle, heap_span_, &prop, 0) != CUDA_SUCCESS) {
            // Some virtualised drivers refuse exportable chunks; one process needs no export.
            prop = chunk_properties(device, false);
            check_cu(driver().cuMemCreate(&handle, heap_span_, &prop, 0), pe, "world::init_local",
                     ("cuMemCreate of a " + std::to_string(heap_span_) + "-byte heap").c_str());
        }
        handles_.push_back(handle);
        check_cu(driver().cuMemMap(pe_address(pe, 0), heap_span_, 0, handle, 0), pe, "world::init_local", "cuMemMap");
        ++mapped_heaps_;
    }

    // Every local GPU may read and write every PE's heap (each a mapping of its own: the registration areas
    // between them are unmapped). Several PEs may share a GPU (tests on a one-GPU machine): each device is named once.
    void grant_access() {
        const std::vector<CUmemAccessDesc> access = read_write_access(devices_);
        const int me = devices_.size() == 1 ? local_pes_.front() : -1;
        for (int pe = 0; pe < n_pes_; ++pe)
            check_cu(driver().cuMemSetAccess(pe_address(pe, 0), heap_span_, access.data(), access.size()), me,
                     "world init", "cuMemSetAccess for every local GPU");
    }

    std::vector<int> devices_;    // CUDA device of each local PE
    std::vector<int> local_pes_;  // world PE of each local PE
    int n_pes_ = 0;
    CUdeviceptr base_ = 0;
    std::uint64_t stride_ = 0;     // bytes of VA per PE: heap_span_, then the registration area
    std::uint64_t heap_span_ = 0;  // the heap's bytes, rounded up to the largest VMM granularity of its GPUs
    int mapped_heaps_ = 0;         // PEs 0 .. mapped_heaps_ - 1 have their heap mapped
    node_group node_;              // processes only
    registration_area area_;       // the registrations' slots, the same in every PE's part
    std::map<std::uint64_t, std::vector<std::pair<int, std::uint64_t>>> mapped_;  // by offset: (PE, bytes) mapped here
    std::vector<CUmemGenericAllocationHandle> handles_;
    std::vector<std::byte*> bases_;
    int* abort_flag_ = nullptr;
    int* left_flags_ = nullptr;  // [n_pes], processes only
    int pes_per_gpu_ = 1;
    std::vector<std::uint64_t*> heartbeats_;  // by world PE (processes only)
    std::vector<void*> heartbeat_pages_;
    std::size_t page_bytes_ = 0;
};

// One process per GPU: this process's PE lives on `device`.
// The GPU of a process whose launcher gave it `local_rank` on its node: local
// rank modulo the visible GPUs, so that several processes share a GPU when
// there are fewer GPUs than processes (one GPU under CUDA MPS).
inline int default_process_device(int local_rank, int pe) {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), pe, "world::init_gpu", "cudaGetDeviceCount");
    if (count < 1) throw_error(errc::transport_unavailable, pe, "world::init_gpu", "no CUDA device is visible");
    return (local_rank < 0 ? 0 : local_rank) % count;
}

inline heap_factory gpu_process_heap_factory(int device) {
    return [device](const heap_request& request) -> std::unique_ptr<heap_memory> {
        return std::make_unique<gpu_heap_memory>(request, std::vector<int>{device});
    };
}

// Several PEs of one process on one GPU run kernels that wait for each other, each on its own stream. CUDA maps
// streams onto CUDA_DEVICE_MAX_CONNECTIONS hardware work queues (8 by default; fewer per process under MPS), in
// order within a queue: work queued behind a waiting kernel (the next kernel of that PE's stream, an event) holds
// up the peer kernels queued after it, which never start (seen: bench_moe, 4 PEs on one H100 under MPS, hung at
// its first barrier; CUDA_DEVICE_MAX_CONNECTIONS=32 ran it, =1 or 2 hung it without MPS too). So a process that
// puts more than one PE on a GPU asks for the most queues (32), unless the program chose a value. The driver
// reads the variable when it creates a GPU's context: a program that used the GPU before world::init_local sets
// it itself (docs/troubleshooting.md).
inline void prefer_a_work_queue_per_pe(const std::vector<int>& devices) {
    bool shared = false;
    for (std::size_t i = 0; i < devices.size() && !shared; ++i)
        for (std::size_t j = i + 1; j < devices.size() && !shared; ++j) shared = devices[i] == devices[j];
    if (shared) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
}

inline heap_factory gpu_heap_factory(std::vector<int> devices) {
    return [devices](const heap_request& request) -> std::unique_ptr<heap_memory> {
        return std::make_unique<gpu_heap_memory>(request, devices);
    };
}

}  // namespace detail
PGAS_NAMESPACE_END
