// The NVSHMEM GPU program's third translation unit, compiled by the plain C++ compiler (as NVSHMEM's host perftests'
// .cpp files are): host-side team collectives and a barrier of a split team with the heap on the GPU, which such a TU
// reaches through libpgas_nvshmem.so's on-stream forms. Buffers are read and written with cudaMemcpy.
#include "nvshmem_gpu.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void copy(void* to, const void* from, std::size_t bytes) {
    if (const cudaError_t status = cudaMemcpy(to, from, bytes, cudaMemcpyDefault); status != cudaSuccess) {
        std::fprintf(stderr, "PE %d: cudaMemcpy: %s\n", nvshmem_my_pe(), cudaGetErrorString(status));
        std::exit(1);
    }
}

std::vector<int> read(const int* symmetric, int count) {
    std::vector<int> values(count);
    copy(values.data(), symmetric, count * sizeof(int));
    return values;
}

int expect(const char* what, const std::vector<int>& seen, const std::vector<int>& expected) {
    int wrong = 0;
    for (std::size_t i = 0; i < seen.size(); ++i)
        if (seen[i] != expected[i] && wrong++ < 4)
            std::fprintf(stderr, "PE %d: %s [%zu] = %d, expected %d\n", nvshmem_my_pe(), what, i, seen[i],
                         expected[i]);
    return wrong;
}

}  // namespace

int host_collectives_from_cxx() {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    int* src = static_cast<int*>(nvshmem_malloc(npes * sizeof(int)));
    int* dst = static_cast<int*>(nvshmem_malloc(npes * sizeof(int)));
    std::vector<int> mine(npes), expected(npes);
    for (int i = 0; i < npes; ++i) mine[i] = 100 * me + i;
    copy(src, mine.data(), npes * sizeof(int));
    int wrong = 0;

    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, dst, src, npes);  // dst[i] = sum over PEs of 100 pe + i
    for (int i = 0; i < npes; ++i) expected[i] = 100 * npes * (npes - 1) / 2 + npes * i;
    wrong += expect("nvshmem_int_sum_reduce from a C++ TU", read(dst, npes), expected);

    nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, dst, src, npes, npes - 1);  // the last PE's src
    for (int i = 0; i < npes; ++i) expected[i] = 100 * (npes - 1) + i;
    wrong += expect("nvshmem_int_broadcast from a C++ TU", read(dst, npes), expected);

    nvshmem_int_alltoall(NVSHMEM_TEAM_WORLD, dst, src, 1);  // dst[pe] = PE pe's src[me]
    for (int pe = 0; pe < npes; ++pe) expected[pe] = 100 * pe + me;
    wrong += expect("nvshmem_int_alltoall from a C++ TU", read(dst, npes), expected);

    nvshmem_fcollectmem(NVSHMEM_TEAM_WORLD, dst, src, sizeof(int));  // dst[pe] = PE pe's src[0]
    for (int pe = 0; pe < npes; ++pe) expected[pe] = 100 * pe;
    wrong += expect("nvshmem_fcollectmem from a C++ TU", read(dst, npes), expected);

    nvshmem_int_max_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, 1);  // dst[0] = the largest src[me]: the last PE's
    wrong += expect("nvshmem_int_max_reducescatter from a C++ TU", read(dst, 1), {100 * (npes - 1) + me});

    // A split team of the even PEs (one PE of two): its barrier and a reduction over it.
    nvshmem_team_t even = NVSHMEM_TEAM_INVALID;
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &even);
    if (even != NVSHMEM_TEAM_INVALID) {
        nvshmem_barrier(even);
        nvshmem_team_sync(even);
        nvshmem_int_sum_reduce(even, dst, src, 1);  // dst[0] = sum over even PEs of 100 pe
        int sum = 0;
        for (int pe = 0; pe < npes; pe += 2) sum += 100 * pe;
        wrong += expect("nvshmem_int_sum_reduce over a split team from a C++ TU", read(dst, 1), {sum});
        nvshmem_team_destroy(even);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
    return wrong;
}
