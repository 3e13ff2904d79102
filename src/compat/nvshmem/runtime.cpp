// The host side of pgas::nvshmem's runtime (nvshmem_init, finalize, malloc/free, team splits, the unique id), compiled
// once into the pgas_nvshmem library: every translation unit that includes <nvshmem.h> then parses the device layer
// only, as NVSHMEM programs compile against NVSHMEM's declarations and link libnvshmem_host.
#include <pgas/compat/nvshmem/runtime.hpp>
#include <pgas/pgas.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <netinet/in.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace nvshmem_compat {

/// What only the host side touches: the world, the registered translation units, and which split-team slots every PE
/// is done with.
struct runtime::world_state {
    std::mutex mutex;
    std::vector<fill_function> fills;
    int inits = 0;
    std::optional<world> the_world;
    team retired[team::max_slots]{};  // split teams this PE destroyed whose slots are not freed yet
    std::uint64_t done_with = 0;      // bit s: this PE is done with slot s's team (destroyed it, or not a member)
    std::uint64_t whole_world = 1;    // bit s: every PE is a member of one of slot s's teams (may be a parent)
    struct local_buffer {
        std::uintptr_t begin, end;
        bool pinned_here;  // cudaHostRegister'ed by register_buffer: unpinned by unregister_buffer
    };
    std::map<std::uintptr_t, local_buffer> buffers;  // by begin
    static_assert(team::max_slots <= 64, "one bit per team slot");
};

namespace {

// What NVSHMEM_SYMMETRIC_SIZE = asked lets the program allocate: asked rounded up to 2 MiB, plus 2 MiB.
constexpr std::uint64_t usable_heap_bytes(std::uint64_t asked) {
    constexpr std::uint64_t granule = std::uint64_t{2} << 20;
    return (asked + granule - 1) / granule * granule + granule;
}

template <class Transport>
heap_view view(const Transport& transport) {
    return {static_cast<std::byte*>(transport.local_address(0)), transport.heap_bytes(), transport.my_pe(),
            transport.n_pes()};
}

int current_device() {
    int device = 0;
    return cudaGetDevice(&device) == cudaSuccess ? device : 0;
}

// The GPU the program made current before nvshmem_init (cudaSetDevice binds its primary context to the thread), or
// -1 when it has chosen none: NVSHMEM puts a PE on the device current at init, so only a program that chose none gets
// pgas's choice. Resolving the driver's entry points through cudart binds no context (seen on an H100), and the
// runtime's current device is the bound context's. Not cuCtxGetDevice: asked for at CUDA 13's ABI, it resolves to
// the form that takes the context as a second argument (a one-argument call crashed on the H100).
int device_chosen_by_program() {
    CUcontext context = nullptr;
    if (detail::driver().cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return -1;
    return current_device();
}

// nvshmemx_init_attr's args.cuda_device_id where the attributes began as NVSHMEMX_INIT_ATTR_INITIALIZER (else the
// field may be garbage), or -1; a GPU this process cannot see ends it, naming the value.
int requested_device(const char* call, const nvshmemx_init_attr_t* attributes) {
    if (!attributes || attributes->args.version != PGAS_NVSHMEM_INIT_ARGS_V2 || attributes->args.cuda_device_id < 0)
        return -1;
    const int wanted = attributes->args.cuda_device_id;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || wanted >= devices)
        fail(call, -1,
             "attr->args.cuda_device_id " + std::to_string(wanted) + " is not a GPU of this process (it sees " +
                 std::to_string(devices) + ")");
    return wanted;
}

// The process's own MPI, found with dlsym (null members where it has none): MPI_Comm_rank and MPI_Comm_size.
struct process_mpi {
    void* rank_of = dlsym(RTLD_DEFAULT, "MPI_Comm_rank");
    void* size_of = dlsym(RTLD_DEFAULT, "MPI_Comm_size");

    explicit operator bool() const { return rank_of && size_of; }

    // The rank and size of the communicator at `comm` (the address of an MPI_Comm); false when MPI fails. An
    // MPI_Comm is a pointer in Open MPI's ABI and an int in MPICH's and its derivatives' (Intel MPI, MVAPICH, Cray
    // MPICH); Open MPI's world communicator object tells which.
    bool rank_and_size(const void* comm, int& rank, int& size) const {
        const auto ask = [&](auto handle) {
            using query = int (*)(decltype(handle), int*);
            return reinterpret_cast<query>(rank_of)(handle, &rank) == 0 &&
                   reinterpret_cast<query>(size_of)(handle, &size) == 0;
        };
        if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world")) return ask(*static_cast<void* const*>(comm));
        return ask(*static_cast<const int*>(comm));
    }
};

bool want_gpu(const std::vector<fill_function>& fills) {
    if (fills.empty()) return false;
    int devices = 0;
    return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

void fill_one(fill_function fill, const device_state& value, int pe) {
    if (const cudaError_t status = fill(value); status != cudaSuccess)
        fail("nvshmem_init", pe,
             std::string("could not fill a translation unit's device state: ") + cudaGetErrorString(status));
}

// The launch a unique id and nvshmemx_set_attr_uniqueid_args describe; a malformed id or rank ends the process,
// saying what is wrong.
launch_info uniqueid_launch(const char* call, const nvshmemx_init_attr_t& attributes) {
    const auto& args = attributes.args.uid_args;
    if (!args.id)
        fail(call, args.myrank, "no unique id in the attributes (call nvshmemx_set_attr_uniqueid_args first)");
    if (args.nranks < 1 || args.myrank < 0 || args.myrank >= args.nranks)
        fail(call, args.myrank,
             "the unique id's rank " + std::to_string(args.myrank) + " is outside a world of " +
                 std::to_string(args.nranks) + " (nvshmemx_set_attr_uniqueid_args)");
    char host[128] = {}, token[128] = {};
    int port = 0;
    const std::string text(args.id->internal, strnlen(args.id->internal, sizeof args.id->internal));
    if (args.id->version != 1 || std::sscanf(text.c_str(), "pgas-uid %127s %d %127s", host, &port, token) != 3 ||
        port <= 0 || port > 65535)
        fail(call, args.myrank,
             "the unique id was not made by nvshmemx_get_uniqueid (pass the id rank 0 made to every rank): '" + text +
                 "'");
    launch_info launch;
    launch.rank = args.myrank;
    launch.size = args.nranks;
    launch.root_host = host;
    launch.root_port = port;
    launch.token = token;
    launch.bootstrap_timeout = read_launch_env().bootstrap_timeout;
    launch.source = "nvshmemx_init_attr (unique id)";
    return launch;
}

// Collective, at init: NVSHMEMX_TEAM_SAME_MYPE_NODE, the column of a split_2d of the world into rows of one node's
// size (its own sync slot; the rows, the node teams again, are released at once). Where the nodes are not all of one
// size and of consecutive PEs, the empty team (the handle then reports it).
team same_mype_node_team(world& w, const team& node) {
    const std::uint64_t mine = std::uint64_t(node.n_pes()) << 32 | std::uint32_t(node.start() % node.n_pes());
    bool regular = node.stride() == 1;
    for (std::uint64_t other : w.channel().allgather_value(regular ? mine : ~std::uint64_t{0}))
        regular = regular && other == (std::uint64_t(node.n_pes()) << 32);
    if (!regular) return team();
    auto [rows, columns] = w.split_2d(w.team_world(), node.n_pes());
    w.destroy_team(rows);
    return columns;
}

}  // namespace

runtime::runtime() : world_(new world_state()) {}

runtime& the_runtime() {
    static runtime* const instance = new runtime();
    return *instance;
}

void runtime::add(fill_function fill) {
    std::lock_guard lock(world_->mutex);
    world_->fills.push_back(fill);
    if (phase_ == phase::running && on_gpu_) fill_one(fill, {filled_magic, heap_, teams_, gpu_ctx_}, heap_.my_pe);
}

void runtime::remove(fill_function fill) {
    std::lock_guard lock(world_->mutex);
    std::erase(world_->fills, fill);
}

void runtime::init(const char* call, const nvshmemx_init_attr_t* attributes) { init_from(call, nullptr, attributes); }

int runtime::init_with_mpi_world(const char* call, const nvshmemx_init_attr_t& attributes) {
    const process_mpi mpi;
    if (!mpi) {
        std::fprintf(
            stderr,
            "pgas: %s: NVSHMEMX_INIT_WITH_MPI_COMM in a process without MPI (MPI_Comm_rank not found); nothing "
            "initialised\n",
            call);
        return NVSHMEMX_ERROR_NOT_SUPPORTED;
    }
    int rank = -1, size = 0;
    if (!mpi.rank_and_size(mpi_comm_of(call, attributes), rank, size))
        fail(call, -1, "MPI_Comm_rank or MPI_Comm_size of attr->mpi_comm failed");
    launch_info launch;
    try {
        launch = read_launch_env();
    } catch (const error& e) {
        fail(call, rank, e);
    }
    if (launch.rank != rank || launch.size != size)
        fail(call, rank,
             "the communicator's rank " + std::to_string(rank) + " of " + std::to_string(size) + " is not the " +
                 launch.source + " launch's rank " + std::to_string(launch.rank) + " of " +
                 std::to_string(launch.size) +
                 ": a communicator other than MPI_COMM_WORLD needs <mpi.h> included before <nvshmem.h> in the "
                 "translation unit that calls nvshmemx_init_attr");
    init_from(call, nullptr, &attributes);
    return NVSHMEMX_SUCCESS;
}

void runtime::init_with_uniqueid(const char* call, const nvshmemx_init_attr_t& attributes, int node_rank) {
    launch_info launch = uniqueid_launch(call, attributes);
    launch.local_rank = node_rank;
    init_from(call, &launch, &attributes);
}

// Both inits: a world from the launcher's environment, or (launch) a unique id's rendezvous; on a GPU, the one the
// attributes name, else the program's, else the local rank's (see the choice below).
void runtime::init_from(const char* call, const launch_info* launch, const nvshmemx_init_attr_t* attributes) {
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    if (phase_ == phase::finalized)
        fail(call, -1, "called after nvshmem_finalize (re-initialisation is not supported)");
    if (phase_ == phase::running) {
        ++s.inits;  // NVSHMEM allows nested calls, each matched by nvshmem_finalize
        return;
    }
    try {
        world_options options;
        // NVSHMEM's size is a floor on what the program may allocate ("at least as large"): programs such as
        // NVSHMEM's perftests allocate exactly that size after a few small buffers, so the usable part is the size
        // rounded up to 2 MiB plus 2 MiB; pgas's reserved area comes on top
        if (const std::uint64_t asked = detail::env_size("NVSHMEM_SYMMETRIC_SIZE", 0); asked != 0)
            options.heap_bytes = usable_heap_bytes(asked) + detail::heap_layout::user_offset;
        if (want_gpu(s.fills)) {
            // The attributes' cuda_device_id, else the program's GPU if it chose one, else the local rank's modulo
            // the visible GPUs (the launcher's, or the MPI communicator's node rank); a unique id carries no local
            // rank: its current device
            int device = requested_device(call, attributes);
            if (device < 0) device = launch && launch->local_rank < 0 ? current_device() : device_chosen_by_program();
            s.the_world.emplace(launch ? world::init_gpu(*launch, options, device) : world::init_gpu(options, device));
        } else
            s.the_world.emplace(launch ? world::init(*launch, options) : world::init(options));
        teams_ = team_table{};
        teams_.node = s.the_world->team_node();
        teams_.same_mype_node = same_mype_node_team(*s.the_world, teams_.node);
        s.done_with = 0;
        s.whole_world = 1u | (teams_.node.n_pes() == s.the_world->n_pes() ? 2u : 0u);
        if (teams_.same_mype_node.n_pes() > 0) s.whole_world |= std::uint64_t{1} << teams_.same_mype_node.slot();
        on_gpu_ = s.the_world->device_of() >= 0;
        if (on_gpu_) {
            gpu_ctx_ = s.the_world->context<nvlink>();
            heap_ = view(gpu_ctx_.transport);
            copy_check(call, cudaStreamCreate(&host_stream_));
            for (fill_function fill : s.fills) fill_one(fill, {filled_magic, heap_, teams_, gpu_ctx_}, heap_.my_pe);
        } else {
            host_ctx_ = s.the_world->context<host>();
            heap_ = view(host_ctx_.transport);
        }
    } catch (const error& e) {
        fail(call, -1, std::string("could not start the world: ") + e.what());
    }
    phase_ = phase::running;
    s.inits = 1;
}

void runtime::finalize(const char* call) {
    running(call);
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    if (--s.inits > 0) return;
    barrier_all(call);
    if (on_gpu_) {
        for (fill_function fill : s.fills) fill_one(fill, device_state{}, heap_.my_pe);
        copy_check(call, cudaStreamDestroy(host_stream_));
        host_stream_ = nullptr;
    }
    s.the_world.reset();
    phase_ = phase::finalized;
}

void* runtime::allocate(const char* call, std::size_t bytes, std::size_t alignment) {
    running(call);
    if (bytes == 0) return nullptr;
    world& w = *world_->the_world;
    try {
        const symmetric_ptr<std::byte> block =
            alignment == 0 ? w.alloc<std::byte>(bytes) : w.alloc<std::byte>(bytes, alignment);
        return heap_.base + block.offset();
    } catch (const error& e) {
        if (e.code() != errc::heap_exhausted && e.code() != errc::invalid_argument) fail(call, heap_.my_pe, e);
        std::fprintf(stderr, "pgas: %s on PE %d: returns NULL: %s\n", call, heap_.my_pe, e.what());
        return nullptr;
    }
}

void runtime::release(const char* call, void* ptr) {
    running(call);
    if (on_gpu_) host_quiet(call);  // host _nbi copies still reading or writing it
    if (!ptr) return;
    try {
        world_->the_world->free(heap_.symmetric<std::byte>(call, ptr, 0));
    } catch (const error& e) {
        fail(call, heap_.my_pe, e);
    }
}

int runtime::status() const {
    if (phase_ != phase::running) return NVSHMEM_STATUS_NOT_INITIALIZED;
    return world_->the_world->runtime().pes_per_gpu > 1 ? NVSHMEM_STATUS_FULL_MPG : NVSHMEM_STATUS_IS_INITIALIZED;
}

int runtime::register_buffer(const char* call, void* addr, std::size_t length) {
    running(call);
    const auto begin = reinterpret_cast<std::uintptr_t>(addr);
    if (!addr || length == 0 || length > UINTPTR_MAX - begin) {
        std::fprintf(stderr, "pgas: %s on PE %d: address %p with length %zu is no buffer: not registered\n", call,
                     heap_.my_pe, addr, length);
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    const std::uintptr_t end = begin + length;
    auto next = s.buffers.lower_bound(end);  // the first buffer starting at or after end
    if (next != s.buffers.begin() && std::prev(next)->second.end > begin) {
        const auto& other = std::prev(next)->second;
        std::fprintf(stderr,
                     "pgas: %s on PE %d: [%p, +%zu) overlaps the buffer registered at %p (%zu bytes): not registered\n",
                     call, heap_.my_pe, addr, length, reinterpret_cast<void*>(other.begin),
                     std::size_t(other.end - other.begin));
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    bool pin = false;
    if (on_gpu_) {  // host memory CUDA does not know yet: page-locked and mapped for the GPU (device memory: nothing)
        cudaPointerAttributes attributes{};
        pin =
            cudaPointerGetAttributes(&attributes, addr) == cudaSuccess && attributes.type == cudaMemoryTypeUnregistered;
        (void)cudaGetLastError();
        if (pin) {
            if (const cudaError_t status = cudaHostRegister(addr, length, cudaHostRegisterMapped);
                status != cudaSuccess) {
                (void)cudaGetLastError();
                std::fprintf(stderr, "pgas: %s on PE %d: cudaHostRegister of %p (%zu bytes): %s\n", call, heap_.my_pe,
                             addr, length, cudaGetErrorString(status));
                return NVSHMEMX_ERROR_INTERNAL;
            }
        }
    }
    s.buffers.emplace(begin, world_state::local_buffer{begin, end, pin});
    return NVSHMEMX_SUCCESS;
}

int runtime::unregister_buffer(const char* call, void* addr) {
    running(call);
    if (on_gpu_) host_quiet(call);  // host _nbi copies still reading or writing it
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    const auto found = s.buffers.find(reinterpret_cast<std::uintptr_t>(addr));
    if (found == s.buffers.end()) {
        std::fprintf(stderr, "pgas: %s on PE %d: no buffer registered at %p (nvshmemx_buffer_register's address)\n",
                     call, heap_.my_pe, addr);
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    if (found->second.pinned_here) copy_check(call, cudaHostUnregister(addr));
    s.buffers.erase(found);
    return NVSHMEMX_SUCCESS;
}

void runtime::unregister_all_buffers(const char* call) {
    running(call);
    if (on_gpu_) host_quiet(call);  // host _nbi copies still reading or writing it
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    for (const auto& [begin, buffer] : s.buffers)
        if (buffer.pinned_here) copy_check(call, cudaHostUnregister(reinterpret_cast<void*>(begin)));
    s.buffers.clear();
}

// Collective over the world (every split): the slots every PE is done with (destroyed, or never a member) go back to
// pgas::world, in slot order on every PE.
void runtime::free_finished_teams() {
    world_state& s = *world_;
    team_table& teams = teams_;
    std::uint64_t everyone = ~std::uint64_t{0};
    for (std::uint64_t mask : s.the_world->channel().allgather_value(s.done_with)) everyone &= mask;
    for (int slot = 2; slot < team::max_slots; ++slot) {
        if (!(everyone >> slot & 1u)) continue;
        team t = teams.splits[slot].n_pes() > 0 ? teams.splits[slot] : s.retired[slot];
        s.the_world->destroy_team(t);
        teams.splits[slot] = team();
        s.retired[slot] = team();
        s.done_with &= ~(std::uint64_t{1} << slot);
        s.whole_world &= ~(std::uint64_t{1} << slot);
    }
}

void* runtime::register_symmetric(const char* call, void* buffer, std::size_t bytes) {
    running(call);
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    try {
        const symmetric_ptr<std::byte> p = s.the_world->register_symmetric(static_cast<std::byte*>(buffer), bytes);
        reach_registrations(s);
        return heap_.base + p.offset();
    } catch (const error& e) {
        std::fprintf(stderr, "pgas: %s on PE %d: returns NULL: %s\n", call, heap_.my_pe, e.what());
        return nullptr;
    }
}

int runtime::unregister_symmetric(const char* call, void* address) {
    running(call);
    if (on_gpu_) host_quiet(call);  // host _nbi copies still reading or writing it
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    try {
        const auto offset = std::uint64_t(static_cast<std::byte*>(address) - heap_.base);
        s.the_world->unregister_symmetric(symmetric_ptr<std::byte>(detail::offset_tag{}, offset));
        reach_registrations(s);
        return NVSHMEMX_SUCCESS;
    } catch (const error& e) {
        std::fprintf(stderr, "pgas: %s on PE %d: %s\n", call, heap_.my_pe, e.what());
        return NVSHMEMX_ERROR_INVALID_VALUE;
    }
}

void runtime::reach_registrations(world_state& s) {
    gpu_ctx_ = s.the_world->context<nvlink>();  // its checks reach the registrations live now
    heap_ = view(gpu_ctx_.transport);
    refill();
}

template <std::size_t N, class Split>
int runtime::split(const char* call, nvshmem_team_t parent_handle, std::array<nvshmem_team_t*, N> out, Split&& split) {
    running(call);
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    for (nvshmem_team_t* handle : out) *handle = NVSHMEM_TEAM_INVALID;
    if (parent_handle == NVSHMEM_TEAM_INVALID) return 1;
    try {
        const team parent = teams_.get(call, parent_handle, heap_.my_pe, heap_.n_pes);
        if (!(s.whole_world >> parent.slot() & 1u)) {
            std::fprintf(stderr,
                         "pgas: %s on PE %d: the parent team (handle %d, %d PEs) leaves out PEs of the world, whose "
                         "splits pgas makes collectively: not supported yet (split the world, or a team that holds "
                         "every PE in its slot, such as split_2d's rows); no team made\n",
                         call, heap_.my_pe, parent_handle, parent.n_pes());
            return 1;
        }
        free_finished_teams();
        const std::array<team, N> made = split(*s.the_world, parent);
        std::uint64_t member = 0;
        for (std::size_t i = 0; i < N; ++i) {
            const int slot = made[i].slot();
            teams_.splits[slot] = made[i];
            if (made[i].my_pe() >= 0) {
                *out[i] = team_table::handle_of(slot);
                member |= std::uint64_t{1} << slot;
            } else {
                s.done_with |= std::uint64_t{1} << slot;  // nothing to destroy here
            }
        }
        std::uint64_t everyone = ~std::uint64_t{0};
        for (std::uint64_t mask : s.the_world->channel().allgather_value(member)) everyone &= mask;
        s.whole_world |= everyone;
    } catch (const error& e) {
        fail(call, heap_.my_pe, e);
    }
    refill();
    return 0;
}

int runtime::split_strided(const char* call, nvshmem_team_t parent, int start, int stride, int size,
                           nvshmem_team_t* out) {
    return split<1>(call, parent, {out}, [&](world& w, const team& from) {
        return std::array<team, 1>{w.split_strided(from, start, stride, size)};
    });
}

int runtime::split_2d(const char* call, nvshmem_team_t parent, int xrange, nvshmem_team_t* x, nvshmem_team_t* y) {
    return split<2>(call, parent, {x, y}, [&](world& w, const team& from) {
        const auto [row, column] = w.split_2d(from, xrange);
        return std::array<team, 2>{row, column};
    });
}

void runtime::destroy(const char* call, nvshmem_team_t handle) {
    running(call);
    world_state& s = *world_;
    std::lock_guard lock(s.mutex);
    const int slot = team_table::slot_of(handle);
    if (slot < 0 || teams_.splits[slot].n_pes() == 0)
        fail(call, heap_.my_pe,
             "team handle names no split team (a predefined team, or destroyed already): " + std::to_string(handle));
    s.retired[slot] = teams_.splits[slot];
    teams_.splits[slot] = team();
    s.done_with |= std::uint64_t{1} << slot;
    refill();
}

void runtime::barrier_all(const char* call) {
    try {
        if (on_gpu_) {
            copy_check(call, cudaDeviceSynchronize());
            world_->the_world->barrier();
        } else {
            pgas::barrier_all(host_ctx_);
        }
    } catch (const error& e) {
        fail(call, heap_.my_pe, e);
    }
}

void runtime::world_barrier(const char* call) {
    running(call);
    try {
        world_->the_world->barrier();
    } catch (const error& e) {
        fail(call, heap_.my_pe, e);
    }
}

void runtime::refill() const {
    if (on_gpu_)
        for (fill_function fill : world_->fills) fill_one(fill, {filled_magic, heap_, teams_, gpu_ctx_}, heap_.my_pe);
}

int make_uniqueid(nvshmemx_uniqueid_t* id) {
    constexpr const char* call = "nvshmemx_get_uniqueid";
    if (!id) fail(call, -1, "the id pointer is NULL");
    std::string host;
    if (const auto chosen = detail::env("PGAS_UNIQUEID_HOST")) {
        host = *chosen;
    } else {
        char name[256] = {};
        host = ::gethostname(name, sizeof name - 1) == 0 ? name : "127.0.0.1";
    }
    try {
        const std::string text = "pgas-uid " + host + " " + std::to_string(detail::tcp::free_port(call, INADDR_ANY)) +
                                 " " + detail::tcp::random_token(call);
        if (text.size() >= sizeof id->internal)
            fail(call, -1, "the host name '" + host + "' is too long for a unique id (set PGAS_UNIQUEID_HOST)");
        *id = nvshmemx_uniqueid_t{};
        id->version = 1;
        std::memcpy(id->internal, text.c_str(), text.size() + 1);
    } catch (const error& e) {
        fail(call, -1, e);
    }
    return NVSHMEMX_SUCCESS;
}

}  // namespace nvshmem_compat
PGAS_NAMESPACE_END
