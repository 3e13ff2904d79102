// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [10, 12) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_float_double(run& r) { reductions<10, 12>(r); }
