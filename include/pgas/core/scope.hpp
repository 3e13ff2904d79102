// Calling groups: every device op is templated on the group of threads that calls it.
#pragma once

#include <pgas/core/config.hpp>

#include <concepts>

PGAS_NAMESPACE_BEGIN

// A group says which threads call an op together: all of them must call it
// with the same arguments (like a CUB warp or block primitive). rank() is the
// calling thread's index in the group, size() the group's thread count and
// sync() a barrier over it. On the host (host transport, CI) every group is
// the single calling CPU thread: rank 0, size 1, sync a no-op.
struct thread {
    PGAS_HD static unsigned rank() { return 0; }
    PGAS_HD static unsigned size() { return 1; }
    PGAS_HD static void sync() {}
};

// N consecutive lanes of one warp (N a power of two, at most 32), aligned to N.
template <unsigned N>
struct tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                  "pgas: tile<N> needs N a power of two between 1 and 32");
    PGAS_HD static unsigned rank() {
#if PGAS_DEVICE_PASS
        return lane() % N;
#else
        return 0;
#endif
    }
    PGAS_HD static unsigned size() {
#if PGAS_DEVICE_PASS
        return N;
#else
        return 1;
#endif
    }
    PGAS_HD static void sync() {
#if PGAS_DEVICE_PASS
        if constexpr (N == 32) {
            __syncwarp();
        } else if constexpr (N > 1) {
            unsigned first = lane() & ~(N - 1);
            __syncwarp(((1u << N) - 1u) << first);
        }
#endif
    }

private:
#if PGAS_DEVICE_PASS
    __device__ static unsigned lane() {
        unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        return linear % 32u;
    }
#endif
};

using warp = tile<32>;

// All threads of the calling thread block.
struct block {
    PGAS_HD static unsigned rank() {
#if PGAS_DEVICE_PASS
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
#else
        return 0;
#endif
    }
    PGAS_HD static unsigned size() {
#if PGAS_DEVICE_PASS
        return blockDim.x * blockDim.y * blockDim.z;
#else
        return 1;
#endif
    }
    PGAS_HD static void sync() {
#if PGAS_DEVICE_PASS
        __syncthreads();
#endif
    }
};

template <class G>
concept group = requires {
    { G::rank() } -> std::same_as<unsigned>;
    { G::size() } -> std::same_as<unsigned>;
    G::sync();
};

PGAS_NAMESPACE_END
