// Reduction operators (sum, prod, min, max, bit_and, bit_or, bit_xor) and the element types collectives take.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

PGAS_NAMESPACE_BEGIN

namespace detail {

template <class T>
inline constexpr bool is_reduced_float = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                         std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr bool is_reduced_integer = std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 8;

// The element types reductions take: 1- to 8-byte integers, half, bf16, float, double.
template <class T>
inline constexpr bool is_reducible = is_reduced_integer<T> || is_reduced_float<T>;

// A number per element type, carried in the PGAS_CHECKS signature of a call so
// that PEs passing int32 and float (same size) are told apart.
template <class T>
PGAS_HD constexpr unsigned type_code() {
    if constexpr (std::is_same_v<T, __half>)
        return 13;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return 14;
    else if constexpr (std::is_same_v<T, float>)
        return 15;
    else if constexpr (std::is_same_v<T, double>)
        return 12;
    else if constexpr (is_reduced_integer<T>)
        return (sizeof(T) == 1 ? 1u : sizeof(T) == 2 ? 2u : sizeof(T) == 4 ? 3u : 4u) + (std::is_signed_v<T> ? 4u : 0u);
    else
        return 0;  // any other trivially copyable type (data movement only)
}

// half and bf16 are computed in float and rounded once per step, on host and
// device alike, so the host transport and the GPU give the same bits.
PGAS_HD inline float to_float(__half v) { return __half2float(v); }
PGAS_HD inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
PGAS_HD inline T from_float(float v) {
    if constexpr (std::is_same_v<T, __half>)
        return __float2half_rn(v);
    else
        return __float2bfloat16_rn(v);
}

// Integer sums and products wrap modulo 2^bits (computed unsigned: no
// undefined signed overflow), as in NCCL and NVSHMEM on the GPU.
template <class T>
using wide_unsigned = std::conditional_t<(sizeof(T) < 4), std::uint32_t, std::make_unsigned_t<T>>;

template <class T, class F>
PGAS_HD inline T apply_arith(T a, T b, F f) {
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
        return from_float<T>(f(to_float(a), to_float(b)));
    else if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(
            f(wide_unsigned<T>(std::make_unsigned_t<T>(a)), wide_unsigned<T>(std::make_unsigned_t<T>(b)))));
    else
        return f(a, b);
}

template <class T, class Less>
PGAS_HD inline T apply_order(T a, T b, Less less) {
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
        return less(to_float(b), to_float(a)) ? b : a;
    else
        return less(b, a) ? b : a;
}

// The operators' names in diagnostics, in the order of their codes (1 to 7).
inline constexpr const char* op_names[] = {"sum", "prod", "min", "max", "bit_and", "bit_or", "bit_xor"};

}  // namespace detail

// Reduction operators, passed by value: pgas::allreduce(ctx, t, dst, src, n, pgas::op::sum).
// Each is a stateless function object; `bitwise` ones take integers only.
namespace op {

/// What every operator below carries, as its base: its name, whether it takes integers only and its number.
template <unsigned Code, bool Bitwise>
struct operator_facts {
    /// Its name ("sum", "prod", ...), for diagnostics.
    static constexpr const char* name = detail::op_names[Code - 1];
    /// Whether it takes integers only.
    static constexpr bool bitwise = Bitwise;
    /// Its number in the PGAS_CHECKS signature of a call.
    static constexpr unsigned code = Code;
};

/// The reduction `a + b` (integers wrap modulo 2^bits; half and bf16 computed in float, rounded once); pass
/// pgas::op::sum.
struct sum_t : operator_facts<1, false> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return detail::apply_arith(a, b, [](auto x, auto y) { return decltype(x)(x + y); });
    }
};
/// The reduction `a * b` (integers wrap modulo 2^bits; half and bf16 computed in float, rounded once); pass
/// pgas::op::prod.
struct prod_t : operator_facts<2, false> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return detail::apply_arith(a, b, [](auto x, auto y) { return decltype(x)(x * y); });
    }
};
/// The reduction min(a, b); pass pgas::op::min.
struct min_t : operator_facts<3, false> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return detail::apply_order(a, b, [](auto x, auto y) { return x < y; });
    }
};
/// The reduction max(a, b); pass pgas::op::max.
struct max_t : operator_facts<4, false> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return detail::apply_order(a, b, [](auto x, auto y) { return y < x; });
    }
};
/// The reduction `a & b` (integers only); pass pgas::op::bit_and.
struct bit_and_t : operator_facts<5, true> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return T(a & b);
    }
};
/// The reduction `a | b` (integers only); pass pgas::op::bit_or.
struct bit_or_t : operator_facts<6, true> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return T(a | b);
    }
};
/// The reduction `a ^ b` (integers only); pass pgas::op::bit_xor.
struct bit_xor_t : operator_facts<7, true> {
    /// Combines two elements.
    template <class T>
    PGAS_HD T operator()(T a, T b) const {
        return T(a ^ b);
    }
};

/// The sum reduction operator.
inline constexpr sum_t sum{};
/// The prod reduction operator.
inline constexpr prod_t prod{};
/// The min reduction operator.
inline constexpr min_t min{};
/// The max reduction operator.
inline constexpr max_t max{};
/// The bit_and reduction operator.
inline constexpr bit_and_t bit_and{};
/// The bit_or reduction operator.
inline constexpr bit_or_t bit_or{};
/// The bit_xor reduction operator.
inline constexpr bit_xor_t bit_xor{};

}  // namespace op

/// One of the operators in pgas::op.
template <class Op>
concept reduction_op = std::is_same_v<Op, op::sum_t> || std::is_same_v<Op, op::prod_t> ||
    std::is_same_v<Op, op::min_t> || std::is_same_v<Op, op::max_t> || std::is_same_v<Op, op::bit_and_t> ||
    std::is_same_v<Op, op::bit_or_t> || std::is_same_v<Op, op::bit_xor_t>;

namespace detail {
// Compile-time contract of every reducing collective.
template <class Op, class T>
PGAS_HD constexpr void require_reduction() {
    static_assert(reduction_op<Op>, "pgas: reductions take pgas::op::sum, prod, min, max, bit_and, bit_or or bit_xor");
    static_assert(is_reducible<std::remove_cv_t<T>>,
                  "pgas: reductions take int8..int64, uint8..uint64, half (__half), bf16 (__nv_bfloat16), float or "
                  "double elements");
    static_assert(!Op::bitwise || is_reduced_integer<std::remove_cv_t<T>>,
                  "pgas: bitwise reductions (bit_and/bit_or/bit_xor) take integer types only, not floating point");
}
}  // namespace detail

PGAS_NAMESPACE_END
