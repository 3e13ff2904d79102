// NVSHMEM's point-to-point synchronisation, signals and ordering: <T>_wait_until and _test, their _all/_any/_some and
// _vector forms (generated over its wait types), signal_op, signal_fetch, signal_wait_until, put_signal, fence, quiet,
// barrier_all and sync_all, each a one-line forwarder to the pgas call of the same meaning.
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <nv/target>

namespace {
namespace pgas_nvshmem_tu {

// NVSHMEM_CMP_* as pgas::cmp; another value is errc::invalid_argument naming the call.
PGAS_HD inline ::pgas::cmp comparison(const char* call, const compat::heap_view& heap, int cmp) {
    switch (cmp) {
        case NVSHMEM_CMP_EQ:
            return ::pgas::cmp::eq;
        case NVSHMEM_CMP_NE:
            return ::pgas::cmp::ne;
        case NVSHMEM_CMP_GT:
            return ::pgas::cmp::gt;
        case NVSHMEM_CMP_LE:
            return ::pgas::cmp::le;
        case NVSHMEM_CMP_LT:
            return ::pgas::cmp::lt;
        case NVSHMEM_CMP_GE:
            return ::pgas::cmp::ge;
    }
    ::pgas::detail::report(::pgas::errc::invalid_argument, call, heap.my_pe, "comparison is no NVSHMEM_CMP_*:", cmp);
    return ::pgas::cmp::eq;
}

// NVSHMEM_SIGNAL_SET / _ADD as pgas::signal_op; another value is errc::invalid_argument naming the call.
PGAS_HD inline ::pgas::signal_op signal_operation(const char* call, const compat::heap_view& heap, int op) {
    if (op != NVSHMEM_SIGNAL_SET && op != NVSHMEM_SIGNAL_ADD)
        ::pgas::detail::report(::pgas::errc::invalid_argument, call, heap.my_pe,
                               "signal operation is neither NVSHMEM_SIGNAL_SET nor NVSHMEM_SIGNAL_ADD:", op);
    return op == NVSHMEM_SIGNAL_ADD ? ::pgas::signal_op::add : ::pgas::signal_op::set;
}

// nvshmem_<T>_wait_until: pgas::wait_until on the caller's own word.
template <class T>
PGAS_HD void wait_until(const char* call, T* ivar, int cmp, T value) {
    with_context(call, [&](const auto& ctx, const compat::heap_view& heap) {
        ::pgas::wait_until(ctx, heap.symmetric<T>(call, ivar, 1), comparison(call, heap, cmp), value);
    });
}

// nvshmem_<T>_test: pgas::test (1 when the condition holds, else 0).
template <class T>
PGAS_HD int test(const char* call, T* ivar, int cmp, T value) {
    return with_context(call, [&](const auto& ctx, const compat::heap_view& heap) {
        return ::pgas::test(ctx, heap.symmetric<T>(call, ivar, 1), comparison(call, heap, cmp), value) ? 1 : 0;
    });
}

// Which words an _all/_any/_some wait or test looks for.
enum class word_set { all, any, some };

// nvshmem_<T>_wait_until_all/any/some, _test_all/any/some and their _vector forms: pgas_call(ctx, words, cmp) is the
// pgas call of the same name on ivars[0, count). Returns what NVSHMEM does: test_all 1 when every selected word holds
// (else 0), _any the index of a word that holds, or SIZE_MAX when none does (or none is selected), _some how many.
template <word_set S, class T, class Call>
PGAS_HD auto watch_words(const char* call, T* ivars, std::size_t count, int cmp, Call&& pgas_call) {
    return with_context(call, [&](const auto& ctx, const compat::heap_view& heap) {
        const auto words = heap.symmetric<T>(call, ivars, count);
        const ::pgas::cmp op = comparison(call, heap, cmp);
        if constexpr (S == word_set::any) {
            const std::size_t found = pgas_call(ctx, words, op);
            return found == count ? SIZE_MAX : found;  // pgas answers count for "none"
        } else if constexpr (S == word_set::all && !std::is_void_v<decltype(pgas_call(ctx, words, op))>) {
            return pgas_call(ctx, words, op) ? 1 : 0;
        } else {
            return pgas_call(ctx, words, op);
        }
    });
}

// The put_signal family by group G: pgas::put_signal / put_signal_nbi.
template <class G, bool Nbi, class T>
PGAS_HD void put_signal(const char* call, T* dest, const T* source, std::size_t count, std::uint64_t* sig_addr,
                        std::uint64_t signal, int sig_op, int pe) {
    with_context(call, [&](const auto& ctx, const compat::heap_view& heap) {
        heap.check_pe(call, pe);
        const auto dst = heap.symmetric<T>(call, dest, count);
        const auto sig = heap.symmetric<std::uint64_t>(call, sig_addr, 1);
        if constexpr (Nbi)
            ::pgas::put_signal_nbi<G>(ctx, dst, source, count, sig, signal, signal_operation(call, heap, sig_op), pe);
        else
            ::pgas::put_signal<G>(ctx, dst, source, count, sig, signal, signal_operation(call, heap, sig_op), pe);
    });
}

// nvshmem_quiet, nvshmem_fence: on the host with the heap on a GPU, quiet waits for the host stream's copies (the
// _nbi forms); a fence has nothing to do (that stream completes them in issue order).
template <bool Quiet>
PGAS_HD void complete(const char* call) {
    NV_IF_TARGET(NV_IS_HOST, (if (compat::runtime& rt = compat::the_runtime().running(call); rt.on_gpu()) {
                     if constexpr (Quiet) rt.host_quiet(call);
                     return;
                 }))
    with_context(call, [&](const auto& ctx, const compat::heap_view&) {
        if constexpr (Quiet)
            ::pgas::quiet(ctx);
        else
            ::pgas::fence(ctx);
    });
}

// nvshmem_barrier_all / sync_all by group G; on the host the runtime's barrier (kernels complete first on GPUs).
template <class G, bool Barrier>
PGAS_HD void barrier_all(const char* call) {
    NV_IF_TARGET(NV_IS_DEVICE, ({
                     const compat::device_state& s = filled_state(call);
                     if constexpr (Barrier)
                         ::pgas::barrier_all<G>(s.ctx);
                     else
                         ::pgas::sync_all<G>(s.ctx);
                 }),
                 (compat::the_runtime().running(call).barrier_all(call);))
}

}  // namespace pgas_nvshmem_tu
}  // namespace

// wait_until and test of one type.
#define PGAS_NVSHMEM_TYPED_WAIT(TYPE, NAME)                                                  \
    PGAS_NVSHMEM_API void nvshmem_##NAME##_wait_until(TYPE* ivar, int cmp, TYPE cmp_value) { \
        pgas_nvshmem_tu::wait_until("nvshmem_" #NAME "_wait_until", ivar, cmp, cmp_value);   \
    }                                                                                        \
    PGAS_NVSHMEM_API int nvshmem_##NAME##_test(TYPE* ivar, int cmp, TYPE cmp_value) {        \
        return pgas_nvshmem_tu::test("nvshmem_" #NAME "_test", ivar, cmp, cmp_value);        \
    }

PGAS_NVSHMEM_WAIT_TYPES(PGAS_NVSHMEM_TYPED_WAIT)

// One wait or test over the words ivars[0, nelems): nvshmem_NAME_FN(TYPE* ivars, size_t nelems PARAMS, const int*
// status, int cmp, VALUE) returning RET, forwarded to pgas::FN (the same name); SET: the words it looks for. PARAMS and
// ARGS: the _some forms' indices; VALUE: `TYPE cmp_value`, or `TYPE* cmp_values` (one per word) for the _vector forms.
// A word i with status[i] != 0 is left out (status may be NULL).
#define PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, RET, FN, SET, PARAMS, ARGS, VALUE, VALUE_ARG)                            \
    PGAS_NVSHMEM_API RET nvshmem_##NAME##_##FN(TYPE* ivars, std::size_t nelems PARAMS, const int* status, int cmp, \
                                               VALUE) {                                                            \
        return pgas_nvshmem_tu::watch_words<pgas_nvshmem_tu::word_set::SET>(                                       \
            "nvshmem_" #NAME "_" #FN, ivars, nelems, cmp, [&](const auto& ctx, auto words, ::pgas::cmp op) {       \
                return ::pgas::FN(ctx, words, nelems ARGS, status, op, VALUE_ARG);                                 \
            });                                                                                                    \
    }
// The waits (blocking) and tests (not blocking) over all, any or some of the words, with one comparison value or, for
// _vector, one per word.
#define PGAS_NVSHMEM_WAIT_SETS(TYPE, NAME, VECTOR, VALUE, VALUE_ARG)                                                 \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, void, wait_until_all##VECTOR, all, , , VALUE, VALUE_ARG)                       \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, std::size_t, wait_until_any##VECTOR, any, , , VALUE, VALUE_ARG)                \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, std::size_t, wait_until_some##VECTOR, some,                                    \
                          PGAS_NVSHMEM_COMMA std::size_t* indices, PGAS_NVSHMEM_COMMA indices, VALUE, VALUE_ARG)     \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, int, test_all##VECTOR, all, , , VALUE, VALUE_ARG)                              \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, std::size_t, test_any##VECTOR, any, , , VALUE, VALUE_ARG)                      \
    PGAS_NVSHMEM_WAIT_SET(TYPE, NAME, std::size_t, test_some##VECTOR, some, PGAS_NVSHMEM_COMMA std::size_t* indices, \
                          PGAS_NVSHMEM_COMMA indices, VALUE, VALUE_ARG)
#define PGAS_NVSHMEM_TYPED_WAIT_SETS(TYPE, NAME)                    \
    PGAS_NVSHMEM_WAIT_SETS(TYPE, NAME, , TYPE cmp_value, cmp_value) \
    PGAS_NVSHMEM_WAIT_SETS(TYPE, NAME, _vector, TYPE* cmp_values, cmp_values)

PGAS_NVSHMEM_WAIT_TYPES(PGAS_NVSHMEM_TYPED_WAIT_SETS)

// put_signal of one type (or of bytes: NAME putmem, TYPE void) by one group.
#define PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, PREFIX, NBI, SUFFIX, GROUP, IS_NBI)                            \
    PGAS_NVSHMEM_API void PREFIX##_##NAME##_signal##NBI##SUFFIX(TYPE* dest, const TYPE* source, std::size_t nelems, \
                                                                std::uint64_t* sig_addr, std::uint64_t signal,      \
                                                                int sig_op, int pe) {                               \
        pgas_nvshmem_tu::put_signal<::pgas::GROUP, IS_NBI>(                                                         \
            #PREFIX "_" #NAME "_signal" #NBI #SUFFIX, static_cast<ELEMENT*>(dest),                                  \
            static_cast<const ELEMENT*>(source), nelems, sig_addr, signal, sig_op, pe);                             \
    }
#define PGAS_NVSHMEM_PUT_SIGNALS(TYPE, ELEMENT, NAME)                               \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmem, , , thread, false)        \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmem, _nbi, , thread, true)     \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmemx, , _warp, warp, false)    \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmemx, _nbi, _warp, warp, true) \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmemx, , _block, block, false)  \
    PGAS_NVSHMEM_PUT_SIGNAL(TYPE, ELEMENT, NAME, nvshmemx, _nbi, _block, block, true)
#define PGAS_NVSHMEM_TYPED_PUT_SIGNAL(TYPE, NAME) PGAS_NVSHMEM_PUT_SIGNALS(TYPE, TYPE, NAME##_put)

PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_TYPED_PUT_SIGNAL)
PGAS_NVSHMEM_PUT_SIGNALS(void, std::byte, putmem)
#define PGAS_NVSHMEM_SIZED_PUT_SIGNALS(BITS, ELEMENT) PGAS_NVSHMEM_PUT_SIGNALS(void, ELEMENT, put##BITS)
PGAS_NVSHMEM_SIZES(PGAS_NVSHMEM_SIZED_PUT_SIGNALS)

namespace {
namespace pgas_nvshmem_tu {
// nvshmemx_signal_op from host code with the heap on a GPU: libpgas_nvshmem.so's on-stream form on the legacy default
// stream, waited for (an add must be atomic with the GPUs' own, which no copy is). Defined in on_stream.hpp, after
// the declaration it calls.
template <int = 0>
void host_signal_op_on_gpu(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe);
// nvshmemx_signal_op (and nvshmemx_qp_signal_op) under `call`: pgas::signal; from host code with the heap on a GPU,
// the on-stream form waited for. A template, so that host_signal_op_on_gpu (on_stream.hpp) is instantiated only in a
// TU that calls it, as nvshmemx_signal_op's is.
template <int = 0>
PGAS_HD void apply_signal(const char* call, std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe) {
    with_rma_context(
        call,
        [&](const auto& ctx, const compat::heap_view& heap) {
            heap.check_pe(call, pe);
            ::pgas::signal(ctx, heap.symmetric<std::uint64_t>(call, sig_addr, 1), signal,
                           signal_operation(call, heap, sig_op), pe);
        },
        [&](const auto&, const compat::heap_view& heap) {  // checked here, so that a bad argument names this call
            heap.check_pe(call, pe);
            (void)heap.symmetric<std::uint64_t>(call, sig_addr, 1);
            (void)signal_operation(call, heap, sig_op);
            host_signal_op_on_gpu(sig_addr, signal, sig_op, pe);
        });
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// Applies `sig_op signal` (NVSHMEM_SIGNAL_SET or _ADD) to the signal word `sig_addr` on PE `pe` (host code too).
PGAS_NVSHMEM_API void nvshmemx_signal_op(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe) {
    pgas_nvshmem_tu::apply_signal("nvshmemx_signal_op", sig_addr, signal, sig_op, pe);
}

/// The caller's own signal word `sig_addr` (host code too).
PGAS_NVSHMEM_API std::uint64_t nvshmem_signal_fetch(std::uint64_t* sig_addr) {
    const char* call = "nvshmem_signal_fetch";
    return pgas_nvshmem_tu::with_rma_context(
        call,
        [&](const auto& ctx, const auto& heap) {
            return ::pgas::signal_fetch(ctx, heap.template symmetric<std::uint64_t>(call, sig_addr, 1));
        },
        [&](const auto& ctx, const auto& heap) {
            std::uint64_t value = 0;
            pgas_nvshmem_tu::gpu_copy(
                call, &value,
                pgas_nvshmem_tu::gpu_peer(call, ctx, heap.template symmetric<std::uint64_t>(call, sig_addr, 1),
                                          heap.my_pe),
                sizeof value);
            return value;
        });
}

/// Waits until the caller's own signal word `sig_addr` satisfies `cmp cmp_value`; returns the value seen.
PGAS_NVSHMEM_API std::uint64_t nvshmem_signal_wait_until(std::uint64_t* sig_addr, int cmp, std::uint64_t cmp_value) {
    return pgas_nvshmem_tu::with_context("nvshmem_signal_wait_until", [&](const auto& ctx, const auto& heap) {
        return ::pgas::signal_wait_until(
            ctx, heap.template symmetric<std::uint64_t>("nvshmem_signal_wait_until", sig_addr, 1),
            pgas_nvshmem_tu::comparison("nvshmem_signal_wait_until", heap, cmp), cmp_value);
    });
}

/// Completes every earlier operation of the caller (pgas::quiet).
PGAS_NVSHMEM_API void nvshmem_quiet() { pgas_nvshmem_tu::complete<true>("nvshmem_quiet"); }
/// Orders the caller's earlier operations to each PE before its later ones (pgas::fence).
PGAS_NVSHMEM_API void nvshmem_fence() { pgas_nvshmem_tu::complete<false>("nvshmem_fence"); }

/// Every PE's earlier operations complete, then every PE meets (a thread on the device, or host code).
PGAS_NVSHMEM_API void nvshmem_barrier_all() {
    pgas_nvshmem_tu::barrier_all<::pgas::thread, true>("nvshmem_barrier_all");
}
/// nvshmem_barrier_all by every thread of a warp.
PGAS_NVSHMEM_API void nvshmemx_barrier_all_warp() {
    pgas_nvshmem_tu::barrier_all<::pgas::warp, true>("nvshmemx_barrier_all_warp");
}
/// nvshmem_barrier_all by every thread of a block.
PGAS_NVSHMEM_API void nvshmemx_barrier_all_block() {
    pgas_nvshmem_tu::barrier_all<::pgas::block, true>("nvshmemx_barrier_all_block");
}
/// Every PE meets, without completing earlier operations (pgas::sync_all).
PGAS_NVSHMEM_API void nvshmem_sync_all() { pgas_nvshmem_tu::barrier_all<::pgas::thread, false>("nvshmem_sync_all"); }
/// nvshmem_sync_all by every thread of a warp.
PGAS_NVSHMEM_API void nvshmemx_sync_all_warp() {
    pgas_nvshmem_tu::barrier_all<::pgas::warp, false>("nvshmemx_sync_all_warp");
}
/// nvshmem_sync_all by every thread of a block.
PGAS_NVSHMEM_API void nvshmemx_sync_all_block() {
    pgas_nvshmem_tu::barrier_all<::pgas::block, false>("nvshmemx_sync_all_block");
}
