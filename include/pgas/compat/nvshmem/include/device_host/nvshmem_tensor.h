// <device_host/nvshmem_tensor.h> of the pgas::nvshmem target: NVSHMEM's tensors for its tile API, which pgas does
// not offer (see pgas/compat/nvshmem/tile.hpp); including it stops the build saying why.
#pragma once

// One line, not formatted: #error prints it as written.
// clang-format off
#error "pgas: NVSHMEM's tile API (nvshmem_tensor.h, nvshmemx::Tensor, the tile_* collectives) is not provided: it needs NVLink multicast, which pgas never maps; use the team collectives (nvshmemx_<TYPE>_<OP>_reduce_block, ...) instead"
// clang-format on
