// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [2, 4) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_int32_int64(run& r) { reductions<2, 4>(r); }
