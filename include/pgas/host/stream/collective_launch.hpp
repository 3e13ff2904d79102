// pgas::collective_launch: launches a kernel whose blocks synchronise with each other only when all of them fit on the
// GPU at once.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/cuda/check.hpp>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

template <class T>
struct is_device_context : std::false_type {};
template <class Tr>
struct is_device_context<device::context<Tr>> : std::true_type {};

// The PE of the first device::context among a launch's arguments (-1 when none is).
template <class... Args>
int launch_pe(const Args&... args) {
    int pe = -1;
    const auto take = [&pe](const auto& arg) {
        if constexpr (is_device_context<std::remove_cvref_t<decltype(arg)>>::value)
            if (pe < 0) pe = arg.my_pe();
    };
    (take(args), ...);
    return pe;
}

// collective_launch's refusal: a grid of `blocks` where at most `co_resident` fit at once.
inline void check_co_resident(const char* call, int pe, dim3 grid, unsigned long long co_resident) {
    const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
    if (blocks > co_resident)
        throw_error(errc::invalid_argument, pe, call,
                    "grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) + "x" + std::to_string(grid.z) +
                        " = " + std::to_string(blocks) + " blocks, but at most " + std::to_string(co_resident) +
                        " blocks of this kernel (with this block size and dynamic shared memory) are co-resident on "
                        "this GPU: its device-side barriers would wait forever; launch fewer blocks");
}

// How many blocks of `kernel` (of `block` threads and `shmem` bytes of dynamic shared memory) the current device holds
// at once: the largest grid a cooperative launch of it accepts. A device without cooperative launch, or a failed
// query, throws errc::cuda naming `call` and the PE.
inline unsigned long long co_resident_blocks(const char* call, int pe, const void* kernel, dim3 block,
                                             std::size_t shmem) {
    int device = 0, sms = 0, cooperative = 0, per_sm = 0;
    check_cuda(cudaGetDevice(&device), pe, call, "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), pe, call,
               "cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch)");
    if (!cooperative)
        throw_error(errc::cuda, pe, call,
                    "device " + std::to_string(device) + " does not support cooperative launches");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), pe, call,
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(block.x * block.y * block.z), shmem),
               pe, call, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return 1ull * unsigned(per_sm) * unsigned(sms);
}

}  // namespace detail

/// Launches `kernel<<<grid, block, shmem, stream>>>(args...)` as a cooperative launch (cudaLaunchCooperativeKernel),
/// so that the kernel may hold device-side barriers across its blocks (pgas barriers and collectives called by
/// every block, or a grid-wide barrier of its own); like nvshmemx_collective_launch. It launches only when every
/// block can be resident at once: at most cudaOccupancyMaxActiveBlocksPerMultiprocessor (for this kernel, block size
/// and `shmem`) x the number of SMs of the current device; otherwise it throws instead of launching a kernel that
/// would hang. PEs sharing one GPU each need their own share of it: this checks the kernel alone.
///
/// - **Called by** the host, with the GPU of the PE current; once per PE, like any kernel launch.
/// - **Returns** once the kernel is enqueued on `stream` (cooperative launches are not captured into CUDA graphs on
///   every CUDA version: launch it outside a capture).
/// - **Transports:** any; it is a launch, not a communication op. The PE named in errors is that of the first
///   device::context among `args` (-1 when there is none).
/// - **Errors:** a grid larger than the co-resident maximum throws pgas::error (errc::invalid_argument) naming the
///   call, the PE, the grid and the maximum; a device without cooperative launch, or a failed launch or query,
///   throws errc::cuda with CUDA's message. `args` must convert to the kernel's parameters (compile time).
template <class... Params, class... Args>
void collective_launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shmem, cudaStream_t stream,
                       Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args),
                  "pgas: collective_launch takes one argument per kernel parameter");
    const char* call = "collective_launch";
    const int pe = detail::launch_pe(args...);
    detail::check_co_resident(
        call, pe, grid, detail::co_resident_blocks(call, pe, reinterpret_cast<const void*>(kernel), block, shmem));
    std::tuple<std::remove_cvref_t<Params>...> values(std::forward<Args>(args)...);
    std::apply(
        [&](auto&... value) {
            void* pointers[] = {static_cast<void*>(&value)..., nullptr};
            detail::check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers,
                                                           shmem, stream),
                               pe, call, "cudaLaunchCooperativeKernel");
        },
        values);
}

PGAS_NAMESPACE_END
