// The remote atomics' shared cases through the libfabric proxy on every loopback provider.
#include "support.hpp"

#include "../common/atomic_cases.hpp"

PGAS_TEST_ATOMIC_CASES(test::loopback);
