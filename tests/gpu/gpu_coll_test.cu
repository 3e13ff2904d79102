// Every on-stream collective x dtype x op x team x size on several GPUs over the NVLink transport, checked
// bit-exactly against a host reference. The cases are in gpu_coll_cases.cuh, instantiated part by
// part in gpu_coll_<part>.cu; this file holds the test cases, which run the parts in turn on one world.
// Suites: two_pes_one_gpu, gpus (one process drives PGAS_TEST_GPUS GPUs, default 2) and processes (one process
// per PE under pgasrun -n N; N PEs). See gpus_suite_pes and processes_suite_pes in support.cuh.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "gpu_coll_cases.cuh"

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
}

TEST_SUITE("gpus") {
    TEST_CASE("allreduce on stream every dtype and op - reduce and reduce_scatter every dtype and every op - GPUs driven by one process") {
        check_reductions(gpus_suite_pes());
    }
    TEST_CASE("broadcast and allgather and alltoall on stream: every dtype - GPUs driven by one process") {
        check_movement(gpus_suite_pes());
    }
}

TEST_SUITE("processes") {
    TEST_CASE("allreduce on stream every dtype and op - reduce and reduce_scatter every dtype and every op - one process per PE") {
        check_reductions(processes_suite_pes());
    }
    TEST_CASE("broadcast and allgather and alltoall on stream: every dtype - one process per PE") {
        check_movement(processes_suite_pes());
    }
}
