// The smaller API gaps of issue 15 on a GPU over the NVLink transport, PEs sharing GPU 0 (init_local({0, 0})):
// aligned alloc, team destruction, the node team, the *_vector waits, strided iput/iget, alltoallv and
// collective_launch. The host-transport twin is tests/host/api15_test.cpp.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>
#include <pgas/host/coll_on_stream.cuh>

#include "support.cuh"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace gpu_support;

// Launches kernel(ctx_i, args...) on every local PE (each on its own stream), then waits for all.
template <class... Params, class... Args>
void launch_all(pgas::world& w, dim3 grid, dim3 block, void (*kernel)(ctx_t, Params...), Args... args) {
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        kernel<<<grid, block, 0, pe_stream(w, i)>>>(w.context<pgas::nvlink>(i), args...);
        CHECK_CUDA(cudaGetLastError());
    }
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    w.barrier();
}

template <class T>
std::vector<T> read_back(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count, int local) {
    std::vector<T> out(count);
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
}

template <class T>
void upload(pgas::world& w, pgas::symmetric_ptr<T> p, const std::vector<T>& host, int local) {
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(w.device_address(p, local), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// A managed error counter the kernels add to; read after launch_all.
struct error_count {
    unsigned long long* value = nullptr;
    error_count() {
        CHECK_CUDA(cudaMallocManaged(&value, sizeof(*value)));
        *value = 0;
    }
    ~error_count() { cudaFree(value); }
    error_count(const error_count&) = delete;
    error_count& operator=(const error_count&) = delete;
};

// ---- 1. alloc(count, alignment) ----

// Every peer's copy is aligned and zero; then each PE writes its copy with 16-byte vector stores.
__global__ void aligned_block(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<double> p, std::uint64_t alignment,
                              int count, unsigned long long* errors) {
    for (int q = 0; q < ctx.n_pes(); ++q) {
        const double* peer = ctx.peer(p, q);
        if (reinterpret_cast<std::uintptr_t>(peer) % alignment != 0) atomicAdd(errors, 1ull);
        for (int i = int(threadIdx.x); i < count; i += int(blockDim.x))
            if (peer[i] != 0.0) atomicAdd(errors, 1ull);
    }
    auto* mine = reinterpret_cast<double2*>(ctx.local(p));
    for (int i = int(threadIdx.x); i < count / 2; i += int(blockDim.x)) mine[i] = double2{double(ctx.my_pe()), 1.0};
}

void check_aligned_alloc(int n) {
    auto w = make_world(n);
    auto pad = w.alloc<char>(3);
    for (std::uint64_t alignment : {std::uint64_t{16}, std::uint64_t{4096}, std::uint64_t{2} << 20}) {
        CAPTURE(alignment);
        auto p = w.alloc<double>(1000, alignment);
        CHECK(p.offset() % alignment == 0);
        for (int i = 0; i < w.n_local_pes(); ++i)
            CHECK(reinterpret_cast<std::uintptr_t>(w.device_address(p, i)) % alignment == 0);
        error_count errors;
        launch_all(w, 1, 256, aligned_block, p, alignment, 1000, errors.value);
        CHECK(*errors.value == 0);
        for (int i = 0; i < w.n_local_pes(); ++i) CHECK(read_back(w, p, 2, i)[0] == double(w.local_pe(i)));
        w.free(p);
    }
    CHECK_THROWS_AS((void)w.alloc<double>(4, 12), pgas::error);
    w.free(pad);
}

}  // namespace

TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("alloc(count, alignment): offsets and every PE's address aligned, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_aligned_alloc(2);
    }
}
