// The route GPU worker's first kernel: route_checks::run_data (every op byte for byte, near and far).
#include "route_gpu_kernels.hpp"

namespace route_gpu_kernels {
namespace {

PGAS_KERNEL void data_checks_kernel(__grid_constant__ const route_ctx_t ctx, const route_checks::buffers b) {
    route_checks::run_data(ctx, b);
}

}  // namespace

cudaError_t launch_data_checks(const route_ctx_t& ctx, const route_checks::buffers& b, cudaStream_t stream) {
    data_checks_kernel<<<1, 1, 0, stream>>>(ctx, b);
    return cudaGetLastError();
}

}  // namespace route_gpu_kernels
