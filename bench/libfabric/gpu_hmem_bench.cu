// GPU memory over libfabric, side by side: the proxy with GPU heaps registered FI_HMEM, the staged path (kernels
// over host heaps, GPU sources copied through pinned memory), and the provider alone (fi_write from a host thread).
//
// range(0), the path (label says it too):
//   0 pgas hmem shm        kernels put from PE 0's GPU heap into PE 1's GPU heap (world::init_local, FI_HMEM)
//   1 pgas staged shm      kernels put from a GPU buffer into PE 1's host heap (gpu_producers; staged)
//   2 pgas staged tcp      the same on tcp;ofi_rxm (no FI_HMEM there)
//   3 raw hmem shm         fi_write between the same two GPU heaps (FI_HMEM), a host thread, no pgas
//   4 raw host shm         fi_write between two host heaps (what the staged path's provider side costs)
//   5 raw host tcp         the same on tcp;ofi_rxm
// hmem_put_quiet: 8 B put + quiet latency (one GPU thread; the provider: fi_write + its completion).
// hmem_put_bandwidth (range(1) = bytes, 8 B .. 64 MiB, 1 MiB among them): back-to-back puts (put_nbi from one block, then one
// quiet) / fi_writes (up to 64 in flight), bytes per second. pgas times come from %globaltimer inside the
// kernel, the provider's from the host clock. bench/libfabric/hmem_ratios.py turns the JSON into the
// pgas/provider table (targets: latency <= 1.3x, bandwidth >= 0.9x from 1 MiB).
// Two PEs in one process on GPU 0 and GPU 1 % count; delivery "complete" everywhere (shm with FI_HMEM
// injects nothing, so the proxy cannot use "flush" there).
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <benchmark/benchmark.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpu_hmem_bench {

using ctx_t = pgas::device::context<pgas::libfabric>;
using clock_type = std::chrono::steady_clock;

struct path {
    const char* label;
    const char* provider;
    bool pgas;
    bool gpu_heap;
};
const path paths[] = {
    {"pgas hmem shm", "shm", true, true},       {"pgas staged shm", "shm", true, false},
    {"pgas staged tcp", "tcp;ofi_rxm", true, false}, {"raw hmem shm", "shm", false, true},
    {"raw host shm", "shm", false, false},      {"raw host tcp", "tcp;ofi_rxm", false, false},
};
constexpr std::size_t max_bytes = std::size_t{64} << 20;

void cuda_check(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

__device__ std::uint64_t now() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// How many back-to-back transfers of `bytes` one measurement makes.
int repeats_for(std::size_t bytes) {
    return int(std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 20, 2000));
}

pgas::world make_world(const path& p) {
    pgas::world_options wo;
    wo.heap_bytes = 2 * max_bytes + (std::uint64_t{16} << 20);
    wo.timeout_ms = 60000;
    if (!p.gpu_heap) return pgas::world::init_local(2, wo);
    int gpus = 0;
    cuda_check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
    return pgas::world::init_local(std::vector<int>{0, 1 % gpus}, wo);
}

pgas::libfabric_options fabric_options(const path& p) {
    pgas::libfabric_options o;
    o.provider = p.provider;
    o.iface = "lo";
    o.put_delivery = "complete";
    o.gpu_producers = !p.gpu_heap;
    return o;
}

// --- pgas: kernels on PE 0 --------------------------------------------------------

PGAS_KERNEL void put_quiet_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> target,
                                  const std::uint64_t* source, int repeats, std::uint64_t* elapsed) {
    for (int i = 0; i < 10; ++i) {  // warm-up
        pgas::put(ctx, target, source, 1, 1);
        pgas::quiet(ctx);
    }
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) {
        pgas::put(ctx, target, source, 1, 1);
        pgas::quiet(ctx);
    }
    *elapsed = now() - start;
}

PGAS_KERNEL void bandwidth_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint8_t> target,
                                  const std::uint8_t* source, std::size_t bytes, int repeats, std::uint64_t* elapsed) {
    pgas::put_nbi<pgas::block>(ctx, target, source, bytes, 1);  // warm-up (first touches)
    pgas::quiet<pgas::block>(ctx);
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) pgas::put_nbi<pgas::block>(ctx, target, source, bytes, 1);
    pgas::quiet<pgas::block>(ctx);
    if (threadIdx.x == 0) *elapsed = now() - start;
}

// One world and domain; PE 0's kernel measures (`bytes` == 0: latency), PE 1's proxy serves.
void run_pgas(benchmark::State& state, const path& p, std::size_t bytes) {
    auto w = make_world(p);
    cuda_check(cudaSetDevice(p.gpu_heap ? w.device_of(0) : 0), "cudaSetDevice");
    pgas::libfabric_domain fabric(w, fabric_options(p));
    state.SetLabel(std::string(p.label) + " (" + pgas::to_string(fabric.heap_path()) + ", " + fabric.put_delivery() + ")");
    const std::size_t size = bytes ? bytes : 8;
    auto target = w.alloc<std::uint8_t>(size);
    auto word = w.alloc<std::uint64_t>(1);
    // The source: PE 0's own heap when it is GPU memory (zero copy over FI_HMEM), else a GPU buffer (staged).
    auto heap_source = w.alloc<std::uint8_t>(size);
    std::uint8_t* gpu_source = nullptr;
    cuda_check(cudaMalloc(&gpu_source, size), "cudaMalloc");
    cuda_check(cudaMemset(gpu_source, 7, size), "cudaMemset");
    const ctx_t ctx = fabric.context(0);
    const std::uint8_t* source = p.gpu_heap ? ctx.local(heap_source) : gpu_source;
    cudaStream_t stream = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    std::uint64_t* elapsed = nullptr;
    cuda_check(cudaMallocManaged(&elapsed, sizeof(std::uint64_t)), "cudaMallocManaged");
    const int repeats = bytes ? repeats_for(bytes) : 2000;
    double total = 0;
    for (auto _ : state) {
        if (bytes)
            bandwidth_kernel<<<1, 1024, 0, stream>>>(ctx, target, source, bytes, repeats, elapsed);
        else
            put_quiet_kernel<<<1, 1, 0, stream>>>(ctx, word, reinterpret_cast<const std::uint64_t*>(source), repeats,
                                                   elapsed);
        cuda_check(cudaStreamSynchronize(stream), "kernel");
        const double s = double(*elapsed) * 1e-9;
        state.SetIterationTime(s);
        total += s;
    }
    const double ops = double(repeats) * double(state.iterations());
    if (bytes) state.counters["GBps"] = double(bytes) * ops / total / 1e9;
    else state.counters["us_per_op"] = total * 1e6 / ops;
    state.counters["staged_MB"] = double(fabric.staged_gpu_bytes()) / 1e6;
    cudaFree(elapsed);
    cudaStreamDestroy(stream);
    cudaFree(gpu_source);
    w.free(heap_source);
    w.free(word);
    w.free(target);
}

// --- the provider alone: two backends on the same heaps, fi_write from this thread --------

void run_raw(benchmark::State& state, const path& p, std::size_t bytes) {
    auto w = make_world(p);
    auto info = pgas::ofi::select_provider(fabric_options(p), true, p.gpu_heap, 0);
    std::unique_ptr<pgas::ofi::fabric_backend> pes[2];
    for (int pe = 0; pe < 2; ++pe) {
        pgas::ofi::fabric_backend::setup s;
        s.pe = pe;
        s.n_pes = 2;
        s.heap_base = w.heap_memory().local_base(pe);
        s.heap_bytes = w.heap_bytes();
        s.heap_is_gpu = p.gpu_heap;
        s.cuda_device = p.gpu_heap ? w.device_of(pe) : -1;
        s.max_in_flight = 256;
        s.bounce_chunks = 1;
        s.bounce_chunk_bytes = 4096;
        pes[pe] = std::make_unique<pgas::ofi::fabric_backend>(info.get(), s);
    }
    const std::vector<pgas::ofi::address_card> cards = {pes[0]->card(), pes[1]->card()};
    for (auto& b : pes) b->connect(cards);
    std::atomic<bool> stop{false};
    std::thread target([&] {  // the target's progress, as its proxy thread would make it
        while (!stop.load(std::memory_order_relaxed)) pes[1]->progress([](std::uint64_t) {});
    });
    state.SetLabel(std::string(p.label) + " (complete)");
    auto& a = *pes[0];
    const std::size_t size = bytes ? bytes : 8;
    const std::uint64_t src_offset = std::uint64_t{1} << 20, dst_offset = src_offset + max_bytes + 4096;
    void* source = w.heap_memory().local_base(0) + src_offset;
    constexpr int window = 64;
    std::vector<fi_context2> contexts(window);
    int in_flight = 0;
    auto reap = [&](int at_least) {
        fi_cq_entry entries[64];
        while (in_flight > 0 && at_least > 0) {
            const ssize_t n = fi_cq_read(a.completion_queue(), entries, 64);
            if (n == -FI_EAGAIN) continue;
            if (n < 0) throw std::runtime_error(pgas::ofi::describe("fi_cq_read", n));
            in_flight -= int(n);
            at_least -= int(n);
        }
    };
    auto write = [&](int i) {
        for (;;) {
            const ssize_t rc = fi_write(a.endpoint(), source, size, a.heap_descriptor(), a.address(1),
                                        a.remote_address(1, dst_offset), a.remote_key(1), &contexts[std::size_t(i % window)]);
            if (rc == 0) break;
            if (rc != -FI_EAGAIN) throw std::runtime_error(pgas::ofi::describe("fi_write", rc));
            reap(1);
        }
        ++in_flight;
    };
    const int repeats = bytes ? repeats_for(bytes) : 2000;
    double total = 0;
    try {
        for (auto _ : state) {
            const auto start = clock_type::now();
            for (int i = 0; i < repeats; ++i) {
                if (in_flight == (bytes ? window : 1)) reap(1);
                write(i);
                if (!bytes) reap(1);  // latency: each write's completion before the next
            }
            reap(in_flight);
            const double s = std::chrono::duration<double>(clock_type::now() - start).count();
            state.SetIterationTime(s);
            total += s;
        }
    } catch (...) {
        stop = true;
        target.join();
        throw;
    }
    stop = true;
    target.join();
    const double ops = double(repeats) * double(state.iterations());
    if (bytes) state.counters["GBps"] = double(bytes) * ops / total / 1e9;
    else state.counters["us_per_op"] = total * 1e6 / ops;
}

void measure(benchmark::State& state, std::size_t bytes) {
    const path& p = paths[state.range(0)];
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        state.SkipWithError("no CUDA GPU");
        return;
    }
    if (p.gpu_heap && !pgas::ofi::provider_has_hmem(p.provider)) {
        state.SkipWithError((std::string(p.provider) + " has no FI_HMEM in this libfabric: no GPU heap path").c_str());
        return;
    }
    try {
        if (p.pgas) run_pgas(state, p, bytes);
        else run_raw(state, p, bytes);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

void hmem_put_quiet(benchmark::State& state) { measure(state, 0); }
BENCHMARK(hmem_put_quiet)->DenseRange(0, 5)->UseManualTime()->Iterations(5);

void hmem_put_bandwidth(benchmark::State& state) { measure(state, std::size_t(state.range(1))); }
BENCHMARK(hmem_put_bandwidth)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5},
                   {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20, 16 << 20, std::int64_t(max_bytes)}})
    ->UseManualTime()
    ->Iterations(3);

}  // namespace gpu_hmem_bench

BENCHMARK_MAIN();
