// The CUDA driver calls pgas makes, resolved at run time through cudart so binaries load without libcuda.
#pragma once

#include <pgas/core/error.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Linking libcuda directly makes every pgas program fail to start on a
// machine without a GPU driver (seen in CI: "libcuda.so.1: cannot open shared
// object file"), even one that only runs the host transport. cudart finds the
// driver's entry points on demand instead.
struct driver_api {
    decltype(&::cuInit) cuInit = nullptr;
    decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
    decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
    decltype(&::cuMemAddressReserve) cuMemAddressReserve = nullptr;
    decltype(&::cuMemAddressFree) cuMemAddressFree = nullptr;
    decltype(&::cuMemCreate) cuMemCreate = nullptr;
    decltype(&::cuMemRelease) cuMemRelease = nullptr;
    decltype(&::cuMemMap) cuMemMap = nullptr;
    decltype(&::cuMemUnmap) cuMemUnmap = nullptr;
    decltype(&::cuMemSetAccess) cuMemSetAccess = nullptr;
    decltype(&::cuMemGetAllocationGranularity) cuMemGetAllocationGranularity = nullptr;
    decltype(&::cuMemExportToShareableHandle) cuMemExportToShareableHandle = nullptr;
    decltype(&::cuMemImportFromShareableHandle) cuMemImportFromShareableHandle = nullptr;
    decltype(&::cuMemGetAddressRange) cuMemGetAddressRange = nullptr;  // register_window: the allocation of a pointer
    decltype(&::cuMemRetainAllocationHandle) cuMemRetainAllocationHandle = nullptr;  // and its VMM handle, if any
    decltype(&::cuPointerGetAttribute) cuPointerGetAttribute = nullptr;              // whether it is cudaMalloc memory
    decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;  // whether a program chose its GPU (compat's init)
};

template <class Fn>
void resolve(Fn& fn, const char* symbol) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &found);
    if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || address == nullptr)
        throw_error(errc::transport_unavailable, -1, "CUDA driver",
                    std::string("cannot resolve ") + symbol + " (" + cudaGetErrorString(status) +
                        "): is an NVIDIA driver installed?");
    fn = reinterpret_cast<Fn>(address);
}

// Entry points are asked for at the ABI of the cuda.h this was compiled
// against (CUDA_VERSION), so they match the prototypes decltype names.
// The driver's entry points, resolved once (thread-safe static initialisation).
inline const driver_api& driver() {
    static const driver_api api = [] {
        driver_api a;
        resolve(a.cuInit, "cuInit");
        resolve(a.cuGetErrorName, "cuGetErrorName");
        resolve(a.cuGetErrorString, "cuGetErrorString");
        resolve(a.cuMemAddressReserve, "cuMemAddressReserve");
        resolve(a.cuMemAddressFree, "cuMemAddressFree");
        resolve(a.cuMemCreate, "cuMemCreate");
        resolve(a.cuMemRelease, "cuMemRelease");
        resolve(a.cuMemMap, "cuMemMap");
        resolve(a.cuMemUnmap, "cuMemUnmap");
        resolve(a.cuMemSetAccess, "cuMemSetAccess");
        resolve(a.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
        resolve(a.cuMemExportToShareableHandle, "cuMemExportToShareableHandle");
        resolve(a.cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle");
        resolve(a.cuMemGetAddressRange, "cuMemGetAddressRange");
        resolve(a.cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle");
        resolve(a.cuPointerGetAttribute, "cuPointerGetAttribute");
        resolve(a.cuCtxGetCurrent, "cuCtxGetCurrent");
        return a;
    }();
    return api;
}

// Read-write access for cuMemSetAccess: one descriptor per GPU of `devices` but `except` (-1: none), each GPU
// named once however many PEs share it.
inline std::vector<CUmemAccessDesc> read_write_access(const std::vector<int>& devices, int except = -1) {
    std::vector<CUmemAccessDesc> access;
    for (int device : devices) {
        if (device == except || std::any_of(access.begin(), access.end(),
                                            [&](const CUmemAccessDesc& a) { return a.location.id == device; }))
            continue;
        CUmemAccessDesc a{};
        a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        a.location.id = device;
        a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        access.push_back(a);
    }
    return access;
}

}  // namespace detail
PGAS_NAMESPACE_END
