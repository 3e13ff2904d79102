// IBGDA producer cost on the GPU: ns per put for thread/warp/block callers, doorbell batching on and off,
// with the emulated NIC (a host thread) consuming host-mapped queues. Timed with CUDA events.
//
// What it measures: the GPU side of the protocol (warp-aggregated reservation,
// WQE stores over PCIe into host memory, fences, doorbell record and ring).
// The emulated NIC drains between iterations, outside the timed region; the
// ring holds every WQE of one iteration, so no post waits for a completion.
// Not a network measurement: no ConnectX NIC has run this yet.
#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace ibgda_gpu_bench {

using ctx_t = pgas::device::context<pgas::ibgda>;

// Each calling group posts `per_group` 8-byte put_nbi (inline WRITEs) to PE 1.
template <class G>
PGAS_KERNEL void post_puts(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> target, int per_group) {
    const std::uint64_t v = threadIdx.x;
    for (int i = 0; i < per_group; ++i) pgas::put_nbi<G>(ctx, target + (threadIdx.x & 1023u), &v, 1, 1);
}

PGAS_KERNEL void drain(__grid_constant__ const ctx_t ctx) { pgas::quiet<pgas::block>(ctx); }

struct fixture {
    explicit fixture(std::uint32_t batch) {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        wo.timeout_ms = 60000;
        world = std::make_unique<pgas::world>(pgas::world::init_local(2, wo));
        for (int pe = 0; pe < 2; ++pe)
            cudaHostRegister(world->heap_memory().local_base(pe), world->heap_bytes(), cudaHostRegisterMapped);
        target = world->alloc<std::uint64_t>(1024);
        cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped);
        *abort_flag = 0;
        pgas::ibgda_options o;
        o.nic = pgas::ibgda_options::nic_kind::emulated;
        o.send_queue_blocks = 32768;
        o.doorbell_batch = batch;
        o.allocate = [](std::size_t bytes) -> void* {
            void* p = nullptr;
            if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
            std::memset(p, 0, bytes);
            return p;
        };
        o.deallocate = [](void* p) { cudaFreeHost(p); };
        o.runtime = pgas::runtime_state{std::uint64_t(60) * 1000000000ull, abort_flag};
        domain = std::make_unique<pgas::ibgda_domain>(*world, o);
        ctx = domain->context(0);
    }
    ~fixture() {
        domain.reset();
        for (int pe = 0; pe < 2; ++pe) cudaHostUnregister(world->heap_memory().local_base(pe));
        cudaFreeHost(abort_flag);
    }
    std::unique_ptr<pgas::world> world;
    std::unique_ptr<pgas::ibgda_domain> domain;
    pgas::symmetric_ptr<std::uint64_t> target;
    int* abort_flag = nullptr;
    ctx_t ctx;
};

// Args: calling group (0 thread, 1 warp, 2 block), doorbell batch.
void gpu_producer_put_nbi_8B(benchmark::State& state) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        state.SkipWithError("no CUDA GPU");
        return;
    }
    const int group = int(state.range(0));
    fixture f(std::uint32_t(state.range(1)));
    constexpr int threads = 256, blocks = 4;
    // Puts per iteration stay below half the ring (16384): no slot waits.
    const int groups = group == 0 ? threads * blocks : group == 1 ? threads / 32 * blocks : blocks;
    const int per_group = 12288 / groups;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    double ms_total = 0;
    for (auto _ : state) {
        cudaEventRecord(start);
        if (group == 0) post_puts<pgas::thread><<<blocks, threads>>>(f.ctx, f.target, per_group);
        else if (group == 1) post_puts<pgas::warp><<<blocks, threads>>>(f.ctx, f.target, per_group);
        else post_puts<pgas::block><<<blocks, threads>>>(f.ctx, f.target, per_group);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
        ms_total += ms;
        drain<<<1, 32>>>(f.ctx);
        if (cudaDeviceSynchronize() != cudaSuccess) {
            state.SkipWithError("kernel failed");
            break;
        }
    }
    const double puts = double(state.iterations()) * groups * per_group;
    state.counters["ns_per_put"] = ms_total * 1e6 / puts;
    state.counters["doorbell_batch"] = double(state.range(1));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
}
BENCHMARK(gpu_producer_put_nbi_8B)
    ->ArgNames({"group", "batch"})
    ->ArgsProduct({{0, 1, 2}, {1, 32}})
    ->UseManualTime();

}  // namespace ibgda_gpu_bench

BENCHMARK_MAIN();
