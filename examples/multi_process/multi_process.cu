// One PE per process: started by a launcher, each process joins the world with pgas::world::init() and runs the
// same code (SPMD). Each PE passes its id around a ring, takes a ticket from a counter on PE 0 with a remote atomic,
// computes its share of pi, and the PEs combine the shares with allreduce and the tickets with allgather; every
// process checks the result and exits non-zero when it is wrong.
//
//   pgasrun -n 4 ./multi_process [--host]                       (tools/pgasrun, installed with pgas)
//   torchrun --nproc-per-node 4 --no-python ./multi_process [--host]
//   mpirun -n 4 ./multi_process [--host]                        (Open MPI; Slurm's srun works the same way)
//   ./multi_process                                             (no launcher: a world of one PE)
//
// world::init() reads the rank, world size and rendezvous address from the launcher's environment (pgasrun's
// PGAS_* variables, torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, Open MPI's, Slurm's) and meets the other
// processes through a small TCP store on rank 0. Its heap is host memory shared by the node's processes: the host
// transport. With GPUs, world::init_gpu() is the same with each process's heap on its GPU (the launcher's local
// rank picks it; here local rank % GPUs, so processes share GPU 0 on a one-GPU machine) and the node's heaps
// mapped into each other: the NVLink transport. --host keeps the host transport on a machine with GPUs.
#include <pgas/pgas.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Symmetric objects: the same symmetric_ptr on every PE names each PE's own copy.
struct shared_state {
    pgas::symmetric_ptr<int> from_left;                // written by the left neighbour
    pgas::symmetric_ptr<unsigned long long> counter;   // PE 0's copy hands out tickets
    pgas::symmetric_ptr<unsigned long long> ticket;    // this PE's ticket
    pgas::symmetric_ptr<unsigned long long> tickets;   // n_pes: every PE's ticket (allgather)
    pgas::symmetric_ptr<double> share;                 // this PE's share of pi
    pgas::symmetric_ptr<double> pi;                    // the sum of all shares (allreduce)
    long intervals;                                    // of the midpoint rule, over all PEs
};

// Run by every thread of group G: one thread block on a GPU, the process's thread on the host transport.
template <class G, class Transport>
PGAS_HD void spmd_body(const pgas::device::context<Transport>& ctx, const shared_state& s) {
    const int me = ctx.my_pe(), n_pes = ctx.n_pes();
    if (G::rank() == 0) {
        pgas::p(ctx, s.from_left, me, (me + 1) % n_pes);                       // a one-sided write to the next PE
        *ctx.local(s.ticket) = pgas::atomic_fetch_inc(ctx, s.counter, 0);  // a remote atomic on PE 0
    }
    // My share of pi = integral over [0, 1] of 4 / (1 + x^2): intervals me, me + n_pes, ... one thread each,
    // added into my own copy of `share` (an atomic add: the threads of a block add at once).
    double mine = 0;
    const double width = 1.0 / double(s.intervals);
    for (long i = long(me) + long(n_pes) * long(G::rank()); i < s.intervals; i += long(n_pes) * long(G::size())) {
        const double x = (double(i) + 0.5) * width;
        mine += 4.0 / (1.0 + x * x) * width;
    }
    pgas::atomic_add(ctx, s.share, mine, me);
    // Every PE's puts and atomics complete and visible, then the collectives (called by the whole group).
    pgas::barrier_all<G>(ctx);
    pgas::allreduce<G>(ctx, ctx.world_team(), s.pi, s.share, 1, pgas::op::sum);
    pgas::allgather<G>(ctx, ctx.world_team(), s.tickets, s.ticket, 1);
}

// This process's check: its left neighbour's id, pi, and tickets 0 .. n_pes - 1 each taken once.
static int check_result(int me, int n_pes, int from_left, double pi, const std::vector<unsigned long long>& tickets) {
    int wrong = 0;
    if (from_left != (me + n_pes - 1) % n_pes) {
        std::fprintf(stderr, "PE %d: from_left = %d, expected %d\n", me, from_left, (me + n_pes - 1) % n_pes);
        ++wrong;
    }
    if (std::fabs(pi - M_PI) > 1e-9) {
        std::fprintf(stderr, "PE %d: pi = %.15f, off by %g\n", me, pi, pi - M_PI);
        ++wrong;
    }
    std::vector<int> seen(std::size_t(n_pes), 0);
    for (unsigned long long t : tickets)
        if (t < (unsigned long long)n_pes) ++seen[std::size_t(t)];
    for (int t = 0; t < n_pes; ++t)
        if (seen[std::size_t(t)] != 1) {
            std::fprintf(stderr, "PE %d: ticket %d was taken %d times\n", me, t, seen[std::size_t(t)]);
            ++wrong;
        }
    std::printf("PE %d of %d: left neighbour %d, ticket %llu, pi = %.12f: %s\n", me, n_pes, from_left,
                tickets[std::size_t(me)], pi, wrong == 0 ? "ok" : "WRONG");
    return wrong == 0 ? 0 : 1;
}

static shared_state make_state(pgas::world& world) {
    shared_state s;
    s.from_left = world.alloc<int>(1);  // collective: every process allocates, in the same order
    s.counter = world.alloc<unsigned long long>(1);
    s.ticket = world.alloc<unsigned long long>(1);
    s.tickets = world.alloc<unsigned long long>(world.n_pes());
    s.share = world.alloc<double>(1);
    s.pi = world.alloc<double>(1);
    s.intervals = 1000000;
    return s;
}

// --- GPUs: this process's PE on its GPU ----------------------------------------------------------------------------

__global__ void spmd_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx, shared_state s) {
    spmd_body<pgas::block>(ctx, s);
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static int on_gpu(int n_gpus) {
    const pgas::launch_info launch = pgas::read_launch_env();
    const int device = (launch.local_rank >= 0 ? launch.local_rank : launch.rank) % n_gpus;
    auto world = pgas::world::init_gpu({}, device);  // collective over the launched processes
    if (world.my_pe() == 0)
        std::printf("%d processes from %s, NVLink transport (%d GPU(s) here)\n", world.n_pes(), launch.source.c_str(), n_gpus);
    const shared_state s = make_state(world);
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    spmd_kernel<<<1, 256, 0, stream>>>(world.context<pgas::nvlink>(), s);
    check(cudaGetLastError(), "launch");
    check(cudaStreamSynchronize(stream), "spmd kernel");
    check(cudaStreamDestroy(stream), "stream");
    int from_left = -1;
    double pi = 0;
    std::vector<unsigned long long> tickets(std::size_t(world.n_pes()));
    check(cudaMemcpy(&from_left, world.device_address(s.from_left), sizeof from_left, cudaMemcpyDeviceToHost), "copy");
    check(cudaMemcpy(&pi, world.device_address(s.pi), sizeof pi, cudaMemcpyDeviceToHost), "copy");
    check(cudaMemcpy(tickets.data(), world.device_address(s.tickets), tickets.size() * sizeof(tickets[0]),
                     cudaMemcpyDeviceToHost),
          "copy");
    const int status = check_result(world.my_pe(), world.n_pes(), from_left, pi, tickets);
    world.barrier();  // no process frees the heap while another may still read it
    return status;
}

// --- no GPU: this process's PE on the host transport, over the node's shared memory ------------------------------

static int on_host() {
    auto world = pgas::world::init();  // collective over the launched processes
    if (world.my_pe() == 0)
        std::printf("%d processes from %s, host transport over shared memory\n", world.n_pes(),
                    pgas::read_launch_env().source.c_str());
    const shared_state s = make_state(world);
    // One PE in this process: launch_host runs the body once, on a thread of its own.
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) { spmd_body<pgas::block>(ctx, s); });
    const std::vector<unsigned long long> tickets(world.local(s.tickets), world.local(s.tickets) + world.n_pes());
    const int status = check_result(world.my_pe(), world.n_pes(), *world.local(s.from_left), *world.local(s.pi), tickets);
    world.barrier();
    return status;
}

int main(int argc, char** argv) {
    const bool host = argc > 1 && std::strcmp(argv[1], "--host") == 0;
    int n_gpus = 0;
    if (host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    try {
        return n_gpus > 0 ? on_gpu(n_gpus) : on_host();
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
