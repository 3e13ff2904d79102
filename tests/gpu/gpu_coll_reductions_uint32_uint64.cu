// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [6, 8) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_uint32_uint64(run& r) { reductions<6, 8>(r); }
