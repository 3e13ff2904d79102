// An NVSHMEM program that picks its GPU before nvshmem_init, as MPI programs do, gets its PE and heap on that GPU; one
// that calls nvshmem_init first (--init-first) gets its local rank's GPU modulo the visible ones.
//
// Each process takes the GPU after its local rank's, so on 2 or more GPUs pgas's own choice (the local rank's) would
// put the heap elsewhere; then a ring of nvshmem_int_p from a kernel on the PE's GPU checks the heap is usable there.
// On one GPU every process gets GPU 0 (run under MPS: it checks only that the choice is read and harmless).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>
#include <string>

__global__ void put_to_next(int* box, int value, int next) { nvshmem_int_p(box, value, next); }

int main(int argc, char** argv) {
    const bool init_first = argc > 1 && std::string(argv[1]) == "--init-first";
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        std::puts("no GPU: skipped");
        return 77;
    }
    const char* local = std::getenv("PGAS_LOCAL_RANK");  // pgasrun's; NVSHMEM's programs read their launcher's
    const int local_rank = local ? std::atoi(local) : 0;
    const int chosen = init_first ? local_rank % gpus : (local_rank + 1) % gpus;
    if (!init_first) cudaSetDevice(chosen);

    nvshmem_init();
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int failures = 0;
    int* box = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    cudaPointerAttributes attributes{};
    int current = -1;
    if (cudaPointerGetAttributes(&attributes, box) != cudaSuccess || attributes.device != chosen) {
        std::printf("PE %d: the heap is on GPU %d, not GPU %d (%s)\n", me, attributes.device, chosen,
                    init_first ? "the local rank's" : "the program's choice before nvshmem_init");
        ++failures;
    }
    if (cudaGetDevice(&current) != cudaSuccess || current != chosen) {
        std::printf("PE %d: the current GPU after nvshmem_init is %d, not %d\n", me, current, chosen);
        ++failures;
    }

    cudaMemset(box, 0, sizeof(int));
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    put_to_next<<<1, 1>>>(box, 100 + me, (me + 1) % n);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    int got = -1;
    cudaMemcpy(&got, box, sizeof got, cudaMemcpyDeviceToHost);
    if (got != 100 + (me + n - 1) % n) {
        std::printf("PE %d: the ring's value is %d, want %d\n", me, got, 100 + (me + n - 1) % n);
        ++failures;
    }
    nvshmem_free(box);
    nvshmem_finalize();
    std::printf("PE %d of %d on GPU %d: %s\n", me, n, chosen, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
