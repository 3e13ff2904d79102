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

// The first statement of every small on-stream kernel (collectives, barriers, RMA; not ep's, whose grids fill the
// GPU beside the other PEs' kernels on it): waits for the stream's earlier work as above, then lets the stream's next
// kernel begin launching (griddepcontrol.launch_dependents; otherwise it launches as this one's last block exits).
// The next kernel publishes nothing early: it sits resident in its own wait until this one completes, and only then
// lets the one after it launch, so a stream holds at most one waiting grid beside its running one. Triggered before
// the wait, every kernel queued on a stream launched at once and stayed resident: with two PEs on one GPU, nine
// 32-block allreduces queued by one PE took every slot while its first waited for the other PE's first, which never
// started (tests/gpu: "queued on-stream collectives of PEs sharing one GPU"). This order costs nothing measured:
// bench_nvlink's allreduce_on_stream at 8 B-4 KiB, two PEs on one H200, three rounds alternated (2026-11-29), took
// 7.8-9.6 us per call, 9.1-9.9 triggered first, 9.0-10.9 with the wait alone (no trigger). On 2xH200 the trigger
// first had taken 0.1 us off the wait alone (allreduce 8 B 3.65 against 3.75 us); not yet remeasured in this order.
__device__ __forceinline__ void begin_stream_kernel() {
    wait_for_stream_predecessors();
    NV_IF_TARGET(NV_PROVIDES_SM_90, (asm volatile("griddepcontrol.launch_dependents;" ::: "memory");))
}

// Attribute A of `device`, asked once per device (0 when the query fails: not this launch's error, the launch itself
// reports a bad device).
template <cudaDeviceAttr A>
int cached_device_attribute(int device) {
    constexpr int cached_devices = 64;
    static std::atomic<int> known[cached_devices] = {};  // the value + 1; 0: not asked yet
    const bool cache = device >= 0 && device < cached_devices;
    if (cache) {
        if (const int k = known[device].load(std::memory_order_relaxed); k != 0) return k - 1;
    }
    int value = 0;
    if (cudaDeviceGetAttribute(&value, A, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (cache) known[device].store(value + 1, std::memory_order_relaxed);
    return value;
}

// Whether `device` runs programmatic dependent launch (compute capability 9.0 or newer).
inline bool device_has_dependent_launch(int device) {
    return cached_device_attribute<cudaDevAttrComputeCapabilityMajor>(device) >= 9;
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
