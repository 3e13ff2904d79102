// Which GPU an NVSHMEM PE starts on: the one the program made current before nvshmem_init (as MPI programs do; the
// default mode), its local rank's modulo the visible ones when it chose none (--init-first), or the one
// nvshmemx_init_attr's args.cuda_device_id names, over the program's current one (--attr-device); a cuda_device_id
// this process cannot see ends it naming the value (--attr-device-out-of-range).
//
// The expected GPU is always the one after the local rank's, so on 2 or more GPUs pgas's fallback (the local rank's)
// would put the heap elsewhere; then a ring of nvshmem_int_p from a kernel on the PE's GPU checks the heap is usable
// there. On one GPU every process gets GPU 0 (run under MPS: it checks only that the choice is read and harmless).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstdlib>
#include <string>

__global__ void put_to_next(int* box, int value, int next) { nvshmem_int_p(box, value, next); }

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool init_first = mode == "--init-first";
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        std::puts("no GPU: skipped");
        return 77;
    }
    const char* local = std::getenv("PGAS_LOCAL_RANK");  // pgasrun's; NVSHMEM's programs read their launcher's
    const int local_rank = local ? std::atoi(local) : 0;
    const int chosen = init_first ? local_rank % gpus : (local_rank + 1) % gpus;
    if (mode == "--attr-device" || mode == "--attr-device-out-of-range") {
        cudaSetDevice(local_rank % gpus);  // the program's own choice, which the attribute overrides
        nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
        attr.args.cuda_device_id = mode == "--attr-device" ? chosen : gpus;
        nvshmemx_init_attr(0, &attr);
    } else {
        if (!init_first) cudaSetDevice(chosen);
        nvshmem_init();
    }
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int failures = 0;
    int* box = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    cudaPointerAttributes attributes{};
    int current = -1;
    if (cudaPointerGetAttributes(&attributes, box) != cudaSuccess || attributes.device != chosen) {
        std::printf("PE %d: the heap is on GPU %d, not GPU %d (%s)\n", me, attributes.device, chosen,
                    init_first     ? "the local rank's"
                    : mode.empty() ? "the program's choice"
                                   : "cuda_device_id's");
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
