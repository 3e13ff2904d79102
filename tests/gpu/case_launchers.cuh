// Launchers (tests/common/support.hpp) that run the shared case bodies of tests/common/*_cases.hpp in kernels over
// the NVLink transport: one thread per PE; PEs sharing GPU 0 in one process, one GPU each, or one process each.
#pragma once

#include "support.cuh"

#include "../common/support.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace gpu_cases {
// Internal linkage: every function here reads or launches this translation unit's own kernels and failure counter
// (tests/common/support.hpp), so each TU needs its own copy, not one merged by the linker.
namespace {

using namespace gpu_support;

template <class Body, class Buffers>
__global__ void run_body(const __grid_constant__ ctx_t ctx, Body body, Buffers buffers) {
    body(ctx, buffers);
}

// The checks that failed in this TU's kernels on each local PE's GPU since the last call (the counter is per GPU:
// PEs sharing one GPU share it), reset to 0.
unsigned int take_device_failures(pgas::world& w) {
    std::vector<int> devices;
    for (int i = 0; i < w.n_local_pes(); ++i)
        if (std::find(devices.begin(), devices.end(), w.device_of(i)) == devices.end()) devices.push_back(w.device_of(i));
    unsigned int total = 0;
    for (int device : devices) {
        unsigned int failed = 0;
        const unsigned int zero = 0;
        CHECK_CUDA(cudaSetDevice(device));
        CHECK_CUDA(cudaMemcpyFromSymbol(&failed, test::device_failures, sizeof failed));
        CHECK_CUDA(cudaMemcpyToSymbol(test::device_failures, &zero, sizeof zero));
        total += failed;
    }
    return total;
}

// The device heap a body's private buffers come from (test::scratch): 8 MiB by default, less than 8 PEs sharing one
// GPU need for a 3 MiB source each. Raised once per GPU, before any kernel uses it (CUDA refuses a new size after a
// kernel that called malloc): every launcher of every TU calls this first, and a GPU already raised is left alone.
void size_device_heaps(pgas::world& w) {
    constexpr std::size_t wanted = std::size_t{64} << 20;
    for (int i = 0; i < w.n_local_pes(); ++i) {
        std::size_t now = 0;
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceGetLimit(&now, cudaLimitMallocHeapSize));
        if (now < wanted) CHECK_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, wanted));
    }
}

// Runs body(ctx, buffers) in a one-thread kernel on every PE of a one-process world of n PEs.
template <class Alloc, class Body>
void run_in_kernels(int n, Alloc& alloc, Body& body) {
    auto w = make_world(n);
    size_device_heaps(w);
    const auto buffers = alloc(w);
    take_device_failures(w);
    launch_all(w, 1, 1, run_body<Body, std::remove_const_t<decltype(buffers)>>, body, buffers);
    const unsigned int failed = take_device_failures(w);
    CHECK_MESSAGE(failed == 0, failed << " checks failed in the PEs' kernels (printed above)");
    test::release_after_run(w, buffers);
}

// PEs as contexts of one process, all on GPU 0 (a pair, an odd count, more PEs than a node's GPUs).
struct nvlink_sharing_gpu0 {
    std::span<const int> pe_counts() const {
        static constexpr int counts[] = {1, 2, 3, 8};
        return counts;
    }
    template <class Alloc, class Body>
    void operator()(int n, Alloc& alloc, Body& body) const {
        share_gpu0 shared;
        run_in_kernels(n, alloc, body);
    }
};

// Runs each body in kernels on a world of the launcher's one PE count (the two launchers below).
struct in_kernels {
    template <class Alloc, class Body>
    void operator()(int n, Alloc& alloc, Body& body) const {
        run_in_kernels(n, alloc, body);
    }
};

// One process drives PGAS_TEST_GPUS GPUs (default 2), one PE each (skipped, exit 77, where there are fewer).
struct nvlink_gpus : in_kernels {
    std::span<const int> pe_counts() const {
        static const int counts[] = {gpus_suite_pes()};
        return counts;
    }
};

// One PE per process, started by a launcher (pgasrun -n N, mpirun, torchrun): N is the world size.
struct nvlink_processes : in_kernels {
    std::span<const int> pe_counts() const {
        static const int counts[] = {processes_suite_pes()};
        return counts;
    }
};

}  // namespace
}  // namespace gpu_cases

TYPE_TO_STRING_AS("nvlink, PEs sharing GPU 0", gpu_cases::nvlink_sharing_gpu0);
TYPE_TO_STRING_AS("nvlink, one GPU per PE", gpu_cases::nvlink_gpus);
TYPE_TO_STRING_AS("nvlink, one process per PE", gpu_cases::nvlink_processes);
