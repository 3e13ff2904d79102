// The RMA shared cases over IBGDA on the emulated NIC: inline and registered puts, reads into registered memory
// and through scratch, on the default queue and on a small one with a ring CQ.
#include "support.hpp"

#include "../common/rma_cases.hpp"

PGAS_TEST_RMA_CASES(test::emulated_nic, test::emulated_nic_ring_cq);
