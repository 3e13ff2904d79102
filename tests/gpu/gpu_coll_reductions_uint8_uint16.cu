// One part of the collective suite (gpu_coll_cases.cuh):
// allreduce (every op), reduce and reduce_scatter over types [4, 6) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::reductions_uint8_uint16(run& r) { reductions<4, 6>(r); }
