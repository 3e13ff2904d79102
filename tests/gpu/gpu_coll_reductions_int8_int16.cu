// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [0, 2) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_int8_int16(run& r) { reductions<0, 2>(r); }
