// Expert-parallel dispatch and combine on a CUDA stream: one kernel per phase, capturable in a CUDA graph (nvcc only).
#pragma once

#if !defined(__CUDACC__)
#error "pgas/host/ep/on_stream.cuh launches kernels: compile this translation unit with nvcc"
#endif

#include <pgas/core/error.hpp>
#include <pgas/ep/low_latency.hpp>
#include <pgas/ep/throughput.hpp>
#include <pgas/host/ep/buffer.hpp>
#include <pgas/host/nvlink/builder.hpp>
#include <pgas/host/stream/launch.cuh>
#include <pgas/host/world.hpp>
#include <pgas/transport/nvlink/nvlink.hpp>

#include <algorithm>

#include <cuda_runtime.h>

PGAS_NAMESPACE_BEGIN
namespace ep {

namespace detail {
PGAS_KERNELS_BEGIN
// Launched programmatically (host/stream/launch.cuh) but without an early trigger: their grids fill the GPU beside
// the other PEs' kernels sharing it, and a successor's waiting blocks would take those slots.
template <class Tr, class Layout>
PGAS_KERNEL void dispatch_kernel(const __grid_constant__ device::context<Tr> ctx, const __grid_constant__ Layout b,
                                 batch a) {
    pgas::detail::wait_for_stream_predecessors();
    ep::dispatch(ctx, b, a);
}
template <class Tr, class Layout>
PGAS_KERNEL void combine_kernel(const __grid_constant__ device::context<Tr> ctx, const __grid_constant__ Layout b,
                                batch a) {
    pgas::detail::wait_for_stream_predecessors();
    ep::combine(ctx, b, a);
}
PGAS_KERNELS_END

inline void cuda_check(cudaError_t status, int pe, const char* call) {
    if (status != cudaSuccess) throw pgas::error(errc::cuda, pe, call, cudaGetErrorString(status));
}

template <class Layout, class Kernel>
void launch(const buffer<Layout>& buf, int local, const batch& a, cudaStream_t stream, const char* call,
            Kernel kernel) {
    world& w = buf.owner();
    const int pe = w.local_pe(local);
    buf.check(call, local, a);
    const config& c = buf.shape();
    cuda_check(cudaSetDevice(w.device_of(local)), pe, call);
    const cudaError_t launched = pgas::detail::try_launch_on_stream(kernel, c.blocks, c.threads, stream,
                                                                    w.template context<nvlink>(local), buf.layout(), a);
    if (launched == cudaErrorLaunchOutOfResources) {  // a block wider than the kernel's registers allow: say so
        cudaFuncAttributes kernel_info{};
        cuda_check(cudaFuncGetAttributes(&kernel_info, kernel), pe, call);
        throw pgas::error(errc::invalid_argument, pe, call,
                          "config::threads = " + std::to_string(c.threads) + ", but this kernel, at " +
                              std::to_string(kernel_info.numRegs) +
                              " registers a thread in this build, launches at "
                              "most " +
                              std::to_string(kernel_info.maxThreadsPerBlock) + " threads a block");
    }
    cuda_check(launched, pe, call);
}
}  // namespace detail

/// Blocks per kernel such that every ep kernel of the `pes_on_device` PEs sharing GPU `device` is resident at
/// once (set config::blocks to it): the PEs' kernels wait for each other's signals, and a kernel's blocks for
/// each other at its grid barriers, so a block that could not be scheduled would deadlock. At most `per_sm`
/// blocks of `threads` per SM, split between the PEs; fewer when a kernel's registers leave no room. When no block
/// of `threads` fits an SM beside some ep kernel's registers, throws pgas::error (errc::invalid_argument) naming
/// `threads`.
inline int resident_blocks(int device, int pes_on_device, int threads = 256, int per_sm = 2) {
    constexpr const char* call = "ep::resident_blocks";
    int sms = 0;
    detail::cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), -1, call);
    int fit = per_sm;
    for (const void* kernel : {(const void*)detail::dispatch_kernel<nvlink, low_latency_layout>,
                               (const void*)detail::combine_kernel<nvlink, low_latency_layout>,
                               (const void*)detail::dispatch_kernel<nvlink, throughput_layout>,
                               (const void*)detail::combine_kernel<nvlink, throughput_layout>}) {
        int blocks = 0;
        detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0), -1, call);
        fit = std::min(fit, blocks);
    }
    if (fit == 0)
        throw pgas::error(errc::invalid_argument, -1, call,
                          "threads = " + std::to_string(threads) +
                              ": no block that wide fits an SM beside the ep "
                              "kernels' registers in this build (PGAS_CHECKS builds take more)");
    return std::max(1, sms * fit / std::max(1, pes_on_device));
}

/// Dispatch of local PE `local` on `stream` over NVLink (that PE's GPU is made current): one kernel of
/// config::blocks blocks, graph-capturable. Every PE makes the same calls in the same order (dispatch, combine,
/// dispatch, ...), and the kernels of PEs sharing a GPU must all be enqueued before any of them can finish (they
/// wait for each other). Shape errors throw pgas::error before the launch; data errors (PGAS_EP_CHECKS) print
/// the call, PE, token and value and trap, which the next CUDA call on the stream reports.
template <class Layout>
void dispatch_on_stream(const buffer<Layout>& buf, int local, const batch& a, cudaStream_t stream) {
    detail::launch(buf, local, a, stream, buffer<Layout>::dispatch_call(), detail::dispatch_kernel<nvlink, Layout>);
}
/// Combine of local PE `local` on `stream`, after its dispatch and the experts (which write expert_y) on the same
/// stream; as dispatch_on_stream.
template <class Layout>
void combine_on_stream(const buffer<Layout>& buf, int local, const batch& a, cudaStream_t stream) {
    detail::launch(buf, local, a, stream, buffer<Layout>::combine_call(), detail::combine_kernel<nvlink, Layout>);
}

}  // namespace ep
PGAS_NAMESPACE_END
