// One part of the collective suite (gpu_coll_cases.cuh):
// broadcast, allgather and alltoall over types [8, 12) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::movement_floats(run& r) { movement<8, 12>(r); }
