// The puts' and gets' shared cases (tests/common/rma_cases.hpp) over the NVLink transport, each body in a kernel.
#include "case_launchers.cuh"

#include "../common/rma_cases.hpp"

PGAS_TEST_RMA_CASES(gpu_cases::nvlink_sharing_gpu0, gpu_cases::nvlink_gpus,
                       gpu_cases::nvlink_processes);
