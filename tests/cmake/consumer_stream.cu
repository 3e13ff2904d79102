// The consumer's stream-ordered calls (host/stream/collectives.cuh): instantiated, not run (the consumer tests run on CPUs).
#include <pgas/device.hpp>
#include <pgas/host/stream/collectives.cuh>

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {
// A user's element type of internal linkage: the library's kernels instantiated
// with it are internal too, and must compile without a warning (nvcc #1407-D).
struct particle {
    float x, y, z, w;
};
}  // namespace

void consumer_broadcast_on_stream(const pgas::device::context<pgas::nvlink>& ctx, pgas::symmetric_ptr<particle> p,
                                  std::size_t count, cudaStream_t stream) {
    pgas::put_on_stream(ctx, p, ctx.local(p), count, (ctx.my_pe() + 1) % ctx.n_pes(), stream);
    pgas::broadcast_on_stream(ctx, ctx.world_team(), p, p, count, 0, stream);
}

template <class T>
void consumer_allreduce_on_stream(const pgas::device::context<pgas::nvlink>& ctx, pgas::symmetric_ptr<T> data,
                                  pgas::symmetric_ptr<std::uint64_t> sig, std::size_t count, cudaStream_t stream) {
    const int next = (ctx.my_pe() + 1) % ctx.n_pes();
    pgas::put_on_stream(ctx, data, ctx.local(data), count, next, stream);
    pgas::signal_on_stream(ctx, sig, 1, pgas::signal_op::add, next, stream);
    pgas::barrier_all_on_stream(ctx, stream);
    pgas::allreduce_on_stream(ctx, ctx.world_team(), data, data, count, pgas::op::sum, stream);
}
template void consumer_allreduce_on_stream<float>(const pgas::device::context<pgas::nvlink>&,
                                                  pgas::symmetric_ptr<float>, pgas::symmetric_ptr<std::uint64_t>,
                                                  std::size_t, cudaStream_t);
template void consumer_allreduce_on_stream<__half>(const pgas::device::context<pgas::nvlink>&,
                                                   pgas::symmetric_ptr<__half>, pgas::symmetric_ptr<std::uint64_t>,
                                                   std::size_t, cudaStream_t);
template void consumer_allreduce_on_stream<__nv_bfloat16>(const pgas::device::context<pgas::nvlink>&,
                                                          pgas::symmetric_ptr<__nv_bfloat16>,
                                                          pgas::symmetric_ptr<std::uint64_t>, std::size_t,
                                                          cudaStream_t);
