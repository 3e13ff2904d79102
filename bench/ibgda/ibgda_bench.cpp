// IBGDA producer micro-benchmarks on the host: ns per WQE posted (batching on/off) and round trips through the emulated NIC.
//
// The emulated NIC is a host thread, so these numbers measure the producer's
// own code path (reservation, WQE encoding, publication, doorbell) and the
// protocol's round trips, not a network. They stand in until a ConnectX NIC
// is available; the GPU variant is ibgda_gpu_bench.cu.
#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

namespace {

using clock_type = std::chrono::steady_clock;

pgas::world_options world_options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{32} << 20;
    o.timeout_ms = 60000;
    return o;
}

pgas::ibgda_options emulated(std::uint32_t blocks, std::uint32_t batch) {
    pgas::ibgda_options o;
    o.nic = pgas::ibgda_options::nic_kind::emulated;
    o.send_queue_blocks = blocks;
    o.doorbell_batch = batch;
    return o;
}

// Producer cost: `posts` 8-byte put_nbi (inline WRITEs) timed without their
// completion; the ring is large enough that no post waits for a free slot, and
// quiet (untimed) drains the NIC between iterations. Arg: doorbell batch.
void producer_put_nbi_8B(benchmark::State& state) {
    const auto batch = std::uint32_t(state.range(0));
    auto w = pgas::world::init_local(2, world_options());
    auto target = w.alloc<std::uint64_t>(1024);
    pgas::ibgda_domain ib(w, emulated(32768, batch));
    auto ctx = ib.context(0);
    constexpr int posts = 8192;  // < half the ring: never waits for a slot or a signalled WQE
    const auto doorbells_before = ib.emulated_nic().stats().doorbells;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = clock_type::now();
        for (int i = 0; i < posts; ++i) {
            const std::uint64_t v = std::uint64_t(i);
            pgas::put_nbi(ctx, target + (i & 1023), &v, 1, 1);
        }
        const double s = std::chrono::duration<double>(clock_type::now() - start).count();
        state.SetIterationTime(s);
        seconds += s;
        pgas::quiet(ctx);
    }
    const double total = double(state.iterations()) * posts;
    state.counters["ns_per_put"] = seconds * 1e9 / total;
    state.counters["doorbell_batch"] = batch;
    state.counters["doorbells_seen_per_put"] =
        double(ib.emulated_nic().stats().doorbells - doorbells_before) / total;
}
BENCHMARK(producer_put_nbi_8B)->Arg(1)->Arg(8)->Arg(64)->UseManualTime();

// End to end through the emulated NIC: posts plus quiet, per put. Arg: doorbell batch.
void put_nbi_8B_through_emulated_nic(benchmark::State& state) {
    const auto batch = std::uint32_t(state.range(0));
    auto w = pgas::world::init_local(2, world_options());
    auto target = w.alloc<std::uint64_t>(1024);
    pgas::ibgda_domain ib(w, emulated(1024, batch));
    auto ctx = ib.context(0);
    constexpr int posts = 4096;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = clock_type::now();
        for (int i = 0; i < posts; ++i) {
            const std::uint64_t v = std::uint64_t(i);
            pgas::put_nbi(ctx, target + (i & 1023), &v, 1, 1);
        }
        pgas::quiet(ctx);
        const double s = std::chrono::duration<double>(clock_type::now() - start).count();
        state.SetIterationTime(s);
        seconds += s;
    }
    state.counters["doorbell_batch"] = batch;
    state.counters["ns_per_put"] = seconds * 1e9 / (double(state.iterations()) * posts);
}
BENCHMARK(put_nbi_8B_through_emulated_nic)->Arg(1)->Arg(32)->UseManualTime();

// Round trip of one fetching atomic: post, the NIC executes, CQE, reply read.
void atomic_fetch_add_round_trip(benchmark::State& state) {
    auto w = pgas::world::init_local(2, world_options());
    auto counter = w.alloc<std::uint64_t>(1);
    pgas::ibgda_domain ib(w, emulated(256, 1));
    auto ctx = ib.context(0);
    constexpr int repeats = 1000;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = clock_type::now();
        for (int i = 0; i < repeats; ++i) benchmark::DoNotOptimize(pgas::atomic_fetch_add(ctx, counter, std::uint64_t(1), 1));
        const double s = std::chrono::duration<double>(clock_type::now() - start).count();
        state.SetIterationTime(s);
        seconds += s;
    }
    state.counters["us_per_round_trip"] = seconds * 1e6 / (double(state.iterations()) * repeats);
}
BENCHMARK(atomic_fetch_add_round_trip)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
