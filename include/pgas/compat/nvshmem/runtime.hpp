// The process-wide side of the NVSHMEM compatibility layer as every translation unit sees it: the heap view and team
// table a TU's device state holds, how host calls report misuse, and the runtime's declaration. Its host side (the
// world, the bootstrap, the heap) is compiled once, into the pgas_nvshmem library (src/compat/nvshmem/runtime.cpp),
// as NVSHMEM's lives in libnvshmem_host: a TU that includes <nvshmem.h> parses the device layer only.
#pragma once

#include <pgas/compat/nvshmem/types.hpp>
#include <pgas/device.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
struct launch_info;

namespace nvshmem_compat {

/// Whether heap_view checks a call's arguments here: on the host always, on a GPU under PGAS_CHECKS.
PGAS_HD constexpr bool checks_arguments() { NV_IF_TARGET(NV_IS_DEVICE, (return PGAS_CHECKS;), (return true;)) }

/// This PE's symmetric heap as NVSHMEM's raw pointers see it: a raw address becomes a symmetric_ptr by its distance
/// from this PE's heap base.
struct heap_view {
    std::byte* base = nullptr;  ///< this PE's heap base in the address space the caller runs in
    std::uint64_t bytes = 0;    ///< bytes of each PE's heap
    int my_pe = -1;             ///< this PE
    int n_pes = 0;              ///< PEs in the world

    /// `p` (count elements of T from it) as a symmetric_ptr. On the host always, on a GPU under PGAS_CHECKS: an
    /// address outside the heap's user area is errc::not_symmetric naming `call`, the PE and the heap offset.
    template <class T>
    PGAS_HD symmetric_ptr<T> symmetric(const char* call, const void* p, std::size_t count) const {
        const long long offset = static_cast<const std::byte*>(p) - base;
        if (checks_arguments()) {
            const auto user = (long long)detail::heap_layout::user_offset;
            if (offset < user || offset > (long long)bytes || count > (bytes - std::uint64_t(offset)) / sizeof(T))
                detail::report(errc::not_symmetric, call, my_pe,
                               "address outside the symmetric heap (an nvshmem_malloc'd block), heap offset", offset);
        }
        return symmetric_ptr<T>(detail::offset_tag{}, std::uint64_t(offset));
    }

    /// On the host always, on a GPU under PGAS_CHECKS: a stride below 1 element is errc::invalid_argument naming
    /// `call`, the PE and the stride.
    PGAS_HD void check_stride(const char* call, std::ptrdiff_t stride) const {
        if (checks_arguments() && stride < 1)
            detail::report(errc::invalid_argument, call, my_pe, "stride (in elements) must be >= 1, got", stride);
    }

    /// On the host always, on a GPU under PGAS_CHECKS: `pe` outside [0, n_pes) is errc::pe_out_of_range naming `call`,
    /// the calling PE and `pe`.
    PGAS_HD void check_pe(const char* call, int pe) const {
        if (checks_arguments() && (pe < 0 || pe >= n_pes))
            detail::report(errc::pe_out_of_range, call, my_pe, "target PE outside [0, nvshmem_n_pes()):", pe);
    }
};

/// The teams NVSHMEM's integer handles name on this PE: the predefined ones (NVSHMEM_TEAM_WORLD, _SHARED,
/// NVSHMEMX_TEAM_NODE, NVSHMEMX_TEAM_SAME_MYPE_NODE) and every live split team, whose handle is its pgas team slot
/// + NVSHMEM_TEAMS_MIN - 2 (every PE runs the same splits, so all agree on it). Copied by value into each translation
/// unit's device state.
struct team_table {
    team node;                       ///< NVSHMEMX_TEAM_NODE / NVSHMEM_TEAM_SHARED
    team same_mype_node;             ///< NVSHMEMX_TEAM_SAME_MYPE_NODE; empty where the nodes differ in size
    team splits[team::max_slots]{};  ///< by slot (2 and up); empty where no live split team holds the slot

    /// The handle of the split team in `slot`.
    PGAS_HD static constexpr nvshmem_team_t handle_of(int slot) { return nvshmem_team_t(slot + NVSHMEM_TEAMS_MIN - 2); }
    /// The slot a split team's handle names (-1 for a predefined or invalid handle).
    PGAS_HD static constexpr int slot_of(nvshmem_team_t handle) {
        return handle >= handle_of(2) && handle <= handle_of(team::max_slots - 1) ? int(handle) - handle_of(0) : -1;
    }

    /// The team `handle` names, bound to `my_pe`; NVSHMEM_TEAM_INVALID is the empty team; any other handle that
    /// names no live team is errc::invalid_argument naming the call, the PE and the handle.
    PGAS_HD team get(const char* call, nvshmem_team_t handle, int my_pe, int n_pes) const {
        switch (handle) {
            case NVSHMEM_TEAM_WORLD:
                return team::world_team(my_pe, n_pes);
            case NVSHMEM_TEAM_SHARED:
            case NVSHMEMX_TEAM_NODE:
                return node.bound_to(my_pe);
            case NVSHMEMX_TEAM_SAME_MYPE_NODE:
                if (same_mype_node.n_pes() == 0)
                    detail::report(errc::invalid_argument, call, my_pe,
                                   "NVSHMEMX_TEAM_SAME_MYPE_NODE needs nodes of one size, of consecutive PEs; this "
                                   "node's PEs:",
                                   node.n_pes());
                return same_mype_node.bound_to(my_pe);
            case NVSHMEM_TEAM_INVALID:
                return team();
        }
        const int slot = slot_of(handle);
        if (slot < 0 || splits[slot].n_pes() == 0)
            detail::report(errc::invalid_argument, call, my_pe,
                           "team handle names no live team (NVSHMEM_TEAM_WORLD, _SHARED, NVSHMEMX_TEAM_NODE, "
                           "_SAME_MYPE_NODE or a split team not destroyed):",
                           handle);
        return splits[slot < 0 ? 0 : slot];
    }
};

/// What the device calls of one translation unit read from its own `__constant__` copy (device_state.hpp).
struct device_state {
    std::uint32_t filled;         ///< filled_magic while the world is up; anything else: not initialised
    heap_view heap;               ///< this PE's heap in the GPU's address space
    team_table teams;             ///< the teams its handles name
    device::context<nvlink> ctx;  ///< what every forwarded pgas call takes
};

/// The value of device_state::filled once nvshmem_init has filled a translation unit's state.
inline constexpr std::uint32_t filled_magic = 0x6e76736du;

/// Copies a state into one translation unit's `__constant__` object (that TU's own function).
using fill_function = cudaError_t (*)(const device_state&);

/// Prints `line` and ends the process with a failure status, its output flushed but no static destructor run: a call
/// may fail while it holds the runtime's lock, which a translation unit's registration takes again as it is destroyed.
[[noreturn]] inline void end_process(const char* line) {
    std::fprintf(stderr, "%s\n", line);
    std::fflush(nullptr);
    std::_Exit(EXIT_FAILURE);
}

/// Prints "pgas: <call> on PE <pe>: <detail>" and ends the process with a failure status: what a host call does on
/// misuse (the other PEs then see a dead peer within PGAS_BOOTSTRAP_TIMEOUT_MS instead of hanging).
[[noreturn]] inline void fail(const char* call, int pe, const std::string& detail) {
    end_process(error(errc::invalid_argument, pe, call, detail).what());
}

/// NVSHMEMX_INIT_WITH_MPI_COMM's communicator address: ends the process under `call` when it is NULL.
inline const void* mpi_comm_of(const char* call, const nvshmemx_init_attr_t& attributes) {
    if (!attributes.mpi_comm)
        fail(call, -1, "NVSHMEMX_INIT_WITH_MPI_COMM with attr->mpi_comm NULL (the address of an MPI_Comm)");
    return attributes.mpi_comm;
}

/// fail for a pgas::error raised under `call`: its own line when it names that call already, else under the call.
[[noreturn]] inline void fail(const char* call, int pe, const error& e) {
    if (e.call() == call) end_process(e.what());
    fail(call, pe, e.what());
}

/// The process's NVSHMEM state: the world nvshmem_init made and the registered translation units. What a call
/// needs on its fast path (the phase, the heap view, the teams, the contexts) is inline; what touches the world is
/// defined in src/compat/nvshmem/runtime.cpp, compiled once into the pgas_nvshmem library.
class runtime {
public:
    /// Where the process is in NVSHMEM's life cycle.
    enum class phase { before_init, running, finalized };

    runtime();  ///< before init; the_runtime() makes the one instance

    /// Registers a translation unit's fill function (at its static initialisation); filled at once when the world is
    /// already up on GPUs (a library loaded after nvshmem_init).
    void add(fill_function fill);
    /// Forgets a translation unit (its library is being unloaded).
    void remove(fill_function fill);

    /// nvshmem_init: a world of one PE per process from the launcher's environment, on this process's GPU (the one
    /// the program made current before, else the launcher's local rank modulo the visible GPUs) when a GPU is visible
    /// and a CUDA translation unit registered device state (a program built by a plain C++ compiler launches no
    /// kernels), else on the host transport. Each PE may allocate NVSHMEM_SYMMETRIC_SIZE bytes when that is set (else
    /// the heap is PGAS_HEAP_SIZE, else pgas's default). A nested call only counts.
    /// `attributes` (nvshmemx_init_attr with flags 0) may name the GPU: args.cuda_device_id.
    void init(const char* call, const nvshmemx_init_attr_t* attributes = nullptr);
    /// nvshmemx_init_attr with NVSHMEMX_INIT_WITH_UNIQUEID: as init, the world the unique id and
    /// nvshmemx_set_attr_uniqueid_args describe, on the current device, or with `node_rank` (this PE's index among
    /// the PEs of its node, as NVSHMEMX_INIT_WITH_MPI_COMM finds it) on the program's GPU if it chose one, else on
    /// that index modulo the visible GPUs; a malformed id or rank ends the process, saying what is wrong.
    void init_with_uniqueid(const char* call, const nvshmemx_init_attr_t& attributes, int node_rank = -1);
    /// nvshmemx_init_attr with NVSHMEMX_INIT_WITH_MPI_COMM from a TU that did not include <mpi.h> before <nvshmem.h>:
    /// the process's own MPI (found at run time) gives the communicator's rank and size; where they are the
    /// launcher's (MPI_COMM_WORLD or a copy of it), as init from the launcher's environment. Another communicator
    /// ends the process saying to include <mpi.h> first; a process without MPI gets NVSHMEMX_ERROR_NOT_SUPPORTED and
    /// a message (nothing initialised).
    int init_with_mpi_world(const char* call, const nvshmemx_init_attr_t& attributes);

    /// nvshmem_finalize: the last matching call completes this PE's work, meets the other PEs, empties every
    /// translation unit's device state (kernels launched later trap, saying so) and ends the world.
    void finalize(const char* call);

    /// nvshmemx_init_status: FULL_MPG while running with PEs sharing a GPU (any of the world's), else IS_INITIALIZED,
    /// or NOT_INITIALIZED outside nvshmem_init ... nvshmem_finalize.
    int status() const;

    /// This runtime, after checking that `call` comes between nvshmem_init and nvshmem_finalize (else the process
    /// ends with a message naming the call).
    runtime& running(const char* call) {
        if (phase_ == phase::before_init) fail(call, -1, "called before nvshmem_init");
        if (phase_ == phase::finalized) fail(call, heap_.my_pe, "called after nvshmem_finalize");
        return *this;
    }

    /// The thread level nvshmem_init_thread granted (NVSHMEM_THREAD_SERIALIZED unless it granted less).
    int thread_level() const { return thread_level_; }
    void set_thread_level(int level) { thread_level_ = level; }

    /// Whether the heap is on this process's GPU (nvlink), not host memory (host transport).
    bool on_gpu() const { return on_gpu_; }
    /// This PE's heap as the host sees it.
    const heap_view& heap() const { return heap_; }
    /// The host transport's context (when !on_gpu()).
    const device::context<host>& host_context() const { return host_ctx_; }
    /// The GPU heap's context (when on_gpu()): for addresses and PE numbers only on the host.
    const device::context<nvlink>& gpu_context() const { return gpu_ctx_; }
    /// The teams this PE's handles name.
    const team_table& teams() const { return teams_; }

    /// nvshmem_malloc, calloc and align: a collective pgas::world::alloc of `bytes` (zero-filled; `alignment` 0: the
    /// default); NULL, with a line on stderr saying why, when the heap cannot hold it or the alignment is not one
    /// pgas offers (as NVSHMEM returns NULL). 0 bytes: NULL.
    void* allocate(const char* call, std::size_t bytes, std::size_t alignment);
    /// nvshmem_free: a collective pgas::world::free of a block from allocate (NULL: nothing).
    void release(const char* call, void* ptr);

    /// nvshmemx_buffer_register: records [addr, addr + length) as a local buffer of RMA calls; host memory, while the
    /// heap is on a GPU, is page-locked and mapped (cudaHostRegister) so that kernels may read and write it. pgas's
    /// transports here (NVLink load/store, the host transport) need no other registration. Returns
    /// NVSHMEMX_ERROR_INVALID_VALUE, with a line naming the call, the PE and the values, for a NULL address, a length
    /// of 0 or a range overlapping one registered already; NVSHMEMX_ERROR_INTERNAL with CUDA's message.
    int register_buffer(const char* call, void* addr, std::size_t length);
    /// nvshmemx_buffer_unregister: forgets the buffer registered at `addr` (and unpins what register_buffer pinned);
    /// NVSHMEMX_ERROR_INVALID_VALUE, with a line, when no buffer was registered there.
    int unregister_buffer(const char* call, void* addr);
    /// nvshmemx_buffer_unregister_all.
    void unregister_all_buffers(const char* call);
    /// nvshmemx_buffer_register_symmetric: pgas::world::register_symmetric of `buffer` (collective; a cuMemCreate
    /// mapping's start, exportable as a POSIX descriptor), then every translation unit's state reaches it. Returns
    /// its symmetric address, or NULL with a line naming the call, the PE and why (as NVSHMEM returns NULL).
    void* register_symmetric(const char* call, void* buffer, std::size_t bytes);
    /// nvshmemx_buffer_unregister_symmetric: collective; 0, or NVSHMEMX_ERROR_INVALID_VALUE with a line for an
    /// address register_symmetric did not return.
    int unregister_symmetric(const char* call, void* address);

    /// nvshmem_team_split_strided / split_2d: the new teams are made on pgas::world (each PE's own, sharing their
    /// slots), whose splits are collective over the whole world; so the parent must hold every PE in one of its
    /// slot's teams (the world, the node team on one node, a split_2d's rows or columns of such a team, or a split
    /// keeping all of one), and every PE calls. Another parent, or NVSHMEM_TEAM_INVALID, makes nothing: the handles
    /// stay NVSHMEM_TEAM_INVALID and the call returns nonzero (with a message for the first). First the slots of
    /// teams every PE is done with are freed (see destroy). Each new team's handle on this PE, NVSHMEM_TEAM_INVALID
    /// where it is not a member; returns 0.
    int split_strided(const char* call, nvshmem_team_t parent, int start, int stride, int size, nvshmem_team_t* out);
    /// As split_strided: `parent` as rows of `xrange` members; `*x` this PE's row, `*y` its column.
    int split_2d(const char* call, nvshmem_team_t parent, int xrange, nvshmem_team_t* x, nvshmem_team_t* y);

    /// nvshmem_team_destroy (host, by the team's members): this PE is done with the team; its handle names no team
    /// from now on. The slot goes back to pgas::world at the next split, once every PE is done with it (the PEs
    /// outside the team are from the start): pgas's destroy_team is collective over the world, NVSHMEM's over the
    /// team's members only.
    void destroy(const char* call, nvshmem_team_t handle);

    /// Host-side nvshmem_barrier_all: on GPUs every kernel of this process completes first (their puts are then
    /// visible), then the PEs meet; on the host transport pgas's barrier over the heap.
    void barrier_all(const char* call);
    /// The PEs of the world meet on the bootstrap (host side only: no memory ordering on the heap).
    void world_barrier(const char* call);

    /// Ends the process naming `call` when a CUDA call of the host side failed.
    void copy_check(const char* call, cudaError_t status) const {
        if (status != cudaSuccess) fail(call, heap_.my_pe, std::string("CUDA: ") + cudaGetErrorString(status));
    }

    /// Host RMA with the heap on a GPU (put, get, p, g, iput, iget, signal_fetch): `rows` rows of `width` bytes from
    /// `src` to `dst` (one of them a peer's mapping; pitches in bytes) on the runtime's host stream, so that host RMA
    /// completes in issue order. `wait`: complete on return (the blocking forms); else at this PE's next host
    /// nvshmem_quiet, barrier or finalize (the _nbi forms: the caller goes on issuing while the copy runs, as with
    /// NVSHMEM's).
    void host_copy(const char* call, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                   std::size_t width, std::size_t rows, bool wait) const {
        copy_check(call, rows == 1 ? cudaMemcpyAsync(dst, src, width, cudaMemcpyDefault, host_stream_)
                                   : cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault,
                                                       host_stream_));
        if (wait) host_quiet(call);
    }
    /// Host nvshmem_quiet with the heap on a GPU: every host_copy issued so far is complete.
    void host_quiet(const char* call) const { copy_check(call, cudaStreamSynchronize(host_stream_)); }

private:
    struct world_state;  // the world, the registered TUs and the split teams' bookkeeping (runtime.cpp)

    // launch: null for the launcher's environment; attributes: null, or nvshmemx_init_attr's (its cuda_device_id)
    void init_from(const char* call, const launch_info* launch, const nvshmemx_init_attr_t* attributes);
    template <std::size_t N, class Split>
    int split(const char* call, nvshmem_team_t parent, std::array<nvshmem_team_t*, N> out, Split&& split);
    void free_finished_teams();
    void refill() const;                       // every translation unit's device state, again (the teams changed)
    void reach_registrations(world_state& s);  // new contexts and states after register/unregister_symmetric

    phase phase_ = phase::before_init;
    int thread_level_ = NVSHMEM_THREAD_SERIALIZED;
    bool on_gpu_ = false;
    heap_view heap_;
    team_table teams_;
    device::context<host> host_ctx_{};
    device::context<nvlink> gpu_ctx_{};
    cudaStream_t host_stream_ = nullptr;  // host RMA's stream (on_gpu_); blocking: it follows the legacy default stream
    world_state* const world_;            // never destroyed (see the_runtime)
};

/// nvshmemx_get_uniqueid: a new launch's rendezvous, as text in the id: "pgas-uid <host> <port> <token>", where the
/// host is PGAS_UNIQUEID_HOST (else this machine's name) and the port one free now on every interface, which rank 0
/// listens on at init. Returns NVSHMEMX_SUCCESS; a NULL id or a host name too long ends the process, saying so.
int make_uniqueid(nvshmemx_uniqueid_t* id);

/// The one runtime of the process, shared by every translation unit and module: defined once, in the shared library
/// libpgas_nvshmem.so, so that modules loaded with dlopen(RTLD_LOCAL) reach it too. Never destroyed: a program that
/// skips nvshmem_finalize must not tear its world down after CUDA's own teardown at exit.
__attribute__((visibility("default"))) runtime& the_runtime();

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END
