// The route GPU worker's two kernels, each in a translation unit of its own: route_checks::run_data
// (route_gpu_data_kernel.cu) and route_checks::run_sync (route_gpu_sync_kernel.cu).
#pragma once

#include <pgas/device.hpp>
#include <pgas/transport/libfabric/libfabric.hpp>
#include <pgas/transport/route/route.hpp>

#include "route_checks.hpp"

#include <cuda_runtime.h>

namespace route_gpu_kernels {

using near_ctx_t = pgas::device::context<pgas::nvlink>;
using far_ctx_t = pgas::device::context<pgas::libfabric>;
using route_ctx_t = pgas::device::context<pgas::route<pgas::nvlink, pgas::libfabric>>;

// Launches run_data on one thread on `stream`; returns the launch's status.
cudaError_t launch_data_checks(const route_ctx_t& ctx, const route_checks::buffers& b, cudaStream_t stream);

// Launches run_sync on one thread on `stream`; returns the launch's status.
cudaError_t launch_sync_checks(const route_ctx_t& ctx, const near_ctx_t& near_ctx, const far_ctx_t& far_ctx,
                               const route_checks::buffers& b, cudaStream_t stream);

}  // namespace route_gpu_kernels
