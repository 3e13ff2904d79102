// Message rate of 8-byte puts from 8-128 warps over 1, 2, 4 and 8 channels: each warp puts on channel
// warp % channels (DeepEP's pattern), so the effect of channels is measured, not assumed.
//
//  - ibgda_message_rate: pgas::ibgda against the emulated NIC (a host thread consuming host-mapped queues): k RC QPs
//    to the peer, each with its own send queue, doorbell record, doorbell and CQ. What it shows is the producer
//    side (slot reservation, WQE stores over PCIe, doorbells) and the consumer's rate, not a ConnectX NIC's.
//  - proxy_shm_message_rate: pgas::libfabric over loopback shm with GPU producers (libfabric_options::gpu_producers,
//    host heaps): k rings per PE, drained by the PE's one proxy thread.
//
// Every iteration puts the same total (a warp's lanes share it), every other 8-byte word of the target so that no
// two puts are adjacent (the proxy would merge those into one fi_write), then each warp quiets its channel; the
// time is the kernel's, by CUDA events. Counter Mputs_per_s. Needs a GPU; PE 1 is served by the NIC thread or its
// proxy thread only.
#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>
#if PGAS_CHANNELS_BENCH_LIBFABRIC
#include <pgas/host/libfabric/domain.hpp>
#endif

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace channels_bench {

constexpr int warps_per_block = 4;

void cuda_check(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

bool have_gpu(benchmark::State& state) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        state.SkipWithError("no CUDA GPU");
        return false;
    }
    return true;
}

// Each lane puts per_lane words to PE 1 on its warp's channel, then the warp completes that channel.
template <class Ctx>
PGAS_KERNEL void warp_puts(__grid_constant__ const Ctx ctx, pgas::symmetric_ptr<std::uint64_t> target, int per_lane) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const int warp = int(id / 32);
    const auto on_c = ctx.on_channel(warp % ctx.n_channels());
    for (int i = 0; i < per_lane; ++i) {
        const std::uint64_t v = id + i;
        pgas::put_nbi(on_c, target + std::ptrdiff_t(2 * (std::size_t(i) * threads + id)), &v, 1, 1);
    }
    pgas::quiet<pgas::warp>(on_c);
}

// Runs the kernel once per iteration between CUDA events; returns the puts per second.
template <class Ctx>
void time_puts(benchmark::State& state, const Ctx& ctx, pgas::symmetric_ptr<std::uint64_t> target, int total_puts,
               cudaStream_t stream) {
    const int warps = int(state.range(0));
    const int per_lane = total_puts / (warps * 32);
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    warp_puts<<<warps / warps_per_block, warps_per_block * 32, 0, stream>>>(ctx, target, per_lane);  // warm-up
    cuda_check(cudaStreamSynchronize(stream), "warm-up");
    double seconds = 0;
    for (auto _ : state) {
        cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
        warp_puts<<<warps / warps_per_block, warps_per_block * 32, 0, stream>>>(ctx, target, per_lane);
        cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(stop), "warp_puts");
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        seconds += ms / 1e3;
    }
    const double puts = double(per_lane) * warps * 32 * double(state.iterations());
    state.counters["Mputs_per_s"] = puts / seconds / 1e6;
    state.counters["warps"] = warps;
    state.counters["channels"] = double(state.range(1));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
}

// --- ibgda against the emulated NIC ------------------------------------------------------------------------------

void ibgda_message_rate(benchmark::State& state) {
    if (!have_gpu(state)) return;
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        wo.timeout_ms = 60000;
        auto world = pgas::world::init_local(2, wo);
        for (int pe = 0; pe < 2; ++pe)
            cuda_check(cudaHostRegister(world.heap_memory().local_base(pe), world.heap_bytes(), cudaHostRegisterMapped),
                       "cudaHostRegister of the heap");
        auto target = world.alloc<std::uint64_t>(2 * 32768);
        int* abort_flag = nullptr;
        cuda_check(cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc");
        *abort_flag = 0;
        {
            pgas::ibgda_options o;
            o.nic = pgas::ibgda_options::nic_kind::emulated;
            o.channels = int(state.range(1));
            o.send_queue_blocks = 8192;
            o.allocate = [](std::size_t bytes) -> void* {
                void* p = nullptr;
                if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
                std::memset(p, 0, bytes);
                return p;
            };
            o.deallocate = [](void* p) { cudaFreeHost(p); };
            o.runtime = pgas::runtime_state{std::uint64_t(60) * 1000000000ull, abort_flag};
            pgas::ibgda_domain domain(world, o);
            cudaStream_t stream = nullptr;
            cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
            time_puts(state, domain.context(0), target, 32768, stream);
            cudaStreamDestroy(stream);
        }
        for (int pe = 0; pe < 2; ++pe) cudaHostUnregister(world.heap_memory().local_base(pe));
        cudaFreeHost(abort_flag);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(ibgda_message_rate)
    ->ArgNames({"warps", "channels"})
    ->ArgsProduct({{8, 16, 32, 64, 128}, {1, 2, 4, 8}})
    ->UseManualTime();

// --- the proxy over loopback shm ---------------------------------------------------------------------------------

#if PGAS_CHANNELS_BENCH_LIBFABRIC
void proxy_shm_message_rate(benchmark::State& state) {
    if (!have_gpu(state)) return;
    std::atomic<bool> done{false};
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        wo.timeout_ms = 60000;
        pgas::world::run_threads(2, [&](pgas::world& w) {
            cuda_check(cudaSetDevice(0), "cudaSetDevice");
            pgas::libfabric_options o;
            o.provider = "shm";
            o.gpu_producers = true;
            o.channels = int(state.range(1));
            pgas::libfabric_domain fabric(w, o);
            auto target = w.alloc<std::uint64_t>(2 * 16384);
            w.barrier();
            if (w.my_pe() == 0) {
                state.SetLabel("shm " + fabric.put_delivery());
                cudaStream_t stream = nullptr;
                cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
                time_puts(state, fabric.context(), target, 16384, stream);
                cudaStreamDestroy(stream);
                done = true;
                done.notify_all();
            } else {
                done.wait(false);  // PE 1's proxy keeps polling (target-side progress) meanwhile
            }
            w.barrier();
        }, wo);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(proxy_shm_message_rate)
    ->ArgNames({"warps", "channels"})
    ->ArgsProduct({{8, 16, 32, 64, 128}, {1, 2, 4, 8}})
    ->UseManualTime();
#endif

}  // namespace channels_bench

BENCHMARK_MAIN();
