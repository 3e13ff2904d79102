// Expert-parallel payload types: bf16, and FP8 (e4m3) with one float scale per 128 values as DeepEP casts on dispatch.
#pragma once

#include <pgas/core/config.hpp>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>

PGAS_NAMESPACE_BEGIN
namespace ep {

/// The payload type of tokens and expert outputs.
using bf16 = __nv_bfloat16;
/// The fp8 dispatch payload (e4m3).
using fp8 = __nv_fp8_e4m3;

/// Values per scale: a group of 128 consecutive elements of a token's hidden vector.
inline constexpr int fp8_group = 128;
/// The largest finite e4m3 value: a group's largest magnitude maps to it.
inline constexpr float fp8_max = 448.0f;

/// bf16 to float.
PGAS_HD inline float to_float(bf16 v) { return __bfloat162float(v); }
/// float to bf16, rounded to nearest.
PGAS_HD inline bf16 to_bf16(float v) { return __float2bfloat16_rn(v); }

/// The scale of a group whose largest magnitude is amax (1 for an all-zero group).
PGAS_HD inline float fp8_scale(float amax) { return amax > 0.0f ? amax / fp8_max : 1.0f; }

/// One value quantized with its group's scale: multiplied by the scale's inverse, which a cast of a group's values
/// computes once (inlined, the division is common to them all), not a division per value.
PGAS_HD inline fp8 quantize(float v, float scale) { return fp8(v * (1.0f / scale)); }
/// One fp8 value back to float with its group's scale.
PGAS_HD inline float dequantize(fp8 q, float scale) { return float(q) * scale; }

}  // namespace ep
PGAS_NAMESPACE_END
