// register_window's GPU side: checking a user's device buffer, and sharing it with the node's processes (CUDA IPC for
// cudaMalloc memory, a POSIX descriptor of the VMM handle for cuMemCreate memory).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/cuda/driver.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

inline std::string address_text(const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
    return text;
}

// What register_window needs of one local GPU buffer: the allocation that holds it (to share it between processes),
// or why it cannot be a window (`problem` non-empty; the text goes into the pgas::error).
struct gpu_buffer {
    std::string problem;
    std::uint64_t allocation = 0;        // base of the allocation that holds the buffer (for cuMemCreate memory: of
    std::uint64_t allocation_bytes = 0;  // the one cuMemMap mapping that holds it) and its size
    std::uint64_t offset = 0;            // the buffer's offset in it
};

// How a window's buffer reaches the other processes of its node.
enum class buffer_sharing : std::int32_t {
    none = 0,      // same process (or an observer's fabric reaches it)
    cuda_ipc = 1,  // cudaMalloc memory: a cudaIpcMemHandle_t travels in the card
    vmm_fd = 2,    // cuMemCreate memory: its handle travels as a POSIX descriptor (SCM_RIGHTS, fd_exchange.hpp)
};

inline const char* memory_kind(cudaMemoryType type) {
    switch (type) {
        case cudaMemoryTypeUnregistered:
            return "plain host memory (not from CUDA)";
        case cudaMemoryTypeHost:
            return "pinned host memory (cudaMallocHost/cudaHostRegister)";
        case cudaMemoryTypeManaged:
            return "managed memory (cudaMallocManaged)";
        case cudaMemoryTypeDevice:
            return "GPU memory";
    }
    return "memory of an unknown kind";
}

// Checks that [p, p + bytes) is GPU memory of `device` inside one allocation (cudaPointerGetAttributes,
// cuMemGetAddressRange). cuMemGetAddressRange looks in the current context only, so `device` is made current for it
// (a process that drives several GPUs finds nothing of GPU 1's in GPU 0's context).
inline gpu_buffer inspect_gpu_buffer(const void* p, std::uint64_t bytes, int device) {
    gpu_buffer out;
    cudaPointerAttributes attributes{};
    const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        out.problem = "pointer " + address_text(p) +
                      " is not known to CUDA (cudaPointerGetAttributes: " + cudaGetErrorName(status) +
                      "); register memory from cudaMalloc";
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
    const device_guard on_device(device);
    if (on_device.status() != cudaSuccess) {
        out.problem = "cannot make GPU " + std::to_string(device) + " current to inspect pointer " + address_text(p) +
                      " (" + cudaGetErrorName(on_device.status()) + ")";
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
    out.allocation_bytes = size;
    out.offset = at;
    return out;
}

// Makes the allocation at `allocation` shareable with the node's other processes: a CUDA IPC handle for cudaMalloc
// memory, else (cuMemCreate memory, which has no legacy IPC handle) its VMM handle exported as a POSIX descriptor
// into `fd` (the caller owns it), with `device` (the allocation's GPU) current. Returns why neither works, or an
// empty string.
inline std::string export_allocation(std::uint64_t allocation, int device, cudaIpcMemHandle_t& handle,
                                     buffer_sharing& how, int& fd) {
    const device_guard on_device(device);
    void* const at = reinterpret_cast<void*>(allocation);
    if (on_device.status() != cudaSuccess)
        return "cannot make GPU " + std::to_string(device) + " current to share the allocation at " + address_text(at) +
               " (" + cudaGetErrorName(on_device.status()) + ")";
    const cudaError_t ipc = cudaIpcGetMemHandle(&handle, at);
    if (ipc == cudaSuccess) {
        how = buffer_sharing::cuda_ipc;
        return {};
    }
    (void)cudaGetLastError();
    CUmemGenericAllocationHandle vmm{};
    if (driver().cuMemRetainAllocationHandle(&vmm, at) != CUDA_SUCCESS)
        return "cudaIpcGetMemHandle refused the allocation at " + address_text(at) + " (" + cudaGetErrorName(ipc) +
               ") and it is no cuMemCreate mapping: between processes a window must be cudaMalloc memory or "
               "exportable cuMemCreate memory (cudaMallocAsync-pool memory cannot be shared yet); within one process "
               "any GPU memory works";
    const CUresult exported =
        driver().cuMemExportToShareableHandle(&fd, vmm, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    (void)driver().cuMemRelease(vmm);  // drops the retain's reference; the user's mapping keeps its own
    if (exported != CUDA_SUCCESS) {
        const char* name = "unknown error";
        (void)driver().cuGetErrorName(exported, &name);
        return "the cuMemCreate allocation at " + address_text(at) +
               " cannot be shared with other processes (cuMemExportToShareableHandle: " + name +
               "): create it with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in "
               "CUmemAllocationProp::requestedHandleTypes";
    }
    how = buffer_sharing::vmm_fd;
    return {};
}

// The node peers' allocations this process mapped for windows (cudaIpcOpenMemHandle, or a VMM handle imported from
// its descriptor and mapped), each once however many windows lie in it (opening one IPC handle twice fails on some
// drivers), unmapped when its last window is released. Each is opened and closed with the GPU it was mapped for
// current (the runtime maps IPC handles into the current device's context), whatever the caller's current device.
class ipc_mappings {
public:
    ipc_mappings() = default;
    ipc_mappings(const ipc_mappings&) = delete;
    ipc_mappings& operator=(const ipc_mappings&) = delete;
    ~ipc_mappings() {
        for (auto& [key, mapping] : open_) unmap(mapping);
    }

    // PE `pe`'s allocation `allocation` (its address there) mapped here for `device`; `me` names the caller in
    // errors.
    std::byte* open(int me, int pe, std::uint64_t allocation, const cudaIpcMemHandle_t& handle, int device) {
        auto& mapping = open_[{pe, allocation}];
        if (mapping.references++ == 0) {
            mapping.device = device;
            const device_guard on_device(device, me, "register_window");
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

    // PE `pe`'s cuMemCreate allocation `allocation` ([allocation, +bytes) there: one mapping, its handle mapped from
    // offset 0) mapped here for `device`, its handle imported from descriptor `fd` (the caller closes it).
    std::byte* open_vmm(int me, int pe, std::uint64_t allocation, std::uint64_t bytes, int fd, int device) {
        auto& mapping = open_[{pe, allocation}];
        if (mapping.references++ > 0) return mapping.address;
        mapping.vmm = true;
        mapping.bytes = bytes;
        mapping.device = device;
        const device_guard on_device(device, me, "register_window");
        const auto step = [&](CUresult status, const char* what) {
            if (status == CUDA_SUCCESS) return;
            const char* name = "unknown error";
            (void)driver().cuGetErrorName(status, &name);
            unmap(mapping);
            open_.erase({pe, allocation});
            throw_error(errc::cuda, me, "register_window",
                        std::string(what) + " of PE " + std::to_string(pe) + "'s cuMemCreate buffer (" +
                            std::to_string(bytes) + " bytes) failed: " + name);
        };
        step(driver().cuMemImportFromShareableHandle(&mapping.handle, reinterpret_cast<void*>(std::intptr_t(fd)),
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
             "cuMemImportFromShareableHandle");
        mapping.imported = true;
        CUdeviceptr at = 0;
        step(driver().cuMemAddressReserve(&at, bytes, 0, 0, 0), "cuMemAddressReserve");
        mapping.address = reinterpret_cast<std::byte*>(at);
        step(driver().cuMemMap(at, bytes, 0, mapping.handle, 0), "cuMemMap");
        mapping.mapped = true;
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        step(driver().cuMemSetAccess(at, bytes, &access, 1), "cuMemSetAccess");
        return mapping.address;
    }

    // Drops one window's use of PE `pe`'s allocation; the last one closes the mapping.
    void close(int pe, std::uint64_t allocation) {
        const auto at = open_.find({pe, allocation});
        if (at == open_.end() || --at->second.references > 0) return;
        unmap(at->second);
        open_.erase(at);
    }

private:
    struct mapping {
        std::byte* address = nullptr;
        int references = 0;
        int device = -1;   // the GPU it was mapped for
        bool vmm = false;  // the rest for cuMemCreate memory: what open_vmm has done so far, undone in reverse
        bool imported = false;
        bool mapped = false;
        CUmemGenericAllocationHandle handle = 0;
        std::uint64_t bytes = 0;
    };

    static void unmap(mapping& m) {
        const device_guard on_device(m.device);
        if (!m.vmm) {
            if (m.address != nullptr) (void)cudaIpcCloseMemHandle(m.address);
            return;
        }
        const auto at = reinterpret_cast<CUdeviceptr>(m.address);
        if (m.mapped) (void)driver().cuMemUnmap(at, m.bytes);
        if (at != 0) (void)driver().cuMemAddressFree(at, m.bytes);
        if (m.imported) (void)driver().cuMemRelease(m.handle);
        m = mapping{};
    }
    std::map<std::pair<int, std::uint64_t>, mapping> open_;
};

// The node peers' allocations one window mapped through an ipc_mappings, each closed again when the window goes:
// at release_window, or on every way out of a register_window that fails after mapping some.
class peer_mappings {
public:
    explicit peer_mappings(ipc_mappings& ipc) : ipc_(&ipc) {}
    peer_mappings(peer_mappings&& other) noexcept : ipc_(other.ipc_), opened_(std::exchange(other.opened_, {})) {}
    peer_mappings& operator=(peer_mappings&& other) noexcept {
        if (this == &other) return *this;
        close_all();
        ipc_ = other.ipc_;
        opened_ = std::exchange(other.opened_, {});
        return *this;
    }
    ~peer_mappings() { close_all(); }

    // ipc_mappings::open, closed with this window.
    std::byte* open(int me, int pe, std::uint64_t allocation, const cudaIpcMemHandle_t& handle, int device) {
        std::byte* const address = ipc_->open(me, pe, allocation, handle, device);
        opened_.emplace_back(pe, allocation);
        return address;
    }

    // ipc_mappings::open_vmm, closed with this window.
    std::byte* open_vmm(int me, int pe, std::uint64_t allocation, std::uint64_t bytes, int fd, int device) {
        std::byte* const address = ipc_->open_vmm(me, pe, allocation, bytes, fd, device);
        opened_.emplace_back(pe, allocation);
        return address;
    }

private:
    void close_all() {
        for (const auto& [pe, allocation] : opened_) ipc_->close(pe, allocation);
        opened_.clear();
    }
    ipc_mappings* ipc_;
    std::vector<std::pair<int, std::uint64_t>> opened_;  // (PE, its allocation), as ipc_mappings names them
};

// Kernels of one process's PEs on different GPUs read each other's cudaMalloc buffers directly: peer access must be
// on (the heap needs none, cuMemSetAccess maps it). Already-enabled pairs are fine. The caller's current device stays.
inline void enable_peer_access(int from, int to, int pe) {
    if (from == to) return;
    const device_guard on_device(from, pe, "register_window");
    const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        return;
    }
    check_cuda(status, pe, "register_window", "cudaDeviceEnablePeerAccess");
}

// The same for cuMemCreate buffers, which peer access does not cover: a mapping is reachable only from the GPUs
// cuMemSetAccess granted, so PE `pe`'s buffer (the mapping [allocation, +bytes), on `device`) is granted read-write
// to each of `devices`, the process's other GPUs. Nothing for cudaMalloc memory (enable_peer_access) or where the
// GPUs are one. Like peer access, the grant stays after the window is released.
inline void grant_vmm_access(std::uint64_t allocation, std::uint64_t bytes, int device, const std::vector<int>& devices,
                             int pe) {
    const std::vector<CUmemAccessDesc> access = read_write_access(devices, device);
    if (access.empty()) return;
    const device_guard on_device(device, pe, "register_window");
    const auto at = static_cast<CUdeviceptr>(allocation);
    int legacy = 0;  // cudaMalloc memory: the one kind the legacy IPC handles take
    if (driver().cuPointerGetAttribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, at) == CUDA_SUCCESS &&
        legacy != 0)
        return;
    CUmemGenericAllocationHandle vmm{};
    if (driver().cuMemRetainAllocationHandle(&vmm, reinterpret_cast<void*>(at)) != CUDA_SUCCESS) return;  // no mapping
    (void)driver().cuMemRelease(vmm);  // drops the retain's reference
    check_cu(driver().cuMemSetAccess(at, bytes, access.data(), access.size()), pe, "register_window",
             ("cuMemSetAccess granting this process's other GPUs access to the cuMemCreate buffer at " +
              address_text(reinterpret_cast<void*>(at)))
                 .c_str());
}

}  // namespace detail
PGAS_NAMESPACE_END
