// NVSHMEM's set-up, memory and team calls: init/finalize, my_pe/n_pes, malloc/calloc/align/free and the predefined
// teams, on pgas::world (host) and each translation unit's device state (device).
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <cstddef>
#include <cstdio>
#include <string>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace nvshmem_compat {

/// nvshmem_malloc, calloc and align: a collective pgas::world::alloc (zero-filled); NULL, with a line on stderr
/// saying why, when the heap cannot hold it or the alignment is not one pgas offers (as NVSHMEM returns NULL).
inline void* allocate(const char* call, std::size_t bytes, std::size_t alignment) {
    runtime& rt = the_runtime().running(call);
    if (bytes == 0) return nullptr;
    try {
        const symmetric_ptr<std::byte> block =
            alignment == 0 ? rt.the_world().alloc<std::byte>(bytes) : rt.the_world().alloc<std::byte>(bytes, alignment);
        return rt.heap().base + block.offset();
    } catch (const error& e) {
        if (e.code() != errc::heap_exhausted && e.code() != errc::invalid_argument) fail(call, rt.heap().my_pe, e);
        std::fprintf(stderr, "pgas: %s on PE %d: returns NULL: %s\n", call, rt.heap().my_pe, e.what());
        return nullptr;
    }
}

/// nvshmem_free: a collective pgas::world::free of a block from allocate (NULL: nothing).
inline void release(const char* call, void* ptr) {
    runtime& rt = the_runtime().running(call);
    if (!ptr) return;
    try {
        rt.the_world().free(rt.heap().symmetric<std::byte>(call, ptr, 0));
    } catch (const error& e) {
        fail(call, rt.heap().my_pe, e);
    }
}

/// What nvshmemx_init_attr's unsupported flags are called, for its message.
inline std::string flag_names(unsigned int flags) {
    std::string names;
    const auto name = [&](unsigned int flag, const char* text) {
        if (flags & flag) names += (names.empty() ? "" : " | ") + std::string(text);
    };
// The flag's own spelling (a macro, not a literal: the environment-table test reads literals shaped like this as
// variable names).
#define PGAS_NVSHMEM_FLAG_NAME(flag) name(flag, #flag)
    PGAS_NVSHMEM_FLAG_NAME(NVSHMEMX_INIT_THREAD_PES);
    PGAS_NVSHMEM_FLAG_NAME(NVSHMEMX_INIT_WITH_MPI_COMM);
    PGAS_NVSHMEM_FLAG_NAME(NVSHMEMX_INIT_WITH_SHMEM);
    PGAS_NVSHMEM_FLAG_NAME(NVSHMEMX_INIT_WITH_UNIQUEID);
#undef PGAS_NVSHMEM_FLAG_NAME
    return names.empty() ? std::string("unknown flags") : names;
}

/// A predefined team as a pgas::team seen from `my_pe`; NVSHMEM_TEAM_INVALID is the empty team, another handle
/// errc::invalid_argument naming the call.
PGAS_HD inline team predefined_team(const char* call, nvshmem_team_t handle, const team& node, int my_pe, int n_pes) {
    switch (handle) {
        case NVSHMEM_TEAM_WORLD:
            return team::world_team(my_pe, n_pes);
        case NVSHMEM_TEAM_SHARED:
        case NVSHMEMX_TEAM_NODE:
            return node.bound_to(my_pe);
        case NVSHMEM_TEAM_INVALID:
            return team();
    }
    detail::report(errc::invalid_argument, call, my_pe,
                   "team handle is not a team (NVSHMEM_TEAM_WORLD, _SHARED, NVSHMEMX_TEAM_NODE):", handle);
    return team();
}

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END

namespace {
namespace pgas_nvshmem_tu {

// with_team from host code: the runtime's teams; a pgas::error ends the process naming the call.
template <class Op>
int with_host_team(const char* call, nvshmem_team_t handle, Op&& op) {
    compat::runtime& rt = compat::the_runtime().running(call);
    try {
        return op(compat::predefined_team(call, handle, rt.node(), rt.heap().my_pe, rt.heap().n_pes));
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
}

// Runs op(team) with the predefined team `handle` of this PE (device: this TU's state; host: the runtime).
template <class Op>
PGAS_HD int with_team(const char* call, nvshmem_team_t handle, Op&& op) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (const compat::device_state& s = filled_state(call);
                  return op(compat::predefined_team(call, handle, s.node, s.heap.my_pe, s.heap.n_pes));),
                 (return with_host_team(call, handle, op);))
}

// This PE's heap view: this TU's state on the device, the runtime's on the host.
PGAS_HD inline const compat::heap_view& heap(const char* call) {
    NV_IF_TARGET(NV_IS_DEVICE, (return filled_state(call).heap;), (return compat::the_runtime().running(call).heap();))
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// Collective: starts NVSHMEM on pgas, one PE per process from the launcher's environment (pgasrun, torchrun, Open
/// MPI, Slurm, PMI); on this process's GPU (the launcher's local rank modulo the visible GPUs) when there is one and
/// CUDA code includes <nvshmem.h>, else on the host transport. Ends the process with a message when it fails.
inline void nvshmem_init() { pgas::nvshmem_compat::the_runtime().init("nvshmem_init"); }

/// nvshmem_init with attributes: flags 0 is nvshmem_init; other flags are not supported yet and return
/// NVSHMEMX_ERROR_NOT_SUPPORTED with a message naming them (nothing is initialised).
inline int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attributes) {
    (void)attributes;
    if (flags != 0) {
        std::fprintf(stderr,
                     "pgas: nvshmemx_init_attr: flags 0x%x (%s) are not supported yet; flags 0 (as nvshmem_init) "
                     "initialises from the launcher's environment\n",
                     flags, pgas::nvshmem_compat::flag_names(flags).c_str());
        return NVSHMEMX_ERROR_NOT_SUPPORTED;
    }
    pgas::nvshmem_compat::the_runtime().init("nvshmemx_init_attr");
    return NVSHMEMX_SUCCESS;
}

/// Collective: the matching end of nvshmem_init; the last one completes this PE's work and ends the world.
inline void nvshmem_finalize() { pgas::nvshmem_compat::the_runtime().finalize("nvshmem_finalize"); }

/// NVSHMEM_STATUS_IS_INITIALIZED between nvshmem_init and nvshmem_finalize, else NVSHMEM_STATUS_NOT_INITIALIZED.
inline int nvshmemx_init_status() { return pgas::nvshmem_compat::the_runtime().status(); }

/// This PE's number in the world (host and device).
PGAS_NVSHMEM_API int nvshmem_my_pe() { return pgas_nvshmem_tu::heap("nvshmem_my_pe").my_pe; }
/// PEs in the world (host and device).
PGAS_NVSHMEM_API int nvshmem_n_pes() { return pgas_nvshmem_tu::heap("nvshmem_n_pes").n_pes; }

/// Collective: `size` bytes of symmetric heap on every PE (zero-filled), or NULL when the heap cannot hold them.
inline void* nvshmem_malloc(std::size_t size) { return pgas::nvshmem_compat::allocate("nvshmem_malloc", size, 0); }
/// Collective: `count` elements of `size` bytes, zero-filled, or NULL (also when count * size overflows).
inline void* nvshmem_calloc(std::size_t count, std::size_t size) {
    if (size != 0 && count > std::size_t(-1) / size) {
        std::fprintf(stderr, "pgas: nvshmem_calloc: %zu elements of %zu bytes overflow size_t: returns NULL\n", count,
                     size);
        return nullptr;
    }
    return pgas::nvshmem_compat::allocate("nvshmem_calloc", count * size, 0);
}
/// Collective: `size` bytes aligned to `alignment` (a power of two up to 2 MiB), or NULL.
inline void* nvshmem_align(std::size_t alignment, std::size_t size) {
    return pgas::nvshmem_compat::allocate("nvshmem_align", size, alignment);
}
/// Collective: returns a block from nvshmem_malloc, calloc or align (NULL: nothing).
inline void nvshmem_free(void* ptr) { pgas::nvshmem_compat::release("nvshmem_free", ptr); }

/// This PE's index in `team`, or -1 when it is not a member (NVSHMEM_TEAM_INVALID).
PGAS_NVSHMEM_API int nvshmem_team_my_pe(nvshmem_team_t team) {
    return pgas_nvshmem_tu::with_team("nvshmem_team_my_pe", team, [](const pgas::team& t) { return t.my_pe(); });
}
/// Members of `team`, or -1 for NVSHMEM_TEAM_INVALID.
PGAS_NVSHMEM_API int nvshmem_team_n_pes(nvshmem_team_t team) {
    return pgas_nvshmem_tu::with_team("nvshmem_team_n_pes", team,
                                      [](const pgas::team& t) { return t.n_pes() > 0 ? t.n_pes() : -1; });
}
/// The index in `dest_team` of `src_team`'s member `src_pe`, or -1.
PGAS_NVSHMEM_API int nvshmem_team_translate_pe(nvshmem_team_t src_team, int src_pe, nvshmem_team_t dest_team) {
    const char* call = "nvshmem_team_translate_pe";
    return pgas_nvshmem_tu::with_team(call, src_team, [&](const pgas::team& from) {
        return pgas_nvshmem_tu::with_team(call, dest_team,
                                          [&](const pgas::team& to) { return from.translate(src_pe, to); });
    });
}
