// Collectives on a CUDA stream, captured once into a CUDA graph and replayed: one "training step" per replay, made
// of a local kernel that produces values, an allreduce and an allgather enqueued with pgas::*_on_stream, and a
// local kernel that accumulates the result. Checked after the last replay.
//
//   graph_collectives [--host] [n_pes] [count] [replays]
//       with GPUs: n_pes PEs (default: one per GPU), PE i on GPU i % n_gpus (NVLink transport), so
//                  `graph_collectives 2` on a one-GPU machine runs two PEs sharing it;
//       without (or --host): n_pes PEs as threads on the host transport (default 4).
//
// Each *_on_stream call enqueues one kernel that runs the device-side collective, so it orders with the stream's
// other work and can be captured like any kernel. Captured arguments are frozen: what changes between replays (the
// step number here) lives in device memory that the graph's kernels read and update.
//
// On the host transport there are no streams, kernels or graphs: each PE is a CPU thread that calls the same
// collectives (pgas::allreduce, pgas::allgather: the device-side calls, compiled as host code) directly, in program
// order, and the "graph" is a function it calls once per replay. The local steps are the same functions.
#include <pgas/host/stream/collectives.cuh>
#include <pgas/pgas.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using value_t = long long;

// One PE's buffers. All symmetric (the collectives need symmetric src and dst; the others are for convenience).
struct step_buffers {
    pgas::symmetric_ptr<value_t> src;       // count: what this PE contributes
    pgas::symmetric_ptr<value_t> sum;       // count: allreduce(src, sum)
    pgas::symmetric_ptr<value_t> gathered;  // n_pes: src[0] of every PE (allgather)
    pgas::symmetric_ptr<value_t> total;     // count: sum accumulated over the steps
    pgas::symmetric_ptr<value_t> step;      // 1: the step number, advanced by the graph itself
    int count;
};

// The local work before and after the collectives, run by every thread of group G (a thread block on a GPU, the
// PE's thread on the host transport).
template <class G, class Transport>
PGAS_HD void produce(const pgas::device::context<Transport>& ctx, const step_buffers& b) {
    if (G::rank() == 0) *ctx.local(b.step) += 1;
    G::sync();
    const value_t step = *ctx.local(b.step), weight = ctx.my_pe() + 1;
    value_t* src = ctx.local(b.src);
    for (int i = int(G::rank()); i < b.count; i += int(G::size())) src[i] = weight * (i + step);
}

template <class G, class Transport>
PGAS_HD void accumulate(const pgas::device::context<Transport>& ctx, const step_buffers& b) {
    value_t* total = ctx.local(b.total);
    const value_t* sum = ctx.local(b.sum);
    for (int i = int(G::rank()); i < b.count; i += int(G::size())) total[i] += sum[i];
}

// Every PE checks its own result: step, total and gathered values after `replays` steps.
static int count_wrong(int pe, int n_pes, int replays, const std::vector<value_t>& total,
                       const std::vector<value_t>& gathered, value_t step) {
    const value_t pes_sum = value_t(n_pes) * (n_pes + 1) / 2, r = replays;
    int wrong = step != r;
    if (wrong) std::fprintf(stderr, "PE %d: step %lld, expected %lld\n", pe, step, r);
    for (std::size_t i = 0; i < total.size(); ++i) {
        // sum over steps s = 1..r of sum over PEs p of (p + 1) * (i + s)
        const value_t want = pes_sum * (r * value_t(i) + r * (r + 1) / 2);
        if (total[i] != want && wrong++ < 3) std::fprintf(stderr, "PE %d: total[%zu] = %lld, expected %lld\n", pe, i, total[i], want);
    }
    for (int p = 0; p < n_pes; ++p)
        if (gathered[p] != value_t(p + 1) * r && wrong++ < 3)
            std::fprintf(stderr, "PE %d: gathered[%d] = %lld, expected %lld\n", pe, p, gathered[p], value_t(p + 1) * r);
    return wrong;
}

static step_buffers make_buffers(pgas::world& world, int count) {
    step_buffers b;
    b.src = world.alloc<value_t>(count);  // collective: the same symmetric_ptr on every PE, zero-filled
    b.sum = world.alloc<value_t>(count);
    b.gathered = world.alloc<value_t>(world.n_pes());
    b.total = world.alloc<value_t>(count);
    b.step = world.alloc<value_t>(1);
    b.count = count;
    return b;
}

static int report(int wrong, int n_pes, int count, int replays, const char* how) {
    std::printf("%d PEs, %d replays of {produce, allreduce of %d values, allgather, accumulate} %s: %s\n", n_pes,
                replays, count, how, wrong == 0 ? "results match" : "WRONG");
    return wrong == 0 ? 0 : 1;
}

// --- GPUs: the step captured into a CUDA graph per PE ------------------------------------------------------------

__global__ void produce_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx, step_buffers b) {
    produce<pgas::block>(ctx, b);
}
__global__ void accumulate_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx, step_buffers b) {
    accumulate<pgas::block>(ctx, b);
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static int on_gpus(int n_gpus, int n_pes, int count, int replays) {
    std::vector<int> devices;
    for (int pe = 0; pe < n_pes; ++pe) devices.push_back(pe % n_gpus);
    auto world = pgas::world::init_local(devices);
    std::printf("%d GPU(s): %d PEs on the NVLink transport\n", n_gpus, world.n_pes());
    const step_buffers b = make_buffers(world, count);
    std::vector<cudaStream_t> streams(n_pes);
    std::vector<cudaGraphExec_t> graphs(n_pes);
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        // A non-blocking stream per PE: PEs sharing a GPU must run side by side (collectives wait for each other).
        check(cudaStreamCreateWithFlags(&streams[pe], cudaStreamNonBlocking), "stream");
        const auto ctx = world.context<pgas::nvlink>(pe);
        const auto team = ctx.world_team();
        cudaGraph_t graph;
        check(cudaStreamBeginCapture(streams[pe], cudaStreamCaptureModeThreadLocal), "begin capture");
        produce_kernel<<<1, 256, 0, streams[pe]>>>(ctx, b);
        pgas::allreduce_on_stream(ctx, team, b.sum, b.src, count, pgas::op::sum, streams[pe]);
        pgas::allgather_on_stream(ctx, team, b.gathered, b.src, 1, streams[pe]);  // src[0] of every PE
        accumulate_kernel<<<1, 256, 0, streams[pe]>>>(ctx, b);
        check(cudaStreamEndCapture(streams[pe], &graph), "end capture");
        check(cudaGraphInstantiate(&graphs[pe], graph, 0), "instantiate");
        check(cudaGraphDestroy(graph), "graph");
    }
    // Replays queue up without waiting: each PE's stream keeps its own steps in order, and the collectives keep
    // the PEs in step with each other.
    for (int replay = 0; replay < replays; ++replay)
        for (int pe = 0; pe < n_pes; ++pe) {
            check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
            check(cudaGraphLaunch(graphs[pe], streams[pe]), "graph launch");
        }
    int wrong = 0;
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaStreamSynchronize(streams[pe]), "replays");
        std::vector<value_t> total(count), gathered(n_pes);
        value_t step = 0;
        check(cudaMemcpy(total.data(), world.device_address(b.total, pe), count * sizeof(value_t), cudaMemcpyDeviceToHost), "copy");
        check(cudaMemcpy(gathered.data(), world.device_address(b.gathered, pe), n_pes * sizeof(value_t), cudaMemcpyDeviceToHost), "copy");
        check(cudaMemcpy(&step, world.device_address(b.step, pe), sizeof step, cudaMemcpyDeviceToHost), "copy");
        check(cudaGraphExecDestroy(graphs[pe]), "graph exec");
        check(cudaStreamDestroy(streams[pe]), "stream");
        wrong += count_wrong(pe, n_pes, replays, total, gathered, step);
    }
    return report(wrong, n_pes, count, replays, "as a CUDA graph per PE");
}

// --- no GPU: the same step, called directly by each PE thread of the host transport -----------------------------

static int on_host(int n_pes, int count, int replays) {
    auto world = pgas::world::init_local(n_pes);
    std::printf("host transport: %d PEs as threads\n", world.n_pes());
    const step_buffers b = make_buffers(world, count);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
        const auto team = ctx.world_team();
        // What the GPU path captures into its graph, as a function: called once per replay.
        const auto one_step = [&] {
            produce<pgas::block>(ctx, b);
            pgas::allreduce(ctx, team, b.sum, b.src, count, pgas::op::sum);
            pgas::allgather(ctx, team, b.gathered, b.src, 1);
            accumulate<pgas::block>(ctx, b);
        };
        for (int replay = 0; replay < replays; ++replay) one_step();
    });
    int wrong = 0;
    for (int pe = 0; pe < n_pes; ++pe) {
        const std::vector<value_t> total(world.local(b.total, pe), world.local(b.total, pe) + count);
        const std::vector<value_t> gathered(world.local(b.gathered, pe), world.local(b.gathered, pe) + n_pes);
        wrong += count_wrong(pe, n_pes, replays, total, gathered, *world.local(b.step, pe));
    }
    return report(wrong, n_pes, count, replays, "called in program order");
}

int main(int argc, char** argv) {
    // PEs sharing a GPU wait for each other inside running kernels: load every kernel up front, since a lazily
    // loaded kernel's first launch waits for the GPU to go idle (set before the first CUDA call).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    bool host = false;
    std::vector<int> numbers;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--host") == 0)
            host = true;
        else
            numbers.push_back(std::atoi(argv[i]));
    }
    int n_gpus = 0;
    if (host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    const int n_pes = numbers.size() > 0 ? numbers[0] : (n_gpus > 0 ? n_gpus : 4);
    const int count = numbers.size() > 1 ? numbers[1] : 1000;
    const int replays = numbers.size() > 2 ? numbers[2] : 20;
    if (n_pes < 1 || count < 1 || replays < 0) {
        std::fprintf(stderr, "usage: graph_collectives [--host] [n_pes] [count] [replays]\n");
        return 2;
    }
    try {
        return n_gpus > 0 ? on_gpus(n_gpus, n_pes, count, replays) : on_host(n_pes, count, replays);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
