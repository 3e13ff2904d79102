// The remote atomics' shared cases over IBGDA on the emulated NIC (standard and masked WQEs, float add as a loop).
#include "support.hpp"

#include "../common/atomic_cases.hpp"

PGAS_TEST_ATOMIC_CASES(test::emulated_nic);
