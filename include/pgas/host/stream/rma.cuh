// Host-side forms of put/get/iput/iget/p/signal/waits/quiet, enqueued on a CUDA stream (capturable in CUDA graphs),
// each one kernel launched programmatically (host/stream/launch.cuh); barriers and collectives:
// host/stream/collectives.cuh.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/nvtx.hpp>
#include <pgas/host/stream/launch.cuh>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

PGAS_NAMESPACE_BEGIN
namespace detail::rma_stream {
PGAS_KERNELS_BEGIN

// Bytes one block moves per launch before another block is added (at most max_blocks): a single block's stores
// reach about 45 GB/s over NVLink, the link needs dozens of SMs. bench_coll_tune's put_on_stream rows (2 of a
// 4xH100 NV18 node, one process, every PE putting to the next at once; GB/s at 64 KiB / 256 KiB / 1 MiB /
// 4 MiB / 256 MiB): 1 block 22 / 35 / 43 / 45 / 46, 4 blocks 31 / 84 / 139 / 168 / 182, 16 blocks
// 36 / 115 / 232 / 297 / 337, 32 blocks 33 / 114 / 233 / 315 / 354, 64 blocks 33 / 106 / 216 / 315 / 364,
// 128 blocks 29 / 96 / 203 / 303 / -; the 256 KiB slices of before gave 22 / 35 / 139 / 297 / 363. 16 KiB a
// block is within 0.86 of the best count at every size from 64 KiB (4 blocks there, 64 from 1 MiB).
inline constexpr std::size_t bytes_per_block = std::size_t{16} << 10;
inline constexpr unsigned max_blocks = 64;
inline constexpr unsigned threads = 512;

inline unsigned blocks_for(std::size_t bytes) {
    std::size_t blocks = (bytes + bytes_per_block - 1) / bytes_per_block;
    return unsigned(blocks == 0 ? 1 : (blocks > max_blocks ? max_blocks : blocks));
}

// Calls move(first, n) with this block's contiguous slice of `count` elements split over the grid (a block past the
// end has none and calls nothing).
template <class Move>
__device__ inline void on_block_slice(std::size_t count, Move move) {
    const std::size_t per_block = (count + gridDim.x - 1) / gridDim.x;
    const std::size_t first = per_block * blockIdx.x;
    if (first >= count) return;
    move(first, count - first < per_block ? count - first : per_block);
}

// Each block moves its slice with the block-wide device op.
template <class Tr, class T>
PGAS_KERNEL void put_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<T> dst, const T* src,
                            std::size_t count, int pe) {
    begin_stream_kernel();
    on_block_slice(count, [&](std::size_t first, std::size_t n) {
        ::pgas::put<block>(ctx, dst + std::ptrdiff_t(first), src + first, n, pe);
    });
}

template <class Tr, class T>
PGAS_KERNEL void get_kernel(const __grid_constant__ device::context<Tr> ctx, T* dst, symmetric_ptr<T> src,
                            std::size_t count, int pe) {
    begin_stream_kernel();
    on_block_slice(count, [&](std::size_t first, std::size_t n) {
        ::pgas::get<block>(ctx, dst + first, src + std::ptrdiff_t(first), n, pe);
    });
}

// Strided: each block moves its slice of the elements with the block-wide iput / iget (the slice starts `first`
// strides in on both sides).
template <class Tr, class T>
PGAS_KERNEL void iput_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<T> dst, const T* src,
                             std::ptrdiff_t dst_stride, std::ptrdiff_t src_stride, std::size_t count, int pe) {
    begin_stream_kernel();
    on_block_slice(count, [&](std::size_t first, std::size_t n) {
        const auto at = std::ptrdiff_t(first);
        ::pgas::iput<block>(ctx, dst + at * dst_stride, src + at * src_stride, dst_stride, src_stride, n, pe);
    });
}

template <class Tr, class T>
PGAS_KERNEL void iget_kernel(const __grid_constant__ device::context<Tr> ctx, T* dst, symmetric_ptr<T> src,
                             std::ptrdiff_t dst_stride, std::ptrdiff_t src_stride, std::size_t count, int pe) {
    begin_stream_kernel();
    on_block_slice(count, [&](std::size_t first, std::size_t n) {
        const auto at = std::ptrdiff_t(first);
        ::pgas::iget<block>(ctx, dst + at * dst_stride, src + at * src_stride, dst_stride, src_stride, n, pe);
    });
}

// One thread writes the element its parameters carry.
template <class Tr, class T>
PGAS_KERNEL void p_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<T> dst, T value, int pe) {
    begin_stream_kernel();
    ::pgas::p(ctx, dst, value, pe);
}

template <class Tr>
PGAS_KERNEL void signal_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<std::uint64_t> sig,
                               std::uint64_t value, signal_op op, int pe) {
    begin_stream_kernel();
    ::pgas::quiet<thread>(ctx);  // the data of the preceding put kernels first
    ::pgas::signal(ctx, sig, value, op, pe);
}

template <class Tr>
PGAS_KERNEL void signal_wait_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<std::uint64_t> sig,
                                    cmp op, std::uint64_t value) {
    begin_stream_kernel();
    ::pgas::signal_wait_until(ctx, sig, op, value);
}

// wait_until_all on the caller's own words in one thread; Values is the one comparison value (same_value) or a
// pointer to one per word (the _vector form), which the kernel reads when it runs.
template <class Tr, class T, class Values>
PGAS_KERNEL void wait_words_kernel(const __grid_constant__ device::context<Tr> ctx, symmetric_ptr<T> ivars,
                                   std::size_t count, const int* status, cmp op, Values values) {
    begin_stream_kernel();
    if constexpr (std::is_pointer_v<Values>)
        ::pgas::wait_until_all_vector(ctx, ivars, count, status, op, values);
    else
        ::pgas::wait_until_all(ctx, ivars, count, status, op, values);
}

template <class Tr>
PGAS_KERNEL void quiet_kernel(const __grid_constant__ device::context<Tr> ctx) {
    begin_stream_kernel();
    ::pgas::quiet<thread>(ctx);
}

PGAS_KERNELS_END

// The launch of a transfer of `count` elements of T (put, get, iput, iget on a stream): `kernel` over
// blocks_for(the bytes) blocks with `args`, nothing for count == 0.
template <class T, class Kernel, class Tr, class... Args>
void launch_spread(Kernel kernel, std::size_t count, cudaStream_t stream, const char* call,
                   const device::context<Tr>& ctx, Args... args) {
    if (count == 0) return;
    launch_on_stream(kernel, blocks_for(count * sizeof(T)), threads, stream, ctx.my_pe(), call, ctx, args...);
}
}  // namespace detail::rma_stream

/// Enqueues put(dst on pe <- src, count elements) on `stream`, spread over up to 64 blocks; `src` is device memory
/// of the caller's GPU (or symmetric local memory); capturable in a CUDA graph.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; the put completes when the stream reaches it: `src` may be reused by
///   later work on the stream, and the data is visible at `pe` after a later quiet_on_stream (or signal_on_stream,
///   which quiets first). count == 0 enqueues nothing.
/// - **Transports:** every pgas::rma_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void put_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const T* src, std::size_t count, int pe,
                   cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::put_on_stream");
    detail::rma_stream::launch_spread<T>(detail::rma_stream::put_kernel<Tr, T>, count, stream, "put_on_stream", ctx,
                                         dst, src, count, pe);
}

/// Enqueues get(dst <- src on pe, count elements) on `stream`, spread over up to 64 blocks; capturable in a CUDA
/// graph.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; `dst` holds the data for later work on the stream. count == 0 enqueues
///   nothing.
/// - **Transports:** every pgas::rma_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void get_on_stream(const device::context<Tr>& ctx, T* dst, symmetric_ptr<T> src, std::size_t count, int pe,
                   cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::get_on_stream");
    detail::rma_stream::launch_spread<T>(detail::rma_stream::get_kernel<Tr, T>, count, stream, "get_on_stream", ctx,
                                         dst, src, count, pe);
}

/// Enqueues iput(dst on pe <- src, count elements, strides in elements) on `stream`, the elements spread over blocks
/// as put_on_stream's bytes; `src` is device memory of the caller's GPU; capturable in a CUDA graph.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; completes and becomes visible as put_on_stream. count == 0 enqueues
///   nothing.
/// - **Errors:** the device op's (strides below 1, a span outside the heap: PGAS_CHECKS, trapped in the kernel); a
///   failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void iput_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const T* src, std::ptrdiff_t dst_stride,
                    std::ptrdiff_t src_stride, std::size_t count, int pe, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::iput_on_stream");
    detail::rma_stream::launch_spread<T>(detail::rma_stream::iput_kernel<Tr, T>, count, stream, "iput_on_stream", ctx,
                                         dst, src, dst_stride, src_stride, count, pe);
}

/// Enqueues iget(dst <- src on pe, count elements, strides in elements) on `stream`, as iput_on_stream; `dst` holds
/// the data for later work on the stream.
template <class Tr, class T>
void iget_on_stream(const device::context<Tr>& ctx, T* dst, symmetric_ptr<T> src, std::ptrdiff_t dst_stride,
                    std::ptrdiff_t src_stride, std::size_t count, int pe, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::iget_on_stream");
    detail::rma_stream::launch_spread<T>(detail::rma_stream::iget_kernel<Tr, T>, count, stream, "iget_on_stream", ctx,
                                         dst, src, dst_stride, src_stride, count, pe);
}

/// Enqueues p(dst on pe <- value) on `stream`: one element, carried by value in the kernel's parameters (the
/// caller's variable may go at once); capturable in a CUDA graph.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; the write is issued when the stream reaches it and visible at `pe` after
///   a later quiet_on_stream (or signal_on_stream), like put_on_stream's.
/// - **Transports:** every pgas::rma_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) trap in the kernel with the device op's diagnostic (the next CUDA call
///   reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void p_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> dst, std::type_identity_t<T> value, int pe,
                 cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::p_on_stream");
    detail::launch_on_stream(detail::rma_stream::p_kernel<Tr, T>, 1, 1, stream, ctx.my_pe(), "p_on_stream", ctx, dst,
                             value, pe);
}

/// Enqueues `op value` on the signal word `sig` of PE `pe`, after every put enqueued before it (the kernel runs
/// quiet, then signal).
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; when the stream reaches it, the earlier puts are complete and the
///   signal follows them.
/// - **Transports:** every pgas::signal_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr>
void signal_on_stream(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig, std::uint64_t value,
                      signal_op op, int pe, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::signal_on_stream");
    detail::launch_on_stream(detail::rma_stream::signal_kernel<Tr>, 1, 1, stream, ctx.my_pe(), "signal_on_stream", ctx,
                             sig, value, op, pe);
}

/// Enqueues put then signal: the signal becomes visible at `pe` only after the data (put_on_stream, then
/// signal_on_stream).
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; a PE that sees the signal's new value sees the data.
/// - **Transports:** every pgas::signal_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void put_signal_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> dst, const T* src, std::size_t count,
                          symmetric_ptr<std::uint64_t> sig, std::uint64_t value, signal_op op, int pe,
                          cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::put_signal_on_stream");
    put_on_stream(ctx, dst, src, count, pe, stream);
    signal_on_stream(ctx, sig, value, op, pe, stream);
}

/// Enqueues a wait until the caller's own signal word `sig` satisfies `seen <op> value` (one thread); later work on
/// the stream starts after it.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; the stream's later work sees the data put with that signal.
/// - **Transports:** every transport (the wait is local) (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here. A wait past PGAS_TIMEOUT_MS
/// traps with the timeout diagnostic.
template <class Tr>
void signal_wait_until_on_stream(const device::context<Tr>& ctx, symmetric_ptr<std::uint64_t> sig, cmp op,
                                 std::uint64_t value, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::signal_wait_until_on_stream");
    detail::launch_on_stream(detail::rma_stream::signal_wait_kernel<Tr>, 1, 1, stream, ctx.my_pe(),
                             "signal_wait_until_on_stream", ctx, sig, op, value);
}

/// Enqueues a wait until every selected word of the caller's own `ivars[0, count)` satisfies `seen <op> value`
/// (wait_until_all, one thread); later work on the stream starts after it. `status` (NULL: every word; a word i with
/// status[i] != 0 is left out) is read by the kernel when it runs: device memory, or host memory the GPU can read.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; the stream's later work sees what the words' writers released.
/// - **Transports:** every transport (the wait is local) (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr, class T>
void wait_until_all_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                              const int* status, cmp op, std::type_identity_t<T> value, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::wait_until_all_on_stream");
    detail::launch_on_stream(detail::rma_stream::wait_words_kernel<Tr, T, T>, 1, 1, stream, ctx.my_pe(),
                             "wait_until_all_on_stream", ctx, ivars, count, status, op, T(value));
}

/// wait_until_all_on_stream of the one word `ivar` (no status).
template <class Tr, class T>
void wait_until_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> ivar, cmp op, std::type_identity_t<T> value,
                          cudaStream_t stream) {
    wait_until_all_on_stream(ctx, ivar, 1, nullptr, op, value, stream);
}

/// wait_until_all_on_stream with one comparison value per word, `values[i]`: `count` values the kernel reads when it
/// runs (device memory, or host memory the GPU can read), as `status`.
template <class Tr, class T>
void wait_until_all_vector_on_stream(const device::context<Tr>& ctx, symmetric_ptr<T> ivars, std::size_t count,
                                     const int* status, cmp op, const std::type_identity_t<T>* values,
                                     cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::wait_until_all_vector_on_stream");
    detail::launch_on_stream(detail::rma_stream::wait_words_kernel<Tr, T, const T*>, 1, 1, stream, ctx.my_pe(),
                             "wait_until_all_vector_on_stream", ctx, ivars, count, status, op, values);
}

/// Enqueues quiet: everything the PE issued before it (puts, gets, atomics, signals) is complete and visible when the
/// stream reaches it.
///
/// - **Called by** the host, with the device of ctx's PE current.
/// - **Returns** once the kernel is enqueued; later work on the stream runs after the completion. On load/store
///   transports (nvlink) it enqueues nothing: a kernel's stores, remote ones included, are performed when the
///   kernel completes, so the stream order alone gives what a quiet kernel would (one launch less: 8-byte
///   put_on_stream + quiet_on_stream went from 3.52 to 1.55 us per pair on one H100, bench/compare).
/// - **Transports:** every pgas::rma_transport (the same compile-time errors as the device op).
/// - **Errors:** argument errors (PGAS_CHECKS) and timeouts trap in the kernel with the device op's diagnostic (the
///   next CUDA call reports it); a failed launch throws pgas::error (errc::cuda) here.
template <class Tr>
void quiet_on_stream(const device::context<Tr>& ctx, cudaStream_t stream) {
    PGAS_NVTX_RANGE("pgas::quiet_on_stream");
    if constexpr (load_store_transport<Tr>) return;
    detail::launch_on_stream(detail::rma_stream::quiet_kernel<Tr>, 1, 1, stream, ctx.my_pe(), "quiet_on_stream", ctx);
}

PGAS_NAMESPACE_END
