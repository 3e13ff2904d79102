// What the GPU suites share: worlds in either launch mode (or with PEs sharing GPU 0), per-PE streams, CUDA checks.
#pragma once

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace gpu_support {

using ctx_t = pgas::device::context<pgas::nvlink>;

#define CHECK_CUDA(expr) REQUIRE_MESSAGE((expr) == cudaSuccess, cudaGetErrorString(cudaGetLastError()))

inline pgas::world_options options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{256} << 20;
    o.timeout_ms = 20000;  // a wait that long is a bug: trap with a diagnostic
    return o;
}

inline int gpu_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
    return count;
}

// Started by a launcher (pgasrun, torchrun, mpirun, srun): one process per GPU.
inline bool one_process_per_gpu() {
    for (const char* var : {"PGAS_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (std::getenv(var) != nullptr) return true;
    return false;
}

// The GPUs a multi-GPU suite asks for: PGAS_TEST_GPUS (set by its ctest entries, which loop over 2, 4 and 8), else
// `otherwise`.
inline int test_gpus(int otherwise) {
    const char* value = std::getenv("PGAS_TEST_GPUS");
    const int n = value != nullptr ? std::atoi(value) : 0;
    return n > 0 ? n : otherwise;
}

// Fewer than n GPUs visible: the program ends with ctest's skip status (77, SKIP_RETURN_CODE) and says why, before
// any world exists (under a launcher every process sees the same count and skips alike), so one test list serves
// machines of 2, 4 and 8 GPUs.
inline void skip_unless_gpus(int n) {
    const int found = gpu_count();
    if (found >= n) return;
    std::printf("needs %d GPUs, found %d: skipped\n", n, found);
    std::fflush(stdout);
    std::exit(77);
}

// The suites of several GPUs, one PE each, in the two launch modes; each returns the PE count and skips (above)
// where the machine has too few GPUs.
//   gpus:      one process drives PGAS_TEST_GPUS GPUs (default 2) with world::init_local(devices);
//   processes: one process per PE under a launcher (pgasrun -n N, mpirun, torchrun): N is the world size, and the
//              GPUs needed are PGAS_TEST_GPUS (its multi_gpu entries set it to N; the entries of processes sharing
//              one GPU under MPS leave it unset).
inline int gpus_suite_pes() {
    const int n = test_gpus(2);
    skip_unless_gpus(n);
    return n;
}
inline int processes_suite_pes() {
    REQUIRE_MESSAGE(one_process_per_gpu(), "run this suite through pgasrun -n N (or mpirun or torchrun)");
    skip_unless_gpus(test_gpus(1));
    return pgas::read_launch_env().size;
}

// Set while a shared-GPU suite runs (share_gpu0): every PE of a one-process world on GPU 0.
inline bool pes_share_gpu0 = false;
struct share_gpu0 {
    share_gpu0() { pes_share_gpu0 = true; }
    ~share_gpu0() { pes_share_gpu0 = false; }
    share_gpu0(const share_gpu0&) = delete;
    share_gpu0& operator=(const share_gpu0&) = delete;
};

// Under a launcher every world is world::init_gpu; else one process drives n
// GPUs (or n PEs on GPU 0 under share_gpu0).
inline pgas::world make_world(int n) {
    if (!one_process_per_gpu()) {
        std::vector<int> devices;
        for (int i = 0; i < n; ++i) devices.push_back(pes_share_gpu0 ? 0 : i);
        return pgas::world::init_local(devices, options());
    }
    auto w = pgas::world::init_gpu(options());
    REQUIRE(w.n_pes() == n);
    return w;
}

// Local PE i's stream: non-blocking, so that PEs sharing a GPU run their
// kernels side by side (the legacy default stream would serialise them, and
// a kernel waiting for its peer's would wait forever). Kept for the process.
inline cudaStream_t pe_stream(pgas::world& w, int i) {
    static std::vector<std::pair<int, cudaStream_t>> streams;  // index: local PE; (device, stream)
    const int device = w.device_of(i);
    if (std::size_t(i) >= streams.size()) streams.resize(std::size_t(i) + 1, {-1, nullptr});
    auto& [on, stream] = streams[std::size_t(i)];
    if (on != device) {
        CHECK_CUDA(cudaSetDevice(device));
        CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        on = device;
    }
    return stream;
}

// Launches `kernel` on every local PE (its GPU, its stream: all of them before any waits), waits for each, then
// a world barrier: with one process per GPU the peers' kernels are done too before anyone reads results.
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

}  // namespace gpu_support
