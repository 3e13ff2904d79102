// Each translation unit's own NVSHMEM device state (a static __constant__ object registered with the process-wide
// runtime), and the one dispatch every forwarder goes through: this TU's state on the GPU, the runtime on the host.
#pragma once

#include <pgas/compat/nvshmem/runtime.hpp>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>

#include <nv/target>

// Everything here has internal linkage: NVSHMEM's device calls take no context, so without -rdc each translation
// unit's kernels can reach only state of their own TU (DESIGN.md §3: the one exception to "no device globals").
namespace {
namespace pgas_nvshmem_tu {

namespace compat = ::pgas::nvshmem_compat;

#if defined(__CUDACC__)  // not NV_IF_TARGET: a __constant__ object and its registration, which only nvcc compiles
// Zero bytes until filled: device_state's members have default initialisers, which a __constant__ object cannot run
// (nvcc accepts only constant initialisation), so its storage is a union that starts as bytes.
union state_storage {
    constexpr state_storage() : bytes{} {}
    unsigned char bytes[sizeof(compat::device_state)];
    compat::device_state value;
};

// This TU's copy; zero (not filled) until nvshmem_init fills it.
__constant__ state_storage state;

// The library's own on-stream TUs are not registered: their kernels take the heap as a parameter and read no TU state.
#if !defined(PGAS_NVSHMEM_ON_STREAM_LIBRARY)
cudaError_t fill(const compat::device_state& value) { return cudaMemcpyToSymbol(state, &value, sizeof value); }

// Registers this TU with the runtime at static initialisation, and forgets it when the TU's library is unloaded. A TU
// registered after nvshmem_init (a library loaded later) is filled at once: nvcc's own registration of the TU's module
// runs first (its constructor precedes this object's in the TU's .init_array, as nvcc 13 emits them).
struct registration {
    registration() { compat::the_runtime().add(&fill); }
    ~registration() { compat::the_runtime().remove(&fill); }
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;
};
const registration registered;
#endif

// Out of line: the message stays out of every call site's code.
__device__ __noinline__ void not_filled(const char* call) {
    printf(
        "pgas: %s: this translation unit's NVSHMEM state is not filled: nvshmem_init has not run in this process, "
        "or nvshmem_finalize has (no PE, no heap to reach)\n",
        call);
    __trap();
}

// This TU's state, after checking that it was filled (always: one compare of a constant-bank word).
__device__ inline const compat::device_state& filled_state(const char* call) {
    if (state.value.filled != compat::filled_magic) not_filled(call);
    return state.value;
}
#endif

// with_context from host code: the host transport's context; with the heap on a GPU the call ends the process (not
// provided yet), as does a pgas::error, naming the call.
template <class Op>
decltype(auto) with_host_context(const char* call, Op&& op) {
    compat::runtime& rt = compat::the_runtime().running(call);
    if (rt.on_gpu())
        compat::fail(call, rt.heap().my_pe,
                     "not provided from host code while the heap is on a GPU (yet): call it from a kernel");
    try {
        return std::forward<Op>(op)(rt.host_context(), rt.heap());
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
}

// Runs op(ctx, heap) with this PE's context: on the GPU this TU's state; from host code with_host_context.
template <class Op>
PGAS_HD decltype(auto) with_context(const char* call, Op&& op) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (const compat::device_state& s = filled_state(call); return std::forward<Op>(op)(s.ctx, s.heap);),
                 (return with_host_context(call, std::forward<Op>(op));))
}

// with_rma_context from host code: on the host transport with_host_context; with the heap on a GPU
// on_gpu(gpu_ctx, heap), a pgas::error ending the process naming the call.
template <class Op, class GpuOp>
decltype(auto) with_host_rma_context(const char* call, Op&& op, GpuOp&& on_gpu) {
    compat::runtime& rt = compat::the_runtime().running(call);
    if (!rt.on_gpu()) return with_host_context(call, std::forward<Op>(op));
    try {
        return std::forward<GpuOp>(on_gpu)(rt.gpu_context(), rt.heap());
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
}

// As with_context, for the RMA calls that host code may make with the heap on a GPU: there on_gpu(gpu_ctx, heap)
// runs instead (a copy through the peer's mapping).
template <class Op, class GpuOp>
PGAS_HD decltype(auto) with_rma_context(const char* call, Op&& op, GpuOp&& on_gpu) {
    NV_IF_TARGET(NV_IS_DEVICE, ((void)on_gpu; return with_context(call, std::forward<Op>(op));),
                 (return with_host_rma_context(call, std::forward<Op>(op), std::forward<GpuOp>(on_gpu));))
}

// Host code with the heap on a GPU: copies `bytes` between this process's memory and a peer's mapped heap on the
// runtime's host stream; complete on return unless !wait (then at the next host quiet, barrier or finalize).
inline void gpu_copy(const char* call, void* dst, const void* src, std::size_t bytes, bool wait = true) {
    compat::the_runtime().host_copy(call, dst, bytes, src, bytes, bytes, 1, wait);
}

// A peer's copy of `p` as this process's GPU maps it (nvlink reaches every PE of the node).
template <class T>
T* gpu_peer(const char* call, const ::pgas::device::context<::pgas::nvlink>& ctx, ::pgas::symmetric_ptr<T> p, int pe) {
    T* peer = ctx.peer(p, pe);
    if (!peer) compat::fail(call, ctx.my_pe(), "PE " + std::to_string(pe) + " is not mapped into this GPU");
    return peer;
}

}  // namespace pgas_nvshmem_tu
}  // namespace
