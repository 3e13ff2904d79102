// The toy experts (toy_expert.hpp) as a kernel on a PE's stream, for the GPU tests and bench_moe (nvcc only).
#pragma once

#include "toy_expert.hpp"

#include <pgas/host/ep/on_stream.cuh>

namespace ep_test {

template <class Tr, class Layout>
__global__ void toy_experts_kernel(const __grid_constant__ pgas::device::context<Tr> ctx,
                                   const __grid_constant__ Layout b) {
    toy_experts(ctx, b);
}

// Local PE `local`'s experts between its dispatch and combine on `stream` (the buffer's grid).
template <class Layout>
void launch_toy_experts(const pgas::ep::buffer<Layout>& buf, int local, cudaStream_t stream) {
    pgas::world& w = buf.owner();
    const char* call = "ep_test::launch_toy_experts";
    pgas::ep::detail::cuda_check(cudaSetDevice(w.device_of(local)), w.local_pe(local), call);
    toy_experts_kernel<<<buf.shape().blocks, buf.shape().threads, 0, stream>>>(w.context<pgas::nvlink>(local),
                                                                               buf.layout());
    pgas::ep::detail::cuda_check(cudaGetLastError(), w.local_pe(local), call);
}

}  // namespace ep_test
