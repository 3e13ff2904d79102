// The remote atomics' shared cases (tests/common/atomic_cases.hpp) over the NVLink transport, each body in a kernel.
#include "case_launchers.cuh"

#include "../common/atomic_cases.hpp"

PGAS_TEST_ATOMIC_CASES(gpu_cases::nvlink_sharing_gpu0, gpu_cases::nvlink_gpus,
                       gpu_cases::nvlink_processes);

namespace {

// A body whose one check fails on every PE.
struct failing_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, pgas::symmetric_ptr<int>) const {
        PGAS_TEST_CHECK(ctx.my_pe() < 0);
    }
};

}  // namespace

// The launchers' own check: a check that fails in a kernel fails its case (should_fail: this case passes only then),
// so a body's checks cannot be lost between the device and doctest.
TEST_CASE("gpu case launcher: a check that fails in a kernel fails the case, PEs sharing GPU 0" *
          doctest::should_fail()) {
    test::on_each_world(gpu_cases::nvlink_sharing_gpu0{}, [](pgas::world& w) { return w.alloc<int>(1); },
                        failing_body{});
}
