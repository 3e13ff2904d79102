// The host-transport twin of the GPU program's on-stream calls, built twice: by the plain C++ compiler (its calls reach
// the on-stream forms compiled into libpgas_nvshmem.so, as an NVSHMEM program's .cpp files do) and by nvcc
// (nvshmem_host_on_stream_nvcc.cu: the inline forms). It runs where no GPU is visible, so nvshmem_init picks the host
// transport and each `_on_stream` call runs its blocking form at once. A ring of put/p/g/put_signal on a stream (typed
// and sized), iput and iget, the signal and word waits on a stream (one word, all words, all with a value each), quiet,
// barrier and sync, and a reduction, fcollect and broadcast on a stream; every PE checks what it received. On a machine
// with a GPU it exits 77 (skipped): the GPU program covers these calls.
#include <nvshmem.h>
#include <nvshmemx.h>

#include "nvshmem_expect.hpp"

#include <cstdint>
#include <cstdio>

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
        std::printf("a GPU is visible: the host transport's twin is skipped (the GPU program covers these calls)\n");
        return 77;
    }
    nvshmem_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const cudaStream_t stream = nullptr;  // never touched on the host transport
    constexpr int n = 4;
    long* ring = static_cast<long*>(nvshmem_calloc(n, sizeof(long)));
    int* words = static_cast<int*>(nvshmem_calloc(3, sizeof(int)));
    std::uint64_t* flag = static_cast<std::uint64_t*>(nvshmem_calloc(1, sizeof(std::uint64_t)));
    int* coll = static_cast<int*>(nvshmem_calloc(2 * n * npes, sizeof(int)));
    if (!ring || !words || !flag || !coll) {
        std::fprintf(stderr, "PE %d: nvshmem_malloc returned NULL\n", me);
        return 1;
    }

    // put, p and put_signal to the right; the right PE's waits on a stream see them.
    long mine[n];
    for (int i = 0; i < n; ++i) mine[i] = 100L * me + i;
    nvshmemx_long_put_on_stream(ring, mine, n, right, stream);
    nvshmemx_int_p_on_stream(words + 1, me + 2, right, stream);
    nvshmemx_int_p_on_stream(words, me + 1, right, stream);
    nvshmemx_quiet_on_stream(stream);
    nvshmemx_putmem_signal_on_stream(words + 2, &me, sizeof me, flag, 1, NVSHMEM_SIGNAL_SET, right, stream);
    nvshmemx_signal_wait_until_on_stream(flag, NVSHMEM_CMP_EQ, 1, stream);
    nvshmemx_int_wait_until_on_stream(words, NVSHMEM_CMP_EQ, left + 1, stream);
    nvshmemx_int_wait_until_all_on_stream(words, 2, nullptr, NVSHMEM_CMP_GE, 1, stream);
    int values[2] = {left + 1, left + 2};
    const int status[2] = {0, 0};
    nvshmemx_int_wait_until_all_vector_on_stream(words, 2, status, NVSHMEM_CMP_EQ, values, stream);
    expect(words[0] == left + 1 && words[1] == left + 2, "words after the waits on a stream", words[0], left + 1);
    expect(words[2] == left, "putmem_signal's data after its signal", words[2], left);
    nvshmemx_barrier_all_on_stream(stream);
    for (int i = 0; i < n; ++i) expect(ring[i] == 100L * left + i, "put on a stream", ring[i], 100L * left + i);
    expect(nvshmemx_long_g_on_stream(ring + 1, right, stream) == 100L * me + 1, "g on a stream",
           nvshmemx_long_g_on_stream(ring + 1, right, stream), 100L * me + 1);

    // The sized forms on a stream: 32-bit words there and back, 128-bit words with a signal.
    const std::uint32_t pair[2] = {0xa0000000u + std::uint32_t(me), 5u};
    nvshmemx_put32_on_stream(coll, pair, 2, right, stream);
    nvshmemx_barrier_all_on_stream(stream);
    std::uint32_t back[2] = {};
    nvshmemx_get32_nbi_on_stream(back, coll, 2, left, stream);  // the left PE's words: from its own left
    nvshmemx_quiet_on_stream(stream);
    expect(std::uint32_t(coll[0]) == 0xa0000000u + std::uint32_t(left), "put32 on a stream", coll[0], left);
    expect(back[0] == 0xa0000000u + std::uint32_t((left + npes - 1) % npes), "get32_nbi on a stream", back[0],
           (left + npes - 1) % npes);
    struct alignas(16) quad {
        std::uint64_t lo, hi;
    } q{std::uint64_t(me), ~std::uint64_t(me)};
    *flag = 0;
    nvshmemx_barrier_all_on_stream(stream);
    nvshmemx_put128_signal_on_stream(ring, &q, 1, flag, 2, NVSHMEM_SIGNAL_SET, right, stream);
    nvshmemx_signal_wait_until_on_stream(flag, NVSHMEM_CMP_EQ, 2, stream);
    expect(ring[0] == left && ring[1] == ~long(left), "put128_signal on a stream", ring[0], left);
    nvshmemx_barrier_all_on_stream(stream);

    // Strided on a stream: two longs into every other element of the right PE's ring (ring[1], put128's, untouched),
    // and the right PE's two 32-bit words (put32's, above) fetched into every other element here.
    const long spread[2] = {1000L * me, 1000L * me + 1};
    nvshmemx_long_iput_on_stream(ring, spread, 2, 1, 2, right, stream);
    nvshmemx_barrier_all_on_stream(stream);
    expect(ring[0] == 1000L * left && ring[2] == 1000L * left + 1, "iput on a stream", ring[2], 1000L * left + 1);
    expect(ring[1] == ~long(left), "iput on a stream: the element between untouched", ring[1], ~long(left));
    std::uint32_t picked[3] = {};
    nvshmemx_iget32_on_stream(picked, coll, 2, 1, 2, right, stream);
    expect(picked[0] == 0xa0000000u + std::uint32_t(me) && picked[1] == 0 && picked[2] == 5u, "iget32 on a stream",
           picked[2], 5);
    nvshmemx_barrier_all_on_stream(stream);

    // A reduction, fcollect and broadcast on a stream.
    for (int i = 0; i < n; ++i) coll[i] = 10 * me + i;
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, coll + n, coll, n, stream);
    const int sum_of_pes = npes * (npes - 1) / 2;
    for (int i = 0; i < n; ++i)
        expect(coll[n + i] == 10 * sum_of_pes + npes * i, "sum_reduce on a stream", coll[n + i],
               10 * sum_of_pes + npes * i);
    nvshmemx_team_sync_on_stream(NVSHMEM_TEAM_WORLD, stream);
    nvshmemx_int_fcollect_on_stream(NVSHMEM_TEAM_WORLD, coll + n, coll, n, stream);
    for (int pe = 0; pe < npes; ++pe)
        for (int i = 0; i < n; ++i)
            expect(coll[n + pe * n + i] == 10 * pe + i, "fcollect on a stream", coll[n + pe * n + i], 10 * pe + i);
    nvshmemx_sync_all_on_stream(stream);
    nvshmemx_int_broadcast_on_stream(NVSHMEM_TEAM_WORLD, coll + n, coll, n, npes - 1, stream);
    for (int i = 0; i < n; ++i)
        expect(coll[n + i] == 10 * (npes - 1) + i, "broadcast on a stream", coll[n + i], 10 * (npes - 1) + i);
    nvshmem_barrier_all();

    nvshmem_free(coll);
    nvshmem_free(flag);
    nvshmem_free(words);
    nvshmem_free(ring);
    std::printf("PE %d of %d: on-stream calls on the host transport: %s\n", me, npes, wrong == 0 ? "ok" : "WRONG");
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
