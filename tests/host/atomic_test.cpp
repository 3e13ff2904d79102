// The remote atomics' shared cases on the host transport: PEs as threads of one world and as SPMD threads.
#include "support.hpp"

#include "../common/atomic_cases.hpp"

PGAS_TEST_ATOMIC_CASES(test::host_threads, test::host_spmd);
