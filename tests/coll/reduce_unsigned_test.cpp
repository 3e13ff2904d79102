// reduce, allreduce and reduce_scatter on the host transport, default policy: the unsigned integer dtypes x every op, 1-8 PEs.
#include "reduce_cases.hpp"

using namespace coll_test;
using namespace coll_test::reduce_cases;

TEST_CASE("reductions match the host reference: every unsigned integer dtype x op, default policy, 1-8 PEs") {
    using int_types = type_list<std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t>;
    for (int n = 1; n <= max_pes; ++n) {
        CAPTURE(n);
        check_reductions<pgas::coll::automatic, int_types, true>(n, small_counts);
    }
}
