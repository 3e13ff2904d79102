// register_window's GPU side: checking a user's device buffer, and sharing it with the node's processes (CUDA IPC).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/cuda_check.hpp>
#include <pgas/host/cuda_driver.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

inline std::string address_text(const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
    return text;
}

// What register_window needs of one local GPU buffer: the allocation that holds it (for CUDA IPC), or why it
// cannot be a window (`problem` non-empty; the text goes into the pgas::error).
struct gpu_buffer {
    std::string problem;
    std::uint64_t allocation = 0;  // base of the allocation that holds the buffer
    std::uint64_t offset = 0;      // the buffer's offset in it
};

inline const char* memory_kind(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeUnregistered: return "plain host memory (not from CUDA)";
        case cudaMemoryTypeHost: return "pinned host memory (cudaMallocHost/cudaHostRegister)";
        case cudaMemoryTypeManaged: return "managed memory (cudaMallocManaged)";
        case cudaMemoryTypeDevice: return "GPU memory";
    }
    return "memory of an unknown kind";
}

// Checks that [p, p + bytes) is GPU memory of `device` inside one allocation (cudaPointerGetAttributes,
// cuMemGetAddressRange). Needs the world's CUDA context (a GPU heap exists).
inline gpu_buffer inspect_gpu_buffer(const void* p, std::uint64_t bytes, int device) {
    gpu_buffer out;
    cudaPointerAttributes attributes{};
    const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        out.problem = "pointer " + address_text(p) + " is not known to CUDA (cudaPointerGetAttributes: " +
                      cudaGetErrorName(status) + "); register memory from cudaMalloc";
        return out;
    }
    if (attributes.type != cudaMemoryTypeDevice) {
        out.problem = "pointer " + address_text(p) + " is " + memory_kind(attributes.type) +
                      ", not GPU memory: register memory from cudaMalloc (or cuMemCreate)";
        return out;
    }
    if (attributes.device != device) {
        out.problem = "pointer " + address_text(p) + " is memory of GPU " + std::to_string(attributes.device) +
                      " but this PE runs on GPU " + std::to_string(device);
        return out;
    }
    CUdeviceptr base = 0;
    std::size_t size = 0;
    const CUresult found = driver().cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(p));
    if (found != CUDA_SUCCESS) {
        out.problem = "pointer " + address_text(p) + ": cuMemGetAddressRange finds no allocation holding it";
        return out;
    }
    const std::uint64_t at = reinterpret_cast<std::uintptr_t>(p) - base;
    if (bytes > size - at) {
        out.problem = "range [" + address_text(p) + ", +" + std::to_string(bytes) +
                      " bytes) straddles allocations: the allocation holding " + address_text(p) + " is [" +
                      address_text(reinterpret_cast<void*>(base)) + ", +" + std::to_string(size) + " bytes), " +
                      std::to_string(size - at) + " bytes from the pointer to its end";
        return out;
    }
    out.allocation = base;
    out.offset = at;
    return out;
}

// The CUDA IPC handle of the allocation at `allocation`, or why there is none (memory from cuMemCreate or a
// cudaMallocAsync pool has no legacy IPC handle).
inline std::string export_ipc(std::uint64_t allocation, cudaIpcMemHandle_t& handle) {
    const cudaError_t status = cudaIpcGetMemHandle(&handle, reinterpret_cast<void*>(allocation));
    if (status == cudaSuccess) return {};
    (void)cudaGetLastError();
    return "cudaIpcGetMemHandle refused the allocation at " + address_text(reinterpret_cast<void*>(allocation)) + " (" +
           cudaGetErrorName(status) +
           "): between processes a window must be cudaMalloc memory (cuMemCreate and cudaMallocAsync-pool memory "
           "cannot travel by CUDA IPC yet); within one process any GPU memory works";
}

// The node peers' allocations this process opened with cudaIpcOpenMemHandle, each once however many windows lie in
// it (opening one handle twice fails on some drivers), closed when its last window is released.
class ipc_mappings {
public:
    ipc_mappings() = default;
    ipc_mappings(const ipc_mappings&) = delete;
    ipc_mappings& operator=(const ipc_mappings&) = delete;
    ~ipc_mappings() {
        for (auto& [key, mapping] : open_) (void)cudaIpcCloseMemHandle(mapping.address);
    }

    // PE `pe`'s allocation `allocation` (its address there) mapped here; `me` names the caller in errors.
    std::byte* open(int me, int pe, std::uint64_t allocation, const cudaIpcMemHandle_t& handle) {
        auto& mapping = open_[{pe, allocation}];
        if (mapping.references++ == 0) {
            void* address = nullptr;
            const cudaError_t status = cudaIpcOpenMemHandle(&address, handle, cudaIpcMemLazyEnablePeerAccess);
            if (status != cudaSuccess) {
                (void)cudaGetLastError();
                open_.erase({pe, allocation});
                throw_error(errc::cuda, me, "register_window",
                            "cudaIpcOpenMemHandle of PE " + std::to_string(pe) + "'s buffer failed: " +
                                cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
            }
            mapping.address = static_cast<std::byte*>(address);
        }
        return mapping.address;
    }

    // Drops one window's use of PE `pe`'s allocation; the last one closes the mapping.
    void close(int pe, std::uint64_t allocation) {
        const auto at = open_.find({pe, allocation});
        if (at == open_.end() || --at->second.references > 0) return;
        (void)cudaIpcCloseMemHandle(at->second.address);
        open_.erase(at);
    }

private:
    struct mapping {
        std::byte* address = nullptr;
        int references = 0;
    };
    std::map<std::pair<int, std::uint64_t>, mapping> open_;
};

// Kernels of one process's PEs on different GPUs read each other's cudaMalloc buffers directly: peer access must be
// on (the heap needs none, cuMemSetAccess maps it). Already-enabled pairs are fine.
inline void enable_peer_access(int from, int to, int pe) {
    if (from == to) return;
    check_cuda(cudaSetDevice(from), pe, "register_window", "cudaSetDevice");
    const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        return;
    }
    check_cuda(status, pe, "register_window", "cudaDeviceEnablePeerAccess");
}

}  // namespace detail
PGAS_NAMESPACE_END
