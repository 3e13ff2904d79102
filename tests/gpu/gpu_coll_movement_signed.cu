// One part of the collective suite (gpu_coll_cases.cuh):
// broadcast, allgather and alltoall over types [0, 4) of all_types.
#include "gpu_coll_cases.cuh"

void gpu_coll::movement_signed(run& r) { movement<0, 4>(r); }
