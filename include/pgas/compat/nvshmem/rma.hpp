// NVSHMEM's RMA calls (p, g, put, get, their _nbi and warp/block forms, iput/iget, the sized and mem forms,
// nvshmem_ptr), generated over the standard RMA type table as one-line forwarders to pgas::p, g, put, put_nbi, get,
// get_nbi, iput and iget.
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <cstddef>
#include <cstdint>

/// How every NVSHMEM entry point of pgas that runs on the device is declared: internal linkage, so that each
/// translation unit's calls reach its own device state; host and device; and a function template with one defaulted
/// parameter, so that a translation unit compiles only the entry points it calls (there are about 2,700, each with
/// the pgas templates it instantiates, host and device: as plain functions they took a small program's TU from 18.9
/// to 24.4 s, nvcc on 2 cores). A call reads as NVSHMEM's; taking the address needs `<>` (`&nvshmem_int_p<>`).
#define PGAS_NVSHMEM_API        \
    template <int PgasLazy = 0> \
    static inline PGAS_HD
/// A comma as one macro argument: the optional parameters (PARAMS) and arguments (ARGS) the generating macros take.
#define PGAS_NVSHMEM_COMMA ,

namespace {
namespace pgas_nvshmem_tu {

/// The four transfers of the put/get families.
enum class rma { put, put_nbi, get, get_nbi };

// One put or get of `count` elements by the group G (pgas::thread, warp or block), with pgas's semantics of the same
// name; host code with the heap on a GPU copies through the peer's mapping (the _nbi forms complete at quiet).
template <class G, rma Op, class T>
PGAS_HD void transfer(const char* call, T* dest, const T* source, std::size_t count, int pe) {
    constexpr bool is_put = Op == rma::put || Op == rma::put_nbi;
    with_rma_context(
        call,
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            if constexpr (Op == rma::put)
                ::pgas::put<G>(ctx, heap.symmetric<T>(call, dest, count), source, count, pe);
            else if constexpr (Op == rma::put_nbi)
                ::pgas::put_nbi<G>(ctx, heap.symmetric<T>(call, dest, count), source, count, pe);
            else if constexpr (Op == rma::get)
                ::pgas::get<G>(ctx, dest, heap.symmetric<const T>(call, source, count), count, pe);
            else
                ::pgas::get_nbi<G>(ctx, dest, heap.symmetric<const T>(call, source, count), count, pe);
        },
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            constexpr bool wait = Op == rma::put || Op == rma::get;
            if constexpr (is_put)
                gpu_copy(call, gpu_peer(call, ctx, heap.symmetric<T>(call, dest, count), pe), source, count * sizeof(T),
                         wait);
            else
                gpu_copy(call, dest, gpu_peer(call, ctx, heap.symmetric<const T>(call, source, count), pe),
                         count * sizeof(T), wait);
        });
}

// nvshmem_<T>_p: pgas::p.
template <class T>
PGAS_HD void p(const char* call, T* dest, T value, int pe) {
    with_rma_context(
        call,
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            ::pgas::p(ctx, heap.symmetric<T>(call, dest, 1), value, pe);
        },
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            gpu_copy(call, gpu_peer(call, ctx, heap.symmetric<T>(call, dest, 1), pe), &value, sizeof(T));
        });
}

// nvshmem_<T>_g: pgas::g.
template <class T>
PGAS_HD T g(const char* call, const T* source, int pe) {
    return with_rma_context(
        call,
        [&](const auto& ctx, const compat::heap_view& heap) -> T {
            heap.check_pe(call, pe);
            return ::pgas::g(ctx, heap.symmetric<const T>(call, source, 1), pe);
        },
        [&](const auto& ctx, const compat::heap_view& heap) -> T {
            heap.check_pe(call, pe);
            T value;
            gpu_copy(call, &value, gpu_peer(call, ctx, heap.symmetric<const T>(call, source, 1), pe), sizeof(T));
            return value;
        });
}

// nvshmem_<T>_iput / _iget and their _warp / _block forms: pgas::iput / iget, strides in elements (at least 1); the
// symmetric side spans (count - 1) * its stride + 1 elements. In a group of n threads, thread r moves elements r,
// r + n, ... (one iput/iget with n times the strides), then the group syncs: the call returns to every thread with
// the whole transfer done, as the blocking forms promise.
// A strided transfer's checks (the PE, both strides); returns the elements its symmetric side spans.
template <bool Put>
PGAS_HD std::size_t strided_span(const char* call, const compat::heap_view& heap, std::ptrdiff_t dst,
                                 std::ptrdiff_t sst, std::size_t count, int pe) {
    heap.check_pe(call, pe);
    heap.check_stride(call, dst);
    heap.check_stride(call, sst);
    return count == 0 ? 0 : (count - 1) * std::size_t(Put ? dst : sst) + 1;
}

// Host code with the heap on a GPU: one 2D copy through the peer's mapping, an element per row, each side's stride
// its pitch.
template <bool Put, class T>
void gpu_strided_copy(const char* call, const ::pgas::device::context<::pgas::nvlink>& ctx,
                      const compat::heap_view& heap, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst,
                      std::size_t count, int pe) {
    const std::size_t span = strided_span<Put>(call, heap, dst, sst, count, pe);
    if (count == 0) return;
    void* to = dest;
    const void* from = source;
    if constexpr (Put)
        to = gpu_peer(call, ctx, heap.symmetric<T>(call, dest, span), pe);
    else
        from = gpu_peer(call, ctx, heap.symmetric<const T>(call, source, span), pe);
    compat::the_runtime().host_copy(call, to, std::size_t(dst) * sizeof(T), from, std::size_t(sst) * sizeof(T),
                                    sizeof(T), count, true);
}

template <class G, bool Put, class T>
PGAS_HD void strided(const char* call, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst,
                     std::size_t count, int pe) {
    with_rma_context(
        call,
        [&](const auto& ctx, const compat::heap_view& heap) {
            const std::size_t span = strided_span<Put>(call, heap, dst, sst, count, pe);
            const std::size_t threads = G::size(), rank = G::rank();
            const std::size_t mine = count > rank ? (count - rank + threads - 1) / threads : 0;
            const auto first = std::ptrdiff_t(rank);
            const auto step = std::ptrdiff_t(threads);
            if (mine != 0) {
                if constexpr (Put)
                    ::pgas::iput(ctx, heap.symmetric<T>(call, dest, span) + first * dst, source + first * sst,
                                 dst * step, sst * step, mine, pe);
                else
                    ::pgas::iget(ctx, dest + first * dst, heap.symmetric<const T>(call, source, span) + first * sst,
                                 dst * step, sst * step, mine, pe);
            }
            G::sync();
        },
        [&](const auto& ctx, const compat::heap_view& heap) {
            gpu_strided_copy<Put>(call, ctx, heap, dest, source, dst, sst, count, pe);
        });
}

// The element of nvshmem_put128 and its kin.
struct bits128 {
    std::uint64_t word[2];
};

// nvshmem_ptr: ctx.peer, an address this PE may load from and store to (on the host with the heap on a GPU, the
// GPU address of the peer's mapping, as NVSHMEM's), or NULL.
inline PGAS_HD void* peer_pointer(const char* call, const void* dest, int pe) {
    const auto peer = [&](const auto& ctx, const compat::heap_view& heap) -> void* {
        heap.check_pe(call, pe);
        return ctx.peer(heap.symmetric<std::byte>(call, dest, 0), pe);
    };
    return with_rma_context(call, peer, peer);
}

}  // namespace pgas_nvshmem_tu
}  // namespace

// The put/get family of one type and one calling group: PREFIX_NAME_{put,put_nbi,get,get_nbi}SUFFIX.
#define PGAS_NVSHMEM_TRANSFER(TYPE, NAME, PREFIX, OP, SUFFIX, GROUP)                                                   \
    PGAS_NVSHMEM_API void PREFIX##_##NAME##_##OP##SUFFIX(TYPE* dest, const TYPE* source, std::size_t nelems, int pe) { \
        pgas_nvshmem_tu::transfer<::pgas::GROUP, pgas_nvshmem_tu::rma::OP>(#PREFIX "_" #NAME "_" #OP #SUFFIX, dest,    \
                                                                           source, nelems, pe);                        \
    }
#define PGAS_NVSHMEM_TRANSFERS(TYPE, NAME, PREFIX, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_TRANSFER(TYPE, NAME, PREFIX, put, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_TRANSFER(TYPE, NAME, PREFIX, put_nbi, SUFFIX, GROUP) \
    PGAS_NVSHMEM_TRANSFER(TYPE, NAME, PREFIX, get, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_TRANSFER(TYPE, NAME, PREFIX, get_nbi, SUFFIX, GROUP)

// Strided put and get of one type (or size) by one group: the functions IPUT and IGET.
#define PGAS_NVSHMEM_STRIDED_GROUP(TYPE, ELEMENT, IPUT, IGET, GROUP)                                               \
    PGAS_NVSHMEM_API void IPUT(TYPE* dest, const TYPE* source, std::ptrdiff_t dst, std::ptrdiff_t sst,             \
                               std::size_t nelems, int pe) {                                                       \
        pgas_nvshmem_tu::strided<::pgas::GROUP, true>(#IPUT, static_cast<ELEMENT*>(dest),                          \
                                                      static_cast<const ELEMENT*>(source), dst, sst, nelems, pe);  \
    }                                                                                                              \
    PGAS_NVSHMEM_API void IGET(TYPE* dest, const TYPE* source, std::ptrdiff_t dst, std::ptrdiff_t sst,             \
                               std::size_t nelems, int pe) {                                                       \
        pgas_nvshmem_tu::strided<::pgas::GROUP, false>(#IGET, static_cast<ELEMENT*>(dest),                         \
                                                       static_cast<const ELEMENT*>(source), dst, sst, nelems, pe); \
    }
// ... by a thread (nvshmem_PREFIX_iput), a warp and a block (nvshmemx_PREFIX_iput_warp, _block).
#define PGAS_NVSHMEM_STRIDED(TYPE, ELEMENT, IPUT, IGET)                                             \
    PGAS_NVSHMEM_STRIDED_GROUP(TYPE, ELEMENT, nvshmem_##IPUT, nvshmem_##IGET, thread)               \
    PGAS_NVSHMEM_STRIDED_GROUP(TYPE, ELEMENT, nvshmemx_##IPUT##_warp, nvshmemx_##IGET##_warp, warp) \
    PGAS_NVSHMEM_STRIDED_GROUP(TYPE, ELEMENT, nvshmemx_##IPUT##_block, nvshmemx_##IGET##_block, block)

// Every RMA call of one type: p, g, the transfers by a thread, a warp and a block, iput and iget.
#define PGAS_NVSHMEM_TYPED_RMA(TYPE, NAME)                                     \
    PGAS_NVSHMEM_API void nvshmem_##NAME##_p(TYPE* dest, TYPE value, int pe) { \
        pgas_nvshmem_tu::p("nvshmem_" #NAME "_p", dest, value, pe);            \
    }                                                                          \
    PGAS_NVSHMEM_API TYPE nvshmem_##NAME##_g(const TYPE* source, int pe) {     \
        return pgas_nvshmem_tu::g("nvshmem_" #NAME "_g", source, pe);          \
    }                                                                          \
    PGAS_NVSHMEM_TRANSFERS(TYPE, NAME, nvshmem, , thread)                      \
    PGAS_NVSHMEM_TRANSFERS(TYPE, NAME, nvshmemx, _warp, warp)                  \
    PGAS_NVSHMEM_TRANSFERS(TYPE, NAME, nvshmemx, _block, block)                \
    PGAS_NVSHMEM_STRIDED(TYPE, TYPE, NAME##_iput, NAME##_iget)

PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_TYPED_RMA)

// The sized transfers of one size and group: PREFIX_{put,get}BITS[_nbi]SUFFIX, nelems elements of BITS bits.
#define PGAS_NVSHMEM_SIZED_TRANSFER(BITS, ELEMENT, PREFIX, OP, NAME, NBI, SUFFIX, GROUP)                            \
    PGAS_NVSHMEM_API void PREFIX##_##NAME##BITS##NBI##SUFFIX(void* dest, const void* source, std::size_t nelems,    \
                                                             int pe) {                                              \
        pgas_nvshmem_tu::transfer<::pgas::GROUP, pgas_nvshmem_tu::rma::OP>(                                         \
            #PREFIX "_" #NAME #BITS #NBI #SUFFIX, static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), \
            nelems, pe);                                                                                            \
    }
#define PGAS_NVSHMEM_SIZED_GROUP(BITS, ELEMENT, PREFIX, SUFFIX, GROUP)                    \
    PGAS_NVSHMEM_SIZED_TRANSFER(BITS, ELEMENT, PREFIX, put, put, , SUFFIX, GROUP)         \
    PGAS_NVSHMEM_SIZED_TRANSFER(BITS, ELEMENT, PREFIX, put_nbi, put, _nbi, SUFFIX, GROUP) \
    PGAS_NVSHMEM_SIZED_TRANSFER(BITS, ELEMENT, PREFIX, get, get, , SUFFIX, GROUP)         \
    PGAS_NVSHMEM_SIZED_TRANSFER(BITS, ELEMENT, PREFIX, get_nbi, get, _nbi, SUFFIX, GROUP)
// Every sized call of one size: the transfers by a thread, a warp and a block, iput and iget.
#define PGAS_NVSHMEM_SIZED(BITS, ELEMENT)                            \
    PGAS_NVSHMEM_SIZED_GROUP(BITS, ELEMENT, nvshmem, , thread)       \
    PGAS_NVSHMEM_SIZED_GROUP(BITS, ELEMENT, nvshmemx, _warp, warp)   \
    PGAS_NVSHMEM_SIZED_GROUP(BITS, ELEMENT, nvshmemx, _block, block) \
    PGAS_NVSHMEM_STRIDED(void, ELEMENT, iput##BITS, iget##BITS)

// NVSHMEM's sizes: X(BITS, element type) for each (the sized families here, in sync.hpp and on_stream.hpp).
#define PGAS_NVSHMEM_SIZES(X) \
    X(8, std::uint8_t)        \
    X(16, std::uint16_t)      \
    X(32, std::uint32_t)      \
    X(64, std::uint64_t)      \
    X(128, pgas_nvshmem_tu::bits128)

PGAS_NVSHMEM_SIZES(PGAS_NVSHMEM_SIZED)

// The byte-count (mem) transfers of one calling group: PREFIX_{putmem,putmem_nbi,getmem,getmem_nbi}SUFFIX.
#define PGAS_NVSHMEM_MEM_TRANSFER(PREFIX, NAME, OP, SUFFIX, GROUP)                                                   \
    PGAS_NVSHMEM_API void PREFIX##_##NAME##SUFFIX(void* dest, const void* source, std::size_t nelems, int pe) {      \
        pgas_nvshmem_tu::transfer<::pgas::GROUP, pgas_nvshmem_tu::rma::OP>(                                          \
            #PREFIX "_" #NAME #SUFFIX, static_cast<std::byte*>(dest), static_cast<const std::byte*>(source), nelems, \
            pe);                                                                                                     \
    }
#define PGAS_NVSHMEM_MEM_TRANSFERS(PREFIX, SUFFIX, GROUP)                 \
    PGAS_NVSHMEM_MEM_TRANSFER(PREFIX, putmem, put, SUFFIX, GROUP)         \
    PGAS_NVSHMEM_MEM_TRANSFER(PREFIX, putmem_nbi, put_nbi, SUFFIX, GROUP) \
    PGAS_NVSHMEM_MEM_TRANSFER(PREFIX, getmem, get, SUFFIX, GROUP)         \
    PGAS_NVSHMEM_MEM_TRANSFER(PREFIX, getmem_nbi, get_nbi, SUFFIX, GROUP)

PGAS_NVSHMEM_MEM_TRANSFERS(nvshmem, , thread)
PGAS_NVSHMEM_MEM_TRANSFERS(nvshmemx, _warp, warp)
PGAS_NVSHMEM_MEM_TRANSFERS(nvshmemx, _block, block)

/// An address of `dest` on PE `pe` that the caller may load from and store to, or NULL when `pe` is not reachable
/// that way.
PGAS_NVSHMEM_API void* nvshmem_ptr(const void* dest, int pe) {
    return pgas_nvshmem_tu::peer_pointer("nvshmem_ptr", dest, pe);
}
