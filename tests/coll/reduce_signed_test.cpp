// reduce, allreduce and reduce_scatter on the host transport, default policy: the signed integer dtypes x every op, 1-8 PEs.
#include "reduce_cases.hpp"

using namespace coll_test;
using namespace coll_test::reduce_cases;

// (The unsigned dtypes are reduce_unsigned_test.cpp: one file for all eight was the longest step of the build.)
TEST_CASE("reductions match the host reference: every signed integer dtype x op, default policy, 1-8 PEs") {
    using int_types = type_list<std::int8_t, std::int16_t, std::int32_t, std::int64_t>;
    for (int n = 1; n <= max_pes; ++n) {
        CAPTURE(n);
        check_reductions<pgas::coll::automatic, int_types, true>(n, small_counts);
    }
}
