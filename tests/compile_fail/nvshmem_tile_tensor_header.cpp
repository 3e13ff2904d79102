// expect: pgas: NVSHMEM's tile API .* is not provided: it needs NVLink multicast
#include <device_host/nvshmem_tensor.h>
