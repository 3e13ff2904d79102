// NVSHMEM's team collectives, on predefined and split teams (reduce, reducescatter, broadcast, fcollect, alltoall and
// their warp/block forms, barrier/sync of a team), generated over its type tables as forwarders to pgas's device
// collectives, and the dispatch their on-stream forms (on_stream.hpp) share.
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/setup.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#if defined(__CUDACC__)
#include <pgas/host/stream/collectives.cuh>
#endif

#include <cstddef>
#include <cstdint>
#include <string>

#include <nv/target>

// Host code with the heap on a GPU reaches a collective through its on-stream twin in libpgas_nvshmem.so
// (namespace pgas_nvshmem_library, on_stream.hpp), in every translation unit: an nvcc TU's own on-stream forms would
// launch kernels that nvcc never compiles for the device there, since the host branch of the NV_IF_TARGET that leads
// to them is not part of the device pass (CUDA then refuses the launch: invalid resource handle).
namespace pgas_nvshmem_library {
int nvshmemx_team_sync_on_stream(nvshmem_team_t team, cudaStream_t stream);
}

namespace {
namespace pgas_nvshmem_tu {

// NVSHMEM's team collectives, by what they move.
enum class coll { broadcast, fcollect, alltoall, reduce, reducescatter };

// One collective call's arguments as NVSHMEM passes them (raw pointers, counts in elements per PE), with the
// reduction's pgas::op operator (none for the others).
template <coll K, class T, class Op = ::pgas::detail::no_reduction>
struct coll_args {
    T* dest;
    const T* source;
    std::size_t count;
    int root;
    Op op;
};

// The team `handle` names, as the collectives take it; NVSHMEM_TEAM_INVALID or a handle that names no live team is
// errc::invalid_argument naming the call, the PE and the handle.
PGAS_HD inline ::pgas::team collective_team(const char* call, nvshmem_team_t handle, const compat::team_table& teams,
                                            const compat::heap_view& heap) {
    if (handle == NVSHMEM_TEAM_INVALID)
        ::pgas::detail::report(::pgas::errc::invalid_argument, call, heap.my_pe,
                               "team handle is NVSHMEM_TEAM_INVALID, which names no team:", handle);
    return teams.get(call, handle, heap.my_pe, heap.n_pes);
}

// The symmetric blocks of a collective of team t: dest and source as symmetric_ptrs spanning what the collective
// reads and writes (n_pes blocks for fcollect's dest, alltoall's both and reducescatter's source).
template <coll K, class T, class Op>
struct coll_blocks {
    ::pgas::symmetric_ptr<T> dst;
    ::pgas::symmetric_ptr<const T> src;

    PGAS_HD coll_blocks(const char* call, const compat::heap_view& heap, const ::pgas::team& t,
                        const coll_args<K, T, Op>& a)
        : dst(heap.symmetric<T>(call, a.dest,
                                K == coll::fcollect || K == coll::alltoall ? a.count * t.n_pes() : a.count)),
          src(heap.symmetric<const T>(
              call, a.source, K == coll::alltoall || K == coll::reducescatter ? a.count * t.n_pes() : a.count)) {}
};

// The collective by the group G, in the calling thread (a kernel's, or host code on the host transport).
template <class G, coll K, class T, class Op, class Ctx>
PGAS_HD void run(const char* call, const Ctx& ctx, const ::pgas::team& t, const compat::heap_view& heap,
                 const coll_args<K, T, Op>& a) {
    const coll_blocks<K, T, Op> b(call, heap, t, a);
    if constexpr (K == coll::broadcast)
        ::pgas::broadcast<G>(ctx, t, b.dst, b.src, a.count, a.root);
    else if constexpr (K == coll::fcollect)
        ::pgas::fcollect<G>(ctx, t, b.dst, b.src, a.count);
    else if constexpr (K == coll::alltoall)
        ::pgas::alltoall<G>(ctx, t, b.dst, b.src, a.count);
    else if constexpr (K == coll::reduce)
        ::pgas::allreduce<G>(ctx, t, b.dst, b.src, a.count, a.op);
    else
        ::pgas::reduce_scatter<G>(ctx, t, b.dst, b.src, a.count, a.op);
}

#if defined(__CUDACC__)
// The collective enqueued on `stream` (pgas's on-stream collectives), for the heap on this process's GPU.
template <coll K, class T, class Op>
void launch(const char* call, const compat::runtime& rt, const ::pgas::team& t, const coll_args<K, T, Op>& a,
            cudaStream_t stream) {
    const auto& ctx = rt.gpu_context();
    const coll_blocks<K, T, Op> b(call, rt.heap(), t, a);
    if constexpr (K == coll::broadcast)
        ::pgas::broadcast_on_stream(ctx, t, b.dst, b.src, a.count, a.root, stream);
    else if constexpr (K == coll::fcollect)
        ::pgas::allgather_on_stream(ctx, t, b.dst, b.src, a.count, stream);
    else if constexpr (K == coll::alltoall)
        ::pgas::alltoall_on_stream(ctx, t, b.dst, b.src, a.count, stream);
    else if constexpr (K == coll::reduce)
        ::pgas::allreduce_on_stream(ctx, t, b.dst, b.src, a.count, a.op, stream);
    else
        ::pgas::reduce_scatter_on_stream(ctx, t, b.dst, b.src, a.count, a.op, stream);
}
#endif

// On the host: runs op(runtime, team) for the team `handle` names, ending the process with a message naming
// the call on a pgas::error.
template <class Op>
int on_host(const char* call, nvshmem_team_t handle, Op&& op) {
    compat::runtime& rt = compat::the_runtime().running(call);
    try {
        op(rt, collective_team(call, handle, rt.teams(), rt.heap()));
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
    return 0;
}

// collective from host code: on the host transport in the calling thread; with the heap on a GPU the entry point's
// on-stream twin in libpgas_nvshmem.so on the default stream, twin(stream), waited for, after the blocks are checked
// here under the call's own name (a collective without a twin, maxloc, ends the process, saying so).
template <class G, coll K, class T, class Op, class... Twin>
int host_collective(const char* call, nvshmem_team_t handle, const coll_args<K, T, Op>& a, Twin&&... twin) {
    return on_host(call, handle, [&](compat::runtime& rt, const ::pgas::team& t) {
        if (!rt.on_gpu()) return run<G>(call, rt.host_context(), t, rt.heap(), a);
        if constexpr (sizeof...(Twin) == 0) {
            compat::fail(call, rt.heap().my_pe, "with the heap on a GPU, call it from a kernel");
        } else {
            (void)coll_blocks<K, T, Op>(call, rt.heap(), t, a);
            (twin(cudaStream_t{}), ...);
        }
        rt.copy_check(call, cudaStreamSynchronize(cudaStream_t{}));
    });
}

// A collective by the group G: in a kernel, pgas's device collective on this TU's state; from host code,
// host_collective (twin: the entry point's on-stream twin). Returns 0 (NVSHMEM's success); misuse
// traps (device) or ends the process (host), naming the call.
template <class G, coll K, class T, class Op, class... Twin>
PGAS_HD int collective(const char* call, nvshmem_team_t handle, const coll_args<K, T, Op>& a, Twin&&... twin) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (const compat::device_state& s = filled_state(call);
                  run<G>(call, s.ctx, collective_team(call, handle, s.teams, s.heap), s.heap, a); return 0;),
                 (return host_collective<G>(call, handle, a, std::forward<Twin>(twin)...);))
}

// NVSHMEM's warpgroup: four consecutive warps, threads [128 k, 128 k + 128) of the block's linear thread index (the
// unit of Hopper's warpgroup MMA), synchronised by named barrier 1 + k (ids 1-8; 0 is __syncthreads'), as NVSHMEM's
// own. A block whose size is no multiple of 128 would leave a barrier short of threads: sync reports it and traps
// instead of hanging. On the host the calling thread alone, as every group.
struct warpgroup {
    PGAS_HD static unsigned rank() { return ::pgas::detail::thread_in_block() % 128u; }
    PGAS_HD static unsigned size() { NV_IF_TARGET(NV_IS_DEVICE, (return 128u;), (return 1u;)) }
    PGAS_HD static void sync() {
        NV_IF_TARGET(
            NV_IS_DEVICE, ({
                const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
                if (threads % 128u != 0)
                    ::pgas::detail::report(::pgas::errc::invalid_argument, "nvshmemx_barrier_warpgroup",
                                           filled_state("nvshmemx_barrier_warpgroup").heap.my_pe,
                                           "the block's thread count is no multiple of a warpgroup's 128:", threads);
                asm volatile("bar.sync %0, 128;" ::"r"(1u + ::pgas::detail::thread_in_block() / 128u) : "memory");
            }))
    }
};

// team_sync from host code: on the host transport in the calling thread; on GPUs every kernel of the process
// completes first, then the team's PEs meet (on the default stream, as nvshmemx_team_sync_on_stream).
template <class G, bool Barrier>
int host_team_sync(const char* call, nvshmem_team_t handle) {
    return on_host(call, handle, [&](compat::runtime& rt, const ::pgas::team& t) {
        if (!rt.on_gpu()) {
            if constexpr (Barrier)
                ::pgas::barrier<G>(rt.host_context(), t);
            else
                ::pgas::sync<G>(rt.host_context(), t);
            return;
        }
        rt.copy_check(call, cudaDeviceSynchronize());
        pgas_nvshmem_library::nvshmemx_team_sync_on_stream(handle, cudaStream_t{});
        rt.copy_check(call, cudaStreamSynchronize(cudaStream_t{}));
    });
}

// nvshmem_barrier / nvshmem_team_sync of a team by the group G (Barrier: quiet first); from host code
// host_team_sync.
template <class G, bool Barrier>
PGAS_HD int team_sync(const char* call, nvshmem_team_t handle) {
    NV_IF_TARGET(NV_IS_DEVICE, ({
                     const compat::device_state& s = filled_state(call);
                     const ::pgas::team t = collective_team(call, handle, s.teams, s.heap);
                     if constexpr (Barrier)
                         ::pgas::barrier<G>(s.ctx, t);
                     else
                         ::pgas::sync<G>(s.ctx, t);
                     return 0;
                 }),
                 (return host_team_sync<G, Barrier>(call, handle);))
}

// maxloc over {value, location} pairs (double2: x the value, y where it is): dest[i] becomes the largest source[i].x
// of the team's PEs and, among the PEs holding it, the smallest y (MPI's MAXLOC). Two reductions of the pairs read as
// 2n doubles: max leaves every x the largest value (and a y to replace); each PE then writes its own y where its value
// is that largest (+inf elsewhere), and min, in place, leaves the smallest of those. So dest and source must not
// overlap (the second step reads source after the first wrote dest), and from host code it needs the heap in host
// memory (the second step is written by the calling thread).
template <class G>
PGAS_HD int maxloc(const char* call, nvshmem_team_t team, double2* dest, const double2* source, std::size_t n) {
    const double no_location = __builtin_huge_val();  // +inf on host and device (numeric_limits is host-only)
    const auto at = [](const double2* p) { return reinterpret_cast<std::uintptr_t>(p); };
    if (n != 0 && at(dest) < at(source + n) && at(source) < at(dest + n)) {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (::pgas::detail::report(::pgas::errc::invalid_argument, call, filled_state(call).heap.my_pe,
                                             "dest and source overlap (not supported for maxloc): "
                                             "dest - source in bytes =",
                                             static_cast<long long>(at(dest) - at(source)));),
                     (compat::fail(call, compat::the_runtime().running(call).heap().my_pe,
                                   "dest and source overlap (not supported for maxloc): dest - source in bytes = " +
                                       std::to_string(static_cast<long long>(at(dest) - at(source))));))
    }
    NV_IF_TARGET(NV_IS_HOST, ({
                     compat::runtime& rt = compat::the_runtime().running(call);
                     if (rt.on_gpu())
                         compat::fail(
                             call, rt.heap().my_pe,
                             "with the heap on a GPU, call it from a kernel (from host code it is not provided)");
                 }))
    auto* pairs = reinterpret_cast<double*>(dest);
    collective<G>(call, team,
                  coll_args<coll::reduce, double, ::pgas::op::max_t>{
                      pairs, reinterpret_cast<const double*>(source), 2 * n, 0, {}});
    G::sync();  // every thread of the group reads what the others' part of the reduction wrote
    for (std::size_t i = G::rank(); i < n; i += G::size())
        dest[i].y = source[i].x == dest[i].x ? source[i].y : no_location;
    G::sync();
    return collective<G>(call, team, coll_args<coll::reduce, double, ::pgas::op::min_t>{pairs, pairs, 2 * n, 0, {}});
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// The largest x of every PE's source[i] with the smallest y among the PEs holding it (MPI's MAXLOC), into dest[i] on
/// every PE of `team`; a thread on the device, or host code with the heap in host memory. dest and source must not
/// overlap. Returns 0.
PGAS_NVSHMEM_API int nvshmem_double2_maxloc_reduce(nvshmem_team_t team, double2* dest, const double2* source,
                                                   std::size_t nreduce) {
    return pgas_nvshmem_tu::maxloc<::pgas::thread>("nvshmem_double2_maxloc_reduce", team, dest, source, nreduce);
}
/// nvshmem_double2_maxloc_reduce by every thread of a warp.
PGAS_NVSHMEM_API int nvshmemx_double2_maxloc_reduce_warp(nvshmem_team_t team, double2* dest, const double2* source,
                                                         std::size_t nreduce) {
    return pgas_nvshmem_tu::maxloc<::pgas::warp>("nvshmemx_double2_maxloc_reduce_warp", team, dest, source, nreduce);
}
/// nvshmem_double2_maxloc_reduce by every thread of a block.
PGAS_NVSHMEM_API int nvshmemx_double2_maxloc_reduce_block(nvshmem_team_t team, double2* dest, const double2* source,
                                                          std::size_t nreduce) {
    return pgas_nvshmem_tu::maxloc<::pgas::block>("nvshmemx_double2_maxloc_reduce_block", team, dest, source, nreduce);
}

// One reduction of one group: NAME_OPNAME_KIND by PREFIX/SUFFIX (nvshmem/"", nvshmemx/_warp, nvshmemx/_block), KIND
// reduce (to every PE) or reducescatter.
#define PGAS_NVSHMEM_REDUCTION(TYPE, NAME, OPNAME, PGASOP, PREFIX, SUFFIX, GROUP, KIND)                          \
    namespace pgas_nvshmem_library {                                                                             \
    int nvshmemx_##NAME##_##OPNAME##_##KIND##_on_stream(nvshmem_team_t, TYPE*, const TYPE*, std::size_t,         \
                                                        cudaStream_t);                                           \
    }                                                                                                            \
    PGAS_NVSHMEM_API int PREFIX##_##NAME##_##OPNAME##_##KIND##SUFFIX(nvshmem_team_t team, TYPE* dest,            \
                                                                     const TYPE* source, std::size_t nreduce) {  \
        return pgas_nvshmem_tu::collective<::pgas::GROUP>(                                                       \
            #PREFIX "_" #NAME "_" #OPNAME "_" #KIND #SUFFIX, team,                                               \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::KIND, TYPE, ::pgas::op::PGASOP##_t>{               \
                dest, source, nreduce, 0, {}},                                                                   \
            [&](cudaStream_t stream) {                                                                           \
                return pgas_nvshmem_library::nvshmemx_##NAME##_##OPNAME##_##KIND##_on_stream(team, dest, source, \
                                                                                             nreduce, stream);   \
            });                                                                                                  \
    }
// The reductions of one group: NAME_OPNAME_reduce and _reducescatter.
#define PGAS_NVSHMEM_REDUCE_GROUP(TYPE, NAME, OPNAME, PGASOP, PREFIX, SUFFIX, GROUP)  \
    PGAS_NVSHMEM_REDUCTION(TYPE, NAME, OPNAME, PGASOP, PREFIX, SUFFIX, GROUP, reduce) \
    PGAS_NVSHMEM_REDUCTION(TYPE, NAME, OPNAME, PGASOP, PREFIX, SUFFIX, GROUP, reducescatter)
#define PGAS_NVSHMEM_REDUCE(TYPE, NAME, OPNAME, PGASOP)                          \
    PGAS_NVSHMEM_REDUCE_GROUP(TYPE, NAME, OPNAME, PGASOP, nvshmem, , thread)     \
    PGAS_NVSHMEM_REDUCE_GROUP(TYPE, NAME, OPNAME, PGASOP, nvshmemx, _warp, warp) \
    PGAS_NVSHMEM_REDUCE_GROUP(TYPE, NAME, OPNAME, PGASOP, nvshmemx, _block, block)
#define PGAS_NVSHMEM_BITWISE_REDUCE(TYPE, NAME) PGAS_NVSHMEM_BITWISE_REDUCE_OPS(PGAS_NVSHMEM_REDUCE, TYPE, NAME)
#define PGAS_NVSHMEM_ARITH_REDUCE(TYPE, NAME) PGAS_NVSHMEM_ARITH_REDUCE_OPS(PGAS_NVSHMEM_REDUCE, TYPE, NAME)

PGAS_NVSHMEM_BITWISE_REDUCE_TYPES(PGAS_NVSHMEM_BITWISE_REDUCE)
PGAS_NVSHMEM_ARITH_REDUCE_TYPES(PGAS_NVSHMEM_ARITH_REDUCE)

// broadcast, fcollect and alltoall of one type (or of bytes: TYPE void, ELEMENT std::byte) by one group, named
// BROADCAST, FCOLLECT and ALLTOALL; their on-stream twins (plain C++ TUs) are named STREAM_BROADCAST, and so on.
#define PGAS_NVSHMEM_MOVE(TYPE, ELEMENT, FN, TWIN, KIND, GROUP)                                                   \
    namespace pgas_nvshmem_library {                                                                              \
    int TWIN(nvshmem_team_t, TYPE*, const TYPE*, std::size_t, cudaStream_t);                                      \
    }                                                                                                             \
    PGAS_NVSHMEM_API int FN(nvshmem_team_t team, TYPE* dest, const TYPE* source, std::size_t nelems) {            \
        return pgas_nvshmem_tu::collective<::pgas::GROUP>(                                                        \
            #FN, team,                                                                                            \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::KIND, ELEMENT>{                                     \
                static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), nelems, 0, {}},                 \
            [&](cudaStream_t stream) { return pgas_nvshmem_library::TWIN(team, dest, source, nelems, stream); }); \
    }
#define PGAS_NVSHMEM_MOVES(TYPE, ELEMENT, BROADCAST, FCOLLECT, ALLTOALL, STREAM_BROADCAST, STREAM_FCOLLECT, \
                           STREAM_ALLTOALL, GROUP)                                                          \
    namespace pgas_nvshmem_library {                                                                        \
    int STREAM_BROADCAST(nvshmem_team_t, TYPE*, const TYPE*, std::size_t, int, cudaStream_t);               \
    }                                                                                                       \
    PGAS_NVSHMEM_API int BROADCAST(nvshmem_team_t team, TYPE* dest, const TYPE* source, std::size_t nelems, \
                                   int PE_root) {                                                           \
        return pgas_nvshmem_tu::collective<::pgas::GROUP>(                                                  \
            #BROADCAST, team,                                                                               \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::broadcast, ELEMENT>{                          \
                static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), nelems, PE_root, {}},     \
            [&](cudaStream_t stream) {                                                                      \
                return pgas_nvshmem_library::STREAM_BROADCAST(team, dest, source, nelems, PE_root, stream); \
            });                                                                                             \
    }                                                                                                       \
    PGAS_NVSHMEM_MOVE(TYPE, ELEMENT, FCOLLECT, STREAM_FCOLLECT, fcollect, GROUP)                            \
    PGAS_NVSHMEM_MOVE(TYPE, ELEMENT, ALLTOALL, STREAM_ALLTOALL, alltoall, GROUP)
// ... by a thread (nvshmem_NAME_broadcast), a warp and a block (nvshmemx_NAME_broadcast_warp, _block).
#define PGAS_NVSHMEM_TYPED_MOVES(TYPE, NAME)                                                                         \
    PGAS_NVSHMEM_MOVES(TYPE, TYPE, nvshmem_##NAME##_broadcast, nvshmem_##NAME##_fcollect, nvshmem_##NAME##_alltoall, \
                       nvshmemx_##NAME##_broadcast_on_stream, nvshmemx_##NAME##_fcollect_on_stream,                  \
                       nvshmemx_##NAME##_alltoall_on_stream, thread)                                                 \
    PGAS_NVSHMEM_MOVES(TYPE, TYPE, nvshmemx_##NAME##_broadcast_warp, nvshmemx_##NAME##_fcollect_warp,                \
                       nvshmemx_##NAME##_alltoall_warp, nvshmemx_##NAME##_broadcast_on_stream,                       \
                       nvshmemx_##NAME##_fcollect_on_stream, nvshmemx_##NAME##_alltoall_on_stream, warp)             \
    PGAS_NVSHMEM_MOVES(TYPE, TYPE, nvshmemx_##NAME##_broadcast_block, nvshmemx_##NAME##_fcollect_block,              \
                       nvshmemx_##NAME##_alltoall_block, nvshmemx_##NAME##_broadcast_on_stream,                      \
                       nvshmemx_##NAME##_fcollect_on_stream, nvshmemx_##NAME##_alltoall_on_stream, block)

PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_TYPED_MOVES)
PGAS_NVSHMEM_MOVES(void, std::byte, nvshmem_broadcastmem, nvshmem_fcollectmem, nvshmem_alltoallmem,
                   nvshmemx_broadcastmem_on_stream, nvshmemx_fcollectmem_on_stream, nvshmemx_alltoallmem_on_stream,
                   thread)
PGAS_NVSHMEM_MOVES(void, std::byte, nvshmemx_broadcastmem_warp, nvshmemx_fcollectmem_warp, nvshmemx_alltoallmem_warp,
                   nvshmemx_broadcastmem_on_stream, nvshmemx_fcollectmem_on_stream, nvshmemx_alltoallmem_on_stream,
                   warp)
PGAS_NVSHMEM_MOVES(void, std::byte, nvshmemx_broadcastmem_block, nvshmemx_fcollectmem_block, nvshmemx_alltoallmem_block,
                   nvshmemx_broadcastmem_on_stream, nvshmemx_fcollectmem_on_stream, nvshmemx_alltoallmem_on_stream,
                   block)

/// Every PE of `team` completes its earlier operations, then they meet (a thread on the device,
/// or host code); returns 0.
PGAS_NVSHMEM_API int nvshmem_barrier(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::thread, true>("nvshmem_barrier", team);
}
/// nvshmem_barrier by every thread of a warp.
PGAS_NVSHMEM_API int nvshmemx_barrier_warp(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::warp, true>("nvshmemx_barrier_warp", team);
}
/// nvshmem_barrier by every thread of a block.
PGAS_NVSHMEM_API int nvshmemx_barrier_block(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::block, true>("nvshmemx_barrier_block", team);
}
/// nvshmem_barrier by every thread of a warpgroup (4 warps; the block's size a multiple of 128).
PGAS_NVSHMEM_API int nvshmemx_barrier_warpgroup(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<pgas_nvshmem_tu::warpgroup, true>("nvshmemx_barrier_warpgroup", team);
}
/// The PEs of `team` meet, without completing earlier operations; returns 0.
PGAS_NVSHMEM_API int nvshmem_team_sync(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::thread, false>("nvshmem_team_sync", team);
}
/// nvshmem_team_sync by every thread of a warp.
PGAS_NVSHMEM_API int nvshmemx_team_sync_warp(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::warp, false>("nvshmemx_team_sync_warp", team);
}
/// nvshmem_team_sync by every thread of a block.
PGAS_NVSHMEM_API int nvshmemx_team_sync_block(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::block, false>("nvshmemx_team_sync_block", team);
}
/// OpenSHMEM's name for nvshmem_team_sync.
PGAS_NVSHMEM_API int nvshmem_sync(nvshmem_team_t team) {
    return pgas_nvshmem_tu::team_sync<::pgas::thread, false>("nvshmem_sync", team);
}
