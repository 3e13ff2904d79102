// An NVSHMEM program of team collectives, built by a plain C++ compiler against pgas::nvshmem and run on the host
// transport: reductions (to all, and scattered; half and bfloat16 too; double2 maxloc), fcollect, broadcast, alltoall, their mem forms
// and team barriers over the predefined teams, then split teams (strided, 2d, a split of a split, destroy and reuse),
// called from host code; every PE checks what it received.
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
    __half* halves = static_cast<__half*>(nvshmem_malloc(2 * n * sizeof(__half)));
    __nv_bfloat16* bf16s = static_cast<__nv_bfloat16*>(nvshmem_malloc(2 * n * sizeof(__nv_bfloat16)));
    if (!src || !dst || !dsrc || !ddst || !bits || !halves || !bf16s) {
        std::fprintf(stderr, "PE %d: nvshmem_malloc returned NULL\n", me);
        return 1;
    }
    const int sum_of_pes = npes * (npes - 1) / 2;

    // sum, max (double) and or (bitwise) to every PE.
    for (int i = 0; i < n; ++i) src[i] = 100 * me + i;
    expect(nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, dst, src, n) == 0, "int_sum_reduce's return", 1, 0);
    for (int i = 0; i < n; ++i)
        expect(dst[i] == 100 * sum_of_pes + npes * i, "sum", dst[i], 100 * sum_of_pes + npes * i);
    // Over this node's PEs (all of them, unless PGAS_NODE_SIZE makes virtual nodes of consecutive PEs).
    const int node_pes = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE), node_first = me - me % node_pes;
    for (int i = 0; i < n; ++i) dsrc[i] = me == node_first + 1 ? 2.5 * i : -1.0;
    nvshmem_double_max_reduce(NVSHMEMX_TEAM_NODE, ddst, dsrc, n);
    const bool has_second = node_pes > 1;
    for (int i = 0; i < n; ++i)
        expect(ddst[i] == (has_second ? 2.5 * i : -1.0), "max (x2)", (long long)(2 * ddst[i]), has_second ? 5 * i : -2);
    bits[0] = std::uint64_t(1) << me;
    nvshmem_uint64_or_reduce(NVSHMEM_TEAM_SHARED, bits + 1, bits, 1);
    const std::uint64_t node_bits = ((std::uint64_t(1) << node_pes) - 1) << node_first;
    expect(bits[1] == node_bits, "or", (long long)bits[1], (long long)node_bits);

    // NVSHMEMX_TEAM_SAME_MYPE_NODE: the PEs at this PE's index on every node, one per node; a sum over it and its
    // sync. A predefined team: nvshmem_team_destroy of it would end the process (tests/compat's bad input).
    const nvshmem_team_t same = NVSHMEMX_TEAM_SAME_MYPE_NODE;
    expect(nvshmem_team_n_pes(same) == npes / node_pes, "same-mype team n_pes", nvshmem_team_n_pes(same),
           npes / node_pes);
    expect(nvshmem_team_my_pe(same) == me / node_pes, "same-mype team my_pe", nvshmem_team_my_pe(same), me / node_pes);
    expect(nvshmem_team_translate_pe(same, npes / node_pes - 1, NVSHMEM_TEAM_WORLD) == npes - node_pes + me % node_pes,
           "same-mype team's last PE in the world", nvshmem_team_translate_pe(same, npes / node_pes - 1, NVSHMEM_TEAM_WORLD),
           npes - node_pes + me % node_pes);
    expect(nvshmem_team_sync(same) == 0, "same-mype team_sync's return", 1, 0);
    src[0] = me;
    nvshmem_int_sum_reduce(same, dst, src, 1);
    int same_sum = 0;
    for (int q = me % node_pes; q < npes; q += node_pes) same_sum += q;
    expect(dst[0] == same_sum, "sum over the same-mype team", dst[0], same_sum);
    // It holds every PE in its slot, so it can be split like the world: its first member (the first node's PEs).
    nvshmem_team_t first_node = 12345;
    expect(nvshmem_team_split_strided(same, 0, 1, 1, nullptr, 0, &first_node) == 0, "split of same-mype's return", 1,
           0);
    expect((first_node != NVSHMEM_TEAM_INVALID) == (me < node_pes), "split of same-mype: member",
           first_node != NVSHMEM_TEAM_INVALID, me < node_pes);
    if (first_node != NVSHMEM_TEAM_INVALID) {
        expect(nvshmem_team_n_pes(first_node) == 1, "split of same-mype: n_pes", nvshmem_team_n_pes(first_node), 1);
        nvshmem_team_destroy(first_node);
    }

    // half and bfloat16 sums (pgas adds them in float, rounding once a step): values both formats hold exactly.
    for (int i = 0; i < n; ++i) {
        halves[i] = __float2half(me + 0.5f * i);
        bf16s[i] = __float2bfloat16(me + 0.5f * i);
    }
    nvshmem_half_sum_reduce(NVSHMEM_TEAM_WORLD, halves + n, halves, n);
    nvshmem_bfloat16_sum_reduce(NVSHMEM_TEAM_WORLD, bf16s + n, bf16s, n);
    for (int i = 0; i < n; ++i) {
        const float expected = sum_of_pes + npes * 0.5f * i, h = __half2float(halves[n + i]);
        const float b = __bfloat162float(bf16s[n + i]);
        expect(h == expected, "half sum (x2)", (long long)(2 * h), (long long)(2 * expected));
        expect(b == expected, "bfloat16 sum (x2)", (long long)(2 * b), (long long)(2 * expected));
    }

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

    // maxloc: the largest value, at the smallest location among the PEs that hold it (PEs 1, 3, ... hold 1.0 in
    // pair 0; every PE holds 5.0 in pair 1, at locations that fall with the PE), into dest pairs apart from source.
    double2* pairs = static_cast<double2*>(nvshmem_malloc(4 * sizeof(double2)));
    pairs[0] = double2{double(me % 2), double(10 + me)};
    pairs[1] = double2{5.0, double(100 - me)};
    expect(nvshmem_double2_maxloc_reduce(NVSHMEM_TEAM_WORLD, pairs + 2, pairs, 2) == 0, "maxloc's return", 1, 0);
    const bool odd_pe = npes > 1;
    expect(pairs[2].x == (odd_pe ? 1.0 : 0.0), "maxloc value", (long long)pairs[2].x, odd_pe ? 1 : 0);
    expect(pairs[2].y == (odd_pe ? 11.0 : 10.0), "maxloc location", (long long)pairs[2].y, odd_pe ? 11 : 10);
    expect(pairs[3].x == 5.0 && pairs[3].y == double(100 - (npes - 1)), "maxloc tie location", (long long)pairs[3].y,
           100 - (npes - 1));
    expect(pairs[0].x == double(me % 2) && pairs[1].y == double(100 - me), "maxloc leaves source", (long long)pairs[1].y,
           100 - me);

    // Team barriers and syncs: a put before nvshmem_barrier is visible after it (the sync first: every PE has checked
    // its alltoall block before dst is written again).
    expect(nvshmem_team_sync(NVSHMEMX_TEAM_NODE) == 0, "team_sync's return", 1, 0);
    nvshmem_int_p(dst, 7000 + me, (me + 1) % npes);
    expect(nvshmem_barrier(NVSHMEM_TEAM_WORLD) == 0, "barrier's return", 1, 0);
    expect(dst[0] == 7000 + (me + npes - 1) % npes, "put before barrier(team)", dst[0], 7000 + (me + npes - 1) % npes);
    nvshmem_sync(NVSHMEM_TEAM_WORLD);

    // Split teams. Evens: PEs 0, 2, 4, ...; the odd PEs are outside it and get NVSHMEM_TEAM_INVALID.
    nvshmem_team_t evens = 12345;
    expect(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &evens) == 0,
           "split_strided's return", 1, 0);
    if (me % 2 == 0) {
        expect(evens >= NVSHMEM_TEAMS_MIN, "evens handle", evens, NVSHMEM_TEAMS_MIN);
        expect(nvshmem_team_my_pe(evens) == me / 2, "evens my_pe", nvshmem_team_my_pe(evens), me / 2);
        expect(nvshmem_team_n_pes(evens) == (npes + 1) / 2, "evens n_pes", nvshmem_team_n_pes(evens), (npes + 1) / 2);
        expect(nvshmem_team_translate_pe(evens, (npes - 1) / 2, NVSHMEM_TEAM_WORLD) == 2 * ((npes - 1) / 2),
               "evens translate", nvshmem_team_translate_pe(evens, (npes - 1) / 2, NVSHMEM_TEAM_WORLD),
               2 * ((npes - 1) / 2));
        src[0] = me;
        nvshmem_int_sum_reduce(evens, dst, src, 1);
        int even_sum = 0;
        for (int q = 0; q < npes; q += 2) even_sum += q;
        expect(dst[0] == even_sum, "sum over evens", dst[0], even_sum);
    } else {
        expect(evens == NVSHMEM_TEAM_INVALID, "odd PE's evens handle", evens, NVSHMEM_TEAM_INVALID);
        expect(nvshmem_team_my_pe(evens) == -1, "team_my_pe(NVSHMEM_TEAM_INVALID)", nvshmem_team_my_pe(evens), -1);
    }
    // A parent that leaves PEs out cannot be split (pgas splits over the whole world): nonzero, nothing made, no hang.
    nvshmem_team_t none = 12345;
    expect(nvshmem_team_split_strided(evens, 0, 1, 1, nullptr, 0, &none) != 0, "split of evens' return", 0, 1);
    expect(none == NVSHMEM_TEAM_INVALID, "split of evens' handle", none, NVSHMEM_TEAM_INVALID);

    // 2d: rows of two (x) and columns (y); then a split of the rows, each row's first member.
    nvshmem_team_t rows = 0, columns = 0, leaders = 0;
    expect(nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, 2, nullptr, 0, &rows, nullptr, 0, &columns) == 0,
           "split_2d's return", 1, 0);
    src[0] = 1 << me;
    nvshmem_int_or_reduce(rows, dst, src, 1);
    const int row_bits = (npes % 2 == 1 && me == npes - 1) ? 1 << me : 3 << (me / 2 * 2);
    expect(dst[0] == row_bits, "or over my row", dst[0], row_bits);
    nvshmem_int_sum_reduce(columns, dst, src, 1);
    int column_bits = 0;
    for (int q = me % 2; q < npes; q += 2) column_bits |= 1 << q;
    expect(dst[0] == column_bits, "sum over my column", dst[0], column_bits);
    expect(nvshmem_team_split_strided(rows, 0, 1, 1, nullptr, 0, &leaders) == 0, "split of rows' return", 1, 0);
    expect((leaders != NVSHMEM_TEAM_INVALID) == (me % 2 == 0), "row leader", leaders != NVSHMEM_TEAM_INVALID,
           me % 2 == 0);
    if (leaders != NVSHMEM_TEAM_INVALID) {
        expect(nvshmem_team_n_pes(leaders) == 1, "leaders n_pes", nvshmem_team_n_pes(leaders), 1);
        nvshmem_team_destroy(leaders);
    }
    if (evens != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(evens);
    nvshmem_team_destroy(rows);
    nvshmem_team_destroy(columns);
    // Destroyed teams give their slots back: more splits than pgas has team slots (64), each used and destroyed.
    for (int round = 0; round < 100; ++round) {
        nvshmem_team_t copy = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, npes, nullptr, 0, &copy);
        src[0] = round;
        nvshmem_int_max_reduce(copy, dst, src, 1);
        if (dst[0] != round) expect(false, "max over a copy of the world", dst[0], round);
        nvshmem_team_destroy(copy);
    }

    nvshmem_free(bf16s);
    nvshmem_free(halves);
    nvshmem_free(bits);
    nvshmem_free(ddst);
    nvshmem_free(dsrc);
    nvshmem_free(dst);
    nvshmem_free(src);
    std::printf("PE %d of %d: collectives %s\n", me, npes, wrong == 0 ? "ok" : "WRONG");
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
