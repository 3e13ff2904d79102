// NVSHMEM calls made wrongly inside a kernel, one per run (argv[1] names it), built with PGAS_CHECKS=1: the kernel must
// trap with a line naming the call, the PE and the value, and the program exit nonzero (the next CUDA call fails).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstring>

namespace {

__global__ void put_to_pe(int* word, int pe) { nvshmem_int_p(word, 1, pe); }

__global__ void reduce_on_team(nvshmem_team_t team, int* word) { nvshmem_int_sum_reduce(team, word, word, 1); }

}  // namespace

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    nvshmem_init();
    cudaSetDevice(0);
    int* word = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    if (std::strcmp(mode, "pe_out_of_range") == 0) {
        put_to_pe<<<1, 1>>>(word, nvshmem_n_pes() + 3);
    } else if (std::strcmp(mode, "not_symmetric") == 0) {
        int* private_word = nullptr;  // device memory, but not the symmetric heap's
        cudaMalloc(&private_word, sizeof(int));
        put_to_pe<<<1, 1>>>(private_word, 0);
    } else if (std::strcmp(mode, "destroyed_team") == 0) {
        nvshmem_team_t copy = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, nvshmem_n_pes(), nullptr, 0, &copy);
        nvshmem_team_destroy(copy);
        reduce_on_team<<<1, 1>>>(copy, word);
    } else {
        std::printf("unknown mode '%s'\n", mode);
        return 2;
    }
    const cudaError_t status = cudaDeviceSynchronize();
    std::printf("kernel: %s\n", cudaGetErrorString(status));
    return status == cudaSuccess ? 0 : 1;  // a trapped kernel leaves the context unusable: no nvshmem_finalize
}
