// reduce, allreduce and reduce_scatter on the host transport, forced onto the ll path: multi-chunk sizes, 1-8 PEs.
#include "reduce_cases.hpp"

using namespace coll_test;
using namespace coll_test::reduce_cases;

TEST_CASE("reductions match the host reference on the ll path, multi-chunk sizes") {
    for (int n : {1, 2, 3, 4, 5, 8}) {
        CAPTURE(n);
        check_reductions<pgas::coll::ll_policy, path_types, false>(n, all_counts);
    }
}
