// pgas::world: boots the PEs, owns the symmetric heap and hands out device contexts.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/core/window.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/bootstrap/node.hpp>
#include <pgas/host/bootstrap/tcp_store.hpp>
#include <pgas/host/env.hpp>
#include <pgas/host/heap/gpu.hpp>
#include <pgas/host/heap/registration.hpp>
#include <pgas/host/heap/shm.hpp>
#include <pgas/host/nvtx.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/window/registry.hpp>
#include <pgas/host/world/options.hpp>
#include <pgas/host/world/state.hpp>
#include <pgas/host/world/teams.hpp>
#include <pgas/transport/host/host.hpp>  // launch_host hands out context<host> (nvcc needs it complete there)

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

PGAS_NAMESPACE_BEGIN

/// The RAII handle of the PEs this process drives. Calls marked collective
/// must be made by every process (or SPMD thread) of the world in the same
/// order with the same arguments; mismatches are reported, not ignored.
///
///   auto w = pgas::world::init_local(4);            // 4 host PEs (host transport)
///   auto buf = w.alloc<int>(1024);                   // same symmetric_ptr on every PE
///   w.launch_host([&](const pgas::device::context<pgas::host>& ctx) { ... });
class world {
public:
    /// n PEs as threads of this process over a host-memory heap (the host
    /// transport): runs anywhere, including CI machines without a GPU.
    ///
    /// Throws errc::invalid_argument for a PE count <= 0 or above the limit, or a heap too small.
    static world init_local(int n_pes, world_options options = {}) { return init_local_host(n_pes, options); }

    /// One process drives these GPUs, one PE each (PE i on devices[i]), over a
    /// CUDA VMM heap that every local GPU maps: the NVLink transport. A device
    /// may appear more than once (PEs sharing a GPU, e.g. multi-PE tests on a
    /// one-GPU machine); their kernels must then run concurrently, on
    /// different non-blocking streams, fit on the GPU together, and be loaded
    /// before they run (CUDA_MODULE_LOADING=EAGER: a lazily loaded kernel's
    /// first launch waits for the GPU to go idle, i.e. for a running peer
    /// that is waiting for this very launch). PEs sharing a GPU also need a
    /// hardware work queue each: unless CUDA_DEVICE_MAX_CONNECTIONS is set,
    /// init_local sets it to 32, which takes effect when this call creates the
    /// GPU's context (a program that used the GPU before sets it itself).
    ///
    /// Throws errc::invalid_argument for an empty list, errc::cuda when a GPU heap cannot be made.
    static world init_local(const std::vector<int>& devices, world_options options = {}) {
        if (devices.empty())
            detail::throw_error(errc::invalid_argument, -1, "world::init_local", "the device list is empty");
        detail::prefer_a_work_queue_per_pe(devices);
        std::vector<int> local(devices.size());
        for (std::size_t i = 0; i < devices.size(); ++i) local[i] = int(i);
        if (options.heap_bytes == 0)
            options.heap_bytes = detail::env_size("PGAS_HEAP_SIZE", detail::gpu_heap_memory::default_bytes);
        return world(std::make_shared<detail::single_bootstrap>(), std::move(local), int(devices.size()), options,
                     detail::gpu_heap_factory(devices));
    }

    /// Collective over the processes of a launch (pgasrun, torchrun, mpirun,
    /// srun; see read_launch_env): one PE per process, PE = launch rank, joined
    /// by the TCP bootstrap. Without a launcher: a world of this one process.
    /// A process that fails or dies during init is an error on every other
    /// within PGAS_BOOTSTRAP_TIMEOUT_MS.
    static world init(world_options options = {}) { return init(read_launch_env(), std::move(options)); }

    /// One process per GPU with the NVLink transport: init() with this
    /// process's PE on GPU `device` (default: the launcher's local rank modulo
    /// the visible GPUs, so processes share a GPU when there are more) and
    /// the node's heaps mapped into each other (CUDA VMM handles passed as fds).
    static world init_gpu(world_options options = {}, int device = -1) {
        return init_gpu(read_launch_env(), std::move(options), device);
    }

    /// The same with the launch spelled out (explicit arguments win over the environment).
    static world init_gpu(const launch_info& launch, world_options options = {}, int device = -1) {
        if (device < 0)
            device =
                detail::default_process_device(launch.local_rank >= 0 ? launch.local_rank : launch.rank, launch.rank);
        if (options.heap_bytes == 0)
            options.heap_bytes = detail::env_size("PGAS_HEAP_SIZE", detail::gpu_heap_memory::default_bytes);
        options.heap = detail::gpu_process_heap_factory(device);
        return init(launch, std::move(options));
    }

    /// The same with the launch spelled out (explicit arguments win over the environment).
    static world init(const launch_info& launch, world_options options = {}) {
        PGAS_NVTX_RANGE("pgas::world::init");
        if (launch.size < 1 || launch.rank < 0 || launch.rank >= launch.size)
            detail::throw_error(errc::invalid_argument, launch.rank, "world::init",
                                "rank " + std::to_string(launch.rank) + " outside a world of " +
                                    std::to_string(launch.size) + " (" + launch.source + ")");
        std::shared_ptr<detail::bootstrap> channel;
        std::shared_ptr<detail::tcp_bootstrap> tcp;
        if (launch.size == 1)
            channel = std::make_shared<detail::single_bootstrap>();
        else
            channel = tcp = std::make_shared<detail::tcp_bootstrap>(launch);
        heap_factory heap = options.heap ? options.heap : heap_factory(&detail::make_shm_heap);
        world w(std::move(channel), {launch.rank}, launch.size, options, std::move(heap));
        if (tcp) detail::watch_peers(*w.state_, *tcp, launch.rank);
        return w;
    }

private:
    static void check_world_size(const char* call, std::int64_t n_pes) {
        if (n_pes > detail::max_world_size)
            detail::throw_error(errc::invalid_argument, -1, call,
                                "PE count " + std::to_string(n_pes) + " is larger than the limit of " +
                                    std::to_string(detail::max_world_size));
    }

    static world init_local_host(int n_pes, world_options options) {
        if (n_pes <= 0)
            detail::throw_error(errc::invalid_argument, -1, "world::init_local",
                                "PE count must be positive, got " + std::to_string(n_pes));
        check_world_size("world::init_local", n_pes);
        std::vector<int> local(static_cast<std::size_t>(n_pes));
        for (int i = 0; i < n_pes; ++i) local[std::size_t(i)] = i;
        return world(std::make_shared<detail::single_bootstrap>(), std::move(local), n_pes, options);
    }

public:
    /// SPMD form of the host transport: n threads, each running body(world&)
    /// with its own single-PE world, as n processes would. Collective calls
    /// (alloc, free, split, barrier) really are collective here. A PE that
    /// throws stops the others' waits at once (host collectives and device
    /// waits end in errc::peer_failed naming it); every PE's heap lives until
    /// all threads have ended. Rethrows the root-cause exception after all
    /// threads end. Host collectives are bounded by PGAS_BOOTSTRAP_TIMEOUT_MS.
    template <class Body>
    requires std::invocable<Body&, world&>
    static void run_threads(int n_pes, Body&& body, world_options options = {}) {
        if (n_pes <= 0)
            detail::throw_error(errc::invalid_argument, -1, "world::run_threads",
                                "PE count must be positive, got " + std::to_string(n_pes));
        check_world_size("world::run_threads", n_pes);
        auto rendezvous = std::make_shared<detail::thread_bootstrap::shared>(n_pes, detail::env_bootstrap_timeout());
        // Destroyed after every thread has joined: no PE frees memory a peer still reaches.
        std::vector<std::unique_ptr<world>> worlds(static_cast<std::size_t>(n_pes));
        detail::run_each(n_pes, [&](int pe) {
            try {
                worlds[std::size_t(pe)] = std::make_unique<world>(
                    std::make_shared<detail::thread_bootstrap>(rendezvous, pe), std::vector<int>{pe}, n_pes, options);
                body(*worlds[std::size_t(pe)]);
            } catch (...) {
                rendezvous->fail(pe);
                throw;
            }
        });
    }

    /// Moves the handle (the PEs stay up).
    world(world&&) noexcept = default;
    /// Moves the handle.
    world& operator=(world&&) noexcept = default;
    /// Finalizes this process's PEs: frees the heap and closes the bootstrap.
    ~world() = default;

    /// PEs in the world.
    int n_pes() const { return state_->n_pes; }
    /// PEs this process drives (1 under a launcher, n for init_local).
    int n_local_pes() const { return int(state_->local_pes.size()); }
    /// World PE of local PE `local` (0 .. n_local_pes()-1).
    ///
    /// Throws errc::pe_out_of_range for `local` outside [0, n_local_pes()).
    int local_pe(int local = 0) const { return state_->local_pes.at(checked_local("world::local_pe", local)); }
    /// The PE of a one-PE-per-process world.
    int my_pe() const { return local_pe(0); }
    /// Bytes of each PE's symmetric heap (pgas reserves the first part for its own counters).
    std::uint64_t heap_bytes() const { return state_->heap_bytes; }
    /// Bytes of the heap not allocated now.
    std::uint64_t heap_free_bytes() const { return state_->allocator.free_bytes(); }
    /// The largest block alloc could return now.
    std::uint64_t heap_largest_free_block() const { return state_->allocator.largest_free_block(); }

    /// Collective: count elements of T on every PE, zero-filled, aligned to at
    /// least 256 bytes. Every PE receives the same symmetric_ptr.
    ///
    /// Compile time: T must be trivially copyable. Throws errc::invalid_argument for count <= 0, errc::heap_exhausted
    /// (naming the free bytes; raise PGAS_HEAP_SIZE), errc::collective_mismatch when PEs ask for different sizes.
    template <class T, std::integral Count>
    symmetric_ptr<T> alloc(Count count) {
        return allocate<T>("alloc", count, 0);
    }

    /// Collective: alloc with an explicit alignment (as nvshmem_align / shmem_align): count elements of T on every
    /// PE, zero-filled, at a heap offset that is a multiple of `alignment`. Every heap (GPU, host, shared between
    /// processes) starts on a 2 MiB boundary, so each PE's copy is aligned to `alignment` in memory too (ctx.local,
    /// ctx.peer, world::device_address). Alignments below 256 bytes give alloc's 256.
    ///
    /// Compile time: T must be trivially copyable. Throws errc::invalid_argument for count <= 0 or an alignment that
    /// is not a power of two, is below alignof(T) or above 2 MiB (naming the call, the PE and the value),
    /// errc::heap_exhausted, errc::collective_mismatch when PEs ask for different sizes or alignments.
    template <class T, std::integral Count, std::integral Alignment>
    symmetric_ptr<T> alloc(Count count, Alignment alignment) {
        if (alignment <= 0 || (std::uint64_t(alignment) & (std::uint64_t(alignment) - 1)) != 0 ||
            std::uint64_t(alignment) < alignof(T) || std::uint64_t(alignment) > detail::heap_base_alignment)
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), "alloc(count, alignment)",
                                "alignment must be a power of two in [alignof(T) = " + std::to_string(alignof(T)) +
                                    ", " + std::to_string(detail::heap_base_alignment) + " (the heap base's)], got " +
                                    std::to_string(alignment));
        return allocate<T>("alloc(count, alignment)", count, std::uint64_t(alignment));
    }

    /// Collective: returns a block from alloc to the heap.
    ///
    /// Throws errc::not_symmetric for a pointer that is not the start of a live allocation (double free),
    /// errc::collective_mismatch when PEs free different blocks.
    template <class T>
    void free(symmetric_ptr<T> p) {
        PGAS_NVTX_RANGE("pgas::world::free");
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::free);
        agree("free", "heap offset", p.offset());
        if (!p || !state_->allocator.deallocate(p.offset()))
            detail::throw_error(errc::not_symmetric, my_pe_or_all(), "free",
                                "heap offset " + offset_text(p.offset()) +
                                    " is not the start of a live allocation (double free or foreign pointer)");
    }

    /// Collective: registers a buffer the caller allocated (on a GPU heap the PE's GPU memory, cudaMalloc'd or
    /// cuMemCreate'd; host memory of thread PEs on the host transport) as a window every PE may put to, get from and
    /// update atomically in kernels (device/window.hpp), as nvshmemx_buffer_register and ncclCommWindowRegister:
    /// same count everywhere, nothing copied. Which memory works where, and the errors (naming call, PE and value, on
    /// every PE): docs/memory-model.md, "Your own buffers". The buffer must outlive the window (release_window).
    template <class T, std::integral Count>
    window<T> register_window(T* buffer, Count count) {
        if (n_local_pes() != 1)
            detail::throw_error(errc::invalid_argument, -1, "register_window",
                                "this world drives " + std::to_string(n_local_pes()) +
                                    " PEs: pass one buffer per local PE (register_window(std::vector<T*>, count))");
        return windows().register_buffers(std::vector<T*>{buffer}, count);
    }

    /// register_window with one buffer per local PE (buffers[i] is local PE i's).
    template <class T, std::integral Count>
    window<T> register_window(const std::vector<T*>& buffers, Count count) {
        if (buffers.size() != std::size_t(n_local_pes()))
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), "register_window",
                                "one buffer per local PE: got " + std::to_string(buffers.size()) + " for " +
                                    std::to_string(n_local_pes()) + " local PEs");
        return windows().register_buffers(buffers, count);
    }

    /// Collective: releases a window made by register_window (or a handle derived from it): unmaps the peers'
    /// buffers and frees its table; the buffers stay the caller's, and its GPU work must be complete (as for free).
    /// A copy kept past this names nothing (errc::transport_unavailable under PGAS_CHECKS). Throws
    /// errc::invalid_argument for a window not live in this world (naming its table offset and id),
    /// errc::collective_mismatch when PEs release different windows.
    template <class T>
    void release_window(window<T> w) {
        PGAS_NVTX_RANGE("pgas::world::release_window");
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::release_window);
        agree("release_window", "window table offset", w.table_offset());
        agree("release_window", "window id", w.id());
        if (!windows().live(w.table_offset(), w.id()))
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), "release_window",
                                "window (table offset " + offset_text(w.table_offset()) + ", id " +
                                    std::to_string(w.id()) +
                                    ") is not a live window of this world (released twice, never registered, or "
                                    "from another world)");
        windows().release(w.table_offset(), w.id());
    }

    /// Windows registered and not yet released.
    int live_windows() const { return windows().size(); }

    /// Collective, GPU heaps: maps each PE's buffer (a cuMemCreate mapping's start, mapped whole) into the heap at
    /// one offset, as nvshmemx_buffer_register_symmetric: heap memory to every op in contexts made after the call
    /// (docs/memory-model.md). Throws on every PE, naming PE and value: invalid_argument (not such a mapping),
    /// collective_mismatch, heap_exhausted (area full), transport_unavailable (host heap). Must outlive it.
    template <class T, std::integral Count>
    symmetric_ptr<T> register_symmetric(T* buffer, Count count) {
        return register_symmetric(std::vector<T*>{buffer}, count);
    }
    /// register_symmetric with one buffer per local PE (buffers[i] is local PE i's).
    template <class T, std::integral Count>
    symmetric_ptr<T> register_symmetric(const std::vector<T*>& buffers, Count count) {
        detail::registration_parts parts = registration_parts("register_symmetric");
        if (buffers.size() != parts.local_pes.size())
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), "register_symmetric",
                                "one buffer per local PE: got " + std::to_string(buffers.size()) + " for " +
                                    std::to_string(parts.local_pes.size()) + " local PEs");
        if (count <= 0 || std::uint64_t(count) > detail::gpu_heap_memory::registration_space / sizeof(T))
            detail::throw_error(
                errc::invalid_argument, my_pe_or_all(), "register_symmetric",
                "element count must be in [1, registration area / element size], got " + std::to_string(count));
        std::vector<std::byte*> bytes_of;
        for (T* b : buffers) bytes_of.push_back(reinterpret_cast<std::byte*>(const_cast<std::remove_cv_t<T>*>(b)));
        return symmetric_ptr<T>(detail::offset_tag{},
                                detail::register_symmetric(parts, bytes_of, std::uint64_t(count) * sizeof(T)));
    }

    /// Collective: undoes register_symmetric once every PE's GPU work has completed; the buffers stay the caller's.
    /// Throws errc::invalid_argument for a pointer that register_symmetric did not return (or already undone).
    template <class T>
    void unregister_symmetric(symmetric_ptr<T> p) {
        const detail::registration_parts parts = registration_parts("unregister_symmetric");
        agree("unregister_symmetric", "heap offset", p.offset());
        if (!parts.gpu->registrations().starts_at(p.offset()))
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), "unregister_symmetric",
                                "heap offset " + offset_text(p.offset()) + " is no live register_symmetric buffer");
        detail::unregister_symmetric(parts, p.offset());
    }

    /// Collective: `observer` learns of every window from now on (world::register_window and release_window call
    /// it), and at once of the windows live now, whose tables are rewritten with what it filled in; a domain's
    /// constructor calls it (host/libfabric/domain.hpp, host/ibgda/domain.hpp). The observer must detach
    /// (detach_window_observer) before it is destroyed.
    void attach_window_observer(window_observer& observer) { windows().attach(observer); }

    /// Local: `observer` hears of no more windows (a domain's destructor).
    void detach_window_observer(window_observer& observer) { windows().detach(observer); }

    /// The symmetric name of a raw address of local PE `local`'s heap; a
    /// pointer outside any live allocation is an error.
    template <class T>
    symmetric_ptr<T> symmetric(T* address, int local = 0) const {
        auto* base = static_cast<std::byte*>(host_address(0, checked_local("world::symmetric", local)));
        auto* raw = reinterpret_cast<std::byte*>(const_cast<std::remove_cv_t<T>*>(address));
        const std::uint64_t offset = std::uint64_t(raw - base);
        if (raw < base || !state_->allocator.contains(offset, sizeof(T)))
            detail::throw_error(errc::not_symmetric, local_pe(local), "world::symmetric",
                                "address " + std::to_string(reinterpret_cast<std::uintptr_t>(address)) +
                                    " is not inside a live allocation of the symmetric heap");
        return symmetric_ptr<T>(detail::offset_tag{}, offset);
    }

    /// Host access to local PE `local`'s copy (host heaps only).
    ///
    /// Throws errc::not_symmetric outside a live allocation, errc::invalid_argument on a GPU heap.
    template <class T>
    T* local(symmetric_ptr<T> p, int local = 0) const {
        check_live("world::local", p.offset(), sizeof(T), local);
        if (!state_->memory->host_accessible())
            detail::throw_error(errc::invalid_argument, local_pe(local), "world::local",
                                "this world's heap is GPU memory: read it in a kernel or copy it with cudaMemcpy "
                                "from world::device_address");
        return static_cast<T*>(host_address(p.offset(), checked_local("world::local", local)));
    }

    /// Address of local PE `local`'s copy in this address space, whatever the
    /// memory (for cudaMemcpy on GPU heaps).
    ///
    /// Throws errc::not_symmetric outside a live allocation.
    template <class T>
    T* device_address(symmetric_ptr<T> p, int local = 0) const {
        check_live("world::device_address", p.offset(), sizeof(T), local);
        return static_cast<T*>(host_address(p.offset(), checked_local("world::device_address", local)));
    }

    /// The team of every PE, bound to local PE `local`.
    team team_world(int local = 0) const { return team::world_team(local_pe(local), n_pes()); }

    /// Collective: the team of parent members start, start+stride, ... (size
    /// of them), indices in parent. Like nvshmem_team_split_strided.
    ///
    /// Throws errc::pe_out_of_range for members outside the parent, errc::invalid_argument when the team slots
    /// (team::max_slots, teams alive at once) are used up or the parent was destroyed, errc::collective_mismatch when
    /// PEs pass different arguments.
    team split_strided(const team& parent, int start, int stride, int size) {
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::split_strided);
        return detail::split_strided_team(*state_, my_pe_or_all(), parent, start, stride, size);
    }

    /// Collective: views the parent as rows of xrange PEs. Returns {x, y}: x is
    /// the caller's row (consecutive members), y its column. Like nvshmem_team_split_2d.
    std::pair<team, team> split_2d(const team& parent, int xrange) {
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::split_2d);
        return detail::split_2d_teams(*state_, my_pe_or_all(), parent, xrange);
    }

    /// Collective (every PE, member or not, as for the split that made it): releases a team made by split_strided
    /// or split_2d (each team of a split_2d pair on its own) and frees its sync slot, so that team::max_slots bounds
    /// the teams alive at once, not the teams ever created (as nvshmem_team_destroy). The slot's barrier counters and
    /// collective scratch are cleared on every PE before any PE returns, and `t` becomes an empty team.
    ///
    /// The caller must have completed every kernel and stream operation that uses the team (as for free). Kept as
    /// an explicit call, not RAII: a team is a trivially copyable value handed to kernels by copy, so no copy could
    /// own the slot; the world's team values stay what NVSHMEM's team handles are.
    ///
    /// Throws errc::invalid_argument for the world or node team, a team that was already destroyed (also through
    /// another copy, even after its slot went to a new team: the slot's generation differs) or one from another
    /// world; errc::collective_mismatch when PEs destroy different teams. Device ops cannot tell a destroyed team's
    /// copy from a live one; on the emptied `t` they report the caller as not a member.
    void destroy_team(team& t) {
        PGAS_NVTX_RANGE("pgas::world::destroy_team");
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::destroy_team);
        detail::destroy_split_team(*state_, my_pe_or_all(), t);
    }

    /// Collective: the node team, the PEs that reach this one by load/store (NCCL's LSA team): on the NVLink
    /// transport the PEs of this node (those of one process, or of the node's processes under a launcher), on the
    /// host transport the PEs of this process or, between processes, of this host; under route<Near, Far> it is
    /// the near group that route_node_pes(w) gives. PGAS_NODE_SIZE=k makes virtual nodes of k consecutive world PEs
    /// (as for route). Every call returns the same team (slot 1, shared by all nodes' teams), bound to local PE
    /// `local`. Like nvshmem's NVSHMEMX_TEAM_NODE.
    ///
    /// Throws errc::invalid_argument when a node's PEs are not consecutive world PEs or PGAS_NODE_SIZE is malformed
    /// or splits this process's PEs, errc::pe_out_of_range for a bad `local`.
    team team_node(int local = 0) {
        PGAS_NVTX_RANGE("pgas::world::team_node");
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::team_node);
        const auto [first, count] = node_range();
        return team::world_team(local_pe(local), n_pes()).sub_team(first, 1, count, node_slot);
    }

    /// Collective host-side barrier between the processes of the world.
    ///
    /// Bounded by PGAS_BOOTSTRAP_TIMEOUT_MS between processes; a failed peer is errc::peer_failed.
    void barrier() {
        detail::bootstrap::call_scope call(*state_->bootstrap, detail::host_call::barrier);
        state_->bootstrap->barrier();
    }

    /// Collective: every process of the world passes the same `mine`; throws errc::collective_mismatch naming
    /// `call`, `what`, this value and the first PE whose value differs. For a library's own collective calls
    /// (pgas::ep::buffer agrees on its shape with it).
    void agree(const char* call, const char* what, std::uint64_t mine) {
        detail::agree_all(*state_->bootstrap, my_pe_or_all(), call, what, mine);
    }

    /// The context a kernel (or host PE thread) of local PE `local` receives,
    /// for the transports the world builds alone (nvlink, host; see below).
    template <class Transport>
    device::context<Transport> context(int local = 0) const;

    /// Runs body(ctx) once per local PE, each on its own thread with that PE's
    /// context<host_transport>, and joins them: the host transport's kernel
    /// launch. When one PE throws, the others' waits stop with errc::peer_failed
    /// and the first PE's exception is rethrown.
    template <class Body>
    requires std::invocable < Body&, const device::context<host>
    & > void launch_host(Body&& body) {
        // A failure recorded before this launch (a peer process that died) stays:
        // the watcher reports it only once. Only one process's threads reset it.
        if (state_->bootstrap->size() == 1) state_->abort->store(0);
        detail::run_each(n_local_pes(), [&](int local) {
            try {
                body(context<host>(local));
            } catch (...) {
                abort_waits(local_pe(local));
                throw;
            }
        });
    }

    // --- for transports and launchers built on a world -----------------------

    /// How a heap backend is made (world_options::heap); for transports and launchers.
    using heap_factory = detail::heap_factory;

    /// Assembles a world from its parts: the bootstrap connecting this process
    /// to the others, the world PEs it drives, and the heap backend. The
    /// init_* functions and launchers call this; programs call those.
    world(std::shared_ptr<detail::bootstrap> channel, std::vector<int> local_pes, int n_pes, world_options options,
          heap_factory make_heap = &make_host_heap)
        : state_(std::make_unique<state_t>()) {
        PGAS_NVTX_RANGE("pgas::world::init heap");
        state_->open(std::move(channel), std::move(local_pes), n_pes, options, make_heap,
                     [state = state_.get()](const char* call, std::uint64_t count, std::size_t element) {
                         state->heap_exhausted(call, count, element);  // the state outlives moves of the handle
                     });
    }

    /// Channels per peer chosen at creation (world_options::channels, PGAS_CHANNELS; default 1): those of the
    /// nvlink and host contexts, and the default of the domains built on this world.
    int channels() const { return state_->channels; }

    /// The bootstrap channel between this world's processes (collective calls).
    detail::bootstrap& channel() const { return *state_->bootstrap; }
    /// The heap backend (bases of every PE as seen from a local PE).
    detail::heap_memory& heap_memory() const { return *state_->memory; }
    /// Timeout and peer-failure flag every context of this world carries.
    /// On GPU heaps the flag is the mapped pinned one, so kernels of any
    /// transport (nvlink, libfabric proxy, ibgda) can poll it.
    device::runtime_state runtime() const { return state_->runtime(); }
    /// Raises the peer-failure flag: every wait of this process's PEs stops
    /// with errc::peer_failed naming world PE `failed_pe`.
    void abort_waits(int failed_pe) { state_->raise_abort(failed_pe); }

    /// CUDA device of local PE `local`, or -1 when the heap is host memory.
    int device_of(int local = 0) const {
        auto* gpu = dynamic_cast<detail::gpu_heap_memory*>(state_->memory.get());
        return gpu ? gpu->device_of(checked_local("world::device_of", local)) : -1;
    }

    /// The host-memory heap of one process (the default heap_factory).
    static std::unique_ptr<detail::heap_memory> make_host_heap(const detail::heap_request& request) {
        return std::make_unique<detail::host_heap_memory>(request);
    }

private:
    using state_t = detail::world_state;
    static constexpr int node_slot = detail::team_slots::node_slot;

    // alloc's body; alignment 0: alloc's default (256 bytes, or alignof(T) when larger).
    template <class T, class Count>
    symmetric_ptr<T> allocate(const char* call, Count count, std::uint64_t alignment) {
        static_assert(std::is_trivially_copyable_v<T>, "pgas: symmetric objects must be trivially copyable");
        PGAS_NVTX_RANGE("pgas::world::alloc");
        if (count <= 0)
            detail::throw_error(errc::invalid_argument, my_pe_or_all(), call,
                                "element count must be positive, got " + std::to_string(count));
        if (std::uint64_t(count) > state_->heap_bytes / sizeof(T))
            state_->heap_exhausted(call, std::uint64_t(count), sizeof(T));
        const std::uint64_t bytes = std::uint64_t(count) * sizeof(T);
        detail::bootstrap::call_scope scope(*state_->bootstrap, detail::host_call::alloc);
        agree(call, "bytes", bytes);
        agree(call, "alignment", alignment);  // also when one PE asks for the default and another for an alignment
        if (alignment < alignof(T)) alignment = alignof(T);
        if (alignment < detail::heap_allocator::min_granule) alignment = detail::heap_allocator::min_granule;
        auto offset = state_->allocator.allocate(bytes, alignment);
        if (!offset) state_->heap_exhausted(call, std::uint64_t(count), sizeof(T));
        for (int local = 0; local < n_local_pes(); ++local) state_->memory->zero(local, *offset, bytes);
        state_->bootstrap->barrier();  // nobody writes into the block before every PE cleared it
        return symmetric_ptr<T>(detail::offset_tag{}, *offset);
    }

    void check_live(const char* call, std::uint64_t offset, std::uint64_t bytes, int local) const {
        if (!state_->allocator.contains(offset, bytes) && !state_->registered(offset, bytes))
            detail::throw_error(errc::not_symmetric, local_pe(checked_local(call, local)), call,
                                "heap offset " + offset_text(offset) + " is not inside a live allocation");
    }

    int checked_local(const char* call, int local) const {
        if (local < 0 || local >= n_local_pes())
            detail::throw_error(
                errc::pe_out_of_range, -1, call,
                "local PE index " + std::to_string(local) + " outside [0, " + std::to_string(n_local_pes()) + ")");
        return local;
    }

    // The node of local PE 0: PGAS_NODE_SIZE's virtual node, else the PEs of this node (detail::node_pes), which
    // must be consecutive world PEs. One process's PEs are always on one node.
    std::pair<int, int> node_range() {
        std::vector<int> pes;
        for (int i = 0; i < n_local_pes(); ++i) pes.push_back(local_pe(i));
        return detail::node_pes(*state_->bootstrap, pes, n_pes(), "team_node");
    }

    void* host_address(std::uint64_t offset, int local) const { return state_->memory->local_base(local) + offset; }

    // -1 ("all local PEs") when this handle drives several PEs.
    int my_pe_or_all() const { return my_pe_or_all(*state_); }
    static int my_pe_or_all(const state_t& s) { return s.local_pes.size() == 1 ? s.local_pes[0] : -1; }

    detail::window_registry& windows() const { return *state_->windows; }

    detail::registration_parts registration_parts(const char* call) const {
        auto* gpu = dynamic_cast<detail::gpu_heap_memory*>(state_->memory.get());
        if (gpu == nullptr)
            detail::throw_error(errc::transport_unavailable, my_pe_or_all(), call,
                                "needs a GPU heap (CUDA VMM): on a host heap use alloc, or register_window");
        return {state_->bootstrap.get(), gpu, state_->local_pes};
    }

    static std::string offset_text(std::uint64_t offset) {
        return offset == detail::null_offset ? std::string("null") : std::to_string(offset);
    }

    std::unique_ptr<state_t> state_;
};

/// Every transport's context comes from its builder (host/transport_builder.hpp); the world hands out those of
/// the transports it builds alone (nvlink, host), whose builders hold nothing.
template <class Transport>
device::context<Transport> world::context(int local) const {
    static_assert(detail::diagnose_transport_builder<Transport>());
    if constexpr (builder_clause::declared<Transport>) {
        using builder = transport_builder_t<Transport>;
        static_assert(builder_clause::world_built<builder>,
                      "pgas: world::context<T> hands out the contexts of the transports the world builds alone "
                      "(nvlink, host); build this one with its builder, transport_builder_t<T>(world, options) "
                      "(e.g. libfabric_domain, ibgda_domain), and take the builder's context(local)");
        if constexpr (builder_clause::world_built<builder>)
            return builder(*this).context(checked_local("world::context", local));
        else
            return {};
    } else {
        return {};
    }
}

PGAS_NAMESPACE_END
