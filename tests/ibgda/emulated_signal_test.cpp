// The signals' shared cases over IBGDA on the emulated NIC.
#include "support.hpp"

#include "../common/signal_cases.hpp"

PGAS_TEST_SIGNAL_CASES(test::emulated_nic);
