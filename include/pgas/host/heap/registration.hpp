// world::register_symmetric's body: each PE's cuMemCreate buffer mapped into every PE's view of the symmetric heap,
// in the registration area after the heap (host/heap/gpu.hpp), at one offset all PEs share.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/bootstrap/fd_exchange.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/cuda/driver.hpp>
#include <pgas/host/heap/gpu.hpp>
#include <pgas/host/window/gpu.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// What register_symmetric works with: the world's channel and GPU heap, and which world PEs this process drives.
struct registration_parts {
    bootstrap* channel = nullptr;
    gpu_heap_memory* gpu = nullptr;
    std::vector<int> local_pes;
};

// A CUDA VMM handle that releases itself (the mapping made from it keeps its own reference to the allocation).
class vmm_handle {
public:
    vmm_handle() = default;
    vmm_handle(const vmm_handle&) = delete;
    vmm_handle& operator=(const vmm_handle&) = delete;
    vmm_handle(vmm_handle&& other) noexcept : handle_(std::exchange(other.handle_, 0)) {}
    vmm_handle& operator=(vmm_handle&& other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }
    ~vmm_handle() {
        if (handle_ != 0) (void)driver().cuMemRelease(handle_);
    }
    CUmemGenericAllocationHandle* out() { return &handle_; }
    CUmemGenericAllocationHandle get() const { return handle_; }

private:
    CUmemGenericAllocationHandle handle_ = 0;
};

// One PE's buffer as every PE learns of it.
struct registration_card {
    std::int32_t pe = -1;
    std::int32_t ok = 0;       // 0: this PE refused its buffer (its own error says why)
    std::uint64_t bytes = 0;   // what the caller asked to register
    std::uint64_t mapped = 0;  // the cuMemCreate mapping that starts at the buffer (mapped whole)
};

// One local PE's buffer: the checks, its handle, and (between processes) its handle as a POSIX descriptor.
struct local_registration {
    registration_card card;
    std::string problem;
    vmm_handle handle;
    tcp::unique_fd exported;
};

// `buffer` of local PE `pe` on `device`, to be registered with `bytes`: it must start a cuMemCreate mapping of that
// GPU at least `bytes` long (inspect_gpu_buffer refuses a shorter one; mapped whole: a mapping cannot be split),
// exportable as a POSIX descriptor when `export_it`.
inline local_registration inspect_registration(std::byte* buffer, std::uint64_t bytes, int pe, int device,
                                               bool export_it) {
    local_registration r;
    r.card.pe = pe;
    r.card.bytes = bytes;
    if (buffer == nullptr) {
        r.problem = "null pointer (" + std::to_string(bytes) + " bytes)";
        return r;
    }
    const gpu_buffer found = inspect_gpu_buffer(buffer, bytes, device);
    if (!found.problem.empty()) {
        r.problem = found.problem;
        return r;
    }
    if (found.offset != 0) {
        r.problem = "pointer " + address_text(buffer) + " is " + std::to_string(found.offset) +
                    " bytes into the allocation at " + address_text(reinterpret_cast<void*>(found.allocation)) +
                    ": register the start of a cuMemCreate mapping (it is mapped whole)";
        return r;
    }
    const device_guard on_device(device);
    if (driver().cuMemRetainAllocationHandle(r.handle.out(), buffer) != CUDA_SUCCESS) {
        r.problem = "pointer " + address_text(buffer) +
                    " is not cuMemCreate memory (cudaMalloc memory cannot be mapped into the symmetric heap: "
                    "allocate the buffer with cuMemCreate/cuMemMap, or share it with register_window)";
        return r;
    }
    r.card.mapped = found.allocation_bytes;
    if (export_it) {
        int fd = -1;
        const CUresult status =
            driver().cuMemExportToShareableHandle(&fd, r.handle.get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        if (status != CUDA_SUCCESS) {
            r.problem = "the cuMemCreate buffer at " + address_text(buffer) +
                        " cannot be shared with the other processes: create it with "
                        "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in CUmemAllocationProp::requestedHandleTypes";
            return r;
        }
        r.exported = tcp::unique_fd(fd);
    }
    r.card.ok = 1;
    return r;
}

// Every PE throws together when one refused its buffer, or when the sizes differ.
inline void refuse_bad_registrations(const std::vector<local_registration>& mine,
                                     const std::vector<registration_card>& cards, std::uint64_t bytes, int me) {
    for (const auto& r : mine)
        if (!r.problem.empty()) throw_error(errc::invalid_argument, r.card.pe, "register_symmetric", r.problem);
    for (const auto& card : cards)
        if (!card.ok)
            throw_error(errc::invalid_argument, me, "register_symmetric",
                        "PE " + std::to_string(card.pe) +
                            " passed a buffer it cannot register (its own error says why); nothing was registered");
    for (const auto& card : cards)
        if (card.bytes != bytes)
            throw_error(errc::collective_mismatch, me, "register_symmetric",
                        "bytes = " + std::to_string(bytes) + " here but " + std::to_string(card.bytes) + " on PE " +
                            std::to_string(card.pe));
}

// Maps every PE's buffer at `offset` of its part: this process's own from their handles, a node peer's from the
// descriptor it sent (indexed like the node's ranks). Returns why it failed, or an empty string.
inline std::string map_registrations(const registration_parts& parts, std::vector<local_registration>& mine,
                                     const std::vector<registration_card>& cards, std::uint64_t offset,
                                     std::uint64_t slot, int me) {
    gpu_heap_memory& gpu = *parts.gpu;
    try {
        for (auto& r : mine)
            gpu.map_registration(offset, slot, r.card.pe, r.handle.get(), r.card.mapped, me, "register_symmetric");
        if (parts.channel->size() > 1) {
            const node_group& node = gpu.node();
            const std::vector<int> fds = allgather_fds(*parts.channel, mine.front().exported.get(), node);
            std::vector<tcp::unique_fd> descriptors;
            for (int fd : fds) descriptors.emplace_back(fd);
            for (int i = 0; i < node.size(); ++i) {
                const int pe = node.ranks[std::size_t(i)];
                if (pe == mine.front().card.pe) continue;
                vmm_handle imported;
                check_cu(driver().cuMemImportFromShareableHandle(
                             imported.out(), reinterpret_cast<void*>(std::intptr_t(descriptors[std::size_t(i)].get())),
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                         me, "register_symmetric", ("importing PE " + std::to_string(pe) + "'s buffer").c_str());
                gpu.map_registration(offset, slot, pe, imported.get(), cards[std::size_t(pe)].mapped, me,
                                     "register_symmetric");
            }
        }
        gpu.grant_registration(offset, me, "register_symmetric");
    } catch (const error& e) {
        return e.what();
    }
    return {};
}

// Collective: maps buffers[i] (local PE i's, `bytes` long) into the registration area of every PE's part of the
// heap at one offset, which it returns. Throws on every PE together, naming the call, the PE and the value.
inline std::uint64_t register_symmetric(const registration_parts& parts, const std::vector<std::byte*>& buffers,
                                        std::uint64_t bytes) {
    gpu_heap_memory& gpu = *parts.gpu;
    const bool processes = parts.channel->size() > 1;
    const int me = parts.local_pes.size() == 1 ? parts.local_pes.front() : -1;
    std::vector<local_registration> mine;
    for (std::size_t local = 0; local < buffers.size(); ++local)
        mine.push_back(
            inspect_registration(buffers[local], bytes, parts.local_pes[local], gpu.device_of(int(local)), processes));
    std::vector<registration_card> cards;
    if (processes)
        cards = parts.channel->allgather_value(mine.front().card);
    else
        for (const auto& r : mine) cards.push_back(r.card);
    std::sort(cards.begin(), cards.end(), [](const auto& a, const auto& b) { return a.pe < b.pe; });
    refuse_bad_registrations(mine, cards, bytes, me);
    // One slot that holds every PE's mapping, at the first offset free in every PE's part (all PEs hold the same
    // registrations, so each finds the same one).
    std::uint64_t slot = 0;
    for (const auto& card : cards) slot = std::max(slot, card.mapped);
    const auto offset = gpu.registrations().place(slot);
    if (!offset)
        throw_error(errc::heap_exhausted, me, "register_symmetric",
                    "no room for " + std::to_string(slot) + " more bytes in the " +
                        std::to_string(gpu.registrations().size()) +
                        "-byte registration area (unregister_symmetric frees it)");
    const std::string failure = map_registrations(parts, mine, cards, *offset, slot, me);
    const auto verdicts = processes ? parts.channel->allgather_value(std::int32_t(failure.empty() ? -1 : me))
                                    : std::vector<std::int32_t>{failure.empty() ? -1 : 0};
    const auto failed = std::find_if(verdicts.begin(), verdicts.end(), [](std::int32_t v) { return v >= 0; });
    if (failed != verdicts.end()) {
        gpu.unmap_registration(*offset);
        if (!failure.empty()) throw error(errc::cuda, me, "register_symmetric", failure);
        throw_error(errc::cuda, me, "register_symmetric",
                    "PE " + std::to_string(*failed) +
                        " could not map the buffers (its own error says why); nothing was registered");
    }
    parts.channel->barrier();  // every PE maps every buffer before any kernel reaches a peer's
    return *offset;
}

// Collective: unmaps the registration at `offset` from every PE's view once every PE's GPU work is done (a kernel
// still reading a peer's buffer would fault). The buffers stay their owners'.
inline void unregister_symmetric(const registration_parts& parts, std::uint64_t offset) {
    for (std::size_t local = 0; local < parts.local_pes.size(); ++local) {
        const device_guard on_device(parts.gpu->device_of(int(local)), parts.local_pes[local], "unregister_symmetric");
        check_cuda(cudaDeviceSynchronize(), parts.local_pes[local], "unregister_symmetric", "cudaDeviceSynchronize");
    }
    parts.channel->barrier();
    parts.gpu->unmap_registration(offset);
}

}  // namespace detail
PGAS_NAMESPACE_END
