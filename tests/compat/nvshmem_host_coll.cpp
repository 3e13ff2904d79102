// An NVSHMEM program of team collectives, built by a plain C++ compiler against pgas::nvshmem and run on the host
// transport: reductions (to all, and scattered), fcollect, broadcast, alltoall, their mem forms and team barriers over
// the predefined teams, called from host code; every PE checks what it received.
#include <nvshmem.h>
#include <nvshmemx.h>

#include "nvshmem_expect.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    constexpr int n = 8;
    int* src = static_cast<int*>(nvshmem_malloc(n * npes * sizeof(int)));
    int* dst = static_cast<int*>(nvshmem_malloc(n * npes * sizeof(int)));
    double* dsrc = static_cast<double*>(nvshmem_malloc(n * sizeof(double)));
    double* ddst = static_cast<double*>(nvshmem_malloc(n * sizeof(double)));
    std::uint64_t* bits = static_cast<std::uint64_t*>(nvshmem_malloc(2 * sizeof(std::uint64_t)));
    if (!src || !dst || !dsrc || !ddst || !bits) {
        std::fprintf(stderr, "PE %d: nvshmem_malloc returned NULL\n", me);
        return 1;
    }
    const int sum_of_pes = npes * (npes - 1) / 2;

    // sum, max (double) and or (bitwise) to every PE.
    for (int i = 0; i < n; ++i) src[i] = 100 * me + i;
    expect(nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, dst, src, n) == 0, "int_sum_reduce's return", 1, 0);
    for (int i = 0; i < n; ++i)
        expect(dst[i] == 100 * sum_of_pes + npes * i, "sum", dst[i], 100 * sum_of_pes + npes * i);
    for (int i = 0; i < n; ++i) dsrc[i] = me == 1 ? 2.5 * i : -1.0;
    nvshmem_double_max_reduce(NVSHMEMX_TEAM_NODE, ddst, dsrc, n);
    for (int i = 0; i < n; ++i) expect(ddst[i] == 2.5 * i, "max (x2)", (long long)(2 * ddst[i]), 5 * i);
    bits[0] = std::uint64_t(1) << me;
    nvshmem_uint64_or_reduce(NVSHMEM_TEAM_SHARED, bits + 1, bits, 1);
    expect(bits[1] == (std::uint64_t(1) << npes) - 1, "or", (long long)bits[1], (1ll << npes) - 1);

    // In place: prod of 2s.
    src[0] = 2;
    nvshmem_int_prod_reduce(NVSHMEM_TEAM_WORLD, src, src, 1);
    expect(src[0] == 1 << npes, "prod in place", src[0], 1 << npes);

    // reducescatter: block j of every PE's src, summed, lands on PE j.
    for (int j = 0; j < npes; ++j)
        for (int i = 0; i < n; ++i) src[j * n + i] = j * 1000 + me + i;
    nvshmem_int_sum_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, n);
    for (int i = 0; i < n; ++i)
        expect(dst[i] == npes * (me * 1000 + i) + sum_of_pes, "reducescatter", dst[i],
               npes * (me * 1000 + i) + sum_of_pes);

    // fcollect: every PE's n ints, in PE order.
    for (int i = 0; i < n; ++i) src[i] = 10 * me + i;
    nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, dst, src, n);
    for (int j = 0; j < npes; ++j)
        for (int i = 0; i < n; ++i) expect(dst[j * n + i] == 10 * j + i, "fcollect", dst[j * n + i], 10 * j + i);

    // broadcast from the last PE, typed and mem.
    nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, dst, src, n, npes - 1);
    for (int i = 0; i < n; ++i) expect(dst[i] == 10 * (npes - 1) + i, "broadcast", dst[i], 10 * (npes - 1) + i);
    nvshmem_broadcastmem(NVSHMEM_TEAM_WORLD, dst, src, sizeof(int), 0);
    expect(dst[0] == 0, "broadcastmem", dst[0], 0);

    // alltoall: block j of my src goes to PE j's block me.
    for (int j = 0; j < npes; ++j)
        for (int i = 0; i < n; ++i) src[j * n + i] = 100 * me + 10 * j + i;
    nvshmem_int_alltoall(NVSHMEM_TEAM_WORLD, dst, src, n);
    for (int j = 0; j < npes; ++j)
        for (int i = 0; i < n; ++i)
            expect(dst[j * n + i] == 100 * j + 10 * me + i, "alltoall", dst[j * n + i], 100 * j + 10 * me + i);

    // Team barriers and syncs: a put before nvshmem_barrier is visible after it (the sync first: every PE has checked
    // its alltoall block before dst is written again).
    expect(nvshmem_team_sync(NVSHMEMX_TEAM_NODE) == 0, "team_sync's return", 1, 0);
    nvshmem_int_p(dst, 7000 + me, (me + 1) % npes);
    expect(nvshmem_barrier(NVSHMEM_TEAM_WORLD) == 0, "barrier's return", 1, 0);
    expect(dst[0] == 7000 + (me + npes - 1) % npes, "put before barrier(team)", dst[0], 7000 + (me + npes - 1) % npes);
    nvshmem_sync(NVSHMEM_TEAM_WORLD);

    nvshmem_free(bits);
    nvshmem_free(ddst);
    nvshmem_free(dsrc);
    nvshmem_free(dst);
    nvshmem_free(src);
    std::printf("PE %d of %d: collectives %s\n", me, npes, wrong == 0 ? "ok" : "WRONG");
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
