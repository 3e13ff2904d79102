// route<nvlink, nvlink> with four PEs sharing GPU 0 in two virtual nodes, {0, 1} and {2, 3}:
// ctx.peer() is an NVLink pointer for the near peer only; an allreduce over a near pair runs the load/store paths
// (LL, direct), over the world the put/get path through Far; every element checked against a host sum.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>
#include <pgas/host/stream/collectives.cuh>

#include "support.cuh"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

namespace {

using namespace gpu_support;
using route_t = pgas::route<pgas::nvlink, pgas::nvlink>;

float value(int pe, std::size_t k) { return float(int((k * 7 + std::size_t(pe) * 13) % 101) - 50); }

void synchronize_all(pgas::world& w) {
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
}

}  // namespace

TEST_SUITE("four_pes_one_gpu") {
    TEST_CASE("route<nvlink, nvlink>, four PEs sharing one GPU: ctx.peer() for near peers only, near-pair "
              "allreduce on the load/store paths, world allreduce on put/get") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        constexpr int n = 4;
        auto w = make_world(n);
        std::vector<pgas::device::context<route_t>> ctx;
        for (int i = 0; i < n; ++i) {
            const int pe = w.local_pe(i);
            ctx.push_back(pgas::route_context(w.context<pgas::nvlink>(i), w.context<pgas::nvlink>(i),
                                              pgas::pe_range{pe / 2 * 2, 2}));
        }
        const pgas::team everyone = w.team_world();
        const pgas::team pairs[2] = {w.split_strided(everyone, 0, 1, 2), w.split_strided(everyone, 2, 1, 2)};
        auto probe = w.alloc<int>(1);
        for (int i = 0; i < n; ++i) {
            const int pe = w.local_pe(i);
            CHECK(ctx[std::size_t(i)].peer(probe, pe ^ 1) == w.context<pgas::nvlink>(i).peer(probe, pe ^ 1));
            CHECK(ctx[std::size_t(i)].peer(probe, (pe + 2) % n) == nullptr);
            CHECK(pgas::detail::begin_call(ctx[std::size_t(i)], pairs[pe / 2].bound_to(pe), "test").all_mapped());
            CHECK_FALSE(pgas::detail::begin_call(ctx[std::size_t(i)], everyone.bound_to(pe), "test").all_mapped());
        }
        // 100 floats run LL on a pair; 4000 (16 KB) the direct path in two blocks per PE (few, so that the four
        // PEs' blocks are resident together); the world takes put/get in one block whatever the size.
        for (std::size_t count : {std::size_t(100), std::size_t(4000)}) {
            CAPTURE(count);
            auto src = w.alloc<float>(count);
            auto dst = w.alloc<float>(count);
            for (int i = 0; i < n; ++i) {
                std::vector<float> host(count);
                for (std::size_t k = 0; k < count; ++k) host[k] = value(w.local_pe(i), k);
                CHECK_CUDA(cudaMemcpy(w.device_address(src, i), host.data(), count * sizeof(float),
                                      cudaMemcpyHostToDevice));
            }
            for (bool near_pairs : {true, false}) {
                CAPTURE(near_pairs);
                synchronize_all(w);
                for (int i = 0; i < n; ++i) {
                    const int pe = w.local_pe(i);
                    const pgas::team t = (near_pairs ? pairs[pe / 2] : everyone).bound_to(pe);
                    CHECK_CUDA(cudaSetDevice(w.device_of(i)));
                    pgas::allreduce_on_stream(ctx[std::size_t(i)], t, dst, src, count, pgas::op::sum, pe_stream(w, i));
                    CHECK_CUDA(cudaGetLastError());
                }
                synchronize_all(w);
                for (int i = 0; i < n; ++i) {
                    const int pe = w.local_pe(i);
                    std::vector<float> got(count);
                    CHECK_CUDA(cudaMemcpy(got.data(), w.device_address(dst, i), count * sizeof(float),
                                          cudaMemcpyDeviceToHost));
                    std::size_t bad = 0;
                    for (std::size_t k = 0; k < count; ++k) {
                        float want = 0;
                        for (int q = 0; q < n; ++q)
                            if (!near_pairs || q / 2 == pe / 2) want += value(q, k);
                        bad += got[k] != want;
                    }
                    CHECK_MESSAGE(bad == 0, "PE ", pe, ": ", bad, " wrong elements");
                }
            }
        }
    }
}
