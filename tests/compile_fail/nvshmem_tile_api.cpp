// expect: pgas: NVSHMEM's tile API .* is not provided: it needs NVLink multicast
#include <nvshmemx.h>
int tile_shape() { return nvshmemx::make_shape(512, 1); }
