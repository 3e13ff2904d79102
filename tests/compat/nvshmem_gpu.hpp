// What the translation units of the NVSHMEM GPU program share: the symmetric words, the second TU's launchers and
// the third's host collectives.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

// Symmetric words from nvshmem_malloc (raw pointers, as NVSHMEM programs pass them).
struct shared_words {
    int* from_left;              // nvshmem_int_p from the left neighbour
    int* block;                  // 4 ints by nvshmem_putmem_nbi from the left neighbour
    int* counter;                // PE 0's copy hands out tickets (nvshmem_int_atomic_fetch_add)
    int* ticket;                 // this PE's ticket
    int* payload;                // nvshmem_putmem_signal from the left neighbour
    std::uint64_t* signal;       // its signal
    std::uint64_t* seen_signal;  // what nvshmem_signal_wait_until returned
    int* coll_src;               // 4 ints, 10 * my_pe + i, the collectives' source
    int* block_sum;              // nvshmemx_int_sum_reduce_block of coll_src (a kernel)
    int* gathered;               // nvshmemx_int_fcollect_block of coll_src: 4 ints of each PE
    int* thread_max;             // nvshmem_int_max_reduce by one thread of a kernel
    int* team_sum;               // nvshmemx_int_sum_reduce_block over a split team (its handle passed to the kernel)
    int* team_me;                // nvshmem_team_my_pe of that team, in the kernel
    __half* half_from_left;      // nvshmem_half_p from the left neighbour
    std::size_t* any_index;      // what nvshmem_uint64_wait_until_any returned for the signal (its index, 0)
    double2* maxloc;             // [0]: {my_pe % 2, 10 + my_pe}; [1]: nvshmemx_double2_maxloc_reduce_block of [0]
    short* short_from_left;      // nvshmem_short_p from the left neighbour, awaited by nvshmem_short_wait_until
    int* warpgroup_from_left;    // [0]: nvshmem_int_p by the left neighbour's second warpgroup before its barrier;
                                 // [1]: what this PE's second warpgroup read there after nvshmemx_barrier_warpgroup
};

// The number of ints of each collective block.
constexpr int coll_count = 4;

// The third TU (nvshmem_gpu_host_cxx.cpp, a plain C++ compiler's): host collectives with the heap on the GPU; returns
// the number of wrong values.
int host_collectives_from_cxx();
// Launches the second TU's kernel (nvshmem_gpu_kernels.cu).
void launch_ticket_and_signal(const shared_words& words, cudaStream_t stream);
// Launches the second TU's collectives kernel with nvshmemx_collective_launch; returns its status.
int launch_collectives(shared_words& words, cudaStream_t stream);
// Launches the second TU's kernel that sums coll_src over `team` (a split team's handle, by value).
void launch_team_sum(const shared_words& words, int team, cudaStream_t stream);
// Launches the second TU's kernel of 256 threads whose second warpgroup alone puts to the right and meets the other
// PEs in nvshmemx_barrier_warpgroup (named barrier 2), then reads what the left PE put.
void launch_warpgroup_barrier(const shared_words& words, cudaStream_t stream);
