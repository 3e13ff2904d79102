// The route GPU worker's second kernel: route_checks::run_sync (signals, fence, quiet, barriers, collectives).
#include "route_gpu_kernels.hpp"

namespace route_gpu_kernels {
namespace {

PGAS_KERNEL void sync_checks_kernel(__grid_constant__ const route_ctx_t ctx, __grid_constant__ const near_ctx_t near_ctx,
                                    __grid_constant__ const far_ctx_t far_ctx, const route_checks::buffers b) {
    route_checks::run_sync(ctx, near_ctx, far_ctx, b);
}

}  // namespace

cudaError_t launch_sync_checks(const route_ctx_t& ctx, const near_ctx_t& near_ctx, const far_ctx_t& far_ctx,
                               const route_checks::buffers& b, cudaStream_t stream) {
    sync_checks_kernel<<<1, 1, 0, stream>>>(ctx, near_ctx, far_ctx, b);
    return cudaGetLastError();
}

}  // namespace route_gpu_kernels
