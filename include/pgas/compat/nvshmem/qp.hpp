// NVSHMEM's queue-pair API: NVLink load/store and the host transport have no queue pairs, so each is its plain twin.
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/sync.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

/// A queue pair's handle, as NVSHMEM's: an integer passed by value, on the host and into kernels.
typedef int nvshmemx_qp_handle_t;

/// NVSHMEM's named handles, accepted by every QP call as any handle >= 0 is (each means the plain call's path here).
typedef enum {
    NVSHMEMX_QP_HOST = 0,
    NVSHMEMX_QP_DEFAULT = 1,
    NVSHMEMX_QP_ANY = INT_MAX,
    NVSHMEMX_QP_ALL = INT_MAX,
} nvshmemx_qp_handle_index_t;

namespace {
namespace pgas_nvshmem_tu {

// The handles handles[0, count) of a QP call (and the PE `pe` where NamesPe), checked on the host always, on a GPU
// under PGAS_CHECKS: `pe` in range or NVSHMEMX_PE_ALL, count >= 0, each handle >= 0 (pgas keeps no count of those
// nvshmemx_qp_create made, so any handle >= 0 is one); else errc::invalid_argument naming the call. A NULL `handles`
// means every QP, as in NVSHMEM's quiet and fence.
template <bool NamesPe>
PGAS_HD void check_qps(const char* call, int pe, const nvshmemx_qp_handle_t* handles, int count) {
    if (!compat::checks_arguments()) return;
    const auto check = [&](const auto&, const compat::heap_view& heap) {
        if constexpr (NamesPe)
            if (pe != NVSHMEMX_PE_ALL) heap.check_pe(call, pe);
        if (count < 0) ::pgas::detail::report(::pgas::errc::invalid_argument, call, heap.my_pe, "QP count < 0:", count);
        for (int i = 0; handles && i < count; ++i)
            if (handles[i] < 0)
                ::pgas::detail::report(::pgas::errc::invalid_argument, call, heap.my_pe,
                                       "QP handle is negative (not one nvshmemx_qp_create returned):", handles[i]);
    };
    with_rma_context(call, check, check);
}

// `call`, once `handle` is checked (check_qps): what a QP call's forwarder passes to its plain twin's helper.
PGAS_HD inline const char* qp_checked(const char* call, nvshmemx_qp_handle_t handle) {
    if (compat::checks_arguments() && handle < 0) check_qps<false>(call, 0, &handle, 1);
    return call;
}

// nvshmemx_qp_quiet / _fence by group G: every thread of the group completes (or orders) its own earlier operations
// as nvshmem_quiet / nvshmem_fence do, to every PE, then the group syncs, so that the group's are done when any
// returns.
template <class G, bool Quiet>
PGAS_HD void qp_complete(const char* call, int pe, const nvshmemx_qp_handle_t* handles, int count) {
    check_qps<true>(call, pe, handles, count);
    complete<Quiet>(call);
    G::sync();
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// Collective in NVSHMEM, not here (nothing to connect): after nvshmem_init, points `*out_qp_array` at `num_qps`
/// handles, 0 ... num_qps - 1, in an array from malloc that the caller owns (free() it when done; the QP calls take
/// the handles by value), and returns 0. num_qps < 1 or a NULL `out_qp_array`: NVSHMEMX_ERROR_INVALID_VALUE with a
/// line on stderr naming the call, the PE and the value; NVSHMEMX_ERROR_OUT_OF_MEMORY when malloc fails.
static inline int nvshmemx_qp_create(int num_qps, nvshmemx_qp_handle_t** out_qp_array) {
    const char* call = "nvshmemx_qp_create";
    const int pe = pgas::nvshmem_compat::the_runtime().running(call).heap().my_pe;
    if (num_qps < 1 || !out_qp_array) {
        std::fprintf(stderr, "pgas: %s on PE %d: %s %d\n", call, pe,
                     num_qps < 1 ? "num_qps must be >= 1, got" : "out_qp_array is NULL, num_qps", num_qps);
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    auto* handles =
        static_cast<nvshmemx_qp_handle_t*>(std::malloc(std::size_t(num_qps) * sizeof(nvshmemx_qp_handle_t)));
    if (!handles) {
        std::fprintf(stderr, "pgas: %s on PE %d: malloc of %d handles failed\n", call, pe, num_qps);
        return NVSHMEMX_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < num_qps; ++i) handles[i] = i;
    *out_qp_array = handles;
    return NVSHMEMX_SUCCESS;
}

// nvshmemx_qp_NAME_p and _g: nvshmem_NAME_p and _g on the QP `qp_index`.
#define PGAS_NVSHMEM_QP_SCALAR(TYPE, NAME)                                                                        \
    PGAS_NVSHMEM_API void nvshmemx_qp_##NAME##_p(TYPE* dest, TYPE value, int pe, nvshmemx_qp_handle_t qp_index) { \
        pgas_nvshmem_tu::p(pgas_nvshmem_tu::qp_checked("nvshmemx_qp_" #NAME "_p", qp_index), dest, value, pe);    \
    }                                                                                                             \
    PGAS_NVSHMEM_API TYPE nvshmemx_qp_##NAME##_g(const TYPE* source, int pe, nvshmemx_qp_handle_t qp_index) {     \
        return pgas_nvshmem_tu::g(pgas_nvshmem_tu::qp_checked("nvshmemx_qp_" #NAME "_g", qp_index), source, pe);  \
    }

// nvshmemx_qp_NAME_OP SUFFIX (OP put, put_nbi, get, get_nbi; SUFFIX "", _warp, _block): the transfer of the plain
// family (rma.hpp) by GROUP on the QP `qp_index`.
#define PGAS_NVSHMEM_QP_TRANSFER(TYPE, NAME, OP, SUFFIX, GROUP)                                                     \
    PGAS_NVSHMEM_API void nvshmemx_qp_##NAME##_##OP##SUFFIX(TYPE* dest, const TYPE* source, std::size_t nelems,     \
                                                            int pe, nvshmemx_qp_handle_t qp_index) {                \
        pgas_nvshmem_tu::transfer<::pgas::GROUP, pgas_nvshmem_tu::rma::OP>(                                         \
            pgas_nvshmem_tu::qp_checked("nvshmemx_qp_" #NAME "_" #OP #SUFFIX, qp_index), dest, source, nelems, pe); \
    }
// The four transfers of one type by one group.
#define PGAS_NVSHMEM_QP_TRANSFERS(TYPE, NAME, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_QP_TRANSFER(TYPE, NAME, put, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_QP_TRANSFER(TYPE, NAME, put_nbi, SUFFIX, GROUP) \
    PGAS_NVSHMEM_QP_TRANSFER(TYPE, NAME, get, SUFFIX, GROUP)     \
    PGAS_NVSHMEM_QP_TRANSFER(TYPE, NAME, get_nbi, SUFFIX, GROUP)

// nvshmemx_qp_NAME_put_signal NBI SUFFIX: nvshmem_NAME_put_signal NBI SUFFIX (sync.hpp) by GROUP on the QP `qp_index`.
#define PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, NBI, SUFFIX, GROUP, IS_NBI)                                             \
    PGAS_NVSHMEM_API void nvshmemx_qp_##NAME##_put_signal##NBI##SUFFIX(                                                \
        TYPE* dest, const TYPE* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, \
        int pe, nvshmemx_qp_handle_t qp_index) {                                                                       \
        pgas_nvshmem_tu::put_signal<::pgas::GROUP, IS_NBI>(                                                            \
            pgas_nvshmem_tu::qp_checked("nvshmemx_qp_" #NAME "_put_signal" #NBI #SUFFIX, qp_index), dest, source,      \
            nelems, sig_addr, signal, sig_op, pe);                                                                     \
    }

// Every QP call of one standard RMA type: p, g, the transfers and put_signal(_nbi) by a thread, a warp and a block.
#define PGAS_NVSHMEM_QP_TYPED(TYPE, NAME)                           \
    PGAS_NVSHMEM_QP_SCALAR(TYPE, NAME)                              \
    PGAS_NVSHMEM_QP_TRANSFERS(TYPE, NAME, , thread)                 \
    PGAS_NVSHMEM_QP_TRANSFERS(TYPE, NAME, _warp, warp)              \
    PGAS_NVSHMEM_QP_TRANSFERS(TYPE, NAME, _block, block)            \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, , , thread, false)       \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, _nbi, , thread, true)    \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, , _warp, warp, false)    \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, _nbi, _warp, warp, true) \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, , _block, block, false)  \
    PGAS_NVSHMEM_QP_PUT_SIGNAL(TYPE, NAME, _nbi, _block, block, true)

PGAS_NVSHMEM_RMA_TYPES(PGAS_NVSHMEM_QP_TYPED)

/// nvshmemx_signal_op on the QP `qp_index`: applies `sig_op signal` to the signal word `sig_addr` on PE `pe`.
PGAS_NVSHMEM_API void nvshmemx_qp_signal_op(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe,
                                            nvshmemx_qp_handle_t qp_index) {
    pgas_nvshmem_tu::apply_signal(pgas_nvshmem_tu::qp_checked("nvshmemx_qp_signal_op", qp_index), sig_addr, signal,
                                  sig_op, pe);
}

// nvshmemx_qp_quiet SUFFIX and nvshmemx_qp_fence SUFFIX by GROUP: nvshmem_quiet / nvshmem_fence of the caller's earlier
// operations to every PE, once the PE and the handles are checked (NVSHMEM promises only those to `pe`, or to every PE
// for NVSHMEMX_PE_ALL, on the QPs qp_handle[0, num_qps), or all of them for a NULL qp_handle: this does more).
#define PGAS_NVSHMEM_QP_COMPLETE(SUFFIX, GROUP)                                                                  \
    PGAS_NVSHMEM_API void nvshmemx_qp_quiet##SUFFIX(int pe, nvshmemx_qp_handle_t* qp_handle, int num_qps) {      \
        pgas_nvshmem_tu::qp_complete<::pgas::GROUP, true>("nvshmemx_qp_quiet" #SUFFIX, pe, qp_handle, num_qps);  \
    }                                                                                                            \
    PGAS_NVSHMEM_API void nvshmemx_qp_fence##SUFFIX(int pe, nvshmemx_qp_handle_t* qp_handle, int num_qps) {      \
        pgas_nvshmem_tu::qp_complete<::pgas::GROUP, false>("nvshmemx_qp_fence" #SUFFIX, pe, qp_handle, num_qps); \
    }

PGAS_NVSHMEM_QP_COMPLETE(, thread)
PGAS_NVSHMEM_QP_COMPLETE(_warp, warp)
PGAS_NVSHMEM_QP_COMPLETE(_block, block)
