// The signals' shared cases (tests/common/signal_cases.hpp) over the NVLink transport, each body in a kernel.
#include "case_launchers.cuh"

#include "../common/signal_cases.hpp"

PGAS_TEST_SIGNAL_CASES(gpu_cases::nvlink_sharing_gpu0, gpu_cases::nvlink_gpus,
                       gpu_cases::nvlink_processes);
