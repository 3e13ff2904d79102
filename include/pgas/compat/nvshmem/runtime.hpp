// The process-wide side of the NVSHMEM compatibility layer: one world per process, the registry of every translation
// unit's device state, and how host calls report misuse.
#pragma once

#include <pgas/compat/nvshmem/types.hpp>
#include <pgas/pgas.hpp>

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

/// What the device calls of one translation unit read from its own `__constant__` copy (device_state.hpp).
struct device_state {
    std::uint32_t filled;         ///< filled_magic while the world is up; anything else: not initialised
    heap_view heap;               ///< this PE's heap in the GPU's address space
    team node;                    ///< NVSHMEMX_TEAM_NODE / NVSHMEM_TEAM_SHARED
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

    /// nvshmem_init: a world of one PE per process from the launcher's environment, on this process's GPU (the
    /// launcher's local rank modulo the visible GPUs) when a GPU is visible and a CUDA translation unit registered
    /// device state (a program built by a plain C++ compiler launches no kernels), else on the host transport.
    void init(const char* call) {
        std::lock_guard lock(mutex_);
        if (phase_ == phase::finalized)
            fail(call, -1, "called after nvshmem_finalize (re-initialisation is not supported)");
        if (phase_ == phase::running) {
            ++inits_;  // NVSHMEM allows nested calls, each matched by nvshmem_finalize
            return;
        }
        try {
            world_.emplace(want_gpu() ? world::init_gpu() : world::init());
            node_ = world_->team_node();
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
    /// NVSHMEMX_TEAM_NODE / NVSHMEM_TEAM_SHARED.
    const team& node() const { return node_; }

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

    device_state state() const { return {filled_magic, heap_, node_, gpu_ctx_}; }

    void fill_one(fill_function fill, const device_state& value) const {
        if (const cudaError_t status = fill(value); status != cudaSuccess)
            fail("nvshmem_init", heap_.my_pe,
                 std::string("could not fill a translation unit's device state: ") + cudaGetErrorString(status));
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
    team node_;
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
