// Launch shapes and loop counts that the pgas and NVSHMEM point-to-point kernels share, so both do the same work.
#pragma once

#include <algorithm>
#include <cstddef>

namespace compare {

// Device-loop benchmarks (ping-pong, barrier): each kernel runs this many
// rounds, and the graph holds a few kernels.
constexpr int loop_rounds = 1000;
constexpr int loop_kernels = 10;
constexpr int loop_reps = 9;

// put/get bandwidth: one block of block_threads ("block"), or a grid of up
// to grid_blocks_max such blocks, each moving a contiguous 16-byte aligned
// chunk ("grid"). The grid grows with the message: one block per 64 KiB.
constexpr int block_threads = 1024;
constexpr int grid_blocks_max = 64;
inline int grid_blocks(std::size_t bytes) {
    return int(std::clamp<std::size_t>(bytes / (std::size_t{64} << 10), 1, grid_blocks_max));
}
// Bytes of block b's chunk start and length (16-byte aligned chunks).
__host__ __device__ inline std::size_t chunk_bytes(std::size_t bytes, unsigned blocks) {
    const std::size_t per = (bytes + blocks - 1) / blocks;
    return (per + 15) / 16 * 16;
}

// Collectives timed as one device-side block call per PE (and the in-kernel
// allreduce): 512 threads, as pgas's load/store tuning policy uses.
constexpr int coll_threads = 512;

// Message rate: rate_blocks x rate_threads threads, each issuing
// rate_per_thread 8-byte non-blocking puts to distinct words, then quiet.
constexpr int rate_blocks = 32;
constexpr int rate_threads = 256;
constexpr int rate_per_thread = 8;
constexpr std::size_t rate_messages = std::size_t(rate_blocks) * rate_threads * rate_per_thread;

// On-stream put + quiet: one 8-byte put per graph node pair.
constexpr int on_stream_iters = 200;

}  // namespace compare
