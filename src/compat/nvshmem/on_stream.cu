// The on-stream entry points of NVSHMEM's API, compiled by nvcc with external linkage (namespace pgas_nvshmem_library)
// into libpgas_nvshmem.so, where a plain C++ TU's calls and every TU's host code with the heap on a GPU find them
// (on_stream.hpp): this file is compiled once per family, PGAS_NVSHMEM_ON_STREAM_LIBRARY=1 to
// PGAS_NVSHMEM_ON_STREAM_PARTS, set by the build.
#if !defined(PGAS_NVSHMEM_ON_STREAM_LIBRARY)
#error "pgas: compile on_stream.cu with -DPGAS_NVSHMEM_ON_STREAM_LIBRARY=<part> (1 to PGAS_NVSHMEM_ON_STREAM_PARTS)"
#endif
#include <nvshmem.h>
