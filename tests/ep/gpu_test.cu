// pgas::ep over the NVLink transport, both modes, bf16 and fp8, against the reference: on one GPU with 2, 4 and
// 8 PEs sharing it (suite one_gpu), and on N GPUs, one PE each, driven by one process (suite gpus: N from
// PGAS_TEST_GPUS, default 2; with fewer GPUs the program exits 77, ctest's skip status, saying so).
//
// Every PE has its own non-blocking stream, and every phase is launched on
// all PEs before the next one: the PEs' kernels wait for each other, so they
// must run side by side (each gets its share of the SMs: pgas::ep::resident_blocks).
// Run with CUDA_MODULE_LOADING=EAGER (see tests/gpu/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "check.hpp"
#include "toy_expert.cuh"
#include "../common/support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using ep_test::check::routing;
using pgas::ep::low_latency_buffer;
using pgas::ep::throughput_buffer;

#define CHECK_CUDA(expr) REQUIRE_MESSAGE((expr) == cudaSuccess, cudaGetErrorString(cudaGetLastError()))

// PE i on devices[i] (several PEs may share a GPU), one process; a non-blocking stream per PE on its GPU.
struct gpu_pes {
    pgas::world w;
    std::vector<cudaStream_t> streams;
    int blocks;

    explicit gpu_pes(const std::vector<int>& devices)
        : w(pgas::world::init_local(devices, options())), blocks(blocks_for(devices)) {
        streams.resize(devices.size());
        for (std::size_t i = 0; i < devices.size(); ++i) {
            CHECK_CUDA(cudaSetDevice(devices[i]));
            CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        }
    }
    ~gpu_pes() {
        for (std::size_t i = 0; i < streams.size(); ++i) {
            cudaSetDevice(w.device_of(int(i)));
            cudaStreamDestroy(streams[i]);
        }
    }
    // Every PE's kernels resident beside those of the PEs sharing its GPU: the fewest blocks any GPU allows.
    static int blocks_for(const std::vector<int>& devices) {
        int blocks = 1 << 30;
        for (int device : devices)
            blocks = std::min(blocks, pgas::ep::resident_blocks(device, int(std::count(devices.begin(), devices.end(), device))));
        return blocks;
    }
    static pgas::world_options options() {
        pgas::world_options o;
        o.heap_bytes = std::uint64_t{256} << 20;
        o.timeout_ms = 20000;  // a wait that long is a bug: trap with a diagnostic
        return o;
    }
    void sync() {
        for (auto s : streams) CHECK_CUDA(cudaStreamSynchronize(s));
    }
};

pgas::ep::config small(bool fp8, int blocks, int hidden = 1024) {
    pgas::ep::config c;
    c.hidden = hidden;
    c.experts = 32;
    c.top_k = 4;
    c.max_tokens = 48;
    c.fp8 = fp8;
    c.blocks = blocks;
    return c;
}

// n PEs sharing GPU 0, or n GPUs one PE each; with fewer GPUs than that the program ends with ctest's skip status.
std::vector<int> shared_gpu(int n) { return std::vector<int>(std::size_t(n), 0); }
std::vector<int> one_gpu_each(int n) {
    int found = 0;
    if (cudaGetDeviceCount(&found) != cudaSuccess) found = 0;
    if (found < n) {
        std::printf("needs %d GPUs, found %d: skipped\n", n, found);
        std::fflush(stdout);
        std::exit(77);
    }
    std::vector<int> devices;
    for (int i = 0; i < n; ++i) devices.push_back(i);
    return devices;
}
int gpus_wanted() {
    const char* value = std::getenv("PGAS_TEST_GPUS");
    return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : 2;
}

// Blocks and tokens where a case sets them itself (wide_blocks).
struct grid_shape {
    int blocks = 0, max_tokens = 0;  // 0: small()'s
};

template <class Buffer>
void round_trips(const std::vector<int>& devices, bool fp8, int hidden = 1024, grid_shape shape = {}) {
    const int n = int(devices.size());
    gpu_pes g(devices);
    pgas::ep::config c = small(fp8, shape.blocks > 0 ? shape.blocks : g.blocks, hidden);
    if (shape.max_tokens > 0) c.max_tokens = shape.max_tokens;
    const Buffer buf(g.w, c);
    const auto& b = buf.layout();
    ep_test::check::gpu_access access{g.w};
    unsigned seed = 11;
    bool diagnosed = false;
    for (routing r : {routing::uneven, routing::even_only, routing::all_to_one, routing::same_pe}) {
        for (int round = 0; round < 2; ++round, ++seed) {
            CAPTURE(n);
            CAPTURE(fp8);
            CAPTURE(hidden);
            INFO("routing ", ep_test::check::name(r), " round ", round);
            const auto in = ep_test::check::make_inputs(c, n, r, seed);
            const auto want = ep_test::check::expected(c, n, in);
            const auto batches = ep_test::check::batches(c, in);
            ep_test::check::upload(access, b.io, in);
            for (int i = 0; i < n; ++i) pgas::ep::dispatch_on_stream(buf, i, batches[std::size_t(i)], g.streams[std::size_t(i)]);
            g.sync();
            CHECK(ep_test::check::dispatch(access, b, want) == "");
            for (int i = 0; i < n; ++i) ep_test::launch_toy_experts(buf, i, g.streams[std::size_t(i)]);
            for (int i = 0; i < n; ++i) pgas::ep::combine_on_stream(buf, i, batches[std::size_t(i)], g.streams[std::size_t(i)]);
            g.sync();
            const std::string failure = ep_test::check::combine(access, c, b.io, want, in);
            CHECK(failure == "");
            if (!failure.empty() && !diagnosed) {  // where the first failure of this PE count goes wrong
                diagnosed = true;
                MESSAGE(ep_test::check::diagnose(access, b, in, want));
            }
        }
    }
}

void low_latency(const std::vector<int>& devices, bool fp8, int hidden = 1024) {
    round_trips<low_latency_buffer>(devices, fp8, hidden);
}
void throughput(const std::vector<int>& devices, bool fp8, int hidden = 1024) {
    round_trips<throughput_buffer>(devices, fp8, hidden);
}
// Throughput mode on few blocks with many tokens each: two blocks of 256 threads for 1100 tokens, so that each block
// lays out more tokens than it has threads, ranked over all its warps in three passes (the dispatch's step 4).
// (bench_moe's one block of 512 threads per SM does not launch in this PGAS_CHECKS build: wide_block_error.)
void wide_blocks(const std::vector<int>& devices) {
    for (bool fp8 : {false, true}) round_trips<throughput_buffer>(devices, fp8, 256, {2, 1100});
}
// A block wider than the kernel can launch is refused at the launch, naming the call, the PE and the widths.
void wide_block_error(const std::vector<int>& devices) {
    gpu_pes g(devices);
    pgas::ep::config c = small(false, 1);
    c.threads = 1024;
    const throughput_buffer buf(g.w, c);
    const auto in = ep_test::check::make_inputs(c, int(devices.size()), routing::uneven, 5);
    const auto batches = ep_test::check::batches(c, in);
    const std::string what = test::error_of([&] { pgas::ep::dispatch_on_stream(buf, 0, batches[0], g.streams[0]); });
    CHECK_MESSAGE(test::contains(what, "ep::dispatch (throughput) on PE 0"), what);
    CHECK_MESSAGE(test::contains(what, "config::threads = 1024"), what);
    CHECK_MESSAGE(test::contains(what, "launches at most"), what);
    // Asked for the blocks of that width, resident_blocks refuses too (it answered 1 block, which then never launched).
    const std::string refused = test::error_of([&] { (void)pgas::ep::resident_blocks(devices[0], 1, 1024); });
    CHECK_MESSAGE(test::contains(refused, "ep::resident_blocks"), refused);
    CHECK_MESSAGE(test::contains(refused, "threads = 1024"), refused);
}
// Rows that do not fill the kernels' tiles: bf16 hidden 200 (25 vectors: a partial last tile of the combine's sum),
// fp8 hidden 384 (three 128-value groups: the cast's half-warp steps end mid-warp).
void odd_rows(const std::vector<int>& devices) {
    low_latency(devices, false, 200);
    low_latency(devices, true, 384);
    throughput(devices, false, 200);
    throughput(devices, true, 384);
}

// A whole round trip of each mode captured in one CUDA graph per PE and replayed: no host step between phases.
void graph_replay(const std::vector<int>& devices) {
    const int n = int(devices.size());
    gpu_pes g(devices);
    const pgas::ep::config c = small(false, g.blocks);
    const low_latency_buffer ll_buf(g.w, c);
    const throughput_buffer tp_buf(g.w, c);
    const auto& ll = ll_buf.layout();
    const auto& tp = tp_buf.layout();
    ep_test::check::gpu_access access{g.w};
    const auto in = ep_test::check::make_inputs(c, n, routing::uneven, 5);
    const auto want = ep_test::check::expected(c, n, in);
    const auto batches = ep_test::check::batches(c, in);
    ep_test::check::upload(access, ll.io, in);
    ep_test::check::upload(access, tp.io, in);
    std::vector<cudaGraphExec_t> graphs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        cudaStream_t s = g.streams[std::size_t(i)];
        cudaGraph_t graph;
        CHECK_CUDA(cudaSetDevice(g.w.device_of(i)));
        CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        pgas::ep::dispatch_on_stream(ll_buf, i, batches[std::size_t(i)], s);
        ep_test::launch_toy_experts(ll_buf, i, s);
        pgas::ep::combine_on_stream(ll_buf, i, batches[std::size_t(i)], s);
        pgas::ep::dispatch_on_stream(tp_buf, i, batches[std::size_t(i)], s);
        ep_test::launch_toy_experts(tp_buf, i, s);
        pgas::ep::combine_on_stream(tp_buf, i, batches[std::size_t(i)], s);
        CHECK_CUDA(cudaStreamEndCapture(s, &graph));
        CHECK_CUDA(cudaGraphInstantiate(&graphs[std::size_t(i)], graph, 0));
        CHECK_CUDA(cudaGraphDestroy(graph));
    }
    for (int replay = 0; replay < 3; ++replay) {
        for (int i = 0; i < n; ++i) {
            CHECK_CUDA(cudaSetDevice(g.w.device_of(i)));
            CHECK_CUDA(cudaGraphLaunch(graphs[std::size_t(i)], g.streams[std::size_t(i)]));
        }
        g.sync();
        CHECK(ep_test::check::combine(access, c, ll.io, want, in) == "");
        CHECK(ep_test::check::dispatch(access, tp, want) == "");
        CHECK(ep_test::check::combine(access, c, tp.io, want, in) == "");
    }
    for (auto e : graphs) CHECK_CUDA(cudaGraphExecDestroy(e));
}

}  // namespace

TEST_SUITE("one_gpu") {
    TEST_CASE("low latency, bf16, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) low_latency(shared_gpu(n), false); }
    TEST_CASE("low latency, fp8, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) low_latency(shared_gpu(n), true); }
    TEST_CASE("throughput, bf16, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) throughput(shared_gpu(n), false); }
    TEST_CASE("throughput, fp8, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) throughput(shared_gpu(n), true); }
    TEST_CASE("both modes replay from a CUDA graph, 4 PEs on one GPU") { graph_replay(shared_gpu(4)); }
    TEST_CASE("rows that do not fill a tile or a warp, 2/4 PEs on one GPU") {
        for (int n : {2, 4}) odd_rows(shared_gpu(n));
    }
    TEST_CASE("throughput on two blocks, more tokens than threads, 2 PEs on one GPU") { wide_blocks(shared_gpu(2)); }
    TEST_CASE("a block wider than the kernel launches is refused, naming it") { wide_block_error(shared_gpu(2)); }
}

TEST_SUITE("gpus") {
    TEST_CASE("low latency, bf16 and fp8, one PE per GPU") {
        low_latency(one_gpu_each(gpus_wanted()), false);
        low_latency(one_gpu_each(gpus_wanted()), true);
    }
    TEST_CASE("throughput, bf16 and fp8, one PE per GPU") {
        throughput(one_gpu_each(gpus_wanted()), false);
        throughput(one_gpu_each(gpus_wanted()), true);
    }
    TEST_CASE("both modes replay from a CUDA graph, one PE per GPU") { graph_replay(one_gpu_each(gpus_wanted())); }
    TEST_CASE("rows that do not fill a tile or a warp, one PE per GPU") { odd_rows(one_gpu_each(gpus_wanted())); }
    TEST_CASE("throughput on two blocks, more tokens than threads, one PE per GPU") {
        wide_blocks(one_gpu_each(gpus_wanted()));
    }
}
