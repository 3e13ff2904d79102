// Host transport micro-benchmarks: put bandwidth, p ping-pong and barrier latency between PE threads.
//
// The host transport is for CI and debugging, not speed; these numbers track
// regressions of the device-layer code paths that it shares with the GPU
// transports (copy, signal, dissemination barrier).
#include <pgas/pgas.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::host>;
using clock_type = std::chrono::steady_clock;

pgas::world_options options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{256} << 20;
    o.timeout_ms = 30000;
    return o;
}

// Runs `repeats` of op on two PEs; returns PE 0's seconds for all of them.
// One benchmark iteration is one such batch: manual time per batch keeps the
// iteration count small (thread start-up is outside the timed region).
template <class Op>
double time_two_pes(pgas::world& w, int repeats, Op op) {
    double seconds = 0;
    w.launch_host([&](const ctx_t& ctx) {
        pgas::barrier_all(ctx);
        const auto start = clock_type::now();
        for (int i = 0; i < repeats; ++i) op(ctx, i);
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 0) seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    });
    return seconds;
}

void put_bandwidth(benchmark::State& state) {
    const auto bytes = std::size_t(state.range(0));
    auto w = pgas::world::init_local(2, options());
    auto target = w.alloc<std::byte>(bytes);
    std::vector<std::byte> source(bytes, std::byte{1});
    const int repeats = bytes >= (1 << 20) ? 20 : 200;
    double total = 0;
    for (auto _ : state) {
        const double s = time_two_pes(w, repeats, [&](const ctx_t& ctx, int) {
            if (ctx.my_pe() == 0) pgas::put(ctx, target, source.data(), bytes, 1);
        });
        state.SetIterationTime(s);
        total += s;
    }
    const double puts = double(state.iterations()) * repeats;
    state.SetBytesProcessed(std::int64_t(puts) * std::int64_t(bytes));
    state.counters["us_per_put"] = total * 1e6 / puts;
}
BENCHMARK(put_bandwidth)->RangeMultiplier(16)->Range(8, 64 << 20)->UseManualTime();

void p_ping_pong(benchmark::State& state) {
    auto w = pgas::world::init_local(2, options());
    auto flag = w.alloc<std::uint64_t>(1);
    constexpr int repeats = 2000;
    double total = 0;
    for (auto _ : state) {
        const double s = time_two_pes(w, repeats, [&](const ctx_t& ctx, int i) {
            const auto round = std::uint64_t(i) + 1;
            if (ctx.my_pe() == 0) {
                pgas::p(ctx, flag, round, 1);
                pgas::wait_until(ctx, flag, pgas::cmp::eq, round);
            } else {
                pgas::wait_until(ctx, flag, pgas::cmp::eq, round);
                pgas::p(ctx, flag, round, 0);
            }
        });
        state.SetIterationTime(s);
        total += s;
    }
    state.counters["one_way_us"] = total * 1e6 / (2.0 * repeats * double(state.iterations()));
}
BENCHMARK(p_ping_pong)->UseManualTime();

void barrier_latency(benchmark::State& state) {
    auto w = pgas::world::init_local(int(state.range(0)), options());
    constexpr int repeats = 500;
    double total = 0;
    for (auto _ : state) {
        double seconds = 0;
        w.launch_host([&](const ctx_t& ctx) {
            pgas::barrier_all(ctx);
            const auto start = clock_type::now();
            for (int i = 0; i < repeats; ++i) pgas::barrier_all(ctx);
            if (ctx.my_pe() == 0) seconds = std::chrono::duration<double>(clock_type::now() - start).count();
        });
        state.SetIterationTime(seconds);
        total += seconds;
    }
    state.counters["us_per_barrier"] = total * 1e6 / (repeats * double(state.iterations()));
}
BENCHMARK(barrier_latency)->Arg(2)->Arg(4)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
