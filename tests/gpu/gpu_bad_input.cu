// Runs one kind of bad device-side input on a real GPU; CTest checks the printed diagnostic.
#include <pgas/pgas.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using ctx_t = pgas::device::context<pgas::nvlink>;

__global__ void bad_pe(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<int> x) {
    int v = 1;
    pgas::put(ctx, x, &v, 1, 7);
}
__global__ void bad_pointer(const __grid_constant__ ctx_t ctx) {
    int v = 0;
    pgas::symmetric_ptr<int> reserved(pgas::detail::offset_tag{}, 64);
    pgas::get(ctx, &v, reserved, 1, 0);
}
__global__ void bad_alignment(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> x) {
    auto odd = pgas::symmetric_cast<unsigned long long>(pgas::symmetric_cast<char>(x) + 4);
    pgas::atomic_fetch_add(ctx, odd, 1ull, 0);
}
__global__ void never_set(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<int> flag) {
    pgas::wait_until(ctx, flag, pgas::cmp::eq, 1);
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    const char* which = argv[1];
    pgas::world_options options;
    options.heap_bytes = 64 << 20;
    options.timeout_ms = 300;
    try {
        auto w = pgas::world::init_local(std::vector<int>{0}, options);
        auto x = w.alloc<unsigned long long>(4);
        auto ctx = w.context<pgas::nvlink>(0);
        if (!std::strcmp(which, "pe_out_of_range")) bad_pe<<<1, 1>>>(ctx, pgas::symmetric_cast<int>(x));
        if (!std::strcmp(which, "not_symmetric")) bad_pointer<<<1, 1>>>(ctx);
        if (!std::strcmp(which, "misaligned_atomic")) bad_alignment<<<1, 1>>>(ctx, x);
        if (!std::strcmp(which, "wait_timeout")) never_set<<<1, 1>>>(ctx, pgas::symmetric_cast<int>(x));
        if (!std::strcmp(which, "host_context_on_gpu_world")) (void)w.context<pgas::host>(0);
        cudaError_t status = cudaDeviceSynchronize();
        std::fflush(stdout);
        std::printf("kernel ended: %s\n", cudaGetErrorName(status));
        return status == cudaSuccess ? 0 : 1;
    } catch (const pgas::error& e) {
        std::printf("%s\n", e.what());
        return 1;
    }
}
