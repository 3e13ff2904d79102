// NVSHMEM's tile API (tensors, layouts, tile_* collectives over NVLink multicast), which pgas does not offer: its
// building blocks are declared so that a program that uses them stops at compile time saying why.
#pragma once

/// Why pgas has no tile API, as the compiler prints it.
#define PGAS_NVSHMEM_TILE_API_MESSAGE                                                                          \
    "pgas: NVSHMEM's tile API (nvshmemx::Tensor, make_shape/make_stride/make_layout, the tile_* collectives) " \
    "is not provided: it needs NVLink multicast, which pgas never maps; use the team collectives "             \
    "(nvshmemx_<TYPE>_<OP>_reduce_block, nvshmemx_<TYPE>_fcollect_block, ...) instead"

namespace nvshmemx {
namespace pgas_tile_api {
template <class...>
inline constexpr bool used = false;  // false, but only once instantiated: the message comes from a use, not the include
}  // namespace pgas_tile_api

/// Not provided (see PGAS_NVSHMEM_TILE_API_MESSAGE).
template <class Element, class Layout>
struct Tensor {
    static_assert(pgas_tile_api::used<Element, Layout>, PGAS_NVSHMEM_TILE_API_MESSAGE);
    template <class... Arguments>
    Tensor(const Arguments&...) {}
};
/// Not provided (see PGAS_NVSHMEM_TILE_API_MESSAGE).
template <class... Extents>
int make_shape(const Extents&...) {
    static_assert(pgas_tile_api::used<Extents...>, PGAS_NVSHMEM_TILE_API_MESSAGE);
    return 0;
}
/// Not provided (see PGAS_NVSHMEM_TILE_API_MESSAGE).
template <class... Strides>
int make_stride(const Strides&...) {
    static_assert(pgas_tile_api::used<Strides...>, PGAS_NVSHMEM_TILE_API_MESSAGE);
    return 0;
}
/// Not provided (see PGAS_NVSHMEM_TILE_API_MESSAGE).
template <class... Parts>
int make_layout(const Parts&...) {
    static_assert(pgas_tile_api::used<Parts...>, PGAS_NVSHMEM_TILE_API_MESSAGE);
    return 0;
}
}  // namespace nvshmemx
