// Every on-stream collective x dtype x op x team x size on several GPUs over the NVLink transport, checked
// bit-exactly against a host reference. The cases are in gpu_coll_cases.cuh, instantiated part by
// part in gpu_coll_<part>.cu; this file holds the test cases, which run the parts in turn on one world.
// Suites: two_pes_one_gpu, gpus (one process drives PGAS_TEST_GPUS GPUs, default 2) and processes (one process
// per PE under pgasrun -n N; N PEs). See gpus_suite_pes and processes_suite_pes in support.cuh.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "gpu_coll_cases.cuh"

#include <algorithm>
#include <vector>

namespace {

using namespace gpu_coll;

// Runs the parts in order on one world of n PEs and reports the mismatches of all of them.
void check_parts(int n, std::initializer_list<void (*)(run&)> parts) {
    auto w = make_world(n);
    const teams ts = make_teams(w);
    const buffers b = make_buffers(w);
    failure_log log;
    int round = 0;
    run r{w, ts, b, round, log};
    for (auto part : parts) part(r);
    log.check();
}

void check_reductions(int n) {
    check_parts(n, {reductions_int8_int16, reductions_int32_int64, reductions_uint8_uint16, reductions_uint32_uint64,
                    reductions_half_bf16, reductions_float_double});
}

void check_movement(int n) { check_parts(n, {movement_signed, movement_unsigned, movement_floats}); }

// Every local PE enqueues all its calls before the next local PE enqueues any (one host thread driving the PEs of
// one GPU, as bench_nvlink does): a PE's queued kernels must leave the GPU to the other PEs' first kernels, which
// its own first waits for, however many PEs share the GPU (runtime_state::pes_per_gpu, expected `sharing`). Each call
// is an in-place sum, so each depends on the one before: PE q starts with q + 1, and the host reference repeats the
// sums in team order (exact: the device reduces in that order too).
void check_queued_allreduces(int n, int sharing) {
    auto w = make_world(n);
    REQUIRE(w.runtime().pes_per_gpu == sharing);
    constexpr int calls = 50;
    double want = 1;
    for (int q = 1; q < n; ++q) want = want + double(q + 1);
    for (int r = 1; r < calls; ++r) {
        const double each = want;
        for (int q = 1; q < n; ++q) want = want + each;
    }
    // doubles: 32 KiB and 256 KiB run LL, 2 MiB the direct path
    for (const std::size_t count : {std::size_t{4} << 10, std::size_t{32} << 10, std::size_t{256} << 10}) {
        CAPTURE(count);
        const auto x = w.alloc<double>(count);
        for (int i = 0; i < w.n_local_pes(); ++i) upload(w, x, std::vector<double>(count, w.local_pe(i) + 1), i);
        inputs_ready(w);
        for (int i = 0; i < w.n_local_pes(); ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            const ctx_t c = w.context<pgas::nvlink>(i);
            for (int r = 0; r < calls; ++r)
                pgas::allreduce_on_stream(c, c.world_team(), x, x, count, pgas::op::sum, pe_stream(w, i));
        }
        for (int i = 0; i < w.n_local_pes(); ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            CHECK_CUDA(cudaStreamSynchronize(pe_stream(w, i)));
        }
        for (int i = 0; i < w.n_local_pes(); ++i) {
            const auto got = read_back(w, x, count, i);
            CHECK_MESSAGE(std::count(got.begin(), got.end(), want) == std::ptrdiff_t(count), "PE ", w.local_pe(i),
                          ": x[0] = ", got[0], ", expected ", want);
        }
        w.barrier();
        w.free(x);
    }
}

}  // namespace

// Two PEs on one GPU, one process: the whole suite on a machine with one GPU.
TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("allreduce on stream every dtype and op - reduce and reduce_scatter every dtype and every op - two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_reductions(2);
    }
    TEST_CASE("broadcast and allgather and alltoall on stream: every dtype - two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_movement(2);
    }
    TEST_CASE("queued on-stream collectives of PEs sharing one GPU: each PE's 50 allreduces enqueued before the next PE's, 2 PEs") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_queued_allreduces(2, 2);
    }
    TEST_CASE("queued on-stream collectives of PEs sharing one GPU: each PE's 50 allreduces enqueued before the next PE's, 4 PEs") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_queued_allreduces(4, 4);
    }
}

TEST_SUITE("gpus") {
    TEST_CASE("allreduce on stream every dtype and op - reduce and reduce_scatter every dtype and every op - GPUs driven by one process") {
        check_reductions(gpus_suite_pes());
    }
    TEST_CASE("broadcast and allgather and alltoall on stream: every dtype - GPUs driven by one process") {
        check_movement(gpus_suite_pes());
    }
    TEST_CASE("queued on-stream allreduces, 50 per PE - GPUs driven by one process") {
        check_queued_allreduces(gpus_suite_pes(), 1);
    }
}

TEST_SUITE("processes") {
    TEST_CASE("allreduce on stream every dtype and op - reduce and reduce_scatter every dtype and every op - one process per PE") {
        check_reductions(processes_suite_pes());
    }
    TEST_CASE("broadcast and allgather and alltoall on stream: every dtype - one process per PE") {
        check_movement(processes_suite_pes());
    }
    TEST_CASE("queued on-stream allreduces, 50 per PE - one process per PE") {
        const int n = processes_suite_pes();
        const int gpus = std::min(gpu_count(), n);  // init_gpu: local rank modulo the visible GPUs
        check_queued_allreduces(n, (n + gpus - 1) / gpus);
    }
}
