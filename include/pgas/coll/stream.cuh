// On-stream forms of the collectives: one kernel per call enqueued on a CUDA stream, capturable in CUDA graphs (nvcc only).
#pragma once

#if !defined(__CUDACC__)
#error "pgas/coll/stream.cuh launches kernels: compile this translation unit with nvcc"
#endif

#include <pgas/coll/allgather.hpp>
#include <pgas/coll/alltoall.hpp>
#include <pgas/coll/broadcast.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/reduce_scatter.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/core/error.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <type_traits>

#include <cuda_runtime.h>

PGAS_NAMESPACE_BEGIN

// Each *_on_stream call launches one block of Policy::stream_threads threads
// on `stream` that runs the device collective as pgas::block, so it orders
// with the stream's other work and can be captured into a CUDA graph. Call it
// with the device of ctx's PE current, once per PE (a process driving several
// GPUs calls it for each PE's context on that GPU's stream). Semantics,
// arguments and in-place forms are those of the device collective; argument
// errors trap in the kernel (the next CUDA call reports it), a launch failure
// throws pgas::error with errc::cuda here. Every PE must enqueue the same
// collectives in the same order on each team.
namespace detail {

template <class Policy, class Tr, class T>
PGAS_KERNEL void broadcast_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                  symmetric_ptr<const T> src, std::size_t count, int root) {
    broadcast<block, Policy>(ctx, t, dst, src, count, root);
}
template <class Policy, class Tr, class T, class Op>
PGAS_KERNEL void reduce_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                               symmetric_ptr<const T> src, std::size_t count, Op op, int root) {
    reduce<block, Policy>(ctx, t, dst, src, count, op, root);
}
template <class Policy, class Tr, class T, class Op>
PGAS_KERNEL void allreduce_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                  symmetric_ptr<const T> src, std::size_t count, Op op) {
    allreduce<block, Policy>(ctx, t, dst, src, count, op);
}
template <class Policy, class Tr, class T, class Op>
PGAS_KERNEL void reduce_scatter_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                       symmetric_ptr<const T> src, std::size_t count, Op op) {
    reduce_scatter<block, Policy>(ctx, t, dst, src, count, op);
}
template <class Policy, class Tr, class T>
PGAS_KERNEL void allgather_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                  symmetric_ptr<const T> src, std::size_t count) {
    allgather<block, Policy>(ctx, t, dst, src, count);
}
template <class Policy, class Tr, class T>
PGAS_KERNEL void alltoall_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                 symmetric_ptr<const T> src, std::size_t count) {
    alltoall<block, Policy>(ctx, t, dst, src, count);
}

template <class Tr>
PGAS_KERNEL void barrier_kernel(const __grid_constant__ device::context<Tr> ctx, team t) {
    barrier<block>(ctx, t);
}
template <class Tr>
PGAS_KERNEL void sync_kernel(const __grid_constant__ device::context<Tr> ctx, team t) {
    sync<block>(ctx, t);
}

// Threads of the one block an on-stream call launches.
template <class Policy, class Tr>
constexpr unsigned stream_threads() {
    return unsigned(coll::resolve_policy<Policy, Tr>::stream_threads);
}

inline void check_launch(const char* call, int pe) {
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess)
        throw_error(errc::cuda, pe, call, std::string("kernel launch failed: ") + cudaGetErrorString(status));
}

}  // namespace detail

// pgas::barrier (quiet, then team sync) and pgas::sync as one-warp kernels on the stream.
template <class Tr>
void barrier_on_stream(const device::context<Tr>& ctx, team t, cudaStream_t stream) {
    detail::barrier_kernel<Tr><<<1, 32, 0, stream>>>(ctx, t);
    detail::check_launch("barrier_on_stream", ctx.my_pe());
}
template <class Tr>
void barrier_all_on_stream(const device::context<Tr>& ctx, cudaStream_t stream) {
    barrier_on_stream(ctx, ctx.world_team(), stream);
}

template <class Tr>
void sync_on_stream(const device::context<Tr>& ctx, team t, cudaStream_t stream) {
    detail::sync_kernel<Tr><<<1, 32, 0, stream>>>(ctx, t);
    detail::check_launch("sync_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U>
void broadcast_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, int root, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::broadcast_kernel<Policy, Tr, T><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count, root);
    detail::check_launch("broadcast_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void reduce_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count, Op op, int root, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::reduce_kernel<Policy, Tr, T, Op><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count, op, root);
    detail::check_launch("reduce_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void allreduce_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, Op op, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::allreduce_kernel<Policy, Tr, T, Op><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count, op);
    detail::check_launch("allreduce_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void reduce_scatter_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                              std::size_t count, Op op, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::require_reduction<Op, T>();
    detail::reduce_scatter_kernel<Policy, Tr, T, Op><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count, op);
    detail::check_launch("reduce_scatter_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U>
void allgather_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::allgather_kernel<Policy, Tr, T><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count);
    detail::check_launch("allgather_on_stream", ctx.my_pe());
}

template <class Policy = coll::automatic, class Tr, class T, class U>
void alltoall_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                        std::size_t count, cudaStream_t stream) {
    detail::require_collective_buffers<T, U>();
    detail::alltoall_kernel<Policy, Tr, T><<<1, detail::stream_threads<Policy, Tr>(), 0, stream>>>(
        ctx, t, dst, symmetric_ptr<const T>(src), count);
    detail::check_launch("alltoall_on_stream", ctx.my_pe());
}

PGAS_NAMESPACE_END
