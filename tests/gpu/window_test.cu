// The windows' shared case (tests/common/window_cases.hpp) over the NVLink transport, each body in a kernel: every op
// on cudaMalloc'd buffers of the PEs' own (tests/gpu/gpu_window_test.cu covers the other kinds of memory).
#include "case_launchers.cuh"

#include "../common/window_cases.hpp"

PGAS_TEST_WINDOW_CASES(gpu_cases::nvlink_sharing_gpu0, gpu_cases::nvlink_gpus, gpu_cases::nvlink_processes);
