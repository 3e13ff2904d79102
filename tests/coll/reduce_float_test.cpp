// reduce, allreduce and reduce_scatter on the host transport, default policy: the floating dtypes x every op, 1-8 PEs.
#include "reduce_cases.hpp"

using namespace coll_test;
using namespace coll_test::reduce_cases;

TEST_CASE("reductions match the host reference: every floating dtype x op, default policy, 1-8 PEs") {
    using float_types = type_list<__half, __nv_bfloat16, float, double>;
    for (int n = 1; n <= max_pes; ++n) {
        CAPTURE(n);
        check_reductions<pgas::coll::automatic, float_types, true>(n, small_counts);
    }
}
