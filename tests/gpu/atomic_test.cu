// The remote atomics' shared cases (tests/common/atomic_cases.hpp) over the NVLink transport, each body in a kernel.
#include "case_launchers.cuh"

#include "../common/atomic_cases.hpp"

PGAS_TEST_ATOMIC_CASES(gpu_cases::nvlink_sharing_gpu0, gpu_cases::nvlink_gpus,
                       gpu_cases::nvlink_processes);
