// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [8, 10) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_half_bf16(run& r) { reductions<8, 10>(r); }
