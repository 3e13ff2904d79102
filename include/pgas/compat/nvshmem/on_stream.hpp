// NVSHMEM's on-stream calls (barrier, sync, quiet, put/get, iput/iget, p/g, put_signal, signal_op, signal_wait_until,
// the waits on words and the team collectives, each enqueued on a CUDA stream) as forwarders to pgas's on-stream
// functions: inline in nvcc translation units, and from plain C++ ones calls into libpgas_nvshmem.so, which holds
// them compiled by nvcc (src/compat/nvshmem/on_stream.cu), as NVSHMEM's are in libnvshmem_host.
#pragma once

#include <pgas/compat/nvshmem/coll.hpp>
#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/sync.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

// PGAS_NVSHMEM_ON_STREAM(RET, NAME, (PARAMS), BODY...): one on-stream entry point (host code). BODY enqueues pgas's
// on-stream form (heap on this process's GPU) or, on the host transport, runs the call at once (nothing on a GPU to
// order it with). The library's TUs (PGAS_NVSHMEM_ON_STREAM_LIBRARY) define it with external linkage in namespace
// pgas_nvshmem_library. A plain C++ compiler cannot launch kernels, so there it is that definition, declared and
// brought into the global namespace. In an nvcc translation unit it is inline, as every other entry point (a template
// with internal linkage: no second definition of the library's function); the library's stays reachable there by
// its qualified name, which host code with the heap on a GPU calls in every TU (coll.hpp says why).
#if defined(PGAS_NVSHMEM_ON_STREAM_LIBRARY)
#define PGAS_NVSHMEM_ON_STREAM(RET, NAME, PARAMS, ...) \
    namespace pgas_nvshmem_library {                   \
    RET NAME PARAMS { __VA_ARGS__ }                    \
    }
#elif defined(__CUDACC__)
#define PGAS_NVSHMEM_ON_STREAM(RET, NAME, PARAMS, ...) \
    template <int PgasLazy = 0>                        \
    static inline RET NAME PARAMS {                    \
        __VA_ARGS__                                    \
    }
#else
#define PGAS_NVSHMEM_ON_STREAM(RET, NAME, PARAMS, ...) \
    namespace pgas_nvshmem_library {                   \
    RET NAME PARAMS;                                   \
    }                                                  \
    using pgas_nvshmem_library::NAME;
#endif
// Whether this TU defines or declares the on-stream family numbered PART: every TU all of them, except the library's,
// which compiles one family each (PGAS_NVSHMEM_ON_STREAM_LIBRARY=PART), so that a parallel build divides the nvcc
// time of its several hundred kernels.
#if defined(PGAS_NVSHMEM_ON_STREAM_LIBRARY)
#define PGAS_NVSHMEM_ON_STREAM_HERE(PART) (PGAS_NVSHMEM_ON_STREAM_LIBRARY == (PART))
#else
#define PGAS_NVSHMEM_ON_STREAM_HERE(PART) 1
#endif
/// The number of on-stream families (the library's parts).
#define PGAS_NVSHMEM_ON_STREAM_PARTS 7

#if defined(__CUDACC__)
namespace {
namespace pgas_nvshmem_tu {

// An on-stream call with the heap on this process's GPU: gpu(ctx, heap) enqueues it; a pgas::error ends the process
// naming the call. On the host transport host() runs the call's blocking form instead. Returns 0.
template <class Host, class Gpu>
int on_stream(const char* call, Host&& host, Gpu&& gpu) {
    compat::runtime& rt = compat::the_runtime().running(call);
    if (!rt.on_gpu()) {
        host();
        return 0;
    }
    try {
        gpu(rt.gpu_context(), rt.heap());
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
    return 0;
}

// nvshmemx_<T>_put/get(_nbi)_on_stream: pgas::put_on_stream / get_on_stream (on the host transport a blocking put or
// get). Both complete in stream order, so the _nbi forms are the same calls.
template <bool Put, class T>
void transfer_on_stream(const char* call, T* dest, const T* source, std::size_t count, int pe, cudaStream_t stream) {
    on_stream(
        call, [&] { transfer<::pgas::thread, Put ? rma::put : rma::get>(call, dest, source, count, pe); },
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            if constexpr (Put)
                ::pgas::put_on_stream(ctx, heap.symmetric<T>(call, dest, count), source, count, pe, stream);
            else
                ::pgas::get_on_stream(ctx, dest, heap.symmetric<T>(call, source, count), count, pe, stream);
        });
}

// nvshmemx_<T>_iput/iget_on_stream: pgas::iput_on_stream / iget_on_stream, strides in elements (at least 1); the
// symmetric side spans (count - 1) * its stride + 1 elements (on the host transport the blocking iput or iget).
template <bool Put, class T>
void strided_on_stream(const char* call, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst,
                       std::size_t count, int pe, cudaStream_t stream) {
    on_stream(
        call, [&] { strided<::pgas::thread, Put>(call, dest, source, dst, sst, count, pe); },
        [&](const auto& ctx, const compat::heap_view& heap) {
            const std::size_t span = strided_span<Put>(call, heap, dst, sst, count, pe);
            if constexpr (Put)
                ::pgas::iput_on_stream(ctx, heap.symmetric<T>(call, dest, span), source, dst, sst, count, pe, stream);
            else
                ::pgas::iget_on_stream(ctx, dest, heap.symmetric<T>(call, source, span), dst, sst, count, pe, stream);
        });
}

// nvshmemx_<T>_put_signal(_nbi)_on_stream: pgas::put_signal_on_stream (the signal follows the data).
template <class T>
void put_signal_on_stream(const char* call, T* dest, const T* source, std::size_t count, std::uint64_t* sig_addr,
                          std::uint64_t signal, int sig_op, int pe, cudaStream_t stream) {
    on_stream(
        call, [&] { put_signal<::pgas::thread, false>(call, dest, source, count, sig_addr, signal, sig_op, pe); },
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            ::pgas::put_signal_on_stream(ctx, heap.symmetric<T>(call, dest, count), source, count,
                                         heap.symmetric<std::uint64_t>(call, sig_addr, 1), signal,
                                         signal_operation(call, heap, sig_op), pe, stream);
        });
}

// nvshmemx_<T>_p_on_stream: pgas::p_on_stream (the value travels in the kernel's parameters; on the host transport a
// p at once).
template <class T>
void p_on_stream(const char* call, T* dest, T value, int pe, cudaStream_t stream) {
    on_stream(
        call, [&] { p(call, dest, value, pe); },
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            ::pgas::p_on_stream(ctx, heap.symmetric<T>(call, dest, 1), value, pe, stream);
        });
}

// nvshmemx_<T>_g_on_stream: it returns the element, so it waits for `stream` (the stream's earlier work completes
// first) and then reads it as nvshmem_<T>_g from host code does.
template <class T>
T g_on_stream(const char* call, const T* source, int pe, cudaStream_t stream) {
    compat::runtime& rt = compat::the_runtime().running(call);
    if (rt.on_gpu()) rt.copy_check(call, cudaStreamSynchronize(stream));
    return g(call, source, pe);
}

// nvshmemx_barrier_on_stream / team_sync_on_stream of a predefined team (Barrier: quiet first).
template <bool Barrier>
int team_sync_on_stream(const char* call, nvshmem_team_t handle, cudaStream_t stream) {
    return on_host(call, handle, [&](compat::runtime& rt, const ::pgas::team& t) {
        if (!rt.on_gpu()) {
            if constexpr (Barrier)
                ::pgas::barrier(rt.host_context(), t);
            else
                ::pgas::sync(rt.host_context(), t);
        } else if constexpr (Barrier) {
            ::pgas::barrier_on_stream(rt.gpu_context(), t, stream);
        } else {
            ::pgas::sync_on_stream(rt.gpu_context(), t, stream);
        }
    });
}

// A team collective's on-stream form: pgas's on-stream collective (host transport: the collective at once).
template <coll K, class T, class Op>
int collective_on_stream(const char* call, nvshmem_team_t handle, const coll_args<K, T, Op>& a, cudaStream_t stream) {
    return on_host(call, handle, [&](compat::runtime& rt, const ::pgas::team& t) {
        if (rt.on_gpu())
            launch(call, rt, t, a, stream);
        else
            run<::pgas::thread>(call, rt.host_context(), t, rt.heap(), a);
    });
}

// nvshmemx_<T>_wait_until(_all, _all_vector)_on_stream: pgas's on-stream wait over the caller's own words ivars[0,
// count) (`status` and `values` read by the kernel: GPU-readable memory, as NVSHMEM's); on the host transport the
// blocking wait, `host()`.
template <class T, class Values, class Host>
void wait_on_stream(const char* call, T* ivars, std::size_t count, const int* status, int cmp, Values values,
                    cudaStream_t stream, Host&& host) {
    on_stream(call, host, [&](const auto& ctx, const compat::heap_view& heap) {
        const auto words = heap.symmetric<T>(call, ivars, count);
        if constexpr (std::is_pointer_v<Values>)
            ::pgas::wait_until_all_vector_on_stream(ctx, words, count, status, comparison(call, heap, cmp), values,
                                                    stream);
        else
            ::pgas::wait_until_all_on_stream(ctx, words, count, status, comparison(call, heap, cmp), values, stream);
    });
}

}  // namespace pgas_nvshmem_tu
}  // namespace
#endif

#if PGAS_NVSHMEM_ON_STREAM_HERE(1)  // barrier, sync, quiet, signals
/// Enqueues nvshmem_barrier_all on `stream`: every PE's earlier operations (the stream's earlier kernels included)
/// complete, then every PE meets; later work on the stream follows.
PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_barrier_all_on_stream, (cudaStream_t stream),
                       pgas_nvshmem_tu::team_sync_on_stream<true>("nvshmemx_barrier_all_on_stream", NVSHMEM_TEAM_WORLD,
                                                                  stream);)
/// Enqueues nvshmem_barrier of `team` (a predefined team) on `stream`; returns 0.
PGAS_NVSHMEM_ON_STREAM(int, nvshmemx_barrier_on_stream, (nvshmem_team_t team, cudaStream_t stream),
                       return pgas_nvshmem_tu::team_sync_on_stream<true>("nvshmemx_barrier_on_stream", team, stream);)
/// Enqueues nvshmem_sync_all on `stream`.
PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_sync_all_on_stream, (cudaStream_t stream),
                       pgas_nvshmem_tu::team_sync_on_stream<false>("nvshmemx_sync_all_on_stream", NVSHMEM_TEAM_WORLD,
                                                                   stream);)
/// Enqueues nvshmem_team_sync of `team` (a predefined team) on `stream`; returns 0.
PGAS_NVSHMEM_ON_STREAM(int, nvshmemx_team_sync_on_stream, (nvshmem_team_t team, cudaStream_t stream),
                       return pgas_nvshmem_tu::team_sync_on_stream<false>("nvshmemx_team_sync_on_stream", team,
                                                                          stream);)
/// Enqueues nvshmem_quiet on `stream`: what the PE issued before it is complete when the stream reaches it.
PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_quiet_on_stream, (cudaStream_t stream),
                       pgas_nvshmem_tu::on_stream(
                           "nvshmemx_quiet_on_stream",
                           [] { pgas_nvshmem_tu::complete<true>("nvshmemx_quiet_on_stream"); },
                           [&](const auto& ctx, const auto&) { ::pgas::quiet_on_stream(ctx, stream); });)
/// Enqueues nvshmemx_signal_op on `stream`, after the puts enqueued before it.
PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_signal_op_on_stream,
                       (std::uint64_t * sig_addr, std::uint64_t signal, int sig_op, int pe, cudaStream_t stream),
                       const char* call = "nvshmemx_signal_op_on_stream";
                       pgas_nvshmem_tu::on_stream(
                           call, [&] { nvshmemx_signal_op(sig_addr, signal, sig_op, pe); },
                           [&](const auto& ctx, const auto& heap) {
                               heap.check_pe(call, pe);
                               ::pgas::signal_on_stream(ctx, heap.template symmetric<std::uint64_t>(call, sig_addr, 1),
                                                        signal, pgas_nvshmem_tu::signal_operation(call, heap, sig_op),
                                                        pe, stream);
                           });)
/// Enqueues a wait until the caller's own signal word satisfies `cmp cmp_value`; later work on the stream follows.
PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_signal_wait_until_on_stream,
                       (std::uint64_t * sig_addr, int cmp, std::uint64_t cmp_value, cudaStream_t stream),
                       const char* call = "nvshmemx_signal_wait_until_on_stream";
                       pgas_nvshmem_tu::on_stream(
                           call, [&] { nvshmem_signal_wait_until(sig_addr, cmp, cmp_value); },
                           [&](const auto& ctx, const auto& heap) {
                               ::pgas::signal_wait_until_on_stream(
                                   ctx, heap.template symmetric<std::uint64_t>(call, sig_addr, 1),
                                   pgas_nvshmem_tu::comparison(call, heap, cmp), cmp_value, stream);
                           });)
#endif
// Part 1's, for host_signal_op_on_gpu below in every TU.
namespace pgas_nvshmem_library {
void nvshmemx_signal_op_on_stream(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe,
                                  cudaStream_t stream);
}

namespace {
namespace pgas_nvshmem_tu {
// sync.hpp's nvshmemx_signal_op from host code with the heap on a GPU (declared there).
template <int>
void host_signal_op_on_gpu(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe) {
    pgas_nvshmem_library::nvshmemx_signal_op_on_stream(sig_addr, signal, sig_op, pe, cudaStream_t{});
    compat::the_runtime().copy_check("nvshmemx_signal_op", cudaStreamSynchronize(cudaStream_t{}));
}
}  // namespace pgas_nvshmem_tu
}  // namespace

// The on-stream waits of one type: one word, all selected words, all with one value per word.
#define PGAS_NVSHMEM_TYPED_WAIT_ON_STREAM(TYPE, NAME)                                                                \
    PGAS_NVSHMEM_ON_STREAM(                                                                                          \
        void, nvshmemx_##NAME##_wait_until_on_stream, (TYPE * ivar, int cmp, TYPE cmp_value, cudaStream_t stream),   \
        pgas_nvshmem_tu::wait_on_stream("nvshmemx_" #NAME "_wait_until_on_stream", ivar, 1, nullptr, cmp, cmp_value, \
                                        stream, [&] { nvshmem_##NAME##_wait_until(ivar, cmp, cmp_value); });)        \
    PGAS_NVSHMEM_ON_STREAM(                                                                                          \
        void, nvshmemx_##NAME##_wait_until_all_on_stream,                                                            \
        (TYPE * ivars, std::size_t nelems, const int* status, int cmp, TYPE cmp_value, cudaStream_t stream),         \
        pgas_nvshmem_tu::wait_on_stream(                                                                             \
            "nvshmemx_" #NAME "_wait_until_all_on_stream", ivars, nelems, status, cmp, cmp_value, stream,            \
            [&] { nvshmem_##NAME##_wait_until_all(ivars, nelems, status, cmp, cmp_value); });)                       \
    PGAS_NVSHMEM_ON_STREAM(                                                                                          \
        void, nvshmemx_##NAME##_wait_until_all_vector_on_stream,                                                     \
        (TYPE * ivars, std::size_t nelems, const int* status, int cmp, TYPE* cmp_values, cudaStream_t stream),       \
        pgas_nvshmem_tu::wait_on_stream(                                                                             \
            "nvshmemx_" #NAME "_wait_until_all_vector_on_stream", ivars, nelems, status, cmp,                        \
            static_cast<const TYPE*>(cmp_values), stream,                                                            \
            [&] { nvshmem_##NAME##_wait_until_all_vector(ivars, nelems, status, cmp, cmp_values); });)

#if PGAS_NVSHMEM_ON_STREAM_HERE(1)  // the waits on words
PGAS_NVSHMEM_WAIT_TYPES(PGAS_NVSHMEM_TYPED_WAIT_ON_STREAM)
#endif

// put/get(_nbi) and put_signal(_nbi) on a stream of one type (or of bytes: NAME mem-less, TYPE void).
#define PGAS_NVSHMEM_TRANSFER_ON_STREAM(TYPE, ELEMENT, FN, PUT)                                       \
    PGAS_NVSHMEM_ON_STREAM(                                                                           \
        void, FN, (TYPE * dest, const TYPE* source, std::size_t nelems, int pe, cudaStream_t stream), \
        pgas_nvshmem_tu::transfer_on_stream<PUT>(#FN, static_cast<ELEMENT*>(dest),                    \
                                                 static_cast<const ELEMENT*>(source), nelems, pe, stream);)
#define PGAS_NVSHMEM_PUT_SIGNAL_ON_STREAM(TYPE, ELEMENT, FN)                                                         \
    PGAS_NVSHMEM_ON_STREAM(                                                                                          \
        void, FN,                                                                                                    \
        (TYPE * dest, const TYPE* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal,         \
         int sig_op, int pe, cudaStream_t stream),                                                                   \
        pgas_nvshmem_tu::put_signal_on_stream(#FN, static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), \
                                              nelems, sig_addr, signal, sig_op, pe, stream);)
#define PGAS_NVSHMEM_STRIDED_ON_STREAM(TYPE, ELEMENT, FN, PUT)                                                         \
    PGAS_NVSHMEM_ON_STREAM(                                                                                            \
        void, FN,                                                                                                      \
        (TYPE * dest, const TYPE* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int pe,          \
         cudaStream_t stream),                                                                                         \
        pgas_nvshmem_tu::strided_on_stream<PUT>(#FN, static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), \
                                                dst, sst, nelems, pe, stream);)
#define PGAS_NVSHMEM_RMA_ON_STREAM(TYPE, ELEMENT, PUT, PUT_NBI, GET, GET_NBI, PUT_SIGNAL, PUT_SIGNAL_NBI) \
    PGAS_NVSHMEM_TRANSFER_ON_STREAM(TYPE, ELEMENT, PUT, true)                                             \
    PGAS_NVSHMEM_TRANSFER_ON_STREAM(TYPE, ELEMENT, PUT_NBI, true)                                         \
    PGAS_NVSHMEM_TRANSFER_ON_STREAM(TYPE, ELEMENT, GET, false)                                            \
    PGAS_NVSHMEM_TRANSFER_ON_STREAM(TYPE, ELEMENT, GET_NBI, false)                                        \
    PGAS_NVSHMEM_PUT_SIGNAL_ON_STREAM(TYPE, ELEMENT, PUT_SIGNAL)                                          \
    PGAS_NVSHMEM_PUT_SIGNAL_ON_STREAM(TYPE, ELEMENT, PUT_SIGNAL_NBI)
// The on-stream RMA of one type: the transfers and put_signal, then p and g (one element; g waits for the stream).
#define PGAS_NVSHMEM_TYPED_RMA_ON_STREAM(TYPE, NAME)                                                                   \
    PGAS_NVSHMEM_RMA_ON_STREAM(TYPE, TYPE, nvshmemx_##NAME##_put_on_stream, nvshmemx_##NAME##_put_nbi_on_stream,       \
                               nvshmemx_##NAME##_get_on_stream, nvshmemx_##NAME##_get_nbi_on_stream,                   \
                               nvshmemx_##NAME##_put_signal_on_stream, nvshmemx_##NAME##_put_signal_nbi_on_stream)     \
    PGAS_NVSHMEM_ON_STREAM(void, nvshmemx_##NAME##_p_on_stream,                                                        \
                           (TYPE * dest, TYPE value, int pe, cudaStream_t stream),                                     \
                           pgas_nvshmem_tu::p_on_stream("nvshmemx_" #NAME "_p_on_stream", dest, value, pe, stream);)   \
    PGAS_NVSHMEM_ON_STREAM(TYPE, nvshmemx_##NAME##_g_on_stream, (const TYPE* source, int pe, cudaStream_t stream),     \
                           return pgas_nvshmem_tu::g_on_stream("nvshmemx_" #NAME "_g_on_stream", source, pe, stream);) \
    PGAS_NVSHMEM_STRIDED_ON_STREAM(TYPE, TYPE, nvshmemx_##NAME##_iput_on_stream, true)                                 \
    PGAS_NVSHMEM_STRIDED_ON_STREAM(TYPE, TYPE, nvshmemx_##NAME##_iget_on_stream, false)

#if PGAS_NVSHMEM_ON_STREAM_HERE(2)  // typed RMA
PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_TYPED_RMA_ON_STREAM)
#endif
#if PGAS_NVSHMEM_ON_STREAM_HERE(3)  // RMA of bytes
PGAS_NVSHMEM_RMA_ON_STREAM(void, std::byte, nvshmemx_putmem_on_stream, nvshmemx_putmem_nbi_on_stream,
                           nvshmemx_getmem_on_stream, nvshmemx_getmem_nbi_on_stream, nvshmemx_putmem_signal_on_stream,
                           nvshmemx_putmem_signal_nbi_on_stream)
#endif
// The sized forms (nelems elements of BITS bits).
#define PGAS_NVSHMEM_SIZED_RMA_ON_STREAM(BITS, ELEMENT)                                                           \
    PGAS_NVSHMEM_RMA_ON_STREAM(void, ELEMENT, nvshmemx_put##BITS##_on_stream, nvshmemx_put##BITS##_nbi_on_stream, \
                               nvshmemx_get##BITS##_on_stream, nvshmemx_get##BITS##_nbi_on_stream,                \
                               nvshmemx_put##BITS##_signal_on_stream, nvshmemx_put##BITS##_signal_nbi_on_stream)  \
    PGAS_NVSHMEM_STRIDED_ON_STREAM(void, ELEMENT, nvshmemx_iput##BITS##_on_stream, true)                          \
    PGAS_NVSHMEM_STRIDED_ON_STREAM(void, ELEMENT, nvshmemx_iget##BITS##_on_stream, false)
#if PGAS_NVSHMEM_ON_STREAM_HERE(3)  // RMA of sized elements
PGAS_NVSHMEM_SIZES(PGAS_NVSHMEM_SIZED_RMA_ON_STREAM)
#endif

// The reductions' on-stream forms of one type and operation.
#define PGAS_NVSHMEM_REDUCE_ON_STREAM_ONE(TYPE, NAME, OPNAME, PGASOP, KIND)                               \
    PGAS_NVSHMEM_ON_STREAM(                                                                               \
        int, nvshmemx_##NAME##_##OPNAME##_##KIND##_on_stream,                                             \
        (nvshmem_team_t team, TYPE * dest, const TYPE* source, std::size_t nreduce, cudaStream_t stream), \
        return pgas_nvshmem_tu::collective_on_stream(                                                     \
            "nvshmemx_" #NAME "_" #OPNAME "_" #KIND "_on_stream", team,                                   \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::KIND, TYPE, ::pgas::op::PGASOP##_t>{        \
                dest, source, nreduce, 0, {}},                                                            \
            stream);)
// One kind of each operation (reduce, reducescatter) of one type, for the bitwise and the arithmetic operations.
#define PGAS_NVSHMEM_REDUCE_ON_STREAM(TYPE, NAME, OPNAME, PGASOP) \
    PGAS_NVSHMEM_REDUCE_ON_STREAM_ONE(TYPE, NAME, OPNAME, PGASOP, reduce)
#define PGAS_NVSHMEM_REDUCESCATTER_ON_STREAM(TYPE, NAME, OPNAME, PGASOP) \
    PGAS_NVSHMEM_REDUCE_ON_STREAM_ONE(TYPE, NAME, OPNAME, PGASOP, reducescatter)
#define PGAS_NVSHMEM_BITWISE_REDUCE_ON_STREAM(TYPE, NAME)                      \
    PGAS_NVSHMEM_BITWISE_REDUCE_OPS(PGAS_NVSHMEM_REDUCE_ON_STREAM, TYPE, NAME) \
    PGAS_NVSHMEM_BITWISE_REDUCE_OPS(PGAS_NVSHMEM_REDUCESCATTER_ON_STREAM, TYPE, NAME)
#define PGAS_NVSHMEM_ARITH_REDUCE_ON_STREAM(TYPE, NAME) \
    PGAS_NVSHMEM_ARITH_REDUCE_OPS(PGAS_NVSHMEM_REDUCE_ON_STREAM, TYPE, NAME)
#define PGAS_NVSHMEM_ARITH_REDUCESCATTER_ON_STREAM(TYPE, NAME) \
    PGAS_NVSHMEM_ARITH_REDUCE_OPS(PGAS_NVSHMEM_REDUCESCATTER_ON_STREAM, TYPE, NAME)

#if PGAS_NVSHMEM_ON_STREAM_HERE(4)  // bitwise reductions
PGAS_NVSHMEM_BITWISE_REDUCE_TYPES(PGAS_NVSHMEM_BITWISE_REDUCE_ON_STREAM)
#endif
#if PGAS_NVSHMEM_ON_STREAM_HERE(5)  // arithmetic reductions to every PE
PGAS_NVSHMEM_ARITH_REDUCE_TYPES(PGAS_NVSHMEM_ARITH_REDUCE_ON_STREAM)
#endif
#if PGAS_NVSHMEM_ON_STREAM_HERE(6)  // arithmetic reductions scattered
PGAS_NVSHMEM_ARITH_REDUCE_TYPES(PGAS_NVSHMEM_ARITH_REDUCESCATTER_ON_STREAM)
#endif

// broadcast, fcollect and alltoall on a stream, of one type (or of bytes).
#define PGAS_NVSHMEM_MOVE_ON_STREAM(TYPE, ELEMENT, FN, KIND)                                                      \
    PGAS_NVSHMEM_ON_STREAM(                                                                                       \
        int, FN, (nvshmem_team_t team, TYPE * dest, const TYPE* source, std::size_t nelems, cudaStream_t stream), \
        return pgas_nvshmem_tu::collective_on_stream(                                                             \
            #FN, team,                                                                                            \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::KIND, ELEMENT>{                                     \
                static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), nelems, 0, {}},                 \
            stream);)
#define PGAS_NVSHMEM_MOVES_ON_STREAM(TYPE, ELEMENT, BROADCAST, FCOLLECT, ALLTOALL)                                    \
    PGAS_NVSHMEM_ON_STREAM(                                                                                           \
        int, BROADCAST,                                                                                               \
        (nvshmem_team_t team, TYPE * dest, const TYPE* source, std::size_t nelems, int PE_root, cudaStream_t stream), \
        return pgas_nvshmem_tu::collective_on_stream(                                                                 \
            #BROADCAST, team,                                                                                         \
            pgas_nvshmem_tu::coll_args<pgas_nvshmem_tu::coll::broadcast, ELEMENT>{                                    \
                static_cast<ELEMENT*>(dest), static_cast<const ELEMENT*>(source), nelems, PE_root, {}},               \
            stream);)                                                                                                 \
    PGAS_NVSHMEM_MOVE_ON_STREAM(TYPE, ELEMENT, FCOLLECT, fcollect)                                                    \
    PGAS_NVSHMEM_MOVE_ON_STREAM(TYPE, ELEMENT, ALLTOALL, alltoall)
#define PGAS_NVSHMEM_TYPED_MOVES_ON_STREAM(TYPE, NAME)                              \
    PGAS_NVSHMEM_MOVES_ON_STREAM(TYPE, TYPE, nvshmemx_##NAME##_broadcast_on_stream, \
                                 nvshmemx_##NAME##_fcollect_on_stream, nvshmemx_##NAME##_alltoall_on_stream)

#if PGAS_NVSHMEM_ON_STREAM_HERE(7)  // broadcast, fcollect, alltoall
PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_TYPED_MOVES_ON_STREAM)
PGAS_NVSHMEM_MOVES_ON_STREAM(void, std::byte, nvshmemx_broadcastmem_on_stream, nvshmemx_fcollectmem_on_stream,
                             nvshmemx_alltoallmem_on_stream)
#endif
