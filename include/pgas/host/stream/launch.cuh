// The one launch behind every pgas on-stream kernel: programmatic dependent launch on sm_90+, each kernel waiting
// for the stream's earlier work before it touches memory.
#pragma once

#if !defined(__CUDACC__)
#error "pgas/host/stream/launch.cuh launches kernels: compile this translation unit with nvcc"
#endif

#include <pgas/host/cuda/check.hpp>

#include <atomic>
#include <utility>

#include <cuda_runtime.h>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The first statement of every kernel launch_on_stream starts, in every thread: waits until the kernels before it on
// the stream have completed and their writes are visible (griddepcontrol.wait), so the kernel sees exactly what a
// plainly launched one would. A no-op for a kernel launched without the attribute, and below sm_90.
__device__ __forceinline__ void wait_for_stream_predecessors() {
    NV_IF_TARGET(NV_PROVIDES_SM_90, (asm volatile("griddepcontrol.wait;" ::: "memory");))
}

// Lets the stream's next kernel begin launching while this one runs (griddepcontrol.launch_dependents; otherwise it
// launches as this one's last block exits): it publishes nothing early, as a programmatic launch waits as above
// before it reads anything. Only for kernels of small grids: the next kernel's blocks then sit resident, waiting, and
// a grid sized to fill the GPU beside another PE's kernels on it (ep, under MPS) must not lose those slots. Called
// before wait_for_stream_predecessors, it took a further 0.1 us off each small call on 2xH200 (allreduce 8 B:
// 3.94 us launched plainly, 3.75 with the wait alone, 3.65 with both).
__device__ __forceinline__ void let_next_stream_kernel_launch() {
    NV_IF_TARGET(NV_PROVIDES_SM_90, (asm volatile("griddepcontrol.launch_dependents;" ::: "memory");))
}

// Whether `device` runs programmatic dependent launch (compute capability 9.0 or newer), asked once per device.
inline bool device_has_dependent_launch(int device) {
    constexpr int cached_devices = 64;
    static std::atomic<signed char> known[cached_devices] = {};  // 0: not asked yet, 1: yes, -1: no
    const bool cache = device >= 0 && device < cached_devices;
    if (cache) {
        if (const signed char k = known[device].load(std::memory_order_relaxed); k != 0) return k > 0;
    }
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        (void)cudaGetLastError();  // not this launch's error: the launch itself reports a bad device
        return false;
    }
    if (cache) known[device].store(major >= 9 ? 1 : -1, std::memory_order_relaxed);
    return major >= 9;
}

// Enqueues kernel<<<blocks, threads, 0, stream>>>(args...) on the current device, with programmatic stream
// serialization where the device has it: the kernel's launch and block scheduling then overlap the end of the
// stream's previous kernel instead of following its completion (NCCL launches its symmetric-memory kernels the same
// way). Safe only for a kernel that calls wait_for_stream_predecessors() before any
// memory access, which every pgas on-stream kernel does first. Returns the launch's status, with CUDA's last error
// cleared (try_launch_on_stream: for callers that explain a failure themselves).
template <class... Params, class... Args>
cudaError_t try_launch_on_stream(void (*kernel)(Params...), dim3 blocks, dim3 threads, cudaStream_t stream,
                                 Args&&... args) {
    int device = 0;
    if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) return status;
    cudaLaunchAttribute dependent{};
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = blocks;
    config.blockDim = threads;
    config.stream = stream;
    config.attrs = &dependent;
    config.numAttrs = device_has_dependent_launch(device) ? 1 : 0;
    const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
    if (status != cudaSuccess) (void)cudaGetLastError();
    return status;
}

// try_launch_on_stream, a failed launch thrown as pgas::error (errc::cuda) naming `call` and `pe`.
template <class... Params, class... Args>
void launch_on_stream(void (*kernel)(Params...), dim3 blocks, dim3 threads, cudaStream_t stream, int pe,
                      const char* call, Args&&... args) {
    check_cuda(try_launch_on_stream(kernel, blocks, threads, stream, std::forward<Args>(args)...), pe, call,
               "kernel launch");
}

}  // namespace detail
PGAS_NAMESPACE_END
