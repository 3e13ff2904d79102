// A two-level program over pgas::route<Near, Far>: PEs of one node reach each other through a fast near transport,
// all others through a network transport (libfabric). The program is a hand-written hierarchical allreduce: members
// hand their vector to their node's leader over the near path, only the leaders exchange node sums over the far
// path, and each leader hands the total back to its members. It then does the same with pgas::allreduce on the route
// and checks both against the closed-form sum.
//
//   pgasrun -n 4 ./two_level [--host] [near_pes]
//       with GPUs: route<nvlink, libfabric>, one PE per process on GPU local_rank % n_gpus (world::init_gpu), the
//                  body in a kernel of one thread block; near peers by NVLink loads and stores into their heaps,
//                  far peers through the libfabric proxy into GPU heaps registered with FI_HMEM. That needs a
//                  libfabric built with CUDA (scripts/build-libfabric-cuda); without FI_HMEM the program says so
//                  and exits 77 (skipped). On one GPU the processes must run concurrently: CUDA MPS.
//       without (or --host): route<host, libfabric>, one PE per process (world::init), near peers through the
//                  host transport's shared memory, the body called by the process's thread.
//       near_pes: PEs per "node" (default: the PEs that really share this host, route_node_pes, or PGAS_NODE_SIZE).
//                 On one machine, `two_level 2` pretends that PEs {0,1} and {2,3} are two nodes, so the far path
//                 is exercised for real.
//       The provider is PGAS_FI_PROVIDER's (e.g. shm, or "tcp;ofi_rxm" with PGAS_FI_IFACE=lo), else the best found.
//
// Each call below names only its target PE: route sends it through Near when the target is in this PE's near
// range and through Far otherwise, both paths inlined, no transport named in the algorithm. The GPU mode is
// built and CTest has an entry for it ("example: two_level (gpu, ...)", labels gpu and mps), but it has not yet
// run on a GPU.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

using value_t = long long;

struct two_level_buffers {
    pgas::symmetric_ptr<value_t> src;          // count: this PE's contribution
    pgas::symmetric_ptr<value_t> from_members; // near_pes * count: at a leader, each member's src (slot = index in node)
    pgas::symmetric_ptr<value_t> node_sum;     // count: at a leader, the sum over its node
    pgas::symmetric_ptr<value_t> from_leaders; // n_nodes * count: at a leader, every node's sum (slot = node)
    pgas::symmetric_ptr<value_t> result;       // count: the hand-written allreduce's result
    pgas::symmetric_ptr<value_t> library;      // count: pgas::allreduce's result
    pgas::symmetric_ptr<std::uint64_t> arrived;  // [0] members in, [1] leaders in, [2] total back from the leader
    int count;
};

// Run by every thread of group G: one thread block in the GPU kernel, the process's thread on the host. Nodes are
// the consecutive blocks of `near.count` PEs; a node's leader is its first PE.
template <class G, class Transport>
PGAS_HD void two_level_allreduce(const pgas::device::context<Transport>& ctx, const two_level_buffers& b,
                                 pgas::pe_range near) {
    const int me = ctx.my_pe(), per_node = near.count, n_nodes = ctx.n_pes() / per_node;
    const int leader = near.first, my_node = me / per_node, index = me - leader;
    const std::size_t count = std::size_t(b.count);
    const auto members_in = b.arrived, leaders_in = b.arrived + 1, total_back = b.arrived + 2;
    if (me != leader) {
        // 1. Near: my vector into my slot at the leader, then wait for the total it hands back.
        pgas::put_signal<G>(ctx, b.from_members + index * b.count, ctx.local(b.src), count, members_in, 1,
                            pgas::signal_op::add, leader);
        pgas::signal_wait_until(ctx, total_back, pgas::cmp::eq, std::uint64_t(1));
        return;
    }
    // 1. Near, at the leader: add up the node once every member's vector is in.
    pgas::signal_wait_until(ctx, members_in, pgas::cmp::eq, std::uint64_t(per_node - 1));
    value_t* node_sum = ctx.local(b.node_sum);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        value_t sum = ctx.local(b.src)[i];
        for (int m = 1; m < per_node; ++m) sum += ctx.local(b.from_members)[std::size_t(m) * count + i];
        node_sum[i] = sum;
    }
    G::sync();
    // 2. Far: only the leaders talk across nodes, one message per pair of nodes (not per pair of PEs).
    for (int node = 0; node < n_nodes; ++node)
        pgas::put_signal<G>(ctx, b.from_leaders + my_node * b.count, node_sum, count, leaders_in, 1,
                            pgas::signal_op::add, node * per_node);
    pgas::signal_wait_until(ctx, leaders_in, pgas::cmp::eq, std::uint64_t(n_nodes));
    value_t* result = ctx.local(b.result);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        value_t sum = 0;
        for (int node = 0; node < n_nodes; ++node) sum += ctx.local(b.from_leaders)[std::size_t(node) * count + i];
        result[i] = sum;
    }
    G::sync();
    // 3. Near: the total back to the members.
    for (int m = 1; m < per_node; ++m)
        pgas::put_signal<G>(ctx, b.result, result, count, total_back, 1, pgas::signal_op::set, leader + m);
}


// The whole program of one PE, on either route: the hand-written allreduce, then pgas::allreduce on the same route,
// then every operation this PE issued complete (so that it may tear down once all PEs got here).
template <class G, class Transport>
PGAS_HD void two_level_body(const pgas::device::context<Transport>& ctx, const two_level_buffers& b,
                            pgas::pe_range near) {
    two_level_allreduce<G>(ctx, b, near);
    pgas::allreduce<G>(ctx, ctx.world_team(), b.library, b.src, std::size_t(b.count), pgas::op::sum);
    pgas::quiet<G>(ctx);
}

// This PE's near range: the PEs of its node (route_node_pes), or consecutive blocks of per_node PEs when given.
// {0, 0} (after saying why) when the PEs do not split into such blocks.
static pgas::pe_range near_range(pgas::world& w, int per_node) {
    if (per_node == 0) return pgas::route_node_pes(w);  // collective
    if (w.n_pes() % per_node != 0) {
        std::fprintf(stderr, "two_level: %d PEs do not split into nodes of %d\n", w.n_pes(), per_node);
        return {0, 0};
    }
    return pgas::pe_range{w.my_pe() / per_node * per_node, per_node};
}

static two_level_buffers make_buffers(pgas::world& w, pgas::pe_range near) {
    two_level_buffers b;
    b.count = 1000;
    b.src = w.alloc<value_t>(b.count);  // collective: the same symmetric_ptr in every process, zero-filled
    b.from_members = w.alloc<value_t>(near.count * b.count);
    b.node_sum = w.alloc<value_t>(b.count);
    b.from_leaders = w.alloc<value_t>(w.n_pes() / near.count * b.count);
    b.result = w.alloc<value_t>(b.count);
    b.library = w.alloc<value_t>(b.count);
    b.arrived = w.alloc<std::uint64_t>(3);
    return b;
}

// PE me's contribution: element i of src.
static std::vector<value_t> contribution(int me, int count) {
    std::vector<value_t> src(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) src[std::size_t(i)] = value_t(me + 1) * 1000 + i;
    return src;
}

// Both results against the closed-form sum of every PE's contribution; 0 when right.
static int check_result(int me, int n_pes, pgas::pe_range near, const std::vector<value_t>& result,
                        const std::vector<value_t>& library) {
    int wrong = 0;
    const value_t pes_sum = value_t(n_pes) * (n_pes + 1) / 2 * 1000;
    for (std::size_t i = 0; i < result.size(); ++i) {
        const value_t want = pes_sum + value_t(n_pes) * value_t(i);
        for (const value_t got : {result[i], library[i]})
            if (got != want && wrong++ < 3)
                std::fprintf(stderr, "two_level: PE %d: element %zu = %lld, expected %lld\n", me, i, got, want);
    }
    std::printf("PE %d (node %d, %s): hand-written two-level allreduce and pgas::allreduce %s\n", me,
                me / near.count, me == near.first ? "leader" : "member", wrong == 0 ? "match" : "WRONG");
    return wrong == 0 ? 0 : 1;
}

// --- GPUs: route<nvlink, libfabric>, this process's PE on its GPU ---------------------------------------------------

using gpu_route = pgas::route<pgas::nvlink, pgas::libfabric>;

__global__ void two_level_kernel(const __grid_constant__ pgas::device::context<gpu_route> ctx, two_level_buffers b,
                                 pgas::pe_range near) {
    two_level_body<pgas::block>(ctx, b, near);
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "two_level: %s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

// Empty when a libfabric provider here (PGAS_FI_PROVIDER's, else any) can register GPU heaps (FI_HMEM); else why
// not. Asked before the world exists, so every process decides alike and none waits for one that left.
static std::string no_hmem_reason() {
    try {
        (void)pgas::ofi::select_provider({}, /*single_host=*/true, /*want_hmem=*/true, -1);
        return "";
    } catch (const pgas::error& e) {
        return e.what();
    }
}

static int on_gpu(int per_node) {
    if (const std::string why = no_hmem_reason(); !why.empty()) {
        if (pgas::read_launch_env().rank <= 0)  // every process skips alike: one says why
            std::printf("SKIPPED: two_level on GPUs: the far path needs a libfabric provider with FI_HMEM to reach GPU "
                        "heaps, and libfabric %u.%u here has none (--host runs route<host, libfabric>). %s\n",
                        FI_MAJOR(fi_version()), FI_MINOR(fi_version()), why.c_str());
        return 77;  // CTest's SKIP_RETURN_CODE
    }
    pgas::world_options options;
    options.heap_bytes = std::uint64_t{64} << 20;  // PEs share a GPU on one-GPU machines: a small heap each
    auto w = pgas::world::init_gpu(options);  // collective; GPU: the launcher's local rank % the visible GPUs
    const int me = w.my_pe(), n_pes = w.n_pes();
    check(cudaSetDevice(w.device_of(0)), "cudaSetDevice");
    pgas::libfabric_domain fabric(w);  // collective: GPU heaps registered with FI_HMEM, a proxy thread per PE
    const pgas::pe_range near = near_range(w, per_node);
    if (near.count == 0) return 2;
    if (fabric.heap_path() != pgas::libfabric_heap_path::hmem) {
        std::fprintf(stderr, "two_level: PE %d: the far path does not reach the GPU heap directly: %s\n", me,
                     fabric.describe_heap_path().c_str());
        return 1;
    }
    // device::context<route<nvlink, libfabric>>: near PEs by NVLink loads and stores, the others through libfabric.
    const auto ctx = pgas::route_context<pgas::nvlink>(w, fabric.context(), near);
    if (me == 0)
        std::printf("%d PEs on GPUs, nodes of %d: route<nvlink, libfabric>, near path NVLink, far path libfabric (%s, "
                    "FI_HMEM)\n",
                    n_pes, near.count, fabric.provider().c_str());

    const two_level_buffers b = make_buffers(w, near);
    const std::vector<value_t> src = contribution(me, b.count);
    check(cudaMemcpy(w.device_address(b.src), src.data(), src.size() * sizeof(value_t), cudaMemcpyHostToDevice),
          "copy in");
    w.barrier();  // every src filled before anyone reads it

    // A non-blocking stream: the kernel waits for its peers' kernels, which may share this GPU.
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    two_level_kernel<<<1, 256, 0, stream>>>(ctx, b, near);
    check(cudaGetLastError(), "launch");
    check(cudaStreamSynchronize(stream), "two_level kernel");
    check(cudaStreamDestroy(stream), "stream");

    std::vector<value_t> result(std::size_t(b.count)), library(std::size_t(b.count));
    check(cudaMemcpy(result.data(), w.device_address(b.result), result.size() * sizeof(value_t), cudaMemcpyDeviceToHost),
          "copy out");
    check(cudaMemcpy(library.data(), w.device_address(b.library), library.size() * sizeof(value_t),
                     cudaMemcpyDeviceToHost),
          "copy out");
    const int status = check_result(me, n_pes, near, result, library);
    w.barrier();  // nobody tears down while a peer may still target it
    return status;
}

// --- no GPU: route<host, libfabric>, this process's PE on the host transport ---------------------------------------

static int on_host(int per_node) {
    auto w = pgas::world::init();  // one PE per process, the node's heaps in shared memory (host transport)
    const int me = w.my_pe(), n_pes = w.n_pes();
    pgas::libfabric_domain fabric(w);  // collective: endpoints, registered heaps, a proxy thread per PE
    const pgas::pe_range near = near_range(w, per_node);
    if (near.count == 0) return 2;
    // device::context<route<host, libfabric>>: near PEs through shared memory, the others through libfabric.
    const auto ctx = pgas::route_context<pgas::host>(w, fabric.context(), near);
    if (me == 0)
        std::printf("%d PEs, nodes of %d: route<host, libfabric>, near path the host transport's shared memory, far "
                    "path libfabric (%s)\n",
                    n_pes, near.count, fabric.provider().c_str());

    const two_level_buffers b = make_buffers(w, near);
    const std::vector<value_t> src = contribution(me, b.count);
    std::memcpy(ctx.local(b.src), src.data(), src.size() * sizeof(value_t));
    w.barrier();  // every src filled before anyone reads it

    // This process's thread is its PE: it calls the device-side code directly.
    two_level_body<pgas::block>(ctx, b, near);

    const std::vector<value_t> result(ctx.local(b.result), ctx.local(b.result) + b.count);
    const std::vector<value_t> library(ctx.local(b.library), ctx.local(b.library) + b.count);
    const int status = check_result(me, n_pes, near, result, library);
    w.barrier();  // nobody tears down while a peer may still target it
    return status;
}

int main(int argc, char** argv) {
    // Kernels of PEs sharing a GPU wait for each other: all must be loaded before any starts (set before CUDA starts).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    bool host = false;
    int per_node = 0;  // 0: this host's PEs (route_node_pes)
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--host") == 0)
            host = true;
        else
            per_node = std::atoi(argv[i]) > 0 ? std::atoi(argv[i]) : -1;
    }
    if (per_node < 0) {
        std::fprintf(stderr, "usage: two_level [--host] [near_pes > 0]\n");
        return 2;
    }
    int n_gpus = 0;
    if (host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    try {
        return n_gpus > 0 ? on_gpu(per_node) : on_host(per_node);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "two_level: %s\n", e.what());
        return 1;
    }
}
