/// @file
/// Compiler, linkage and ABI macros that every pgas header relies on.
#pragma once

#if __cplusplus < 202002L
#error "pgas needs C++20: pass -std=c++20 (CMake: CMAKE_CXX_STANDARD 20 and CMAKE_CUDA_STANDARD 20)"
#endif

#if defined(__CUDACC__)
/// Marks a function callable from host and device code (`__host__ __device__` under nvcc, nothing otherwise):
/// every device op is one, so the host transport runs the same code on CPU threads. Use it on your own
/// functions that take a pgas::device::context of any transport.
#define PGAS_HD __host__ __device__
/// Marks a device-only function (`__device__` under nvcc, nothing otherwise).
#define PGAS_DEVICE_FN __device__
#else
#define PGAS_HD
#define PGAS_DEVICE_FN
#endif

/// 1 while nvcc compiles the device side of a translation unit, else 0. Splits inside a function use NV_IF_TARGET;
/// this is for the blocks that cannot be one of its arguments (`__shared__` declarations among many statements).
#if defined(__CUDA_ARCH__)
#define PGAS_DEVICE_PASS 1
#else
#define PGAS_DEVICE_PASS 0
#endif

/// Unrolls the next loop in nvcc's device pass (arrays indexed by its counter then stay in registers); nothing in a
/// host pass, whose compilers warn on the CUDA pragma.
#if defined(__CUDA_ARCH__)
#define PGAS_UNROLL _Pragma("unroll")
#else
#define PGAS_UNROLL
#endif

// Everything lives in an inline ABI namespace so two shared libraries built
// against different pgas versions never share weak symbols (DESIGN.md §3).
#ifndef PGAS_ABI_TAG
/// The inline namespace inside `pgas` that holds everything (default `abi_v0`); define it to another name to
/// keep two pgas builds in one program apart.
#define PGAS_ABI_TAG abi_v0
#endif
/// Opens `namespace pgas { inline namespace PGAS_ABI_TAG {` (used by pgas's headers).
#define PGAS_NAMESPACE_BEGIN \
    namespace pgas {         \
    inline namespace PGAS_ABI_TAG {
/// Closes what PGAS_NAMESPACE_BEGIN opened.
#define PGAS_NAMESPACE_END \
    }                      \
    }

// Every __global__ of the library is a PGAS_KERNEL declared between
// PGAS_KERNELS_BEGIN and PGAS_KERNELS_END: hidden visibility keeps each shared
// library's kernel instances its own (CCCL does the same). A visibility pragma,
// not an attribute on each kernel: a kernel template instantiated with a user's
// type of internal linkage (one in an anonymous namespace) has internal linkage
// itself, and nvcc warns that the attribute cannot apply there (#1407-D).
/// Starts a region of pgas kernels with hidden visibility (each shared library keeps its own instances).
#define PGAS_KERNELS_BEGIN _Pragma("GCC visibility push(hidden)")
/// Ends the region PGAS_KERNELS_BEGIN started.
#define PGAS_KERNELS_END _Pragma("GCC visibility pop")
/// Declares a pgas kernel (`__global__`), inside PGAS_KERNELS_BEGIN / PGAS_KERNELS_END.
#define PGAS_KERNEL __global__

#ifndef PGAS_CHECKS
/// 1: device ops check their arguments (PE range, heap bounds, alignment, collectives' matching arguments) and
/// report a failure as pgas::error on the host transport or print-and-trap on a GPU; 0 (default): no checks.
/// Host-side checks of collective calls (alloc, free, init) are always on. Define it the same in every
/// translation unit of a program.
#define PGAS_CHECKS 0
#endif

#ifndef PGAS_DEFAULT_TIMEOUT_MS
/// Default for how long a device wait may spin before it reports a timeout (ms); PGAS_TIMEOUT_MS in the
/// environment (or world_options::timeout_ms) overrides it at world init, 0 disables.
#define PGAS_DEFAULT_TIMEOUT_MS 60000
#endif
