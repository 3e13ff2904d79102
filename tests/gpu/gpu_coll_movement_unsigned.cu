// One part of the collective suite (gpu_coll_cases.cuh):
// broadcast, allgather and alltoall over types [4, 8) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::movement_unsigned(run& r) { movement<4, 8>(r); }
