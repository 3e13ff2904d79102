// The MoE example on one GPU with 2, 4 and 8 PEs sharing it (NVLink transport): both modes, bf16 and fp8, against the reference.
//
// Every PE has its own non-blocking stream, and every phase is launched on
// all PEs before the next one: the PEs' kernels wait for each other, so they
// must run side by side (each gets its share of the SMs: moe::resident_blocks).
// Run with CUDA_MODULE_LOADING=EAGER (see tests/gpu/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "check.hpp"
#include "moe.cuh"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using moe::check::routing;

#define CHECK_CUDA(expr) REQUIRE_MESSAGE((expr) == cudaSuccess, cudaGetErrorString(cudaGetLastError()))

struct shared_gpu {
    pgas::world w;
    std::vector<cudaStream_t> streams;
    int blocks;

    explicit shared_gpu(int n)
        : w(pgas::world::init_local(std::vector<int>(std::size_t(n), 0), options())),
          blocks(moe::resident_blocks(0, n)) {
        CHECK_CUDA(cudaSetDevice(0));
        streams.resize(std::size_t(n));
        for (auto& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    ~shared_gpu() {
        for (auto s : streams) cudaStreamDestroy(s);
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

moe::config small(bool fp8, int n_pes, int blocks) {
    moe::config c;
    c.hidden = 1024;
    c.experts = 32;
    c.top_k = 4;
    c.max_tokens = 48;
    c.recv_rows = n_pes * c.max_tokens * c.top_k;
    c.fp8 = fp8;
    c.blocks = blocks;
    return c;
}

template <class Buffers, class Make, class Dispatch, class Combine, class CheckDispatch>
void round_trips(int n, bool fp8, Make make, Dispatch dispatch, Combine combine, CheckDispatch check_dispatch) {
    shared_gpu g(n);
    const moe::config c = small(fp8, n, g.blocks);
    const Buffers b = make(g.w, c);
    moe::gpu_access access{g.w};
    unsigned seed = 11;
    bool diagnosed = false;
    for (routing r : {routing::uneven, routing::even_only, routing::all_to_one, routing::same_pe}) {
        for (int round = 0; round < 2; ++round, ++seed) {
            CAPTURE(n);
            CAPTURE(fp8);
            INFO("routing ", moe::check::name(r), " round ", round);
            const auto in = moe::check::make_inputs(c, n, r, seed);
            const auto want = moe::check::expected(c, n, in);
            const auto batches = moe::check::batches(c, in);
            moe::check::upload(access, b.io, in);
            for (int i = 0; i < n; ++i) dispatch(g.w, i, b, batches[std::size_t(i)], g.streams[std::size_t(i)]);
            g.sync();
            CHECK(check_dispatch(access, b, want) == "");
            for (int i = 0; i < n; ++i) moe::launch_toy_experts(g.w, i, b, g.streams[std::size_t(i)]);
            for (int i = 0; i < n; ++i) combine(g.w, i, b, batches[std::size_t(i)], g.streams[std::size_t(i)]);
            g.sync();
            const std::string failure = moe::check::combine(access, c, b.io, want, in);
            CHECK(failure == "");
            if (!failure.empty() && !diagnosed) {  // where the first failure of this PE count goes wrong
                diagnosed = true;
                MESSAGE(moe::check::diagnose(access, b, in, want));
            }
        }
    }
}

void low_latency(int n, bool fp8) {
    round_trips<moe::ll_buffers>(
        n, fp8, moe::make_ll_buffers, moe::launch_ll_dispatch, moe::launch_ll_combine,
        [](auto& access, const moe::ll_buffers& b, const auto& want) { return moe::check::ll_dispatch(access, b, want); });
}
void throughput(int n, bool fp8) {
    round_trips<moe::tp_buffers>(
        n, fp8, moe::make_tp_buffers, moe::launch_tp_dispatch, moe::launch_tp_combine,
        [](auto& access, const moe::tp_buffers& b, const auto& want) { return moe::check::tp_dispatch(access, b, want); });
}

}  // namespace

TEST_CASE("low latency, bf16, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) low_latency(n, false); }
TEST_CASE("low latency, fp8, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) low_latency(n, true); }
TEST_CASE("throughput, bf16, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) throughput(n, false); }
TEST_CASE("throughput, fp8, 2/4/8 PEs on one GPU") { for (int n : {2, 4, 8}) throughput(n, true); }

// A whole round trip of each mode captured in one CUDA graph per PE and replayed: no host step between phases.
TEST_CASE("both modes replay from a CUDA graph, 4 PEs on one GPU") {
    const int n = 4;
    shared_gpu g(n);
    const moe::config c = small(false, n, g.blocks);
    const auto ll = moe::make_ll_buffers(g.w, c);
    const auto tp = moe::make_tp_buffers(g.w, c);
    moe::gpu_access access{g.w};
    const auto in = moe::check::make_inputs(c, n, routing::uneven, 5);
    const auto want = moe::check::expected(c, n, in);
    const auto batches = moe::check::batches(c, in);
    moe::check::upload(access, ll.io, in);
    moe::check::upload(access, tp.io, in);
    std::vector<cudaGraphExec_t> graphs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        cudaStream_t s = g.streams[std::size_t(i)];
        cudaGraph_t graph;
        CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        moe::launch_ll_dispatch(g.w, i, ll, batches[std::size_t(i)], s);
        moe::launch_toy_experts(g.w, i, ll, s);
        moe::launch_ll_combine(g.w, i, ll, batches[std::size_t(i)], s);
        moe::launch_tp_dispatch(g.w, i, tp, batches[std::size_t(i)], s);
        moe::launch_toy_experts(g.w, i, tp, s);
        moe::launch_tp_combine(g.w, i, tp, batches[std::size_t(i)], s);
        CHECK_CUDA(cudaStreamEndCapture(s, &graph));
        CHECK_CUDA(cudaGraphInstantiate(&graphs[std::size_t(i)], graph, 0));
        CHECK_CUDA(cudaGraphDestroy(graph));
    }
    for (int replay = 0; replay < 3; ++replay) {
        for (int i = 0; i < n; ++i) CHECK_CUDA(cudaGraphLaunch(graphs[std::size_t(i)], g.streams[std::size_t(i)]));
        g.sync();
        CHECK(moe::check::combine(access, c, ll.io, want, in) == "");
        CHECK(moe::check::tp_dispatch(access, tp, want) == "");
        CHECK(moe::check::combine(access, c, tp.io, want, in) == "");
    }
    for (auto e : graphs) CHECK_CUDA(cudaGraphExecDestroy(e));
}
