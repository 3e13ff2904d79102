// Where the calling thread is in an expert-parallel kernel: its block, thread, warp and lane, on a GPU and on the host
// transport.
#pragma once

#include <pgas/core/config.hpp>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace ep {

namespace detail {
// The host transport's blockIdx.x and gridDim.x: set by pgas::ep::buffer's host runner on each thread it starts
// (one per block of a PE); the defaults are a one-block grid.
struct host_grid {
    unsigned block = 0, blocks = 1;
};
inline thread_local host_grid host_here;
}  // namespace detail

/// The calling thread's place in the kernel that runs an ep body. On a GPU: blockIdx.x, threadIdx.x and warps of
/// 32 lanes. On the host transport each block of a PE is one thread (one thread per block, one lane per warp), so
/// loops over warps and lanes run whole and a PE's blocks run concurrently, as on a GPU. Use it in expert kernels
/// that run on both.
struct grid {
    /// This block, and the blocks of the launch.
    PGAS_HD static unsigned block() {
        NV_IF_TARGET(NV_IS_DEVICE, (return blockIdx.x;), (return detail::host_here.block;))
    }
    /// The blocks of the launch.
    PGAS_HD static unsigned blocks() {
        NV_IF_TARGET(NV_IS_DEVICE, (return gridDim.x;), (return detail::host_here.blocks;))
    }
    /// This thread in its block.
    PGAS_HD static unsigned thread() { NV_IF_TARGET(NV_IS_DEVICE, (return threadIdx.x;), (return 0;)) }
    /// Threads per block.
    PGAS_HD static unsigned threads() { NV_IF_TARGET(NV_IS_DEVICE, (return blockDim.x;), (return 1;)) }
    /// This thread's warp in its block.
    PGAS_HD static unsigned warp() { return thread() / lanes(); }
    /// Warps per block.
    PGAS_HD static unsigned warps() { return threads() / lanes(); }
    /// This thread's lane in its warp.
    PGAS_HD static unsigned lane() { return thread() % lanes(); }
    /// Lanes per warp.
    PGAS_HD static unsigned lanes() { NV_IF_TARGET(NV_IS_DEVICE, (return 32;), (return 1;)) }
    /// This thread's index in the whole launch.
    PGAS_HD static unsigned global_thread() { return block() * threads() + thread(); }
    /// The launch's thread count.
    PGAS_HD static unsigned global_threads() { return blocks() * threads(); }
};

}  // namespace ep
PGAS_NAMESPACE_END
