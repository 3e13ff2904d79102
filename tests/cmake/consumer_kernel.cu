// The same consumer's CUDA translation unit: kernels using the device API (device.hpp only) compile without -rdc.
#include <pgas/device.hpp>

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// A ring shift, a put with a signal that the next PE waits for, and block-wide
// put, barrier and allreduce: enough that the device headers are really
// compiled (and warning-free, see the consumers' CMakeLists) for each transport.
template <class Transport, class T>
__global__ void shift(const __grid_constant__ pgas::device::context<Transport> ctx, pgas::symmetric_ptr<int> r,
                      pgas::symmetric_ptr<T> data, pgas::symmetric_ptr<std::uint64_t> sig, std::size_t count) {
    const int next = (ctx.my_pe() + 1) % ctx.n_pes();
    if (threadIdx.x == 0) {
        pgas::p(ctx, r, ctx.my_pe(), next);
        pgas::put_signal(ctx, data, ctx.local(data), 1, sig, 1, pgas::signal_op::add, next);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, 1);
    }
    pgas::put<pgas::block>(ctx, data + 1, ctx.local(data) + 1, count - 1, next);
    pgas::barrier_all<pgas::block>(ctx);
    pgas::allreduce<pgas::block>(ctx, ctx.world_team(), data, data, count, pgas::op::sum);
}
template __global__ void shift<pgas::host, float>(const __grid_constant__ pgas::device::context<pgas::host>,
                                                  pgas::symmetric_ptr<int>, pgas::symmetric_ptr<float>,
                                                  pgas::symmetric_ptr<std::uint64_t>, std::size_t);
template __global__ void shift<pgas::nvlink, float>(const __grid_constant__ pgas::device::context<pgas::nvlink>,
                                                    pgas::symmetric_ptr<int>, pgas::symmetric_ptr<float>,
                                                    pgas::symmetric_ptr<std::uint64_t>, std::size_t);
template __global__ void shift<pgas::nvlink, __half>(const __grid_constant__ pgas::device::context<pgas::nvlink>,
                                                     pgas::symmetric_ptr<int>, pgas::symmetric_ptr<__half>,
                                                     pgas::symmetric_ptr<std::uint64_t>, std::size_t);
template __global__ void shift<pgas::nvlink, __nv_bfloat16>(
    const __grid_constant__ pgas::device::context<pgas::nvlink>, pgas::symmetric_ptr<int>,
    pgas::symmetric_ptr<__nv_bfloat16>, pgas::symmetric_ptr<std::uint64_t>, std::size_t);
