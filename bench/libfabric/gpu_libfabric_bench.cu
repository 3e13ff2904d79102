// GPU-driven libfabric proxy: 8 B put+quiet latency from a kernel, put_signal ping-pong between two GPUs'
// kernels, the 8 B put rate from many warps, and the floors under them (PCIe read, host echo, ring alone).
//
// Two PEs as SPMD threads of this process (PE i on GPU i % count), each with
// its own world (host heap, registered for the kernels), libfabric domain
// (libfabric_options::gpu_producers) and proxy thread, on loopback shm or
// tcp;ofi_rxm. Times come from %globaltimer inside the kernel, so launch
// overhead is excluded. bench_libfabric's raw_fi_write / raw_inject_flush
// (same provider, same delivery) are the provider's own figures: the
// difference is the whole GPU path (push over PCIe into the mapped ring,
// proxy thread, completion written back and polled over PCIe).
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <benchmark/benchmark.h>

#include "ring_only.hpp"

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpu_libfabric_bench {

using ctx_t = pgas::device::context<pgas::libfabric>;

const char* const providers[] = {"shm", "tcp;ofi_rxm"};
const char* const deliveries[] = {"complete", "flush"};

void cuda_check(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

__device__ std::uint64_t now() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Two PEs, kernels as producers; body(ctx, world, stream, times, done) runs on
// each PE's thread; `times` is managed memory for the kernel's %globaltimer
// readings, `done` tells a PE that only keeps its proxy polling to stop.
template <class Body>
void two_gpu_pes(benchmark::State& state, Body body) {
    const char* provider = providers[state.range(0)];
    const char* delivery = deliveries[state.range(1)];
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        state.SkipWithError("no CUDA GPU");
        return;
    }
    std::atomic<bool> done{false};
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{64} << 20;
        wo.timeout_ms = 60000;
        pgas::world::run_threads(2, [&](pgas::world& w) {
            cuda_check(cudaSetDevice(w.my_pe() % gpus), "cudaSetDevice");
            pgas::libfabric_options o;
            o.provider = provider;
            o.iface = "lo";
            o.put_delivery = delivery;
            o.gpu_producers = true;
            pgas::libfabric_domain fabric(w, o);
            if (w.my_pe() == 0) state.SetLabel(std::string(provider) + " " + fabric.put_delivery());
            cudaStream_t stream = nullptr;
            cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
            std::uint64_t* times = nullptr;
            cuda_check(cudaMallocManaged(&times, 2 * sizeof(std::uint64_t)), "cudaMallocManaged");
            body(fabric.context(), w, stream, times, done);
            cuda_check(cudaFree(times), "cudaFree");
            cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
            w.barrier();
        }, wo);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

// --- 8 B put + quiet from one GPU thread ----------------------------------------

PGAS_KERNEL void put_quiet_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> target,
                                  int repeats, std::uint64_t* elapsed) {
    for (int i = 0; i < 10; ++i) {  // warm-up: first touches of the ring and the peer
        pgas::p(ctx, target, std::uint64_t(i), 1);
        pgas::quiet(ctx);
    }
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) {
        pgas::p(ctx, target, std::uint64_t(i), 1);
        pgas::quiet(ctx);
    }
    *elapsed = now() - start;
}

void gpu_put_quiet(benchmark::State& state) {
    constexpr int repeats = 2000;
    two_gpu_pes(state, [&](const ctx_t& ctx, pgas::world& w, cudaStream_t stream, std::uint64_t* elapsed,
                           std::atomic<bool>& done) {
        auto target = w.alloc<std::uint64_t>(1);
        w.barrier();
        if (w.my_pe() == 0) {
            double total = 0;
            for (auto _ : state) {
                put_quiet_kernel<<<1, 1, 0, stream>>>(ctx, target, repeats, elapsed);
                cuda_check(cudaStreamSynchronize(stream), "put_quiet_kernel");
                const double s = double(*elapsed) * 1e-9;
                state.SetIterationTime(s);
                total += s;
            }
            state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
            done = true;
            done.notify_all();
        } else {
            done.wait(false);  // PE 1's proxy keeps polling (target-side progress) meanwhile
        }
    });
}
BENCHMARK(gpu_put_quiet)->ArgsProduct({{0, 1}, {0, 1}})->UseManualTime();

// --- put_signal ping-pong between the two GPUs' kernels ------------------------

PGAS_KERNEL void ping_pong_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> data,
                                  pgas::symmetric_ptr<std::uint64_t> sig, std::uint64_t first, int rounds,
                                  std::uint64_t* elapsed) {
    const int me = ctx.my_pe(), other = 1 - me;
    const std::uint64_t start = now();
    for (int r = 0; r < rounds; ++r) {
        const std::uint64_t round = first + std::uint64_t(r);
        if (me == 0) {
            pgas::put_signal(ctx, data, &round, 1, sig, round, pgas::signal_op::set, other);
            pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, round);
        } else {
            pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, round);
            pgas::put_signal(ctx, data, &round, 1, sig, round, pgas::signal_op::set, other);
        }
    }
    pgas::quiet(ctx);
    *elapsed = now() - start;
}

void gpu_put_signal_ping_pong(benchmark::State& state) {
    constexpr int rounds = 1000;
    two_gpu_pes(state, [&](const ctx_t& ctx, pgas::world& w, cudaStream_t stream, std::uint64_t* elapsed,
                           std::atomic<bool>&) {
        auto data = w.alloc<std::uint64_t>(1);
        auto sig = w.alloc<std::uint64_t>(1);
        std::uint64_t first = 1;
        double total = 0;
        // Both PEs run the same number of iterations: PE 0 decides and tells PE 1 through the bootstrap.
        for (;;) {
            int go = 0;
            if (w.my_pe() == 0) go = state.KeepRunning() ? 1 : 0;
            go = w.channel().allgather_value(go)[0];
            if (!go) break;
            ping_pong_kernel<<<1, 1, 0, stream>>>(ctx, data, sig, first, rounds, elapsed);
            cuda_check(cudaStreamSynchronize(stream), "ping_pong_kernel");
            first += rounds;
            if (w.my_pe() == 0) {
                const double s = double(*elapsed) * 1e-9;
                state.SetIterationTime(s);
                total += s;
            }
            w.barrier();
        }
        if (w.my_pe() == 0) state.counters["one_way_us"] = total * 1e6 / (2.0 * rounds * double(state.iterations()));
    });
}
BENCHMARK(gpu_put_signal_ping_pong)->ArgsProduct({{0, 1}, {0, 1}})->UseManualTime();

// --- 8 B put_nbi from many warps -------------------------------------------------

// range(2): 0 consecutive words (a warp's puts merge), 1 every other word (no merging).
// times[0]: the earliest block's start, times[1]: the latest block's end.
PGAS_KERNEL void rate_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> target,
                             int per_thread, int stride, std::uint64_t* times) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    if (threadIdx.x == 0) atomicMin(reinterpret_cast<unsigned long long*>(times), (unsigned long long)now());
    __syncthreads();
    for (int i = 0; i < per_thread; ++i) {
        const std::uint64_t v = id;
        pgas::put_nbi(ctx, target + std::ptrdiff_t((std::size_t(i) * n + id) * std::size_t(stride)), &v, 1, 1);
    }
    pgas::quiet<pgas::block>(ctx);
    if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long*>(times + 1), (unsigned long long)now());
}

void gpu_message_rate(benchmark::State& state) {
    constexpr int blocks = 8, threads = 256, per_thread = 16;
    const int stride = state.range(2) == 0 ? 1 : 2;
    two_gpu_pes(state, [&](const ctx_t& ctx, pgas::world& w, cudaStream_t stream, std::uint64_t* times,
                           std::atomic<bool>& done) {
        auto target = w.alloc<std::uint64_t>(std::size_t(blocks) * threads * per_thread * 2);
        w.barrier();
        if (w.my_pe() == 0) {
            double total = 0;
            for (auto _ : state) {
                times[0] = ~std::uint64_t{0};
                times[1] = 0;
                rate_kernel<<<blocks, threads, 0, stream>>>(ctx, target, per_thread, stride, times);
                cuda_check(cudaStreamSynchronize(stream), "rate_kernel");
                const double s = double(times[1] - times[0]) * 1e-9;
                state.SetIterationTime(s);
                total += s;
            }
            state.counters["Mputs_per_s"] = double(blocks) * threads * per_thread * double(state.iterations()) / total / 1e6;
            done = true;
            done.notify_all();
        } else {
            done.wait(false);
        }
    });
}
BENCHMARK(gpu_message_rate)->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})->UseManualTime();

// --- where the GPU path's time goes -------------------------------------------------
// The floors under gpu_put_quiet, one GPU thread each, no libfabric:
//  gpu_host_read: one read of a word in mapped pinned host memory (a PCIe round trip);
//  gpu_host_echo: the GPU stores a number into host memory, a host thread that polls it
//    stores it back, the GPU polls for it: the least any command + completion can cost;
//  gpu_ring_only_put_quiet: put + quiet through the real ring and proxy thread with a
//    backend that completes everything at once (no provider).

PGAS_KERNEL void host_read_kernel(const volatile std::uint64_t* word, int repeats, std::uint64_t* out) {
    std::uint64_t sum = 0;
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) sum += word[sum & 1];  // each read depends on the last
    out[0] = now() - start;
    out[1] = sum;
}

void gpu_host_read(benchmark::State& state) {
    constexpr int repeats = 2000;
    std::uint64_t *host = nullptr, *device = nullptr, *out = nullptr;
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&host), 64, cudaHostAllocMapped), "cudaHostAlloc");
    host[0] = host[1] = 2;  // even: every read goes to word[0]
    cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0), "cudaHostGetDevicePointer");
    cuda_check(cudaMallocManaged(&out, 2 * sizeof(std::uint64_t)), "cudaMallocManaged");
    double total = 0;
    for (auto _ : state) {
        host_read_kernel<<<1, 1>>>(device, repeats, out);
        cuda_check(cudaDeviceSynchronize(), "host_read_kernel");
        state.SetIterationTime(double(out[0]) * 1e-9);
        total += double(out[0]) * 1e-9;
    }
    state.counters["us_per_read"] = total * 1e6 / (repeats * double(state.iterations()));
    cudaFree(out);
    cudaFreeHost(host);
}
BENCHMARK(gpu_host_read)->UseManualTime();

PGAS_KERNEL void host_echo_kernel(volatile std::uint64_t* to_host, const volatile std::uint64_t* from_host,
                                  std::uint64_t first, int repeats, std::uint64_t* elapsed) {
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) {
        const std::uint64_t n = first + std::uint64_t(i);
        *to_host = n;
        while (*from_host != n) {
        }
    }
    *elapsed = now() - start;
}

void gpu_host_echo(benchmark::State& state) {
    constexpr int repeats = 2000;
    std::uint64_t *host = nullptr, *device = nullptr, *elapsed = nullptr;
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&host), 256, cudaHostAllocMapped), "cudaHostAlloc");
    host[0] = host[8] = 0;  // separate cache lines: [0] GPU -> host, [8] host -> GPU
    cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0), "cudaHostGetDevicePointer");
    cuda_check(cudaMallocManaged(&elapsed, sizeof(std::uint64_t)), "cudaMallocManaged");
    std::atomic<bool> stop{false};
    std::thread echo([&] {
        std::atomic_ref<std::uint64_t> in(host[0]), back(host[8]);
        std::uint64_t last = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const std::uint64_t v = in.load(std::memory_order_acquire);
            if (v != last) back.store(last = v, std::memory_order_release);
        }
    });
    std::uint64_t first = 1;
    double total = 0;
    for (auto _ : state) {
        host_echo_kernel<<<1, 1>>>(device, device + 8, first, repeats, elapsed);
        cuda_check(cudaDeviceSynchronize(), "host_echo_kernel");
        first += repeats;
        state.SetIterationTime(double(*elapsed) * 1e-9);
        total += double(*elapsed) * 1e-9;
    }
    stop = true;
    echo.join();
    state.counters["us_round_trip"] = total * 1e6 / (repeats * double(state.iterations()));
    cudaFree(elapsed);
    cudaFreeHost(host);
}
BENCHMARK(gpu_host_echo)->UseManualTime();

using ring_only_bench::null_backend;
using ring_only_bench::ring_only;

PGAS_KERNEL void ring_only_put_quiet_kernel(ring_only t, int repeats, std::uint64_t* elapsed) {
    std::uint64_t v = 0;
    for (int i = 0; i < 10; ++i) {
        t.put<pgas::thread>(64, &v, 8, 1);
        t.quiet<pgas::thread>();
    }
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) {
        t.put<pgas::thread>(64, &v, 8, 1);
        t.quiet<pgas::thread>();
    }
    *elapsed = now() - start;
}

void gpu_ring_only_put_quiet(benchmark::State& state) {
    constexpr int repeats = 2000;
    null_backend backend;
    pgas::proxy::ring_memory memory(1024, pgas::proxy::producers::gpu, 0);
    pgas::proxy::service<null_backend> proxy(backend, memory, 0, {});
    ring_only t;
    pgas::runtime_state runtime;
    runtime.timeout_ns = 60'000'000'000ull;
    t.view = memory.view(runtime);
    std::uint64_t* elapsed = nullptr;
    cuda_check(cudaMallocManaged(&elapsed, sizeof(std::uint64_t)), "cudaMallocManaged");
    double total = 0;
    for (auto _ : state) {
        ring_only_put_quiet_kernel<<<1, 1>>>(t, repeats, elapsed);
        cuda_check(cudaDeviceSynchronize(), "ring_only_put_quiet_kernel");
        state.SetIterationTime(double(*elapsed) * 1e-9);
        total += double(*elapsed) * 1e-9;
    }
    state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
    cudaFree(elapsed);
}
BENCHMARK(gpu_ring_only_put_quiet)->UseManualTime();

// --- the pieces of one push, each timed alone from one GPU thread ------------------------
// range(0): 0 the warp-aggregated reservation (device-scope fetch_add on device memory);
// 1 the credit check (system-scope acquire load of device memory); 2 a command's 7 16-byte
// stores to host memory plus the release store of seq; 3 the same with a relaxed seq store
// (what the release costs); 4 the tail read quiet makes (relaxed system-scope load).
PGAS_KERNEL void push_parts_kernel(int mode, std::uint64_t* device_words, uint4* host_slot, int repeats,
                                   std::uint64_t* out) {
    std::uint64_t sink = 0;
    const std::uint64_t start = now();
    for (int i = 0; i < repeats; ++i) {
        switch (mode) {
            case 0: {
                cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> tail(device_words[0]);
                sink += tail.fetch_add(1, cuda::memory_order_relaxed);
                sink = __shfl_sync(__activemask(), sink, 0);
                break;
            }
            case 1: {
                cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system> credit(device_words[1 + (sink & 1)]);
                sink += credit.load(cuda::memory_order_acquire);
                break;
            }
            case 2:
            case 3: {
                const uint4 v = make_uint4(unsigned(i), 1u, 2u, 3u);
                for (int k = 1; k < 8; ++k) host_slot[k] = v;
                cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system> seq(
                    *reinterpret_cast<std::uint64_t*>(host_slot));
                if (mode == 2) seq.store(std::uint64_t(i) + 1, cuda::memory_order_release);
                else seq.store(std::uint64_t(i) + 1, cuda::memory_order_relaxed);
                break;
            }
            default: {
                cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system> tail(device_words[(sink & 1)]);
                sink += tail.load(cuda::memory_order_relaxed);
                break;
            }
        }
    }
    out[0] = now() - start;
    out[1] = sink;
}

void gpu_push_parts(benchmark::State& state) {
    constexpr int repeats = 4000;
    const int mode = int(state.range(0));
    const char* names[] = {"reserve", "credit acquire load", "7 stores + release seq", "7 stores + relaxed seq",
                           "tail load"};
    state.SetLabel(names[mode]);
    std::uint64_t *words = nullptr, *out = nullptr;
    uint4 *host = nullptr, *host_device = nullptr;
    cuda_check(cudaMalloc(&words, 4 * sizeof(std::uint64_t)), "cudaMalloc");
    cuda_check(cudaMemset(words, 0, 4 * sizeof(std::uint64_t)), "cudaMemset");
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&host), 128, cudaHostAllocMapped), "cudaHostAlloc");
    cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_device), host, 0), "cudaHostGetDevicePointer");
    cuda_check(cudaMallocManaged(&out, 2 * sizeof(std::uint64_t)), "cudaMallocManaged");
    double total = 0;
    for (auto _ : state) {
        push_parts_kernel<<<1, 1>>>(mode, words, host_device, repeats, out);
        cuda_check(cudaDeviceSynchronize(), "push_parts_kernel");
        state.SetIterationTime(double(out[0]) * 1e-9);
        total += double(out[0]) * 1e-9;
    }
    state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
    cudaFree(out);
    cudaFreeHost(host);
    cudaFree(words);
}
BENCHMARK(gpu_push_parts)->DenseRange(0, 4)->UseManualTime();

}  // namespace gpu_libfabric_bench

BENCHMARK_MAIN();
