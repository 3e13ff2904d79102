// NVSHMEM's kernel-launch calls (nvshmemx_collective_launch, _query_gridsize) on pgas's cooperative-launch check, its
// local buffer registration, and its symmetric user-buffer registration and cubin-module initialisation (answered as
// not supported yet).
#pragma once

#include <pgas/compat/nvshmem/runtime.hpp>
#include <pgas/compat/nvshmem/types.hpp>
#include <pgas/host/stream/collective_launch.hpp>

#include <cstddef>
#include <cstdio>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace nvshmem_compat {

/// The co-resident maximum of `func` (pgas's collective_launch check), or -1 with a line on stderr naming `call`, the
/// PE and CUDA's message.
inline long long max_collective_grid(const char* call, const void* func, dim3 block, std::size_t shmem) {
    const int pe = the_runtime().running(call).heap().my_pe;
    try {
        return (long long)detail::co_resident_blocks(call, pe, func, block, shmem);
    } catch (const error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return -1;
    }
}

/// nvshmemx_cumodule_init and culibrary_init: NVSHMEMX_ERROR_NOT_SUPPORTED, with a line on stderr naming `call` and
/// the handle (kernels of code loaded at run time cannot reach pgas's NVSHMEM state; compile them into the program).
inline int loaded_code_not_supported(const char* call, const char* what, const void* handle) {
    std::fprintf(stderr,
                 "pgas: %s (%s %p): not supported: kernels of a %s loaded at run time cannot reach pgas's NVSHMEM "
                 "state; compile them into the program\n",
                 call, what, handle, what);
    return NVSHMEMX_ERROR_NOT_SUPPORTED;
}

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END

/// Launches `func<<<gridDims, blockDims, sharedMem, stream>>>` with the parameters `args` points at, as a cooperative
/// launch (its blocks may wait on each other, and on other PEs, through NVSHMEM's device barriers and collectives).
/// Returns NVSHMEMX_SUCCESS once it is enqueued; NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED, with a line on stderr
/// naming the call, the PE, the grid and the co-resident maximum, when the grid's blocks cannot all be resident at
/// once (launching would hang), and with CUDA's message when the device cannot launch cooperatively or the launch
/// fails.
static inline int nvshmemx_collective_launch(const void* func, dim3 gridDims, dim3 blockDims, void** args,
                                             std::size_t sharedMem, cudaStream_t stream) {
    const char* call = "nvshmemx_collective_launch";
    const long long most = pgas::nvshmem_compat::max_collective_grid(call, func, blockDims, sharedMem);
    if (most < 0) return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    const int pe = pgas::nvshmem_compat::the_runtime().heap().my_pe;
    try {
        pgas::detail::check_co_resident(call, pe, gridDims, (unsigned long long)most);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    }
    if (const cudaError_t status = cudaLaunchCooperativeKernel(func, gridDims, blockDims, args, sharedMem, stream);
        status != cudaSuccess) {
        (void)cudaGetLastError();
        std::fprintf(stderr, "pgas: %s on PE %d: cudaLaunchCooperativeKernel: %s\n", call, pe,
                     cudaGetErrorString(status));
        return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    }
    return NVSHMEMX_SUCCESS;
}

/// Stores in `*gridsize` the largest grid of `func` (of `blockDims` threads and `sharedMem` bytes of dynamic shared
/// memory) that nvshmemx_collective_launch accepts on this GPU, and returns NVSHMEMX_SUCCESS; or
/// NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED, with CUDA's message on stderr, when the device cannot launch cooperatively.
static inline int nvshmemx_collective_launch_query_gridsize(const void* func, dim3 blockDims, void** args,
                                                            std::size_t sharedMem, int* gridsize) {
    (void)args;
    const long long most = pgas::nvshmem_compat::max_collective_grid("nvshmemx_collective_launch_query_gridsize", func,
                                                                     blockDims, sharedMem);
    if (most < 0) return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    *gridsize = int(most);
    return NVSHMEMX_SUCCESS;
}

/// Registers [addr, addr + length) as a local buffer of RMA calls (host memory is page-locked and mapped for the GPU
/// while the heap is on one); returns 0, or NVSHMEMX_ERROR_INVALID_VALUE (NULL, length 0, overlapping a registered
/// buffer) with a line on stderr naming the call, the PE and the values.
static inline int nvshmemx_buffer_register(void* addr, std::size_t length) {
    return pgas::nvshmem_compat::the_runtime().register_buffer("nvshmemx_buffer_register", addr, length);
}

/// Forgets the buffer registered at `addr`; returns 0, or NVSHMEMX_ERROR_INVALID_VALUE with a line when none was.
static inline int nvshmemx_buffer_unregister(void* addr) {
    return pgas::nvshmem_compat::the_runtime().unregister_buffer("nvshmemx_buffer_unregister", addr);
}

/// Forgets every registered buffer.
static inline void nvshmemx_buffer_unregister_all() {
    pgas::nvshmem_compat::the_runtime().unregister_all_buffers("nvshmemx_buffer_unregister_all");
}

/// Collective: maps each PE's `buf_ptr` (the start of a cuMemCreate mapping of its GPU, created with
/// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) into the symmetric heap (pgas::world::register_symmetric) and returns
/// its symmetric address, valid in every call and kernel; NULL with a line naming the call, the PE and why (not such
/// a mapping, sizes that differ, the host transport). `flags` is reserved, as in NVSHMEM.
static inline void* nvshmemx_buffer_register_symmetric(void* buf_ptr, std::size_t size, int flags) {
    (void)flags;
    return pgas::nvshmem_compat::the_runtime().register_symmetric("nvshmemx_buffer_register_symmetric", buf_ptr, size);
}

/// Collective: undoes nvshmemx_buffer_register_symmetric (once every PE's GPU work is done); returns 0, or
/// NVSHMEMX_ERROR_INVALID_VALUE with a line for an address it did not return.
static inline int nvshmemx_buffer_unregister_symmetric(void* mmap_ptr, std::size_t size) {
    (void)size;
    return pgas::nvshmem_compat::the_runtime().unregister_symmetric("nvshmemx_buffer_unregister_symmetric", mmap_ptr);
}

/// Not supported: returns NVSHMEMX_ERROR_NOT_SUPPORTED with a line on stderr. A module loaded at run time
/// (cuModuleLoad) has no registered device state in pgas; build its kernels into the program instead (nvcc, no -rdc).
static inline int nvshmemx_cumodule_init(CUmodule module) {
    return pgas::nvshmem_compat::loaded_code_not_supported("nvshmemx_cumodule_init", "module", module);
}

/// Not supported: nothing to undo (nvshmemx_cumodule_init registers nothing); returns NVSHMEMX_ERROR_NOT_SUPPORTED.
static inline int nvshmemx_cumodule_finalize(CUmodule module) {
    (void)module;
    return NVSHMEMX_ERROR_NOT_SUPPORTED;
}

/// Not supported, as nvshmemx_cumodule_init: returns NVSHMEMX_ERROR_NOT_SUPPORTED with a line on stderr (kernels of a
/// library loaded at run time cannot reach pgas's NVSHMEM state; compile them into the program).
static inline int nvshmemx_culibrary_init(CUlibrary library) {
    return pgas::nvshmem_compat::loaded_code_not_supported("nvshmemx_culibrary_init", "library", library);
}

/// Not supported: returns NVSHMEMX_ERROR_NOT_SUPPORTED (nvshmemx_culibrary_init registers nothing).
static inline int nvshmemx_culibrary_finalize(CUlibrary library) {
    (void)library;
    return NVSHMEMX_ERROR_NOT_SUPPORTED;
}
