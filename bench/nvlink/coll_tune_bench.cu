// Tuning runs for the collectives' policies, the small LL call's cost, put_on_stream's blocks and the barrier's fences on N GPUs of one process (numbers behind tuning.hpp, coll/detail/ll.hpp, host/stream/rma.cuh and sync.hpp).
//
// Collectives: graph-captured loops of *_on_stream on every GPU
// (PGAS_TUNE_GPUS, default all), timed on GPU 0 with CUDA events, for
// policies that differ in one knob (LL or direct, bytes per block, threads).
// Fences and barriers: in-kernel loops on GPUs 0 and 1, per-operation time,
// for the memory-model forms a barrier could use.
#include <pgas/host/stream/collectives.cuh>
#include <pgas/host/stream/rma.cuh>
#include <pgas/pgas.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::nvlink>;

void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::abort();
    }
}

constexpr std::size_t max_bytes = std::size_t{256} << 20;

// The collectives' world: one PE per GPU of one process, on PGAS_TUNE_GPUS GPUs (default: every GPU, at least 2;
// the fence and barrier runs below use PEs 0 and 1 of it).
int tune_gpus() {
    int gpus = 0;
    cuda_ok(cudaGetDeviceCount(&gpus), "device count");
    const char* asked = std::getenv("PGAS_TUNE_GPUS");
    const int n = asked && *asked ? std::atoi(asked) : gpus;
    if (n < 2 || n > gpus) {
        std::fprintf(stderr, "bench_coll_tune: needs 2 <= PGAS_TUNE_GPUS <= %d GPUs, asked %d\n", gpus, n);
        std::exit(2);
    }
    return n;
}

pgas::world& two_gpus() {
    static pgas::world w = [] {
        pgas::world_options o;
        o.heap_bytes = 2 * max_bytes + (std::uint64_t{64} << 20);
        o.timeout_ms = 20000;
        std::vector<int> devices;
        for (int i = 0; i < tune_gpus(); ++i) devices.push_back(i);
        return pgas::world::init_local(devices, o);
    }();
    return w;
}

struct buffers {
    pgas::symmetric_ptr<float> src, dst;
    std::vector<cudaStream_t> stream;
};
buffers& bufs() {
    static buffers b = [] {
        auto& w = two_gpus();
        buffers r;
        r.src = w.alloc<float>(max_bytes / 4);
        r.dst = w.alloc<float>(max_bytes / 4);
        for (int i = 0; i < w.n_local_pes(); ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cudaStream_t s;
            cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
            r.stream.push_back(s);
            cuda_ok(cudaMemset(w.device_address(r.src, i), 0, max_bytes), "memset");
        }
        return r;
    }();
    return b;
}

// Captures `iters` enqueues per GPU into one graph each, replays all, and
// returns GPU 0's microseconds per enqueue (median-free: Google Benchmark repeats).
template <class Enqueue>
double graph_us(benchmark::State& state, int iters, Enqueue&& enqueue) {
    auto& w = two_gpus();
    auto& b = bufs();
    const int n = w.n_local_pes();
    std::vector<cudaGraphExec_t> exec(static_cast<std::size_t>(n), nullptr);
    for (int i = 0; i < n; ++i) {
        cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
        enqueue(i, b.stream[i]);  // eager once (module load, first-touch)
    }
    for (int i = 0; i < n; ++i) {
        cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
        cuda_ok(cudaStreamSynchronize(b.stream[i]), "eager");
        cudaGraph_t g;
        cuda_ok(cudaStreamBeginCapture(b.stream[i], cudaStreamCaptureModeThreadLocal), "capture");
        for (int k = 0; k < iters; ++k) enqueue(i, b.stream[i]);
        cuda_ok(cudaStreamEndCapture(b.stream[i], &g), "end capture");
        cuda_ok(cudaGraphInstantiate(&exec[i], g, 0), "instantiate");
        cudaGraphDestroy(g);
    }
    cuda_ok(cudaSetDevice(w.device_of(0)), "set device");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    double total_ms = 0;
    for (auto _ : state) {
        cuda_ok(cudaSetDevice(w.device_of(0)), "set device");
        cudaEventRecord(start, b.stream[0]);
        cuda_ok(cudaGraphLaunch(exec[0], b.stream[0]), "launch");
        cudaEventRecord(stop, b.stream[0]);
        for (int i = 1; i < n; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaGraphLaunch(exec[i], b.stream[i]), "launch");
        }
        for (int i = 0; i < n; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaStreamSynchronize(b.stream[i]), "replay");
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    for (auto e : exec) cudaGraphExecDestroy(e);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    state.counters["pes"] = n;
    return total_ms * 1e3 / (double(iters) * double(state.iterations()));
}

// A policy that differs from load_store_policy in the knobs under test.
template <std::size_t LlMax, std::size_t LlPerBlock, unsigned Blocks, std::size_t BytesPerBlock,
          unsigned Threads = 512>
struct tune : pgas::coll::load_store_policy {
    static constexpr std::size_t ll_max_bytes = LlMax;
    static constexpr std::size_t ll_max_peer_bytes = LlMax;
    static constexpr std::size_t ll_bytes_per_block = LlPerBlock;
    static constexpr unsigned stream_max_blocks = Blocks;
    static constexpr std::size_t stream_bytes_per_block = BytesPerBlock;
    static constexpr unsigned stream_threads = Threads;
};
template <unsigned Threads>
struct rma_threads : pgas::coll::rma_policy {
    static constexpr unsigned stream_threads = Threads;
};

int iters_for(std::size_t bytes) { return bytes >= (std::size_t{64} << 20) ? 5 : bytes >= (std::size_t{4} << 20) ? 20 : 100; }

// bytes: the buffer (allreduce), the gathered output (allgather), one PE's send buffer (alltoall).
enum class coll { allreduce, allgather, alltoall, reduce_scatter };

template <coll C, class Policy>
void collective(benchmark::State& state) {
    const std::size_t bytes = std::size_t(state.range(0));
    auto& w = two_gpus();
    auto& b = bufs();
    const std::size_t n = std::size_t(w.n_pes());
    const double us = graph_us(state, iters_for(bytes), [&](int i, cudaStream_t s) {
        const auto ctx = w.context<pgas::nvlink>(i);
        const auto team = w.team_world();
        if constexpr (C == coll::allreduce)
            pgas::allreduce_on_stream<Policy>(ctx, team, b.dst, b.src, bytes / 4, pgas::op::sum, s);
        if constexpr (C == coll::allgather)
            pgas::allgather_on_stream<Policy>(ctx, team, b.dst, b.src, bytes / 4 / n, s);
        if constexpr (C == coll::alltoall)
            pgas::alltoall_on_stream<Policy>(ctx, team, b.dst, b.src, bytes / 4 / n, s);
        if constexpr (C == coll::reduce_scatter)
            pgas::reduce_scatter_on_stream<Policy>(ctx, team, b.dst, b.src, bytes / 4 / n, pgas::op::sum, s);
    });
    state.counters["us"] = us;
    state.counters["algbw_GBps"] = double(bytes) / us / 1e3;
}

void small_sizes(benchmark::internal::Benchmark* b) {
    for (long s : {8L, 1L << 10, 4L << 10, 8L << 10, 16L << 10, 32L << 10, 64L << 10}) b->Arg(s);
}
void middle_sizes(benchmark::internal::Benchmark* b) {
    for (long s : {128L << 10, 256L << 10, 512L << 10, 1L << 20, 2L << 20, 4L << 20}) b->Arg(s);
}
void large_sizes(benchmark::internal::Benchmark* b) {
    for (long s : {16L << 20, 64L << 20, 256L << 20}) b->Arg(s);
}

using defaults = pgas::coll::load_store_policy;
// LL at every size the cells carry in one chunk per channel (what the default's ll_max_bytes and ll_max_peer_bytes
// bound).
using ll_only = tune<(std::size_t{1} << 40), defaults::ll_bytes_per_block, defaults::stream_max_blocks,
                     defaults::stream_bytes_per_block>;
using direct_only = tune<0, defaults::ll_bytes_per_block, defaults::stream_max_blocks, defaults::stream_bytes_per_block>;
template <std::size_t PerBlock>
using ll_per_block = tune<(std::size_t{1} << 40), PerBlock, defaults::stream_max_blocks, defaults::stream_bytes_per_block>;

// What tuning.hpp's figures come from: the default against each path forced (allreduce/ll, allreduce/direct) over
// the sizes where they cross, at every GPU count; LL's bytes per block; the put/get path's threads.
#define PGAS_TUNE(C, POLICY, NAME, SIZES) \
    BENCHMARK(collective<coll::C, POLICY>)->Name(#C "/" NAME)->Apply(SIZES)->UseManualTime()->Iterations(5)
PGAS_TUNE(allreduce, pgas::coll::automatic, "auto", small_sizes)->Apply(middle_sizes)->Apply(large_sizes);
PGAS_TUNE(allreduce, ll_only, "ll", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allreduce, direct_only, "direct", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allreduce, ll_per_block<2048>, "ll_2K_per_block", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allreduce, ll_per_block<32768>, "ll_32K_per_block", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allgather, pgas::coll::automatic, "auto", small_sizes)->Apply(middle_sizes)->Apply(large_sizes);
PGAS_TUNE(allgather, ll_only, "ll", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allgather, direct_only, "direct", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(alltoall, ll_only, "ll", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(alltoall, direct_only, "direct", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(reduce_scatter, ll_only, "ll", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(reduce_scatter, direct_only, "direct", small_sizes)->Apply(middle_sizes);
PGAS_TUNE(allreduce, rma_threads<128>, "rma_128_threads", small_sizes);
PGAS_TUNE(allreduce, rma_threads<256>, "rma_256_threads", small_sizes);
PGAS_TUNE(allreduce, rma_threads<512>, "rma_512_threads", small_sizes);
#undef PGAS_TUNE

// --- put_on_stream's blocks ---------------------------------------------------
// The numbers behind host/stream/rma.cuh's bytes_per_block and max_blocks: put_on_stream's kernel at a fixed
// block count, every PE putting `bytes` to the next PE at once, per size. The default's row (blocks_for) beside
// them; bytes_per_block should be the slice per block above which more blocks stop paying.
template <unsigned Blocks>  // 0: what put_on_stream picks (rma_stream::blocks_for)
void put_blocks(benchmark::State& state) {
    const std::size_t bytes = std::size_t(state.range(0));
    auto& w = two_gpus();
    auto& b = bufs();
    const int n = w.n_pes();
    const unsigned blocks = Blocks != 0 ? Blocks : pgas::detail::rma_stream::blocks_for(bytes);
    const double us = graph_us(state, iters_for(bytes), [&](int i, cudaStream_t s) {
        const auto ctx = w.context<pgas::nvlink>(i);
        const float* src = static_cast<const float*>(w.device_address(b.src, i));
        pgas::detail::rma_stream::put_kernel<pgas::nvlink, float>
            <<<blocks, pgas::detail::rma_stream::threads, 0, s>>>(ctx, b.dst, src, bytes / 4, (i + 1) % n);
        cuda_ok(cudaGetLastError(), "put kernel");
    });
    state.counters["us"] = us;
    state.counters["blocks"] = blocks;
    state.counters["GBps"] = double(bytes) / us / 1e3;
}
void put_sizes(benchmark::internal::Benchmark* b) {
    for (long s = 4L << 10; s <= (256L << 20); s *= 4) b->Arg(s);
}
#define PGAS_TUNE_PUT(BLOCKS, NAME) \
    BENCHMARK(put_blocks<BLOCKS>)->Name("put_on_stream/" NAME)->Apply(put_sizes)->UseManualTime()->Iterations(5)
PGAS_TUNE_PUT(0, "default");
PGAS_TUNE_PUT(1, "1_block");
PGAS_TUNE_PUT(4, "4_blocks");
PGAS_TUNE_PUT(16, "16_blocks");
PGAS_TUNE_PUT(32, "32_blocks");
PGAS_TUNE_PUT(64, "64_blocks");
PGAS_TUNE_PUT(128, "128_blocks");
#undef PGAS_TUNE_PUT

// --- fences and barrier forms ------------------------------------------------

enum class fence_form { sc_sys, acq_rel_sys, sc_gpu, acq_rel_gpu };

template <fence_form F>
__device__ inline void fence() {
    if constexpr (F == fence_form::sc_sys) asm volatile("fence.sc.sys;" ::: "memory");
    if constexpr (F == fence_form::acq_rel_sys) asm volatile("fence.acq_rel.sys;" ::: "memory");
    if constexpr (F == fence_form::sc_gpu) asm volatile("fence.sc.gpu;" ::: "memory");
    if constexpr (F == fence_form::acq_rel_gpu) asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

// One thread: `iters` fences, each after a store to the peer (what a barrier
// orders) or with nothing outstanding.
template <fence_form F, bool remote_store>
__global__ void fence_loop(std::uint64_t* peer_word, int iters) {
    for (int i = 0; i < iters; ++i) {
        if (remote_store) *reinterpret_cast<volatile std::uint64_t*>(peer_word) = std::uint64_t(i);
        fence<F>();
    }
}

template <fence_form F, bool remote_store>
void fence_cost(benchmark::State& state) {
    auto& w = two_gpus();
    static auto word = w.alloc<std::uint64_t>(1);
    constexpr int iters = 20000;
    cuda_ok(cudaSetDevice(w.device_of(0)), "set device");
    std::uint64_t* peer = w.context<pgas::nvlink>(0).peer(word, 1);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    double total_ms = 0;
    for (auto _ : state) {
        cudaEventRecord(start);
        fence_loop<F, remote_store><<<1, 1>>>(peer, iters);
        cudaEventRecord(stop);
        cuda_ok(cudaEventSynchronize(stop), "fence loop");
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
    }
    state.counters["ns"] = total_ms * 1e6 / (double(iters) * double(state.iterations()));
}
BENCHMARK(fence_cost<fence_form::sc_sys, false>)->Name("fence/sc.sys")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::acq_rel_sys, false>)->Name("fence/acq_rel.sys")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::sc_gpu, false>)->Name("fence/sc.gpu")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::acq_rel_gpu, false>)->Name("fence/acq_rel.gpu")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::sc_sys, true>)->Name("fence_after_peer_store/sc.sys")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::acq_rel_sys, true>)->Name("fence_after_peer_store/acq_rel.sys")->UseManualTime()->Iterations(3);
BENCHMARK(fence_cost<fence_form::acq_rel_gpu, true>)->Name("fence_after_peer_store/acq_rel.gpu")->UseManualTime()->Iterations(3);

// Two-PE barrier forms, one thread per GPU, `iters` barriers in one kernel.
// arrive: how a PE tells its partner it arrived (epoch i); every form polls
// its own word with ld.acquire.sys.
enum class arrive_form { red_release_sys, fence_then_red_relaxed, st_release_sys, fence_then_st_relaxed };

template <arrive_form A>
__global__ void barrier_form_loop(std::uint64_t* mine, std::uint64_t* peers, std::uint64_t base, int iters) {
    for (int i = 1; i <= iters; ++i) {
        const std::uint64_t epoch = base + std::uint64_t(i);
        if constexpr (A == arrive_form::red_release_sys)
            asm volatile("red.release.sys.global.add.u64 [%0], 1;" ::"l"(peers) : "memory");
        if constexpr (A == arrive_form::fence_then_red_relaxed)
            asm volatile("fence.acq_rel.sys;\n\tred.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(peers) : "memory");
        if constexpr (A == arrive_form::st_release_sys)
            asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(peers), "l"(epoch) : "memory");
        if constexpr (A == arrive_form::fence_then_st_relaxed)
            asm volatile("fence.acq_rel.sys;\n\tst.relaxed.sys.global.u64 [%0], %1;" ::"l"(peers), "l"(epoch) : "memory");
        std::uint64_t seen = 0;
        do {
            asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(seen) : "l"(mine) : "memory");
        } while (seen < epoch);
    }
}

// Zeroes `bytes` of `word` on both GPUs, launches launch(pe) on each (GPU 0
// first, timed by events around its kernel), and reports us per iteration.
template <class Launch>
void time_loop_pair(benchmark::State& state, pgas::symmetric_ptr<std::uint64_t> word, std::size_t bytes, int iters,
                    Launch&& launch) {
    auto& w = two_gpus();
    double total_ms = 0;
    for (auto _ : state) {
        for (int i = 0; i < 2; ++i) {  // fresh words: the add forms count from 0
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaMemset(w.device_address(word, i), 0, bytes), "memset");
            cuda_ok(cudaDeviceSynchronize(), "memset");
        }
        cuda_ok(cudaSetDevice(w.device_of(0)), "set device");
        cudaEvent_t start, stop;
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        cudaEventRecord(start);
        for (int i = 0; i < 2; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            launch(i);
            if (i == 0) cudaEventRecord(stop);
        }
        for (int i = 0; i < 2; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaDeviceSynchronize(), "loop");
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        total_ms += ms;
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    state.counters["us"] = total_ms * 1e3 / (double(iters) * double(state.iterations()));
}

template <arrive_form A>
void barrier_form(benchmark::State& state) {
    auto& w = two_gpus();
    static auto word = w.alloc<std::uint64_t>(1);
    constexpr int iters = 20000;
    time_loop_pair(state, word, 8, iters, [&](int i) {
        auto ctx = w.context<pgas::nvlink>(i);
        barrier_form_loop<A><<<1, 1>>>(ctx.local(word), ctx.peer(word, 1 - i), 0, iters);
    });
}
// The same loop through pgas's pieces, to see what each adds to the raw form:
// pgas::barrier_all; red + pgas's wait (detail::wait_local, epoch in a
// register); red + an epoch kept in the heap (as disseminate) + pgas's wait.
enum class pgas_form { barrier_all, red_wait_local, red_epoch_wait_local };

template <pgas_form F>
__global__ void pgas_barrier_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> word,
                                  std::uint64_t* epoch, int iters) {
    std::uint64_t* mine = ctx.local(word);
    std::uint64_t* peers = ctx.peer(word, 1 - ctx.my_pe());
    for (int i = 1; i <= iters; ++i) {
        if constexpr (F == pgas_form::barrier_all) {
            pgas::barrier_all(ctx);
        } else {
            pgas::detail::add_release(peers, 1);
            const std::uint64_t target = F == pgas_form::red_wait_local ? std::uint64_t(i) : ++*epoch;
            pgas::detail::wait_local(ctx, "probe", static_cast<const std::uint64_t*>(mine), pgas::cmp::ge, target);
        }
    }
}

template <pgas_form F>
void pgas_barrier(benchmark::State& state) {
    auto& w = two_gpus();
    if (w.n_pes() != 2) {  // barrier_all would wait for PEs that run no loop
        state.SkipWithError("barrier2 needs exactly 2 PEs: PGAS_TUNE_GPUS=2");
        return;
    }
    static auto word = w.alloc<std::uint64_t>(2);  // [0] arrivals, [1] the epoch of the in-heap form
    constexpr int iters = 20000;
    time_loop_pair(state, word, 16, iters, [&](int i) {
        auto ctx = w.context<pgas::nvlink>(i);
        pgas_barrier_loop<F><<<1, 1>>>(ctx, word, ctx.local(word) + 1, iters);
    });
}
BENCHMARK(pgas_barrier<pgas_form::barrier_all>)->Name("barrier2/pgas::barrier_all")->UseManualTime()->Iterations(3);
BENCHMARK(pgas_barrier<pgas_form::red_wait_local>)->Name("barrier2/red+wait_local")->UseManualTime()->Iterations(3);
BENCHMARK(pgas_barrier<pgas_form::red_epoch_wait_local>)->Name("barrier2/red+heap_epoch+wait_local")->UseManualTime()->Iterations(3);

BENCHMARK(barrier_form<arrive_form::red_release_sys>)->Name("barrier2/red.release.sys")->UseManualTime()->Iterations(3);
BENCHMARK(barrier_form<arrive_form::fence_then_red_relaxed>)->Name("barrier2/fence.acq_rel.sys+red.relaxed")->UseManualTime()->Iterations(3);
BENCHMARK(barrier_form<arrive_form::st_release_sys>)->Name("barrier2/st.release.sys")->UseManualTime()->Iterations(3);
BENCHMARK(barrier_form<arrive_form::fence_then_st_relaxed>)->Name("barrier2/fence.acq_rel.sys+st.relaxed")->UseManualTime()->Iterations(3);


// --- the small LL call on 2 PEs, piece by piece ---------------------------------
// What an 8-byte allreduce costs beside the exchange it cannot avoid. In-kernel loops on GPUs 0 and 1
// (PGAS_TUNE_GPUS=2): pgas::allreduce by one thread, a warp and a block of 256, against a raw exchange of one
// flag-in-data unit (two 8-byte words, {4 data bytes, 4 flag bytes} each, two cells alternating, the message number
// in a register: the floor) and the raw exchange with pgas's bookkeeping (sent/received counters and the peer's ack
// read from the heap, the ack stored to the peer and the counters written back, every call). On a stream: the raw
// exchange with bookkeeping as one kernel per call, and an empty kernel, in graphs as the collectives above.
// Words of the probe (symmetric): [0, 4) two cells of two words, [4] sent, [5] received, [6] the peer's ack.
enum class ll_form { raw, raw_bookkeeping };

__device__ inline void ll_probe_store(std::uint64_t* cell, std::uint64_t v, std::uint32_t m) {
    const std::uint64_t lo = std::uint64_t(m) << 32 | std::uint32_t(v), hi = std::uint64_t(m) << 32 | (v >> 32);
    asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(cell), "l"(lo), "l"(hi) : "memory");
}
__device__ inline std::uint64_t ll_probe_wait(const std::uint64_t* cell, std::uint32_t m) {
    std::uint64_t lo, hi;
    do {
        asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(cell) : "memory");
    } while (std::uint32_t(lo >> 32) != m || std::uint32_t(hi >> 32) != m);
    return hi << 32 | std::uint32_t(lo);
}
// One exchange: returns the sum of the two PEs' words (as unsigned: the probe checks nothing).
template <ll_form F>
__device__ inline void ll_probe_once(std::uint64_t* mine, std::uint64_t* peers, const std::uint64_t* src,
                                     std::uint64_t* dst, std::uint32_t register_message) {
    volatile std::uint64_t* words = mine;
    std::uint32_t m = register_message;
    if constexpr (F == ll_form::raw_bookkeeping) {
        const std::uint64_t sent = words[4], received = words[5], acked = words[6];
        m = std::uint32_t(sent + 1);
        if (acked + 2 < sent + 1) __trap();  // the credit check pgas makes (never taken in lockstep)
        (void)received;
    }
    const std::uint64_t v = *static_cast<const volatile std::uint64_t*>(src);
    ll_probe_store(peers + 2 * (m & 1u), v, m);
    const std::uint64_t theirs = ll_probe_wait(mine + 2 * (m & 1u), m);
    *dst = v + theirs;
    if constexpr (F == ll_form::raw_bookkeeping) {
        asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(peers + 6), "l"(std::uint64_t(m)) : "memory");
        words[4] = m;
        words[5] = m;
    }
}
template <ll_form F>
__global__ void ll_probe_loop(std::uint64_t* mine, std::uint64_t* peers, const std::uint64_t* src, std::uint64_t* dst,
                              int iters) {
    if (threadIdx.x != 0) return;
    for (int i = 1; i <= iters; ++i) ll_probe_once<F>(mine, peers, src, dst, std::uint32_t(i));
}
__global__ void ll_probe_call(std::uint64_t* mine, std::uint64_t* peers, const std::uint64_t* src, std::uint64_t* dst) {
    if (threadIdx.x == 0) ll_probe_once<ll_form::raw_bookkeeping>(mine, peers, src, dst, 0);
}
__global__ void empty_kernel() {}

enum class ll_pgas_form { thread, warp, block };
template <ll_pgas_form F>
__global__ void ll_pgas_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<float> dst,
                             pgas::symmetric_ptr<float> src, int iters) {
    for (int i = 0; i < iters; ++i) {
        if constexpr (F == ll_pgas_form::thread) pgas::allreduce<pgas::thread>(ctx, ctx.world_team(), dst, src, 2, pgas::op::sum);
        if constexpr (F == ll_pgas_form::warp) pgas::allreduce<pgas::warp>(ctx, ctx.world_team(), dst, src, 2, pgas::op::sum);
        if constexpr (F == ll_pgas_form::block) pgas::allreduce<pgas::block>(ctx, ctx.world_team(), dst, src, 2, pgas::op::sum);
    }
}

template <ll_form F>
void ll_raw(benchmark::State& state) {
    auto& w = two_gpus();
    static auto word = w.alloc<std::uint64_t>(8);
    static auto data = w.alloc<std::uint64_t>(2);
    constexpr int iters = 20000;
    time_loop_pair(state, word, 64, iters, [&](int i) {
        auto ctx = w.context<pgas::nvlink>(i);
        ll_probe_loop<F><<<1, 32>>>(ctx.local(word), ctx.peer(word, 1 - i), ctx.local(data), ctx.local(data) + 1, iters);
    });
}
template <ll_pgas_form F>
void ll_pgas(benchmark::State& state) {
    auto& w = two_gpus();
    if (w.n_pes() != 2) {
        state.SkipWithError("ll2 needs exactly 2 PEs: PGAS_TUNE_GPUS=2");
        return;
    }
    auto& b = bufs();
    static auto word = w.alloc<std::uint64_t>(1);  // time_loop_pair's zeroed word: unused here
    constexpr int iters = 20000;
    // (512 threads do not launch: the reduction's registers)
    const unsigned threads = F == ll_pgas_form::thread ? 1 : F == ll_pgas_form::warp ? 32 : 256;
    time_loop_pair(state, word, 8, iters, [&](int i) {
        ll_pgas_loop<F><<<1, threads>>>(w.context<pgas::nvlink>(i), b.dst, b.src, iters);
        cuda_ok(cudaGetLastError(), "ll2 loop launch");
    });
}
BENCHMARK(ll_raw<ll_form::raw>)->Name("ll2/raw_exchange")->UseManualTime()->Iterations(3);
BENCHMARK(ll_raw<ll_form::raw_bookkeeping>)->Name("ll2/raw_exchange+bookkeeping")->UseManualTime()->Iterations(3);
BENCHMARK(ll_pgas<ll_pgas_form::thread>)->Name("ll2/pgas::allreduce<thread>")->UseManualTime()->Iterations(3);
BENCHMARK(ll_pgas<ll_pgas_form::warp>)->Name("ll2/pgas::allreduce<warp>")->UseManualTime()->Iterations(3);
BENCHMARK(ll_pgas<ll_pgas_form::block>)->Name("ll2/pgas::allreduce<block>_256")->UseManualTime()->Iterations(3);

void ll_stream_raw(benchmark::State& state) {
    auto& w = two_gpus();
    static auto word = w.alloc<std::uint64_t>(8);
    static auto data = w.alloc<std::uint64_t>(2);
    const double us = graph_us(state, 100, [&](int i, cudaStream_t s) {
        auto ctx = w.context<pgas::nvlink>(i);
        ll_probe_call<<<1, 32, 0, s>>>(ctx.local(word), ctx.peer(word, 1 - i), ctx.local(data), ctx.local(data) + 1);
    });
    state.counters["us"] = us;
}
void ll_stream_empty(benchmark::State& state) {
    const double us = graph_us(state, 100, [&](int, cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); });
    state.counters["us"] = us;
}
BENCHMARK(ll_stream_raw)->Name("ll2_stream/raw_exchange+bookkeeping")->UseManualTime()->Iterations(5);
BENCHMARK(ll_stream_empty)->Name("ll2_stream/empty_kernel")->UseManualTime()->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
