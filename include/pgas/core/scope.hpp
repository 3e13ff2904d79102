// Calling groups: every device op is templated on the group of threads that calls it.
#pragma once

#include <pgas/core/config.hpp>

#include <concepts>

#include <nv/target>

PGAS_NAMESPACE_BEGIN

// A group says which threads call an op together: all of them must call it
// with the same arguments (like a CUB warp or block primitive). rank() is the
// calling thread's index in the group, size() the group's thread count and
// sync() a barrier over it. On the host (host transport, CI) every group is
// the single calling CPU thread: rank 0, size 1, sync a no-op.

namespace detail {
// The caller's linear thread index in its block (0 on the host).
PGAS_HD inline unsigned thread_in_block() {
    NV_IF_TARGET(NV_IS_DEVICE, (return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);),
                 (return 0;))
}
}  // namespace detail

/// The calling thread alone (the default group of every op): rank 0, size 1, sync a no-op.
struct thread {
    /// The caller's index in the group: 0.
    PGAS_HD static unsigned rank() { return 0; }
    /// Threads in the group: 1.
    PGAS_HD static unsigned size() { return 1; }
    /// Nothing to wait for.
    PGAS_HD static void sync() {}
};

/// N consecutive lanes of one warp (N a power of two, at most 32), aligned to N: lanes
/// [k*N, k*N + N) of a warp call an op together. tile<N> with another N fails to compile.
template <unsigned N>
struct tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "pgas: tile<N> needs N a power of two between 1 and 32");
    /// The caller's lane index within its tile (0 on the host).
    PGAS_HD static unsigned rank() { NV_IF_TARGET(NV_IS_DEVICE, (return lane() % N;), (return 0;)) }
    /// N on the GPU (1 on the host).
    PGAS_HD static unsigned size() { NV_IF_TARGET(NV_IS_DEVICE, (return N;), (return 1;)) }
    /// `__syncwarp` over the tile's lanes (a no-op on the host).
    PGAS_HD static void sync() {
        if constexpr (N == 32) {
            NV_IF_TARGET(NV_IS_DEVICE, (__syncwarp();))
        } else if constexpr (N > 1) {
            NV_IF_TARGET(NV_IS_DEVICE, (__syncwarp(((1u << N) - 1u) << (lane() & ~(N - 1)));))
        }
    }

private:
    PGAS_HD static unsigned lane() { return detail::thread_in_block() % 32u; }
};

/// The 32 lanes of the calling warp.
using warp = tile<32>;

/// All threads of the calling thread block (every one of them must make the call: it syncs the block).
struct block {
    /// The caller's linear thread index in the block (0 on the host).
    PGAS_HD static unsigned rank() { return detail::thread_in_block(); }
    /// Threads in the block (1 on the host).
    PGAS_HD static unsigned size() {
        NV_IF_TARGET(NV_IS_DEVICE, (return blockDim.x * blockDim.y * blockDim.z;), (return 1;))
    }
    /// `__syncthreads()` (a no-op on the host).
    PGAS_HD static void sync() { NV_IF_TARGET(NV_IS_DEVICE, (__syncthreads();)) }
};

/// A calling group: pgas::thread, pgas::tile, pgas::warp, pgas::block, or a type with the same static
/// rank(), size() and sync().
template <class G>
concept group = requires {
    { G::rank() } -> std::same_as<unsigned>;
    { G::size() } -> std::same_as<unsigned>;
    G::sync();
};

PGAS_NAMESPACE_END
