// NVLink transport micro-benchmarks between two PEs of one process: latency, bandwidth, rate, barrier, allreduce.
//
// The two PEs are GPUs 0 and 1, or two PEs sharing GPU 0 when only one GPU is
// visible (each PE then launches on its own non-blocking stream, so one PE's
// kernel never queues behind its peer's; run with CUDA_MODULE_LOADING=EAGER,
// see tests/gpu/CMakeLists.txt). Time is GPU time: CUDA events on PE 0's
// stream around kernels that repeat the operation many times in-kernel
// (launch cost out), reported through Google Benchmark's manual time.
// Counters: us per op, bytes/s, ops/s.
#include <pgas/host/stream/collectives.cuh>
#include <pgas/host/stream/rma.cuh>
#include <pgas/pgas.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::nvlink>;

void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::abort();
    }
}

// The devices of the two PEs: GPUs 0 and 1, or GPU 0 twice on a one-GPU machine.
std::vector<int> pe_devices() {
    int gpus = 0;
    cuda_ok(cudaGetDeviceCount(&gpus), "device count");
    return gpus >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
}

// One world of two PEs shared by every benchmark (building it maps 2 GiB).
pgas::world& two_gpus() {
    static pgas::world w = [] {
        pgas::world_options o;
        o.heap_bytes = std::uint64_t{1536} << 20;
        o.timeout_ms = 20000;
        return pgas::world::init_local(pe_devices(), o);
    }();
    return w;
}

// PE i's non-blocking stream on its device.
cudaStream_t pe_stream(int pe) {
    static const std::vector<cudaStream_t> streams = [] {
        auto& w = two_gpus();
        std::vector<cudaStream_t> s(std::size_t(w.n_local_pes()));
        for (int i = 0; i < w.n_local_pes(); ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaStreamCreateWithFlags(&s[std::size_t(i)], cudaStreamNonBlocking), "stream");
        }
        return s;
    }();
    cuda_ok(cudaSetDevice(two_gpus().device_of(pe)), "set device");
    return streams[std::size_t(pe)];
}

// Runs launch(local_pe, stream) for both PEs and returns PE 0's milliseconds for it.
template <class Launch>
double timed_ms(Launch&& launch, bool both = true) {
    auto& w = two_gpus();
    cudaEvent_t start, stop;
    cudaStream_t first = pe_stream(0);
    cuda_ok(cudaEventCreate(&start), "event");
    cuda_ok(cudaEventCreate(&stop), "event");
    cuda_ok(cudaEventRecord(start, first), "record");
    launch(0, first);
    cuda_ok(cudaEventRecord(stop, first), "record");
    if (both) launch(1, pe_stream(1));
    for (int i = 0; i < w.n_local_pes(); ++i) cuda_ok(cudaStreamSynchronize(pe_stream(i)), "kernel");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

__global__ void ping_pong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> flag,
                          std::uint64_t base, int iters) {
    const int me = ctx.my_pe(), peer = 1 - me;
    for (int i = 1; i <= iters; ++i) {
        const std::uint64_t value = base + std::uint64_t(i);
        if (me == 0) {
            pgas::p(ctx, flag, value, peer);
            pgas::wait_until(ctx, flag, pgas::cmp::eq, value);
        } else {
            pgas::wait_until(ctx, flag, pgas::cmp::eq, value);
            pgas::p(ctx, flag, value, peer);
        }
    }
}

void p_ping_pong(benchmark::State& state) {
    auto& w = two_gpus();
    static auto flag = w.alloc<std::uint64_t>(1);
    static std::uint64_t base = 0;
    constexpr int iters = 20000;
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms([&](int i, cudaStream_t s) { ping_pong<<<1, 1, 0, s>>>(w.context<pgas::nvlink>(i), flag, base, iters); });
        base += iters;
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["one_way_us"] = total_ms * 1e3 / (2.0 * iters * double(state.iterations()));
}
BENCHMARK(p_ping_pong)->UseManualTime()->Iterations(5);

// PE 0 puts (or gets) `bytes` to PE 1 `reps` times: each block moves its slice
// with group G (the first G::size() threads of the block), then quiet.
template <class G, bool is_get>
__global__ void transfer(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::byte> remote,
                         pgas::symmetric_ptr<std::byte> local, std::size_t bytes, int reps) {
    constexpr std::size_t chunk = std::size_t{64} << 10;
    if (gridDim.x > 132 && bytes >= chunk * gridDim.x) {
        // Many blocks: 64 KiB chunks dealt round-robin, so concurrent blocks
        // write neighbouring memory (as NCCL's channels do).
        for (int r = 0; r < reps; ++r)
            for (std::size_t first = chunk * blockIdx.x; first < bytes; first += chunk * gridDim.x) {
                const std::size_t n = bytes - first < chunk ? bytes - first : chunk;
                if constexpr (is_get)
                    pgas::get_nbi<G>(ctx, ctx.local(local) + first, remote + std::ptrdiff_t(first), n, 1);
                else
                    pgas::put_nbi<G>(ctx, remote + std::ptrdiff_t(first), ctx.local(local) + first, n, 1);
            }
        pgas::quiet<G>(ctx);
        return;
    }
    const std::size_t per_block = (bytes + gridDim.x - 1) / gridDim.x;
    const std::size_t first = per_block * blockIdx.x;
    const std::size_t n = first >= bytes ? 0 : (bytes - first < per_block ? bytes - first : per_block);
    if (threadIdx.x >= G::size()) return;
    std::byte* mine = ctx.local(local) + first;
    for (int r = 0; r < reps; ++r) {
        if (n == 0) break;
        if constexpr (is_get)
            pgas::get_nbi<G>(ctx, mine, remote + std::ptrdiff_t(first), n, 1);
        else
            pgas::put_nbi<G>(ctx, remote + std::ptrdiff_t(first), mine, n, 1);
    }
    pgas::quiet<G>(ctx);
}

// The 256 MiB source and target every bandwidth benchmark shares.
struct transfer_buffers {
    pgas::symmetric_ptr<std::byte> remote, local;
};
transfer_buffers& buffers() {
    static transfer_buffers b{two_gpus().alloc<std::byte>(std::size_t{256} << 20),
                              two_gpus().alloc<std::byte>(std::size_t{256} << 20)};
    return b;
}

template <class G, bool is_get>
void bandwidth(benchmark::State& state) {
    auto& w = two_gpus();
    const auto remote = buffers().remote;
    const auto local = buffers().local;
    const auto bytes = std::size_t(state.range(0));
    const unsigned blocks = unsigned(state.range(1));
    const unsigned threads = std::is_same_v<G, pgas::block> ? (blocks > 132 ? 512 : 1024) : G::size();
    const int reps = int(std::max<std::size_t>(2, std::min<std::size_t>(1000, (std::size_t{256} << 20) / bytes)));
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms(
            [&](int i, cudaStream_t s) { transfer<G, is_get><<<blocks, threads, 0, s>>>(w.context<pgas::nvlink>(i), remote, local, bytes, reps); },
            false);
        state.SetIterationTime(ms / 1e3 / reps);
        total_ms += ms;
    }
    const double ops = double(reps) * double(state.iterations());
    state.counters["us"] = total_ms * 1e3 / ops;
    state.counters["GBps"] = double(bytes) * ops / (total_ms * 1e-3) / 1e9;
}
// 8 B to `largest` in steps of 4 (a single thread or warp stops at 8 MiB: it
// cannot fill NVLink and would take seconds per size).
void size_sweep(benchmark::internal::Benchmark* b, int blocks, std::int64_t largest = std::int64_t{256} << 20) {
    for (std::int64_t bytes = 8; bytes <= largest; bytes *= 4) b->Args({bytes, blocks});
    if (largest == (std::int64_t{256} << 20)) b->Args({largest, blocks});
    b->UseManualTime()->Iterations(3);
}
BENCHMARK(bandwidth<pgas::thread, false>)->Name("put/thread")->Apply([](auto* b) { size_sweep(b, 1, 8 << 20); });
BENCHMARK(bandwidth<pgas::warp, false>)->Name("put/warp")->Apply([](auto* b) { size_sweep(b, 1, 8 << 20); });
BENCHMARK(bandwidth<pgas::block, false>)->Name("put/block")->Apply([](auto* b) { size_sweep(b, 1); });
BENCHMARK(bandwidth<pgas::block, false>)->Name("put/132_blocks")->Apply([](auto* b) { size_sweep(b, 132); });
BENCHMARK(bandwidth<pgas::block, false>)->Name("put/264_blocks_chunked")->Apply([](auto* b) { size_sweep(b, 264); });
BENCHMARK(bandwidth<pgas::block, true>)->Name("get/264_blocks_chunked")->Apply([](auto* b) { size_sweep(b, 264); });
BENCHMARK(bandwidth<pgas::block, true>)->Name("get/block")->Apply([](auto* b) { size_sweep(b, 1); });
BENCHMARK(bandwidth<pgas::block, true>)->Name("get/132_blocks")->Apply([](auto* b) { size_sweep(b, 132); });

__global__ void fetch_add_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> word, int iters) {
    unsigned long long sum = 0;
    for (int i = 0; i < iters; ++i) sum += pgas::atomic_fetch_add(ctx, word, 1ull, 1);
    if (sum == 42) printf("-");  // keep the result alive
}
void atomic_fetch_add_latency(benchmark::State& state) {
    auto& w = two_gpus();
    static auto word = w.alloc<unsigned long long>(1);
    constexpr int iters = 20000;
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms([&](int i, cudaStream_t s) { fetch_add_loop<<<1, 1, 0, s>>>(w.context<pgas::nvlink>(i), word, iters); }, false);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["us"] = total_ms * 1e3 / (double(iters) * double(state.iterations()));
}
BENCHMARK(atomic_fetch_add_latency)->UseManualTime()->Iterations(5);

__global__ void p_rate(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> words, int iters) {
    const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < iters; ++i) pgas::p(ctx, words + std::ptrdiff_t(global), std::uint64_t(i), 1);
    pgas::quiet(ctx);
}
void put_8B_message_rate(benchmark::State& state) {
    auto& w = two_gpus();
    const unsigned blocks = 132, threads = 512;
    static auto words = w.alloc<std::uint64_t>(132 * 512);
    constexpr int iters = 200;
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms([&](int i, cudaStream_t s) { p_rate<<<blocks, threads, 0, s>>>(w.context<pgas::nvlink>(i), words, iters); }, false);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["Mputs_per_s"] = double(blocks) * threads * iters * double(state.iterations()) / (total_ms * 1e-3) / 1e6;
}
BENCHMARK(put_8B_message_rate)->UseManualTime()->Iterations(5);

template <class G>
__global__ void barrier_loop(const __grid_constant__ ctx_t ctx, int iters) {
    for (int i = 0; i < iters; ++i) pgas::barrier_all<G>(ctx);
}
template <class G>
void barrier_latency(benchmark::State& state) {
    auto& w = two_gpus();
    constexpr int iters = 20000;
    const unsigned threads = std::is_same_v<G, pgas::block> ? 256 : G::size();
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms([&](int i, cudaStream_t s) { barrier_loop<G><<<1, threads, 0, s>>>(w.context<pgas::nvlink>(i), iters); });
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["us"] = total_ms * 1e3 / (double(iters) * double(state.iterations()));
}
BENCHMARK(barrier_latency<pgas::thread>)->Name("barrier_all/thread")->UseManualTime()->Iterations(5);
BENCHMARK(barrier_latency<pgas::block>)->Name("barrier_all/block")->UseManualTime()->Iterations(5);

// A CUDA graph of `reps` (8-byte on-stream put + on-stream quiet), replayed.
void on_stream_put_quiet_latency(benchmark::State& state) {
    auto& w = two_gpus();
    static auto target = w.alloc<std::uint64_t>(1);
    static auto source = w.alloc<std::uint64_t>(1);
    constexpr int reps = 200;
    cudaStream_t stream = pe_stream(0);
    auto ctx = w.context<pgas::nvlink>(0);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    for (int r = 0; r < reps; ++r) {
        pgas::put_on_stream(ctx, target, ctx.local(source), 1, 1, stream);
        pgas::quiet_on_stream(ctx, stream);
    }
    cuda_ok(cudaStreamEndCapture(stream, &graph), "end capture");
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    cuda_ok(cudaGraphLaunch(exec, stream), "warm-up");
    cuda_ok(cudaStreamSynchronize(stream), "warm-up");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    double total_ms = 0;
    for (auto _ : state) {
        cudaEventRecord(start, stream);
        cudaGraphLaunch(exec, stream);
        cudaEventRecord(stop, stream);
        cuda_ok(cudaEventSynchronize(stop), "graph");
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["us"] = total_ms * 1e3 / (double(reps) * double(state.iterations()));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}
BENCHMARK(on_stream_put_quiet_latency)->UseManualTime()->Iterations(10);

// allreduce_on_stream (float sum over the world) of `bytes`, `reps` enqueued back to back on each PE's
// stream; time per call on PE 0's stream (launch cost included: this is how users call it).
void allreduce_on_stream_latency(benchmark::State& state) {
    auto& w = two_gpus();
    static auto dst = w.alloc<float>(std::size_t{1} << 18);
    static auto src = w.alloc<float>(std::size_t{1} << 18);
    const auto count = std::size_t(state.range(0)) / sizeof(float);
    constexpr int reps = 50;
    auto run = [&](int i, cudaStream_t s) {
        const auto ctx = w.context<pgas::nvlink>(i);
        for (int r = 0; r < reps; ++r) pgas::allreduce_on_stream(ctx, ctx.world_team(), dst, src, count, pgas::op::sum, s);
    };
    timed_ms(run);  // warm-up: scratch set-up and module loading out of the timing
    double total_ms = 0;
    for (auto _ : state) {
        const double ms = timed_ms(run);
        state.SetIterationTime(ms / 1e3 / reps);
        total_ms += ms;
    }
    state.counters["us"] = total_ms * 1e3 / (double(reps) * double(state.iterations()));
}
BENCHMARK(allreduce_on_stream_latency)->Name("allreduce_on_stream")->RangeMultiplier(8)->Range(8, 1 << 20)
    ->UseManualTime()->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
