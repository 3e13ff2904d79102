// The MoE bodies of moe.hpp as CUDA kernels, and their launchers on a stream (each one kernel, capturable in a graph).
#pragma once

#include "expert.hpp"
#include "moe.hpp"

#include <pgas/pgas.hpp>

#include <algorithm>
#include <string>

namespace moe {

template <class Tr>
__global__ void ll_dispatch_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                   const __grid_constant__ ll_buffers b, batch a) {
    ll_dispatch(ctx, b, a);
}
template <class Tr>
__global__ void ll_combine_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                  const __grid_constant__ ll_buffers b, batch a) {
    ll_combine(ctx, b, a);
}
template <class Tr>
__global__ void tp_dispatch_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                   const __grid_constant__ tp_buffers b, batch a) {
    tp_dispatch(ctx, b, a);
}
template <class Tr>
__global__ void tp_combine_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                  const __grid_constant__ tp_buffers b, batch a) {
    tp_combine(ctx, b, a);
}
template <class Tr>
__global__ void ll_toy_experts_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                      const __grid_constant__ ll_buffers b) {
    ll_toy_experts(ctx, b);
}
template <class Tr>
__global__ void tp_toy_experts_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                      const __grid_constant__ tp_buffers b) {
    tp_toy_experts(ctx, b);
}

namespace detail {
inline void cuda_check(cudaError_t status, int pe, const char* call) {
    if (status != cudaSuccess) throw pgas::error(pgas::errc::cuda, pe, call, cudaGetErrorString(status));
}

template <class Buffers, class Kernel>
void launch(const pgas::world& w, int local, const Buffers& b, const batch& a, cudaStream_t stream, const char* call,
            Kernel kernel) {
    const int pe = w.local_pe(local);
    if (b.n_pes != w.n_pes())
        config_error(pe, call, "buffers built for " + std::to_string(b.n_pes) + " PEs, world has " + std::to_string(w.n_pes()));
    check_batch(call, pe, b.cfg, a);
    cuda_check(cudaSetDevice(w.device_of(local)), pe, call);
    kernel<<<b.cfg.blocks, b.cfg.threads, 0, stream>>>(w.template context<pgas::nvlink>(local), b, a);
    cuda_check(cudaGetLastError(), pe, call);
}
}  // namespace detail

// Blocks per kernel such that every kernel of the `pes_on_device` PEs that
// share this GPU is resident at once: each waits for the others' signals (and
// its own blocks for each other at the grid barriers), so a block that cannot
// be scheduled would deadlock. At most `per_sm` blocks per SM and PE share.
inline int resident_blocks(int device, int pes_on_device, int threads = 256, int per_sm = 2) {
    int sms = 0, fit = 0;
    detail::cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), -1, "moe::resident_blocks");
    fit = per_sm;
    for (const void* kernel : {(const void*)ll_dispatch_kernel<pgas::nvlink>, (const void*)ll_combine_kernel<pgas::nvlink>,
                               (const void*)tp_dispatch_kernel<pgas::nvlink>, (const void*)tp_combine_kernel<pgas::nvlink>}) {
        int blocks = 0;
        detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0), -1,
                           "moe::resident_blocks");
        fit = std::min(fit, blocks);
    }
    return std::max(1, sms * fit / std::max(1, pes_on_device));
}

// One phase of local PE `local` on `stream` (the PE's GPU is made current).
// Every PE must make the same calls in the same order: dispatch, then combine.
inline void launch_ll_dispatch(const pgas::world& w, int local, const ll_buffers& b, const batch& a, cudaStream_t s) {
    detail::launch(w, local, b, a, s, "moe::ll_dispatch", ll_dispatch_kernel<pgas::nvlink>);
}
inline void launch_ll_combine(const pgas::world& w, int local, const ll_buffers& b, const batch& a, cudaStream_t s) {
    detail::launch(w, local, b, a, s, "moe::ll_combine", ll_combine_kernel<pgas::nvlink>);
}
inline void launch_tp_dispatch(const pgas::world& w, int local, const tp_buffers& b, const batch& a, cudaStream_t s) {
    detail::launch(w, local, b, a, s, "moe::tp_dispatch", tp_dispatch_kernel<pgas::nvlink>);
}
inline void launch_tp_combine(const pgas::world& w, int local, const tp_buffers& b, const batch& a, cudaStream_t s) {
    detail::launch(w, local, b, a, s, "moe::tp_combine", tp_combine_kernel<pgas::nvlink>);
}
// The example's stand-in experts between the two phases.
inline void launch_toy_experts(const pgas::world& w, int local, const ll_buffers& b, cudaStream_t s) {
    detail::cuda_check(cudaSetDevice(w.device_of(local)), w.local_pe(local), "moe::toy_experts");
    ll_toy_experts_kernel<pgas::nvlink><<<b.cfg.blocks, b.cfg.threads, 0, s>>>(w.context<pgas::nvlink>(local), b);
    detail::cuda_check(cudaGetLastError(), w.local_pe(local), "moe::toy_experts");
}
inline void launch_toy_experts(const pgas::world& w, int local, const tp_buffers& b, cudaStream_t s) {
    detail::cuda_check(cudaSetDevice(w.device_of(local)), w.local_pe(local), "moe::toy_experts");
    tp_toy_experts_kernel<pgas::nvlink><<<b.cfg.blocks, b.cfg.threads, 0, s>>>(w.context<pgas::nvlink>(local), b);
    detail::cuda_check(cudaGetLastError(), w.local_pe(local), "moe::toy_experts");
}

// Reads and writes PEs' buffers of a GPU world (check.hpp's access). Callers
// synchronize the PEs' streams before a read. A write waits for the device:
// cudaMemcpy from pageable memory may return before its DMA has landed, and
// the PEs' kernels run on non-blocking streams, which do not wait for the
// legacy stream that copy went on.
struct gpu_access {
    const pgas::world& w;
    template <class T>
    std::vector<T> read(pgas::symmetric_ptr<T> p, int local, std::size_t count) {
        std::vector<T> out(count);
        detail::cuda_check(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost),
                           w.local_pe(local), "moe::gpu_access::read");
        return out;
    }
    template <class T>
    void write(pgas::symmetric_ptr<T> p, int local, const std::vector<T>& v) {
        detail::cuda_check(cudaMemcpy(w.device_address(p, local), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                           w.local_pe(local), "moe::gpu_access::write");
        detail::cuda_check(cudaSetDevice(w.device_of(local)), w.local_pe(local), "moe::gpu_access::write");
        detail::cuda_check(cudaDeviceSynchronize(), w.local_pe(local), "moe::gpu_access::write");
    }
};

}  // namespace moe
