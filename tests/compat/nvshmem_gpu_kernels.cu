// The second translation unit of the NVSHMEM GPU program: its kernel reaches the heap through this TU's own device
// state (no -rdc), with an atomic ticket and a put-with-signal the next PE waits for (signal_wait_until and
// wait_until_any), and device collectives by a block and by a thread in a kernel started by nvshmemx_collective_launch,
// a reduction over a split team made after this TU's state was first filled (its handle passed by value) and over
// NVSHMEMX_TEAM_SAME_MYPE_NODE, and a barrier by one warpgroup of a block.
#include "nvshmem_gpu.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void ticket_and_signal(shared_words words) {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes;
    words.ticket[0] = nvshmem_int_atomic_fetch_add(words.counter, 1, 0);
    const int payload = 100 + me;
    nvshmem_putmem_signal(words.payload, &payload, sizeof payload, words.signal, 1, NVSHMEM_SIGNAL_SET, right);
    words.seen_signal[0] = nvshmem_signal_wait_until(words.signal, NVSHMEM_CMP_EQ, 1);
    words.any_index[0] = nvshmem_uint64_wait_until_any(words.signal, 1, nullptr, NVSHMEM_CMP_EQ, 1);
    nvshmem_barrier_all();
}

void launch_ticket_and_signal(const shared_words& words, cudaStream_t stream) {
    ticket_and_signal<<<1, 1, 0, stream>>>(words);
}

__global__ void collectives(shared_words words) {
    nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, words.block_sum, words.coll_src, coll_count);
    nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, words.gathered, words.coll_src, coll_count);
    nvshmemx_barrier_block(NVSHMEMX_TEAM_NODE);
    nvshmemx_double2_maxloc_reduce_block(NVSHMEM_TEAM_WORLD, words.maxloc + 1, words.maxloc, 1);
    if (threadIdx.x == 0) {
        nvshmem_int_max_reduce(NVSHMEM_TEAM_SHARED, words.thread_max, words.coll_src, coll_count);
        nvshmem_team_sync(NVSHMEM_TEAM_WORLD);
    }
}

int launch_collectives(shared_words& words, cudaStream_t stream) {
    int most = 0;
    void* args[] = {&words};
    const int query = nvshmemx_collective_launch_query_gridsize((const void*)collectives, dim3(64), args, 0, &most);
    if (query != NVSHMEMX_SUCCESS || most < 1) return query != NVSHMEMX_SUCCESS ? query : -1;
    return nvshmemx_collective_launch((const void*)collectives, dim3(1), dim3(64), args, 0, stream);
}

__global__ void team_sum(shared_words words, nvshmem_team_t team) {
    nvshmemx_int_sum_reduce_block(team, words.team_sum, words.coll_src, coll_count);
    if (threadIdx.x == 0) words.team_me[0] = nvshmem_team_my_pe(team);
}

void launch_team_sum(const shared_words& words, int team, cudaStream_t stream) {
    team_sum<<<1, 64, 0, stream>>>(words, team);
}

__global__ void warpgroup_barrier(shared_words words) {
    if (threadIdx.x < 128) return;  // the first warpgroup leaves: the second one's barrier (id 2) is its own
    const int me = nvshmem_my_pe(), right = (me + 1) % nvshmem_n_pes();
    if (threadIdx.x == 128) nvshmem_int_p(words.warpgroup_from_left, 500 + me, right);
    nvshmemx_barrier_warpgroup(NVSHMEM_TEAM_WORLD);
    if (threadIdx.x == 128) words.warpgroup_from_left[1] = words.warpgroup_from_left[0];
}

void launch_warpgroup_barrier(const shared_words& words, cudaStream_t stream) {
    warpgroup_barrier<<<1, 256, 0, stream>>>(words);
}
