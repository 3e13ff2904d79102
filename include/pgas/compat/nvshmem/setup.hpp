// NVSHMEM's set-up, memory and team calls: init/finalize, my_pe/n_pes, malloc/calloc/align/free and the predefined
// teams, on pgas::world (host) and each translation unit's device state (device).
#pragma once

#include <pgas/compat/nvshmem/device_state.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/types.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace nvshmem_compat {

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

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END

namespace {
namespace pgas_nvshmem_tu {

// with_team from host code: the runtime's teams; a pgas::error ends the process naming the call.
template <class Op>
int with_host_team(const char* call, nvshmem_team_t handle, Op&& op) {
    compat::runtime& rt = compat::the_runtime().running(call);
    try {
        return op(rt.teams().get(call, handle, rt.heap().my_pe, rt.heap().n_pes));
    } catch (const ::pgas::error& e) {
        compat::fail(call, rt.heap().my_pe, e);
    }
}

// Runs op(team) with the team `handle` names on this PE (device: this TU's state; host: the runtime).
template <class Op>
PGAS_HD int with_team(const char* call, nvshmem_team_t handle, Op&& op) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (const compat::device_state& s = filled_state(call);
                  return op(s.teams.get(call, handle, s.heap.my_pe, s.heap.n_pes));),
                 (return with_host_team(call, handle, op);))
}

// This PE's heap view: this TU's state on the device, the runtime's on the host.
PGAS_HD inline const compat::heap_view& heap(const char* call) {
    NV_IF_TARGET(NV_IS_DEVICE, (return filled_state(call).heap;), (return compat::the_runtime().running(call).heap();))
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// Collective: starts NVSHMEM on pgas, one PE per process from the launcher's environment (pgasrun, torchrun, Open
/// MPI, Slurm, PMI); on this process's GPU (the one the program made current before, else the launcher's local rank
/// modulo the visible GPUs) when there is one and CUDA code includes <nvshmem.h>, else on the host transport. Ends the
/// process with a message when it fails.
inline void nvshmem_init() { pgas::nvshmem_compat::the_runtime().init("nvshmem_init"); }

namespace {
namespace pgas_nvshmem_tu {

#if defined(MPI_VERSION)  // <mpi.h> came before <nvshmem.h>, as in NVSHMEM's MPI examples: this TU speaks MPI
// Ends the process naming nvshmemx_init_attr, the rank and the MPI call when an MPI call fails.
inline void mpi_check(int status, int rank, const char* what) {
    if (status != MPI_SUCCESS)
        compat::fail("nvshmemx_init_attr", rank,
                     std::string(what) + " failed (MPI error " + std::to_string(status) + ")");
}

// NVSHMEMX_INIT_WITH_MPI_COMM: the communicator's ranks become the PEs (PE = rank in it): its rank 0 makes a unique id,
// MPI_Bcast hands it to the others, and they meet as with NVSHMEMX_INIT_WITH_UNIQUEID; each PE's GPU is the one the
// program made current, else its rank among the communicator's ranks on its node (MPI_COMM_TYPE_SHARED) modulo the
// visible GPUs, as nvshmem_init's.
inline void init_with_mpi_comm(const nvshmemx_init_attr_t& attributes) {
    constexpr const char* call = "nvshmemx_init_attr";
    MPI_Comm comm = *static_cast<const MPI_Comm*>(compat::mpi_comm_of(call, attributes));
    int rank = -1, size = 0, node_rank = -1;
    mpi_check(MPI_Comm_rank(comm, &rank), rank, "MPI_Comm_rank of attr->mpi_comm");
    mpi_check(MPI_Comm_size(comm, &size), rank, "MPI_Comm_size of attr->mpi_comm");
    MPI_Comm node;
    mpi_check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), rank,
              "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    mpi_check(MPI_Comm_rank(node, &node_rank), rank, "MPI_Comm_rank of the node communicator");
    mpi_check(MPI_Comm_free(&node), rank, "MPI_Comm_free of the node communicator");
    nvshmemx_uniqueid_t id{};
    if (rank == 0) compat::make_uniqueid(&id);
    mpi_check(MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, comm), rank, "MPI_Bcast of the unique id");
    nvshmemx_init_attr_t launch = attributes;
    launch.args.uid_args.id = &id;
    launch.args.uid_args.myrank = rank;
    launch.args.uid_args.nranks = size;
    compat::the_runtime().init_with_uniqueid(call, launch, node_rank);
}
#endif

// nvshmemx_init_attr's NVSHMEMX_INIT_WITH_MPI_COMM: init_with_mpi_comm where this TU included <mpi.h> before
// <nvshmem.h> (any communicator); else the runtime's, which finds the process's MPI at run time and takes
// MPI_COMM_WORLD (or a copy) only.
inline int init_with_mpi(const nvshmemx_init_attr_t& attributes) {
#if defined(MPI_VERSION)
    init_with_mpi_comm(attributes);
    return NVSHMEMX_SUCCESS;
#else
    return compat::the_runtime().init_with_mpi_world("nvshmemx_init_attr", attributes);
#endif
}

}  // namespace pgas_nvshmem_tu
}  // namespace

/// nvshmem_init with attributes: flags 0 is nvshmem_init; NVSHMEMX_INIT_WITH_UNIQUEID starts the world the unique id
/// and nvshmemx_set_attr_uniqueid_args describe (every rank passes rank 0's id; no launcher needed);
/// NVSHMEMX_INIT_WITH_MPI_COMM one PE per rank of the communicator `attributes->mpi_comm` points to (where the TU
/// includes <mpi.h> before <nvshmem.h>). With each, `attributes->args.cuda_device_id` (where the attributes began as
/// NVSHMEMX_INIT_ATTR_INITIALIZER) picks this PE's GPU, as NVSHMEM's. Other flags are not supported yet and return
/// NVSHMEMX_ERROR_NOT_SUPPORTED with a message naming them (nothing is initialised). Internal linkage: its MPI part
/// depends on the TU's includes.
static inline int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attributes) {
    if (flags == NVSHMEMX_INIT_WITH_UNIQUEID && attributes) {
        pgas::nvshmem_compat::the_runtime().init_with_uniqueid("nvshmemx_init_attr", *attributes);
        return NVSHMEMX_SUCCESS;
    }
    if (flags == NVSHMEMX_INIT_WITH_MPI_COMM && attributes) return pgas_nvshmem_tu::init_with_mpi(*attributes);
    if (flags != 0) {
        std::fprintf(stderr,
                     "pgas: nvshmemx_init_attr: flags 0x%x (%s) are not supported yet; flags 0 (as nvshmem_init) "
                     "initialises from the launcher's environment\n",
                     flags, pgas::nvshmem_compat::flag_names(flags).c_str());
        return NVSHMEMX_ERROR_NOT_SUPPORTED;
    }
    pgas::nvshmem_compat::the_runtime().init("nvshmemx_init_attr", attributes);
    return NVSHMEMX_SUCCESS;
}

/// nvshmem_init, with the thread level granted in `*provided`: the one asked for up to NVSHMEM_THREAD_SERIALIZED (host
/// calls from several threads, one at a time: pgas's host side does not promise more); returns 0.
inline int nvshmem_init_thread(int requested, int* provided) {
    nvshmem_init();
    const int granted = requested < NVSHMEM_THREAD_SERIALIZED ? requested : NVSHMEM_THREAD_SERIALIZED;
    pgas::nvshmem_compat::the_runtime().running("nvshmem_init_thread").set_thread_level(granted);
    if (provided) *provided = granted;
    return 0;
}

/// The thread level nvshmem_init_thread granted (NVSHMEM_THREAD_SERIALIZED after nvshmem_init).
inline void nvshmem_query_thread(int* provided) {
    const int level = pgas::nvshmem_compat::the_runtime().running("nvshmem_query_thread").thread_level();
    if (provided) *provided = level;
}

/// NVSHMEM_MAJOR_VERSION and NVSHMEM_MINOR_VERSION: the OpenSHMEM specification the API follows (host and device).
PGAS_NVSHMEM_API void nvshmem_info_get_version(int* major, int* minor) {
    *major = NVSHMEM_MAJOR_VERSION;
    *minor = NVSHMEM_MINOR_VERSION;
}

/// NVSHMEM_VENDOR_STRING into `name` (NVSHMEM_MAX_NAME_LEN bytes at most, NUL included; host and device).
PGAS_NVSHMEM_API void nvshmem_info_get_name(char* name) {
    const char* vendor = NVSHMEM_VENDOR_STRING;
    int i = 0;
    for (; i < NVSHMEM_MAX_NAME_LEN - 1 && vendor[i] != '\0'; ++i) name[i] = vendor[i];
    name[i] = '\0';
}

/// The NVSHMEM release whose API this is: NVSHMEM_VENDOR_{MAJOR,MINOR,PATCH}_VERSION (host and device).
PGAS_NVSHMEM_API void nvshmemx_vendor_get_version_info(int* major, int* minor, int* patch) {
    *major = NVSHMEM_VENDOR_MAJOR_VERSION;
    *minor = NVSHMEM_VENDOR_MINOR_VERSION;
    *patch = NVSHMEM_VENDOR_PATCH_VERSION;
}

/// Ends the program with `status`. From host code this process exits with it, saying so on stderr; the other PEs see
/// it leave and end within PGAS_BOOTSTRAP_TIMEOUT_MS naming it (pgasrun then stops the rest). From a kernel the
/// calling thread prints the status and traps: the process's next CUDA call fails, and the other PEs' device waits
/// end naming this PE.
PGAS_NVSHMEM_API void nvshmem_global_exit(int status) {
    NV_IF_TARGET(NV_IS_DEVICE, (printf("pgas: nvshmem_global_exit(%d) in a kernel: trapping\n", status); __trap();),
                 (std::fprintf(stderr, "pgas: nvshmem_global_exit(%d) on PE %d: ending this process\n", status,
                               pgas::nvshmem_compat::the_runtime().heap().my_pe);
                  std::fflush(stderr); std::exit(status);))
}

/// Points `attr` at the MPI communicator `mpi_comm` (the address of an MPI_Comm) for
/// nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, attr); returns 0.
inline int nvshmemx_set_attr_mpi_comm_args(void* mpi_comm, nvshmemx_init_attr_t* attr) {
    if (!attr) pgas::nvshmem_compat::fail("nvshmemx_set_attr_mpi_comm_args", -1, "the attr pointer is NULL");
    attr->mpi_comm = mpi_comm;
    return NVSHMEMX_SUCCESS;
}

/// A unique id for nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, ...): made by one rank (rank 0), passed to every
/// rank by the program (MPI, torch.distributed, a file); returns 0.
inline int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t* id) { return pgas::nvshmem_compat::make_uniqueid(id); }

/// Writes this rank, the rank count and the address of rank 0's unique id (alive until nvshmemx_init_attr returns)
/// into `attr` for nvshmemx_init_attr; returns 0.
inline int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t* uniqueid,
                                           nvshmemx_init_attr_t* attr) {
    if (!uniqueid || !attr)
        pgas::nvshmem_compat::fail("nvshmemx_set_attr_uniqueid_args", myrank, "the id or attr pointer is NULL");
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    attr->args.uid_args.id = const_cast<nvshmemx_uniqueid_t*>(uniqueid);  // NVSHMEM's field is not const; pgas reads it
    return NVSHMEMX_SUCCESS;
}

/// Collective: the matching end of nvshmem_init; the last one completes this PE's work and ends the world.
inline void nvshmem_finalize() { pgas::nvshmem_compat::the_runtime().finalize("nvshmem_finalize"); }

/// NVSHMEM's host-library entry: as nvshmemx_init_attr (pgas has no separate device library to load).
static inline int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr) {
    return nvshmemx_init_attr(flags, attr);
}

/// NVSHMEM's host-library exit: as nvshmem_finalize.
inline void nvshmemx_hostlib_finalize() { nvshmem_finalize(); }

/// NVSHMEM_STATUS_IS_INITIALIZED between nvshmem_init and nvshmem_finalize, else NVSHMEM_STATUS_NOT_INITIALIZED.
inline int nvshmemx_init_status() { return pgas::nvshmem_compat::the_runtime().status(); }

/// This PE's number in the world (host and device).
PGAS_NVSHMEM_API int nvshmem_my_pe() { return pgas_nvshmem_tu::heap("nvshmem_my_pe").my_pe; }
/// PEs in the world (host and device).
PGAS_NVSHMEM_API int nvshmem_n_pes() { return pgas_nvshmem_tu::heap("nvshmem_n_pes").n_pes; }

/// Collective: `size` bytes of symmetric heap on every PE (zero-filled), or NULL when the heap cannot hold them.
inline void* nvshmem_malloc(std::size_t size) {
    return pgas::nvshmem_compat::the_runtime().allocate("nvshmem_malloc", size, 0);
}
/// Collective: `count` elements of `size` bytes, zero-filled, or NULL (also when count * size overflows).
inline void* nvshmem_calloc(std::size_t count, std::size_t size) {
    if (size != 0 && count > std::size_t(-1) / size) {
        std::fprintf(stderr, "pgas: nvshmem_calloc: %zu elements of %zu bytes overflow size_t: returns NULL\n", count,
                     size);
        return nullptr;
    }
    return pgas::nvshmem_compat::the_runtime().allocate("nvshmem_calloc", count * size, 0);
}
/// Collective: `size` bytes aligned to `alignment` (a power of two up to 2 MiB), or NULL.
inline void* nvshmem_align(std::size_t alignment, std::size_t size) {
    return pgas::nvshmem_compat::the_runtime().allocate("nvshmem_align", size, alignment);
}
/// Collective: returns a block from nvshmem_malloc, calloc or align (NULL: nothing).
inline void nvshmem_free(void* ptr) { pgas::nvshmem_compat::the_runtime().release("nvshmem_free", ptr); }

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

/// NVSHMEM's NVLink-multicast address of `ptr` for `team`: NULL, always (as NVSHMEM's where the team has no
/// multicast), since pgas never maps multicast memory; a program falls back to nvshmem_ptr or the team collectives.
/// A team handle that names no live team is reported, naming the call.
PGAS_NVSHMEM_API void* nvshmemx_mc_ptr(nvshmem_team_t team, const void* ptr) {
    (void)ptr;
    pgas_nvshmem_tu::with_team("nvshmemx_mc_ptr", team, [](const pgas::team&) { return 0; });
    return nullptr;
}

/// The id nvshmemx_team_get_uniqueid makes for nvshmemx_team_init.
typedef std::uint64_t nvshmemx_team_uniqueid_t;
/// A team unique id that names no team (NVSHMEM spells it so).
#define NVSHMEM_TEAM_UNIQUID_INITIALIZER 0xFFFFFFFFFFFFFFFFull

/// A team's configuration, with NVSHMEM's fields: the contexts it asks for (pgas has no per-team contexts: ignored)
/// and the unique id of nvshmemx_team_init (not provided). 64 bytes, as NVSHMEM's.
typedef struct {
    int version;
    int num_contexts;
    nvshmemx_team_uniqueid_t uniqueid;
    char padding[48];
} nvshmem_team_config_t;

/// A configuration that asks for nothing.
#define NVSHMEM_TEAM_CONFIG_INITIALIZER               \
    {                                                 \
        2, 0, NVSHMEM_TEAM_UNIQUID_INITIALIZER, { 0 } \
    }
/// The config_mask bits that say which of nvshmem_team_config_t's fields are set.
#define NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS (1L << 0)
#define NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID (1L << 1)
/// OpenSHMEM's name for NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS.
#define NVSHMEM_TEAM_NUM_CONTEXTS NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS

namespace pgas::nvshmem_compat {
// nvshmemx_team_get_uniqueid and nvshmemx_team_init: a team of any PEs, made by its members alone, is beyond pgas's
// teams (strided, and made by a split every PE of the world joins). NVSHMEMX_ERROR_NOT_SUPPORTED with a line naming
// the call and saying what to use instead.
inline int teams_from_uniqueid_not_supported(const char* call) {
    std::fprintf(stderr,
                 "pgas: %s: not supported: teams from a unique id (any PEs, made by their members alone) are not "
                 "provided; pgas's teams are strided and made by nvshmem_team_split_strided or split_2d, which every "
                 "PE of the parent calls\n",
                 call);
    return NVSHMEMX_ERROR_NOT_SUPPORTED;
}
}  // namespace pgas::nvshmem_compat

/// Not provided (teams_from_uniqueid_not_supported): `*uniqueid` is left as it was.
inline int nvshmemx_team_get_uniqueid(nvshmemx_team_uniqueid_t* uniqueid) {
    (void)uniqueid;
    return pgas::nvshmem_compat::teams_from_uniqueid_not_supported("nvshmemx_team_get_uniqueid");
}
/// Not provided (teams_from_uniqueid_not_supported): `*team` becomes NVSHMEM_TEAM_INVALID.
inline int nvshmemx_team_init(nvshmem_team_t* team, nvshmem_team_config_t* config, long config_mask, int npes,
                              int pe_idx_in_team) {
    (void)config, (void)config_mask, (void)npes, (void)pe_idx_in_team;
    if (team) *team = NVSHMEM_TEAM_INVALID;
    return pgas::nvshmem_compat::teams_from_uniqueid_not_supported("nvshmemx_team_init");
}

/// Collective over the world: the team of `parent_team`'s members start, start + stride, ... (size of them), as
/// `*new_team` (NVSHMEM_TEAM_INVALID on the PEs outside it); returns 0. Every PE of the world calls, each with its
/// parent team (the world, the node team on one node, or a split team that holds every PE in its slot, such as
/// split_2d's rows); another parent makes nothing and returns nonzero with a message. `config` is ignored.
inline int nvshmem_team_split_strided(nvshmem_team_t parent_team, int start, int stride, int size,
                                      const nvshmem_team_config_t* config, long config_mask, nvshmem_team_t* new_team) {
    (void)config, (void)config_mask;
    return pgas::nvshmem_compat::the_runtime().split_strided("nvshmem_team_split_strided", parent_team, start, stride,
                                                             size, new_team);
}

/// Collective over the world, as nvshmem_team_split_strided: views `parent_team` as rows of `xrange` members;
/// `*xaxis_team` is this PE's row, `*yaxis_team` its column; returns 0. The configs are ignored.
inline int nvshmem_team_split_2d(nvshmem_team_t parent_team, int xrange, const nvshmem_team_config_t* xaxis_config,
                                 long xaxis_mask, nvshmem_team_t* xaxis_team, const nvshmem_team_config_t* yaxis_config,
                                 long yaxis_mask, nvshmem_team_t* yaxis_team) {
    (void)xaxis_config, (void)xaxis_mask, (void)yaxis_config, (void)yaxis_mask;
    return pgas::nvshmem_compat::the_runtime().split_2d("nvshmem_team_split_2d", parent_team, xrange, xaxis_team,
                                                        yaxis_team);
}

/// By the team's members, after their last use of it: the handle names no team from now on (its slot is reused by a
/// later split once every member has destroyed it). A predefined or unknown handle ends the process, naming it.
inline void nvshmem_team_destroy(nvshmem_team_t team) {
    pgas::nvshmem_compat::the_runtime().destroy("nvshmem_team_destroy", team);
}

/// The configuration `team` was made with: num_contexts 0 (pgas has no per-team contexts), no unique id.
inline void nvshmem_team_get_config(nvshmem_team_t team, nvshmem_team_config_t* config) {
    pgas_nvshmem_tu::with_host_team("nvshmem_team_get_config", team, [](const pgas::team&) { return 0; });
    if (config) *config = nvshmem_team_config_t NVSHMEM_TEAM_CONFIG_INITIALIZER;
}
/// OpenSHMEM's form (a mask of the fields wanted): as above; returns 0.
inline int nvshmem_team_get_config(nvshmem_team_t team, long config_mask, nvshmem_team_config_t* config) {
    (void)config_mask;
    nvshmem_team_get_config(team, config);
    return 0;
}
