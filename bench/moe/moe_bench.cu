// pgas::ep dispatch and combine per mode and PE count, beside cudaMemcpyAsync of the same bytes.
//
// GPU time from CUDA events on each PE's stream, reported through Google
// Benchmark's manual time (dispatch + combine). Each round, every PE runs
//   barrier | dispatch | experts | barrier | combine
// and the events after each barrier and each phase give that PE's phase
// times; a phase's time is the slowest PE's (the barrier kernels release all
// PEs within about a microsecond, so the PEs start each phase together).
// The copy limit: every PE copies, on its own GPU and stream, exactly the
// bytes it sends in that phase (rows of top-k choices), all PEs at once.
//
// Default shapes (DeepSeek-V3): hidden 7168, 256 experts, top-8; 128 tokens
// per PE in low-latency mode, 4096 in throughput mode; uniform routing.
// PEs go round-robin over MOE_BENCH_GPUS GPUs (default 1: all PEs share GPU
// 0); with MOE_BENCH_GPUS=8 on an 8-GPU machine the 8-PE rows have one PE per
// GPU, unchanged otherwise. --small: a small shape (the smoke test).
// Diagnosis knobs (defaults: the issue's shapes): MOE_BENCH_PER_SM caps the blocks per SM that the PEs sharing a
// GPU split between them (pgas::ep::resident_blocks, default 2); MOE_BENCH_TOKENS sends that many tokens per PE and
// call instead of max_tokens (0: only the notify and synchronisation cost of a phase).
#include "check.hpp"
#include "toy_expert.cuh"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

bool small_shape = false;

void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::abort();
    }
}

int bench_gpus() {
    const char* v = std::getenv("MOE_BENCH_GPUS");
    return v ? std::max(1, std::atoi(v)) : 1;
}
// An integer environment knob, or `otherwise` when unset.
int knob(const char* name, int otherwise) {
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : otherwise;
}

__global__ void barrier_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx) {
    pgas::barrier_all<pgas::block>(ctx);
}

// One world of n PEs with both modes' buffers; rebuilt when n changes.
struct setup {
    int n;
    pgas::world w;
    std::vector<cudaStream_t> streams;
    bool fp8;
    std::unique_ptr<pgas::ep::low_latency_buffer> ll;  // after the world: destroyed before it
    std::unique_ptr<pgas::ep::throughput_buffer> tp;

    static pgas::world make_world(int n) {
        std::vector<int> devices;
        for (int i = 0; i < n; ++i) devices.push_back(i % bench_gpus());
        pgas::world_options o;
        // Throughput buffers at the default shape: ~2.5 GiB per PE; low latency ~1 GiB.
        o.heap_bytes = small_shape ? std::uint64_t{256} << 20 : std::uint64_t{4} << 30;
        o.timeout_ms = 20000;
        return pgas::world::init_local(devices, o);
    }
    pgas::ep::config shape(bool low_latency, int blocks) const {
        pgas::ep::config c = low_latency ? pgas::ep::low_latency_defaults() : pgas::ep::throughput_defaults();
        if (small_shape) {
            c.hidden = 1024;
            c.experts = 64;
            c.top_k = 4;
            c.max_tokens = low_latency ? 32 : 256;
        }
        c.fp8 = fp8;
        c.blocks = blocks;
        return c;
    }
    setup(int n_pes, bool use_fp8) : n(n_pes), w(make_world(n_pes)), fp8(use_fp8) {
        const int sharing = (n + bench_gpus() - 1) / bench_gpus();
        const int blocks = pgas::ep::resident_blocks(w.device_of(0), sharing, 256, knob("MOE_BENCH_PER_SM", 2));
        ll = std::make_unique<pgas::ep::low_latency_buffer>(w, shape(true, blocks));
        tp = std::make_unique<pgas::ep::throughput_buffer>(w, shape(false, blocks));
        streams.resize(std::size_t(n));
        for (int i = 0; i < n; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaStreamCreateWithFlags(&streams[std::size_t(i)], cudaStreamNonBlocking), "stream");
        }
    }
    ~setup() {
        for (auto s : streams) cudaStreamDestroy(s);
    }
};

std::unique_ptr<setup>& current() {
    static std::unique_ptr<setup> s;
    return s;
}
setup& get(int n, bool fp8) {
    auto& s = current();
    if (!s || s->n != n || s->fp8 != fp8) {
        s.reset();
        s = std::make_unique<setup>(n, fp8);
    }
    return *s;
}

struct events {
    std::vector<cudaEvent_t> e;  // per PE: start, dispatched, experts done + barrier, combined
    explicit events(const setup& s) : e(std::size_t(4 * s.n)) {
        for (int i = 0; i < s.n; ++i) {
            cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
            for (int k = 0; k < 4; ++k) cuda_ok(cudaEventCreate(&e[std::size_t(4 * i + k)]), "event");
        }
    }
    ~events() {
        for (auto ev : e) cudaEventDestroy(ev);
    }
    cudaEvent_t at(int pe, int k) const { return e[std::size_t(4 * pe + k)]; }
    // Slowest PE's time between marks a and b, in ms.
    double span(int n, int a, int b) const {
        double worst = 0;
        for (int i = 0; i < n; ++i) {
            float ms = 0;
            cuda_ok(cudaEventElapsedTime(&ms, at(i, a), at(i, b)), "elapsed");
            worst = std::max(worst, double(ms));
        }
        return worst;
    }
};

// One round on every PE; `dispatch`/`combine` launch a phase of local PE i,
// `experts` what runs between them. Returns {dispatch ms, combine ms}.
template <class Dispatch, class Experts, class Combine>
std::pair<double, double> round(setup& s, const events& ev, Dispatch dispatch, Experts experts, Combine combine) {
    for (int i = 0; i < s.n; ++i) {
        cudaStream_t st = s.streams[std::size_t(i)];
        cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
        barrier_kernel<<<1, 32, 0, st>>>(s.w.context<pgas::nvlink>(i));
        cuda_ok(cudaEventRecord(ev.at(i, 0), st), "record");
        dispatch(i, st);
        cuda_ok(cudaEventRecord(ev.at(i, 1), st), "record");
    }
    for (int i = 0; i < s.n; ++i) {
        cudaStream_t st = s.streams[std::size_t(i)];
        cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
        experts(i, st);
        barrier_kernel<<<1, 32, 0, st>>>(s.w.context<pgas::nvlink>(i));
        cuda_ok(cudaEventRecord(ev.at(i, 2), st), "record");
        combine(i, st);
        cuda_ok(cudaEventRecord(ev.at(i, 3), st), "record");
    }
    for (int i = 0; i < s.n; ++i) cuda_ok(cudaStreamSynchronize(s.streams[std::size_t(i)]), "round");
    return {ev.span(s.n, 0, 1), ev.span(s.n, 2, 3)};
}

// The copy limit: every PE copies each phase's bytes D2D on its stream, all
// PEs at once, in the same barrier-separated round as the phases.
std::pair<double, double> copy_round(setup& s, const events& ev, std::size_t dispatch_bytes, std::size_t combine_bytes,
                                     pgas::symmetric_ptr<std::byte> from, pgas::symmetric_ptr<std::byte> to) {
    auto copy = [&](int i, cudaStream_t st, std::size_t bytes) {
        cuda_ok(cudaMemcpyAsync(s.w.device_address(to, i), s.w.device_address(from, i), bytes, cudaMemcpyDeviceToDevice, st),
                "copy");
    };
    return round(
        s, ev, [&](int i, cudaStream_t st) { copy(i, st, dispatch_bytes); }, [](int, cudaStream_t) {},
        [&](int i, cudaStream_t st) { copy(i, st, combine_bytes); });
}

template <class Buffer>
void run(benchmark::State& state, const char* mode, std::unique_ptr<Buffer> setup::*which) {
    const int n = int(state.range(0));
    const bool fp8 = state.range(1) != 0;
    setup& s = get(n, fp8);
    const Buffer& buf = *(s.*which);
    const auto& b = buf.layout();
    const pgas::ep::config& c = b.cfg;
    ep_test::check::gpu_access access{s.w};
    const auto in = ep_test::check::make_inputs(c, n, ep_test::check::routing::uniform, 3);
    ep_test::check::upload(access, b.io, in);
    std::vector<pgas::ep::batch> batches;
    const int tokens = std::clamp(knob("MOE_BENCH_TOKENS", c.max_tokens), 0, c.max_tokens);
    for (int i = 0; i < n; ++i) batches.push_back({tokens, c.hidden});  // every PE at full load by default

    // Bytes each PE sends per phase: one row per (token, choice).
    const std::size_t rows = std::size_t(tokens) * c.top_k;
    const std::size_t dispatch_row = c.fp8 ? std::size_t(c.hidden) + std::size_t(c.hidden) / pgas::ep::fp8_group * 4
                                           : std::size_t(c.hidden) * 2;
    const std::size_t dispatch_bytes = rows * dispatch_row, combine_bytes = rows * std::size_t(c.hidden) * 2;

    events ev(s);
    auto dispatch = [&](int i, cudaStream_t st) { pgas::ep::dispatch_on_stream(buf, i, batches[std::size_t(i)], st); };
    auto combine = [&](int i, cudaStream_t st) { pgas::ep::combine_on_stream(buf, i, batches[std::size_t(i)], st); };
    auto experts = [&](int i, cudaStream_t st) { ep_test::launch_toy_experts(buf, i, st); };
    round(s, ev, dispatch, experts, combine);  // warm-up (and module load)

    double dispatch_ms = 0, combine_ms = 0;
    for (auto _ : state) {
        const auto [d, cm] = round(s, ev, dispatch, experts, combine);
        dispatch_ms += d;
        combine_ms += cm;
        state.SetIterationTime((d + cm) / 1e3);
    }
    const double iters = double(state.iterations());
    const auto from = pgas::symmetric_cast<std::byte>(b.expert_y), to = pgas::symmetric_cast<std::byte>(b.io.comb_recv);
    double copy_d = 0, copy_c = 0;
    constexpr int copy_reps = 5;
    for (int r = 0; r < copy_reps; ++r) {
        const auto [d, cm] = copy_round(s, ev, dispatch_bytes, combine_bytes, from, to);
        copy_d += d, copy_c += cm;
    }

    const double total_d = double(dispatch_bytes) * n, total_c = double(combine_bytes) * n;
    const double d_us = dispatch_ms * 1e3 / iters, c_us = combine_ms * 1e3 / iters;
    const double cd_us = copy_d * 1e3 / copy_reps, cc_us = copy_c * 1e3 / copy_reps;
    state.counters["dispatch_us"] = d_us;
    state.counters["combine_us"] = c_us;
    state.counters["dispatch_GBps"] = total_d / (d_us * 1e3);
    state.counters["combine_GBps"] = total_c / (c_us * 1e3);
    state.counters["copy_dispatch_us"] = cd_us;
    state.counters["copy_combine_us"] = cc_us;
    state.counters["copy_dispatch_GBps"] = total_d / (cd_us * 1e3);
    state.counters["copy_combine_GBps"] = total_c / (cc_us * 1e3);
    state.counters["dispatch_vs_copy"] = cd_us / d_us;  // target >= 0.8 in throughput mode
    state.counters["combine_vs_copy"] = cc_us / c_us;
    state.counters["blocks_per_pe"] = c.blocks;  // pgas::ep::resident_blocks: fewer when a kernel's registers leave no room
    state.SetLabel(std::string(mode) + (fp8 ? " fp8" : " bf16") + ", " + std::to_string(n) + " PEs on " +
                   std::to_string(std::min(n, bench_gpus())) + " GPU(s)");

    // The round trip must still be right at this shape (checked once, outside the timing; not when
    // MOE_BENCH_TOKENS sent fewer tokens than the reference's inputs hold).
    if (tokens != c.max_tokens) return;
    const auto want = ep_test::check::expected(c, n, in);
    const std::string wrong = ep_test::check::combine(access, c, b.io, want, in);
    if (!wrong.empty()) state.SkipWithError(("combine differs from the reference: " + wrong).c_str());
}

void low_latency(benchmark::State& state) {
    run(state, "low-latency", &setup::ll);
}
void throughput(benchmark::State& state) {
    run(state, "throughput", &setup::tp);
}

// Args: {PEs, fp8}; grouped by PE count so each world is built once.
void shapes(benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Iterations(20)->ArgNames({"pes", "fp8"});
}
BENCHMARK(low_latency)->Apply(shapes)->Args({2, 0})->Args({2, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({2, 0})->Args({2, 1});
BENCHMARK(low_latency)->Apply(shapes)->Args({4, 0})->Args({4, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({4, 0})->Args({4, 1});
BENCHMARK(low_latency)->Apply(shapes)->Args({8, 0})->Args({8, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({8, 0})->Args({8, 1});

}  // namespace

int main(int argc, char** argv) {
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--small") == 0)
            small_shape = true;
        else
            args.push_back(argv[i]);
    }
    int count = int(args.size());
    benchmark::Initialize(&count, args.data());
    benchmark::RunSpecifiedBenchmarks();
    current().reset();
    benchmark::Shutdown();
    return 0;
}
