// The process-wide side of the NVSHMEM compatibility layer: one world per process, the registry of every translation
// unit's device state, and how host calls report misuse.
#pragma once

#include <pgas/compat/nvshmem/types.hpp>
#include <pgas/pgas.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
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
/// NVSHMEMX_TEAM_NODE) and every live split team, whose handle is its pgas team slot + 1 (3 and up: every PE runs
/// the same splits, so all agree on it). Copied by value into each translation unit's device state.
struct team_table {
    team node;                       ///< NVSHMEMX_TEAM_NODE / NVSHMEM_TEAM_SHARED
    team splits[team::max_slots]{};  ///< by slot (2 and up); empty where no live split team holds the slot

    /// The handle of the split team in `slot`.
    PGAS_HD static constexpr nvshmem_team_t handle_of(int slot) { return nvshmem_team_t(slot + 1); }
    /// The slot a split team's handle names (-1 for a predefined or invalid handle).
    PGAS_HD static constexpr int slot_of(nvshmem_team_t handle) {
        return handle > NVSHMEMX_TEAM_NODE && handle <= handle_of(team::max_slots - 1) ? int(handle) - 1 : -1;
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
            case NVSHMEM_TEAM_INVALID:
                return team();
        }
        const int slot = slot_of(handle);
        if (slot < 0 || splits[slot].n_pes() == 0)
            detail::report(errc::invalid_argument, call, my_pe,
                           "team handle names no live team (NVSHMEM_TEAM_WORLD, _SHARED, NVSHMEMX_TEAM_NODE or a split "
                           "team not destroyed):",
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

/// Prints "pgas: <call> on PE <pe>: <detail>" and ends the process with a failure status: what a host call does on
/// misuse (the other PEs then see a dead peer within PGAS_BOOTSTRAP_TIMEOUT_MS instead of hanging).
[[noreturn]] inline void fail(const char* call, int pe, const std::string& detail) {
    std::fprintf(stderr, "%s\n", error(errc::invalid_argument, pe, call, detail).what());
    std::fflush(stderr);
    std::exit(EXIT_FAILURE);
}

/// fail for a pgas::error raised under `call`: its own line when it names that call already, else under the call.
[[noreturn]] inline void fail(const char* call, int pe, const error& e) {
    if (e.call() == call) {
        std::fprintf(stderr, "%s\n", e.what());
        std::fflush(stderr);
        std::exit(EXIT_FAILURE);
    }
    fail(call, pe, e.what());
}

/// The process's NVSHMEM state: the world nvshmem_init made and the registered translation units.
class runtime {
public:
    /// Where the process is in NVSHMEM's life cycle.
    enum class phase { before_init, running, finalized };

    /// Registers a translation unit's fill function (at its static initialisation); filled at once when the world is
    /// already up on GPUs (a library loaded after nvshmem_init).
    void add(fill_function fill) {
        std::lock_guard lock(mutex_);
        fills_.push_back(fill);
        if (phase_ == phase::running && on_gpu()) fill_one(fill, state());
    }
    /// Forgets a translation unit (its library is being unloaded).
    void remove(fill_function fill) {
        std::lock_guard lock(mutex_);
        std::erase(fills_, fill);
    }

    /// nvshmem_init: a world of one PE per process from the launcher's environment (or from `launch`: a unique id's
    /// rendezvous), on this process's GPU (the launcher's local rank modulo the visible GPUs; with `launch`, the
    /// current device) when a GPU is visible and a CUDA translation unit registered device state (a program built by
    /// a plain C++ compiler launches no kernels), else on the host transport. Each PE may allocate
    /// NVSHMEM_SYMMETRIC_SIZE bytes when that is set (else the heap is PGAS_HEAP_SIZE, else pgas's default).
    void init(const char* call, const std::optional<launch_info>& launch = std::nullopt) {
        std::lock_guard lock(mutex_);
        if (phase_ == phase::finalized)
            fail(call, -1, "called after nvshmem_finalize (re-initialisation is not supported)");
        if (phase_ == phase::running) {
            ++inits_;  // NVSHMEM allows nested calls, each matched by nvshmem_finalize
            return;
        }
        try {
            world_options options;
            // NVSHMEM's size is a floor on what the program may allocate ("at least as large"): programs such as
            // NVSHMEM's perftests allocate exactly that size after a few small buffers, so the usable part is the
            // size rounded up to 2 MiB plus 2 MiB; pgas's reserved area comes on top
            if (const std::uint64_t asked = detail::env_size("NVSHMEM_SYMMETRIC_SIZE", 0); asked != 0)
                options.heap_bytes = usable_heap_bytes(asked) + detail::heap_layout::user_offset;
            if (want_gpu())
                world_.emplace(launch ? world::init_gpu(*launch, options, current_device()) : world::init_gpu(options));
            else
                world_.emplace(launch ? world::init(*launch, options) : world::init(options));
            teams_ = team_table{};
            teams_.node = world_->team_node();
            done_with_ = 0;
            whole_world_ = 1u | (teams_.node.n_pes() == world_->n_pes() ? 2u : 0u);
            on_gpu_ = world_->device_of() >= 0;
            if (on_gpu_) {
                gpu_ctx_ = world_->context<nvlink>();
                heap_ = view(gpu_ctx_.transport);
                for (fill_function fill : fills_) fill_one(fill, state());
            } else {
                host_ctx_ = world_->context<host>();
                heap_ = view(host_ctx_.transport);
            }
        } catch (const error& e) {
            fail(call, -1, std::string("could not start the world: ") + e.what());
        }
        phase_ = phase::running;
        inits_ = 1;
    }

    /// nvshmem_finalize: the last matching call completes this PE's work, meets the other PEs, empties every
    /// translation unit's device state (kernels launched later trap, saying so) and ends the world.
    void finalize(const char* call) {
        std::lock_guard lock(mutex_);
        running(call);
        if (--inits_ > 0) return;
        barrier_all(call);
        if (on_gpu_)
            for (fill_function fill : fills_) fill_one(fill, device_state{});
        world_.reset();
        phase_ = phase::finalized;
    }

    /// nvshmemx_init_status.
    int status() const {
        return phase_ == phase::running ? NVSHMEM_STATUS_IS_INITIALIZED : NVSHMEM_STATUS_NOT_INITIALIZED;
    }

    /// This runtime, after checking that `call` comes between nvshmem_init and nvshmem_finalize (else the process
    /// ends with a message naming the call).
    runtime& running(const char* call) {
        if (phase_ == phase::before_init) fail(call, -1, "called before nvshmem_init");
        if (phase_ == phase::finalized) fail(call, heap_.my_pe, "called after nvshmem_finalize");
        return *this;
    }

    /// Whether the heap is on this process's GPU (nvlink), not host memory (host transport).
    bool on_gpu() const { return on_gpu_; }
    /// This PE's heap as the host sees it.
    const heap_view& heap() const { return heap_; }
    /// The host transport's context (when !on_gpu()).
    const device::context<host>& host_context() const { return host_ctx_; }
    /// The GPU heap's context (when on_gpu()): for addresses and PE numbers only on the host.
    const device::context<nvlink>& gpu_context() const { return gpu_ctx_; }
    /// The world nvshmem_init made.
    world& the_world() { return *world_; }
    /// The teams this PE's handles name.
    const team_table& teams() const { return teams_; }

    /// nvshmem_team_split_strided / split_2d: `split(world, parent)` makes the new teams on pgas::world (each PE's
    /// own, sharing their slots), whose splits are collective over the whole world; so the parent must hold every PE
    /// in one of its slot's teams (the world, the node team on one node, a split_2d's rows or columns of such a
    /// team, or a split keeping all of one), and every PE calls. Another parent, or NVSHMEM_TEAM_INVALID, makes
    /// nothing: the handles stay NVSHMEM_TEAM_INVALID and the call returns nonzero (with a message for the first).
    /// First the slots of teams every PE is done with are freed (see destroy). Returns each new team's handle on this
    /// PE, NVSHMEM_TEAM_INVALID where it is not a member, and 0.
    template <std::size_t N, class Split>
    int split(const char* call, nvshmem_team_t parent_handle, std::array<nvshmem_team_t*, N> out, Split&& split) {
        std::lock_guard lock(mutex_);
        running(call);
        for (nvshmem_team_t* handle : out) *handle = NVSHMEM_TEAM_INVALID;
        if (parent_handle == NVSHMEM_TEAM_INVALID) return 1;
        try {
            const team parent = teams_.get(call, parent_handle, heap_.my_pe, heap_.n_pes);
            if (!(whole_world_ >> parent.slot() & 1u)) {
                std::fprintf(stderr,
                             "pgas: %s on PE %d: the parent team (handle %d, %d PEs) leaves out PEs of the world, "
                             "whose splits pgas makes collectively: not supported yet (split the world, or a team "
                             "that holds every PE in its slot, such as split_2d's rows); no team made\n",
                             call, heap_.my_pe, parent_handle, parent.n_pes());
                return 1;
            }
            free_finished_teams();
            const std::array<team, N> made = split(*world_, parent);
            std::uint64_t member = 0;
            for (std::size_t i = 0; i < N; ++i) {
                const int slot = made[i].slot();
                teams_.splits[slot] = made[i];
                if (made[i].my_pe() >= 0) {
                    *out[i] = team_table::handle_of(slot);
                    member |= std::uint64_t{1} << slot;
                } else {
                    done_with_ |= std::uint64_t{1} << slot;  // nothing to destroy here
                }
            }
            std::uint64_t everyone = ~std::uint64_t{0};
            for (std::uint64_t mask : world_->channel().allgather_value(member)) everyone &= mask;
            whole_world_ |= everyone;
        } catch (const error& e) {
            fail(call, heap_.my_pe, e);
        }
        refill();
        return 0;
    }

    /// nvshmem_team_destroy (host, by the team's members): this PE is done with the team; its handle names no team
    /// from now on. The slot goes back to pgas::world at the next split, once every PE is done with it (the PEs
    /// outside the team are from the start): pgas's destroy_team is collective over the world, NVSHMEM's over the
    /// team's members only.
    void destroy(const char* call, nvshmem_team_t handle) {
        std::lock_guard lock(mutex_);
        running(call);
        const int slot = team_table::slot_of(handle);
        if (slot < 0 || teams_.splits[slot].n_pes() == 0)
            fail(
                call, heap_.my_pe,
                "team handle names no split team (a predefined team, or destroyed already): " + std::to_string(handle));
        retired_[slot] = teams_.splits[slot];
        teams_.splits[slot] = team();
        done_with_ |= std::uint64_t{1} << slot;
        refill();
    }

    /// Host-side nvshmem_barrier_all: on GPUs every kernel of this process completes first (their puts are then
    /// visible), then the PEs meet; on the host transport pgas's barrier over the heap.
    void barrier_all(const char* call) {
        try {
            if (on_gpu_) {
                copy_check(call, cudaDeviceSynchronize());
                world_->barrier();
            } else {
                pgas::barrier_all(host_ctx_);
            }
        } catch (const error& e) {
            fail(call, heap_.my_pe, e);
        }
    }

    /// Ends the process naming `call` when a CUDA call of the host side failed.
    void copy_check(const char* call, cudaError_t status) const {
        if (status != cudaSuccess) fail(call, heap_.my_pe, std::string("CUDA: ") + cudaGetErrorString(status));
    }

private:
    template <class Transport>
    static heap_view view(const Transport& transport) {
        return {static_cast<std::byte*>(transport.local_address(0)), transport.heap_bytes(), transport.my_pe(),
                transport.n_pes()};
    }

    device_state state() const { return {filled_magic, heap_, teams_, gpu_ctx_}; }

    // What NVSHMEM_SYMMETRIC_SIZE = asked lets the program allocate: asked rounded up to 2 MiB, plus 2 MiB.
    static constexpr std::uint64_t usable_heap_bytes(std::uint64_t asked) {
        constexpr std::uint64_t granule = std::uint64_t{2} << 20;
        return (asked + granule - 1) / granule * granule + granule;
    }

    // Every translation unit's device state, again (the teams changed).
    void refill() const {
        if (on_gpu_)
            for (fill_function fill : fills_) fill_one(fill, state());
    }

    // Collective over the world (every split): the slots every PE is done with (destroyed, or never a member) go back
    // to pgas::world, in slot order on every PE.
    void free_finished_teams() {
        std::uint64_t everyone = ~std::uint64_t{0};
        for (std::uint64_t mask : world_->channel().allgather_value(done_with_)) everyone &= mask;
        for (int slot = 2; slot < team::max_slots; ++slot) {
            if (!(everyone >> slot & 1u)) continue;
            team t = teams_.splits[slot].n_pes() > 0 ? teams_.splits[slot] : retired_[slot];
            world_->destroy_team(t);
            teams_.splits[slot] = team();
            retired_[slot] = team();
            done_with_ &= ~(std::uint64_t{1} << slot);
            whole_world_ &= ~(std::uint64_t{1} << slot);
        }
    }

    void fill_one(fill_function fill, const device_state& value) const {
        if (const cudaError_t status = fill(value); status != cudaSuccess)
            fail("nvshmem_init", heap_.my_pe,
                 std::string("could not fill a translation unit's device state: ") + cudaGetErrorString(status));
    }

    static int current_device() {
        int device = 0;
        return cudaGetDevice(&device) == cudaSuccess ? device : 0;
    }

    bool want_gpu() const {
        if (fills_.empty()) return false;
        int devices = 0;
        return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    }

    std::mutex mutex_;
    std::vector<fill_function> fills_;
    phase phase_ = phase::before_init;
    int inits_ = 0;
    bool on_gpu_ = false;
    std::optional<world> world_;
    team_table teams_;
    team retired_[team::max_slots]{};  // split teams this PE destroyed whose slots are not freed yet
    std::uint64_t done_with_ = 0;      // bit s: this PE is done with slot s's team (destroyed it, or not a member)
    std::uint64_t whole_world_ = 1;    // bit s: every PE is a member of one of slot s's teams (may be a parent)
    static_assert(team::max_slots <= 64, "one bit per team slot");
    heap_view heap_;
    device::context<host> host_ctx_{};
    device::context<nvlink> gpu_ctx_{};
};

/// The one runtime of the process, shared by every translation unit and shared library (default visibility: the
/// dynamic linker keeps one copy of the function's static). Never destroyed: a program that skips nvshmem_finalize
/// must not tear its world down after CUDA's own teardown at exit.
__attribute__((visibility("default"))) inline runtime& the_runtime() {
    static runtime* const instance = new runtime();
    return *instance;
}

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END
