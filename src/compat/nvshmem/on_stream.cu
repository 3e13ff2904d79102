// The on-stream entry points of NVSHMEM's API for plain C++ translation units, compiled by nvcc with external linkage
// into libpgas_nvshmem.so (where a C++ TU's declarations in on_stream.hpp find them): this file is compiled once per
// family, PGAS_NVSHMEM_ON_STREAM_LIBRARY=1 to PGAS_NVSHMEM_ON_STREAM_PARTS, set by the build.
#if !defined(PGAS_NVSHMEM_ON_STREAM_LIBRARY)
#error "pgas: compile on_stream.cu with -DPGAS_NVSHMEM_ON_STREAM_LIBRARY=<part> (1 to PGAS_NVSHMEM_ON_STREAM_PARTS)"
#endif
#include <nvshmem.h>
