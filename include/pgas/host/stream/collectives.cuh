// On-stream forms of the collectives: one kernel per call on a CUDA stream, capturable in CUDA graphs (nvcc only).
#pragma once

#if !defined(__CUDACC__)
#error "pgas/host/stream/collectives.cuh launches kernels: compile this translation unit with nvcc"
#endif

#include <pgas/coll/allgather.hpp>
#include <pgas/coll/alltoall.hpp>
#include <pgas/coll/alltoallv.hpp>
#include <pgas/coll/broadcast.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/reduce_scatter.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/coll/detail/driver.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/core/error.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/host/nvtx.hpp>
#include <pgas/host/stream/launch.cuh>
#include <pgas/host/stream/rma.cuh>

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <cuda_runtime.h>

PGAS_NAMESPACE_BEGIN

// Each *_on_stream call launches one kernel on `stream` that runs the device
// collective, so it orders with the stream's other work and can be captured
// into a CUDA graph (programmatically: host/stream/launch.cuh). Every collective goes through one kernel template and
// one launch (launch_collective): the kernel runs the collective's plan with
// the one driver (coll/detail/driver.hpp), each block as one part. On the LL
// path the blocks are LL channels (up to 32 for the world and node teams),
// of fewer threads for small calls; on the direct peer-pointer path each
// moves its own part between barriers of its own (coll/detail/part.hpp), up
// to Policy::stream_max_blocks; put/get runs one block. Policy::stream_threads
// threads per block at most (launch_shape). Call
// it with the device of ctx's PE current, once per PE (a process driving
// several GPUs calls it for each PE's context on that GPU's stream).
// Semantics, arguments and in-place forms are those of the device collective;
// argument errors trap in the kernel (the next CUDA call reports it), a launch
// failure throws pgas::error with errc::cuda here. Every PE must enqueue the
// same collectives in the same order on each team.
namespace detail {
PGAS_KERNELS_BEGIN

// This block's part of the launch.
__device__ inline coll_part launch_part() { return coll_part{blockIdx.x, gridDim.x}; }

// Every on-stream collective: collective K's plan run by the one driver, each block as one part, holding the
// algorithms `Paths` names (the launch picks the kernel of the call's path). K is a template parameter, not a plan
// passed in: with the plan's shape unknown the one kernel took 142-148 registers against 93-96 for the
// per-collective kernels before it. The launch bound holds the registers to what MaxThreads threads per block can
// have (more failed to launch: cudaErrorLaunchOutOfResources, 4xH100), and says one block per SM is enough: with the
// thread count alone, ptxas took the broadcast kernels down to 64 registers (two blocks per SM) and spilled 312-328
// bytes (LL since cd9075b, direct since 089a74a's cold check).
template <class Policy, coll_kind K, coll_paths Paths, unsigned MaxThreads, class Tr, class T, class Op>
PGAS_KERNEL void __launch_bounds__(MaxThreads, 1)
    collective_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                      symmetric_ptr<const T> src, std::size_t count, int root, Op op) {
    begin_stream_kernel();
    run_collective<block, Policy, Paths>(ctx, t, plan_of<K>(count, root), dst, src, op, launch_part());
}

// alltoallv_on_stream's arrays travel in the kernel's parameters (captured by value in a graph).
struct alltoallv_table {
    static constexpr int max_pes = 64;
    std::size_t dst_displs[max_pes];
    std::size_t src_counts[max_pes];
    std::size_t src_displs[max_pes];
};
template <class Tr, class T>
PGAS_KERNEL void alltoallv_kernel(const __grid_constant__ device::context<Tr> ctx, team t, symmetric_ptr<T> dst,
                                  symmetric_ptr<const T> src, const __grid_constant__ alltoallv_table table) {
    begin_stream_kernel();
    alltoallv<block>(ctx, t, dst, table.dst_displs, src, table.src_counts, table.src_displs);
}

template <class Tr>
PGAS_KERNEL void barrier_kernel(const __grid_constant__ device::context<Tr> ctx, team t) {
    begin_stream_kernel();
    barrier<block>(ctx, t);
}
template <class Tr>
PGAS_KERNEL void sync_kernel(const __grid_constant__ device::context<Tr> ctx, team t) {
    begin_stream_kernel();
    sync<block>(ctx, t);
}
PGAS_KERNELS_END

// The most blocks one PE's on-stream kernel may launch on the current device when `pes_per_gpu` PEs share each GPU
// (runtime_state::pes_per_gpu): see block_share. No limit with one PE per GPU.
inline unsigned resident_block_share(int pes_per_gpu) {
    if (pes_per_gpu <= 1) return ~0u;  // block_share's "no bound", without asking the device
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) (void)cudaGetLastError();
    return block_share(cached_device_attribute<cudaDevAttrMultiProcessorCount>(device), pes_per_gpu);
}

// A call's name in messages: its NVTX range name ("pgas::allreduce_on_stream") without the "pgas::" prefix.
inline const char* without_pgas_prefix(const char* range) {
    constexpr std::string_view prefix = "pgas::";
    return std::string_view(range).starts_with(prefix) ? range + prefix.size() : range;
}

// Every *_on_stream collective: enqueues collective K as one kernel of launch_shape's grid on `stream` (the same on
// every PE: it depends only on the policy, the team and the sizes), inside an NVTX range named `range`
// ("pgas::<call>"); a launch failure names the call (`range` without its "pgas::").
template <class Policy, coll_kind K, class Tr, class T, class U, class Op>
void launch_collective(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                       std::size_t count, int root, Op op, cudaStream_t stream, const char* range) {
    PGAS_NVTX_RANGE(range);
    const char* call = without_pgas_prefix(range);
    using P = coll::resolve_policy<Policy, Tr>;
    static_assert(coll::tuning_policy<P>, "pgas: a collective's Policy must model pgas::coll::tuning_policy");
    static_assert(P::stream_max_blocks <= unsigned(coll_scratch::max_parts));
    require_collective_buffers<T, U>();
    if constexpr (reduces_with<Op>) require_reduction<Op, T>();
    const coll_plan plan = plan_of<K>(count, root);
    // The device's path (choose_path), asked here without begin_call's checks: a caller outside the team traps in
    // the kernel, as every argument error of an on-stream call does.
    constexpr bool may_take_ll = peer_pointer_transport<Tr> && P::ll_max_bytes != 0;
    const team bound = t.bound_to(ctx.my_pe());
    const coll_call<Tr> c{ctx, bound, bound.my_pe(), bound.n_pes(), call, 0};
    bool ll = false;
    if constexpr (may_take_ll) ll = takes_ll<P>(c, plan.count * sizeof(T));
    const launch_grid grid = launch_shape<P>(t, plan, sizeof(T), ll, resident_block_share(ctx.runtime.pes_per_gpu));
    const symmetric_ptr<const T> source(src);
    if constexpr (may_take_ll) {  // no LL kernel is built where LL cannot run
        if (ll)
            return launch_on_stream(collective_kernel<Policy, K, coll_paths::ll_only, ll_stream_threads, Tr, T, Op>,
                                    grid.blocks, grid.threads, stream, ctx.my_pe(), call, ctx, t, dst, source, count,
                                    root, op);
    }
    launch_on_stream(collective_kernel<Policy, K, coll_paths::direct_only, P::stream_threads, Tr, T, Op>, grid.blocks,
                     grid.threads, stream, ctx.my_pe(), call, ctx, t, dst, source, count, root, op);
}

}  // namespace detail

/// Enqueues pgas::barrier on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. A one-warp kernel (quiet, then team sync).
///
/// - @on_stream_contract{pgas::barrier}
template <class Tr>
void barrier_on_stream(const device::context<Tr>& ctx, team t, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::barrier_on_stream");
    detail::launch_on_stream(detail::barrier_kernel<Tr>, 1, 32, stream, ctx.my_pe(), "barrier_on_stream", ctx, t);
}
/// Enqueues pgas::barrier_all on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. barrier_on_stream over the world team.
///
/// - @on_stream_contract{pgas::barrier_all}
template <class Tr>
void barrier_all_on_stream(const device::context<Tr>& ctx, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::barrier_all_on_stream");
    barrier_on_stream(ctx, ctx.world_team(), stream);
}

/// Enqueues pgas::sync on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. A one-warp kernel.
///
/// - @on_stream_contract{pgas::sync}
template <class Tr>
void sync_on_stream(const device::context<Tr>& ctx, team t, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::sync_on_stream");
    detail::launch_on_stream(detail::sync_kernel<Tr>, 1, 32, stream, ctx.my_pe(), "sync_on_stream", ctx, t);
}

/// Enqueues pgas::broadcast on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. On nvlink/host the kernel spreads over several blocks (LL channels for small and middle sizes, direct
/// parts for large ones); put/get runs one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::broadcast}
template <class Policy = coll::automatic, class Tr, class T, class U>
void broadcast_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, int root, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::broadcast>(
        ctx, t, dst, src, count, root, detail::no_reduction{}, stream, "pgas::broadcast_on_stream");
}

/// Enqueues pgas::reduce on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. On nvlink/host the kernel spreads over several blocks (LL channels for small and middle sizes, direct
/// parts for large ones); put/get runs one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::reduce}
template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void reduce_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                      std::size_t count, Op op, int root, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::reduce>(ctx, t, dst, src, count, root, op, stream,
                                                                 "pgas::reduce_on_stream");
}

/// Enqueues pgas::allreduce on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. On nvlink/host the kernel spreads over several blocks (LL channels for small and middle sizes, direct
/// parts for large ones); put/get runs one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::allreduce}
template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void allreduce_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, Op op, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::allreduce>(ctx, t, dst, src, count, 0, op, stream,
                                                                    "pgas::allreduce_on_stream");
}

/// Enqueues pgas::reduce_scatter on `stream`: one kernel, ordered with the stream's other work and capturable in a
/// CUDA graph. On the direct peer-pointer path (large buffers on nvlink/host) the kernel spreads over up to
/// `Policy::stream_max_blocks` blocks; otherwise one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::reduce_scatter}
template <class Policy = coll::automatic, class Tr, class T, class U, class Op>
void reduce_scatter_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                              std::size_t count, Op op, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::reduce_scatter>(ctx, t, dst, src, count, 0, op, stream,
                                                                         "pgas::reduce_scatter_on_stream");
}

/// Enqueues pgas::allgather on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. On nvlink/host the kernel spreads over several blocks (LL channels for small and middle sizes, direct
/// parts for large ones); put/get runs one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::allgather}
template <class Policy = coll::automatic, class Tr, class T, class U>
void allgather_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                         std::size_t count, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::allgather>(ctx, t, dst, src, count, 0, detail::no_reduction{},
                                                                    stream, "pgas::allgather_on_stream");
}

/// Enqueues pgas::alltoall on `stream`: one kernel, ordered with the stream's other work and capturable in a CUDA
/// graph. On nvlink/host the kernel spreads over several blocks (LL channels for small and middle sizes, direct
/// parts for large ones); put/get runs one block of `Policy::stream_threads` threads.
///
/// - @on_stream_contract{pgas::alltoall}
template <class Policy = coll::automatic, class Tr, class T, class U>
void alltoall_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, symmetric_ptr<U> src,
                        std::size_t count, cudaStream_t stream) {
    detail::launch_collective<Policy, detail::coll_kind::alltoall>(ctx, t, dst, src, count, 0, detail::no_reduction{},
                                                                   stream, "pgas::alltoall_on_stream");
}

/// Enqueues pgas::alltoallv on `stream`: one kernel of one block (`Policy::stream_threads` threads), ordered with
/// the stream's other work and capturable in a CUDA graph (the arrays are copied into the kernel's parameters, so
/// the host arrays may change or go away once this returns). The arrays are host memory with `t.n_pes()` entries
/// each, as for pgas::alltoallv.
///
/// - **Called by** the host, once per PE with that PE's context and the PE's device current; every member enqueues
///   the same collectives in the same order on each team.
/// - **Returns** once the kernel is enqueued; the collective completes, with pgas::alltoallv's guarantees, when the
///   stream reaches it.
/// - **Transports:** as pgas::alltoallv (the same compile-time errors).
/// - **Errors:** checked here before the launch, throwing pgas::error naming the call, the PE, the team member and
///   the value: a team of more than 64 PEs (errc::invalid_argument: call pgas::alltoallv in a kernel), a src or dst
///   block (displacement + count) outside the heap's user area (errc::not_symmetric). Other argument errors and
///   timeouts trap in the kernel with pgas::alltoallv's diagnostic; a failed launch throws errc::cuda.
template <class Policy = coll::automatic, class Tr, class T, class U>
void alltoallv_on_stream(const device::context<Tr>& ctx, team t, symmetric_ptr<T> dst, const std::size_t* dst_displs,
                         symmetric_ptr<U> src, const std::size_t* src_counts, const std::size_t* src_displs,
                         cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::alltoallv_on_stream");
    detail::require_collective_buffers<T, U>();
    const char* call = "alltoallv_on_stream";
    const int n = t.n_pes();
    if (n > detail::alltoallv_table::max_pes)
        detail::throw_error(errc::invalid_argument, ctx.my_pe(), call,
                            "a team of " + std::to_string(n) + " PEs; the on-stream form takes up to " +
                                std::to_string(detail::alltoallv_table::max_pes) +
                                " (call pgas::alltoallv in a kernel for larger teams)");
    detail::alltoallv_table table{};
    for (int j = 0; j < n; ++j) {
        const auto block = [&](const char* what, std::uint64_t offset, std::size_t displ) {
            if (!detail::elements_in_heap(ctx, offset, displ, src_counts[j], sizeof(T)))
                detail::throw_error(errc::not_symmetric, ctx.my_pe(), call,
                                    std::string(what) + " block for team member " + std::to_string(j) +
                                        " (displacement " + std::to_string(displ) + ", count " +
                                        std::to_string(src_counts[j]) + " elements of " + std::to_string(sizeof(T)) +
                                        " bytes) lies outside the heap's user area");
        };
        block("src", src.offset(), src_displs[j]);
        block("dst", dst.offset(), dst_displs[j]);
        table.dst_displs[j] = dst_displs[j];
        table.src_counts[j] = src_counts[j];
        table.src_displs[j] = src_displs[j];
    }
    using P = coll::resolve_policy<Policy, Tr>;
    detail::launch_on_stream(detail::alltoallv_kernel<Tr, T>, 1, P::stream_threads, stream, ctx.my_pe(), call, ctx, t,
                             dst, symmetric_ptr<const T>(src), table);
}

PGAS_NAMESPACE_END
