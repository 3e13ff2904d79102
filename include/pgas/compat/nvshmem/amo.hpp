// NVSHMEM's atomics (fetch, set, swap, compare_swap, fetch_add, add, fetch_inc, inc and the bitwise ones), generated
// over its AMO type tables as one-line forwarders to pgas's atomic_* calls.
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/types.hpp>

namespace {
namespace pgas_nvshmem_tu {

// One thread's atomic on the word `dest` of PE `pe`: op(ctx, symmetric_ptr) is the pgas call.
template <class T, class Op>
PGAS_HD decltype(auto) atomic(const char* call, const T* dest, int pe, Op&& op) {
    return with_context(call, [&](const auto& ctx, const compat::heap_view& heap) -> decltype(auto) {
        heap.check_pe(call, pe);
        return op(ctx, heap.symmetric<T>(call, dest, 1));
    });
}

}  // namespace pgas_nvshmem_tu
}  // namespace

// nvshmem_NAME_SUFFIX(TYPE* dest, PARAMS..., int pe) returning RET, forwarded to ::pgas::PGAS_OP(ctx, dest, ARGS...,
// pe). SUFFIX is one token (_atomic_and: "and" alone is an operator in C++).
#define PGAS_NVSHMEM_ATOMIC(TYPE, NAME, RET, SUFFIX, PGAS_OP, PARAMS, ARGS)                                  \
    PGAS_NVSHMEM_API RET nvshmem_##NAME##SUFFIX(TYPE* dest PARAMS, int pe) {                                 \
        return pgas_nvshmem_tu::atomic("nvshmem_" #NAME #SUFFIX, dest, pe, [&](const auto& ctx, auto word) { \
            return ::pgas::PGAS_OP(ctx, word ARGS, pe);                                                      \
        });                                                                                                  \
    }

// The standard AMOs of one type.
#define PGAS_NVSHMEM_STANDARD_AMO(TYPE, NAME)                                                                 \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_compare_swap, atomic_compare_swap,                          \
                        PGAS_NVSHMEM_COMMA TYPE cond PGAS_NVSHMEM_COMMA TYPE value,                           \
                        PGAS_NVSHMEM_COMMA cond PGAS_NVSHMEM_COMMA value)                                     \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_fetch_add, atomic_fetch_add, PGAS_NVSHMEM_COMMA TYPE value, \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_add, atomic_add, PGAS_NVSHMEM_COMMA TYPE value,             \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_fetch_inc, atomic_fetch_inc, , )                            \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_inc, atomic_inc, , )

// The extended AMOs of one type (fetch reads a word it does not write: its pointer is const).
#define PGAS_NVSHMEM_EXTENDED_AMO(TYPE, NAME)                                                                          \
    PGAS_NVSHMEM_API TYPE nvshmem_##NAME##_atomic_fetch(const TYPE* source, int pe) {                                  \
        return pgas_nvshmem_tu::atomic("nvshmem_" #NAME "_atomic_fetch", source, pe, [&](const auto& ctx, auto word) { \
            return ::pgas::atomic_fetch(ctx, word, pe);                                                                \
        });                                                                                                            \
    }                                                                                                                  \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_set, atomic_set, PGAS_NVSHMEM_COMMA TYPE value,                      \
                        PGAS_NVSHMEM_COMMA value)                                                                      \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_swap, atomic_swap, PGAS_NVSHMEM_COMMA TYPE value,                    \
                        PGAS_NVSHMEM_COMMA value)

// The bitwise AMOs of one type.
#define PGAS_NVSHMEM_BITWISE_AMO(TYPE, NAME)                                                                  \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_fetch_and, atomic_fetch_and, PGAS_NVSHMEM_COMMA TYPE value, \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_and, atomic_and, PGAS_NVSHMEM_COMMA TYPE value,             \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_fetch_or, atomic_fetch_or, PGAS_NVSHMEM_COMMA TYPE value,   \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_or, atomic_or, PGAS_NVSHMEM_COMMA TYPE value,               \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, TYPE, _atomic_fetch_xor, atomic_fetch_xor, PGAS_NVSHMEM_COMMA TYPE value, \
                        PGAS_NVSHMEM_COMMA value)                                                             \
    PGAS_NVSHMEM_ATOMIC(TYPE, NAME, void, _atomic_xor, atomic_xor, PGAS_NVSHMEM_COMMA TYPE value,             \
                        PGAS_NVSHMEM_COMMA value)

PGAS_NVSHMEM_AMO_TYPES(PGAS_NVSHMEM_STANDARD_AMO)
PGAS_NVSHMEM_EXTENDED_AMO_TYPES(PGAS_NVSHMEM_EXTENDED_AMO)
PGAS_NVSHMEM_BITWISE_AMO_TYPES(PGAS_NVSHMEM_BITWISE_AMO)
