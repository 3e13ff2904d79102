// An NVSHMEM program in NVSHMEM's style, built by nvcc without -rdc against pgas::nvshmem, with kernels in two
// translation units (each reaches the heap through its own device state): p and putmem_nbi around a ring with quiet and
// barrier_all here, an atomic ticket and a signal in nvshmem_gpu_kernels.cu. Every PE checks what it received;
// --before-init checks that a kernel launched before nvshmem_init traps instead of reaching garbage.
#include "nvshmem_gpu.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CUDA_CHECK(call)                                                                                    \
    do {                                                                                                    \
        const cudaError_t status = (call);                                                                  \
        if (status != cudaSuccess) {                                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status)); \
            std::exit(1);                                                                                   \
        }                                                                                                   \
    } while (0)

__global__ void ring(shared_words words) {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes;
    nvshmem_int_p(words.from_left, me, right);
    int block[4] = {me, me * 10, me * 100, me * 1000};
    nvshmem_putmem_nbi(words.block, block, sizeof block, right);
    nvshmem_quiet();  // block[] is a local array: it must stay until the put completes
    nvshmem_barrier_all();
}

static int check(const char* what, long long seen, long long expected) {
    if (seen == expected) return 0;
    std::fprintf(stderr, "PE %d: %s = %lld, expected %lld\n", nvshmem_my_pe(), what, seen, expected);
    return 1;
}

template <class T>
static T read(const T* symmetric) {
    T value;
    CUDA_CHECK(cudaMemcpy(&value, symmetric, sizeof value, cudaMemcpyDeviceToHost));
    return value;
}

// A kernel launched before nvshmem_init finds its translation unit's state not filled: it must trap, saying so.
static int kernel_before_init() {
    ring<<<1, 1>>>(shared_words{});
    const cudaError_t status = cudaDeviceSynchronize();
    std::printf("kernel before nvshmem_init: %s\n", cudaGetErrorString(status));
    return status != cudaSuccess ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--before-init") == 0) return kernel_before_init();
    nvshmem_init();
    const int mype_node = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE);
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CUDA_CHECK(cudaSetDevice(mype_node % devices));
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), left = (me + npes - 1) % npes;

    shared_words words{};
    words.from_left = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.block = static_cast<int*>(nvshmem_malloc(4 * sizeof(int)));
    words.counter = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.ticket = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.payload = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.signal = static_cast<std::uint64_t*>(nvshmem_malloc(sizeof(std::uint64_t)));
    words.seen_signal = static_cast<std::uint64_t*>(nvshmem_malloc(sizeof(std::uint64_t)));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    ring<<<1, 1, 0, stream>>>(words);
    CUDA_CHECK(cudaGetLastError());
    launch_ticket_and_signal(words, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();

    int wrong = check("from_left", read(words.from_left), left);
    const long long block_expected[4] = {left, left * 10, left * 100, left * 1000};
    for (int i = 0; i < 4; ++i) wrong += check("block[i]", read(words.block + i), block_expected[i]);
    const int ticket = read(words.ticket);
    wrong += check("ticket in [0, n_pes)", ticket >= 0 && ticket < npes, 1);
    wrong += check("payload", read(words.payload), 100 + left);
    wrong += check("signal seen", (long long)read(words.seen_signal), 1);
    if (me == 0) wrong += check("counter on PE 0", read(words.counter), npes);
    std::printf("PE %d of %d: from PE %d, ticket %d: %s\n", me, npes, left, ticket, wrong == 0 ? "ok" : "WRONG");

    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_free(words.seen_signal);
    nvshmem_free(words.signal);
    nvshmem_free(words.payload);
    nvshmem_free(words.ticket);
    nvshmem_free(words.counter);
    nvshmem_free(words.block);
    nvshmem_free(words.from_left);
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
