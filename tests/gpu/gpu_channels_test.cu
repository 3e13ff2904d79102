// Channels and completion scopes on a GPU over the NVLink transport, two PEs sharing GPU 0 (init_local({0, 0})):
// each warp picks a channel (DeepEP's pattern), puts on it, completes with flush_local, quiet(ctx, pe), quiet and
// quiet_all, and the peer checks every byte. The host-transport twin is tests/host/channels_test.cpp.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>

#include "support.cuh"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace gpu_support;

constexpr int warps = 8;
constexpr int words_per_warp = 64;
constexpr int channels = 4;

__device__ std::uint64_t value(int pe, int warp, int i) { return (std::uint64_t(pe) << 40) | (std::uint64_t(warp) << 20) | std::uint64_t(i); }

// Each warp writes its block of words into `staging` (its source), puts it to the right neighbour on channel
// warp % n_channels, flush_local's, overwrites the source, then completes: warps 0-1 with quiet(ctx, pe), 2-3 with
// quiet on their channel, the rest left to quiet_all<block>; then the barrier and the check of what arrived.
__global__ void channel_puts(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> inbox,
                             pgas::symmetric_ptr<std::uint64_t> staging, unsigned long long* errors) {
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    const int me = ctx.my_pe(), right = (me + 1) % ctx.n_pes(), left = (me + ctx.n_pes() - 1) % ctx.n_pes();
    if (ctx.n_channels() != channels && threadIdx.x == 0) atomicAdd(errors, 1ull);
    const auto on_c = ctx.on_channel(warp % ctx.n_channels());
    if (on_c.channel() != warp % channels && lane == 0) atomicAdd(errors, 1ull);
    std::uint64_t* source = ctx.local(staging) + warp * words_per_warp;
    for (int i = lane; i < words_per_warp; i += 32) source[i] = value(me, warp, i);
    __syncwarp();
    pgas::put_nbi<pgas::warp>(on_c, inbox + warp * words_per_warp, source, words_per_warp, right);
    pgas::flush_local<pgas::warp>(on_c);
    for (int i = lane; i < words_per_warp; i += 32) source[i] = ~0ull;  // reusable after flush_local
    if (warp < 2) pgas::quiet<pgas::warp>(on_c, right);
    else if (warp < 4) pgas::quiet<pgas::warp>(on_c);
    pgas::quiet_all<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx.on_channel(channels - 1));
    const std::uint64_t* got = ctx.local(inbox);
    for (int i = int(threadIdx.x); i < warps * words_per_warp; i += int(blockDim.x))
        if (got[i] != value(left, i / words_per_warp, i % words_per_warp)) atomicAdd(errors, 1ull);
}

void check_channels() {
    auto o = options();
    o.channels = channels;
    auto w = pgas::world::init_local(std::vector<int>{0, 0}, o);
    REQUIRE(w.channels() == channels);
    auto inbox = w.alloc<std::uint64_t>(warps * words_per_warp);
    auto staging = w.alloc<std::uint64_t>(warps * words_per_warp);
    unsigned long long* errors = nullptr;
    CHECK_CUDA(cudaMallocManaged(&errors, sizeof(*errors)));
    *errors = 0;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < w.n_local_pes(); ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            channel_puts<<<1, warps * 32, 0, pe_stream(w, i)>>>(w.context<pgas::nvlink>(i), inbox, staging, errors);
            CHECK_CUDA(cudaGetLastError());
        }
        for (int i = 0; i < w.n_local_pes(); ++i) CHECK_CUDA(cudaStreamSynchronize(pe_stream(w, i)));
        w.barrier();
    }
    CHECK(*errors == 0);
    cudaFree(errors);
}

}  // namespace

TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("channels per warp: put_nbi, flush_local, quiet(ctx, pe), quiet, quiet_all, two PEs sharing one GPU") {
        check_channels();
    }
}
