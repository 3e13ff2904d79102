// nvshmem_host_on_stream.cpp compiled by nvcc: the same program over the inline on-stream forms of an nvcc TU.
#include "nvshmem_host_on_stream.cpp"
