// Compiler, linkage and ABI macros that every pgas header relies on.
#pragma once

#if __cplusplus < 202002L
#error "pgas needs C++20: pass -std=c++20 (CMake: CMAKE_CXX_STANDARD 20 and CMAKE_CUDA_STANDARD 20)"
#endif

#if defined(__CUDACC__)
#define PGAS_HD __host__ __device__
#define PGAS_DEVICE_FN __device__
#else
#define PGAS_HD
#define PGAS_DEVICE_FN
#endif

// True while nvcc compiles the device side of a translation unit.
#if defined(__CUDA_ARCH__)
#define PGAS_DEVICE_PASS 1
#else
#define PGAS_DEVICE_PASS 0
#endif

// Everything lives in an inline ABI namespace so two shared libraries built
// against different pgas versions never share weak symbols (DESIGN.md §3).
#ifndef PGAS_ABI_TAG
#define PGAS_ABI_TAG abi_v0
#endif
#define PGAS_NAMESPACE_BEGIN \
    namespace pgas {         \
    inline namespace PGAS_ABI_TAG {
#define PGAS_NAMESPACE_END \
    }                      \
    }

// Every __global__ of the library is a PGAS_KERNEL declared between
// PGAS_KERNELS_BEGIN and PGAS_KERNELS_END: hidden visibility keeps each shared
// library's kernel instances its own (CCCL does the same). A visibility pragma,
// not an attribute on each kernel: a kernel template instantiated with a user's
// type of internal linkage (one in an anonymous namespace) has internal linkage
// itself, and nvcc warns that the attribute cannot apply there (#1407-D).
#define PGAS_KERNELS_BEGIN _Pragma("GCC visibility push(hidden)")
#define PGAS_KERNELS_END _Pragma("GCC visibility pop")
#define PGAS_KERNEL __global__

// Device-side argument checks (PE range, heap bounds, alignment). Host-side
// checks of collective calls (alloc, free, init) are always on.
#ifndef PGAS_CHECKS
#define PGAS_CHECKS 0
#endif

// Default for how long a device wait may spin before it reports a timeout;
// PGAS_TIMEOUT_MS in the environment overrides it at world init, 0 disables.
#ifndef PGAS_DEFAULT_TIMEOUT_MS
#define PGAS_DEFAULT_TIMEOUT_MS 60000
#endif
