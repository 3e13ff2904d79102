// The signals' shared cases through the libfabric proxy on every loopback provider.
#include "support.hpp"

#include "../common/signal_cases.hpp"

PGAS_TEST_SIGNAL_CASES(test::loopback);
