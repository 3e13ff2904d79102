// The collectives' driver (coll/detail/driver.hpp): which algorithm a size runs, how many blocks a launch takes, and
// LL parts on their own channels.
#include "support.hpp"

#include <pgas/coll/detail/driver.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace coll_test;
using pgas::detail::coll_part;
using pgas::detail::coll_scratch;
using P = pgas::coll::load_store_policy;

constexpr std::size_t KiB = 1024;
// The default but for the cap on what one PE sends each peer: the cells' capacity is what binds.
struct unbounded_per_peer : P {
    static constexpr std::size_t ll_max_peer_bytes = ~std::size_t{0};
};

}  // namespace

TEST_CASE("the default policy runs LL while one chunk per channel carries the block, wide for the world and node") {
    using pgas::detail::ll_fits;
    // the world team (slot 0): 32 channels of 16 KiB (2 PEs), 8 KiB (4) and 4 KiB (8) per chunk
    CHECK(ll_fits<P>(0, 2, 8));
    // 2 PEs: what one PE sends its peer binds first (at most 256 KiB), below the cells' 512 KiB
    CHECK(ll_fits<P>(0, 2, 256 * KiB));
    CHECK_FALSE(ll_fits<P>(0, 2, 256 * KiB + 8));
    CHECK(ll_fits<unbounded_per_peer>(0, 2, 512 * KiB));
    CHECK_FALSE(ll_fits<unbounded_per_peer>(0, 2, 512 * KiB + 8));
    CHECK(ll_fits<P>(0, 4, 256 * KiB));
    CHECK_FALSE(ll_fits<P>(0, 4, 256 * KiB + 8));
    CHECK(ll_fits<P>(0, 8, 128 * KiB));
    CHECK_FALSE(ll_fits<P>(0, 8, 256 * KiB));
    CHECK(ll_fits<P>(1, 4, 256 * KiB));  // the node team too
    // what one PE sends all its peers: at most 1 MiB (binds beyond 8 PEs: 16 PEs, 1 MiB / 15 peers)
    CHECK(ll_fits<P>(0, 16, 64 * KiB));
    CHECK_FALSE(ll_fits<P>(0, 16, 70 * KiB));
    // a split team (slot 2 and up): one channel of one small cell, as before the wide areas
    CHECK(ll_fits<P>(2, 2, coll_scratch::payload_bytes(2, 2)));
    CHECK_FALSE(ll_fits<P>(2, 2, coll_scratch::payload_bytes(2, 2) + 8));
    CHECK(coll_scratch::payload_bytes(2, 2) >= 6 * KiB);
    // the forced policies
    CHECK(ll_fits<pgas::coll::ll_policy>(5, 8, std::size_t{1} << 30));
    CHECK_FALSE(ll_fits<pgas::coll::direct_policy>(0, 2, 8));
}

// launch_shape for the path takes_ll picks where every member is mapped (the nvlink world: ll_fits decides).
template <class Policy = P>
pgas::detail::launch_grid shape(const pgas::team& t, const pgas::detail::coll_plan& p, unsigned most_blocks = ~0u) {
    using namespace pgas::detail;
    const bool ll = Policy::ll_max_bytes != 0 && ll_fits<Policy>(t.slot(), t.n_pes(), p.count * sizeof(float));
    return launch_shape<Policy>(t, p, sizeof(float), ll, most_blocks);
}

TEST_CASE("an on-stream launch spreads LL over the team's channels and the direct path over its parts") {
    using namespace pgas::detail;
    const pgas::team world4 = pgas::team::world_team(0, 4);
    const pgas::team split4 = world4.sub_team(0, 1, 4, 7);  // the same PEs in slot 7: one LL channel
    // LL: one block per KiB of the buffer, at most 32 channels
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(2)).blocks == 1);
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(4096)).blocks == 16);       // 16 KiB
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(64 * 1024)).blocks == 32);  // 256 KiB
    CHECK(shape(world4, plan_of<coll_kind::allgather>(1024)).blocks == 16);       // 16 KiB gathered
    // beyond the cells: direct, one block per 8 KiB up to 64
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(1024 * 1024)).blocks == 64);
    // a split team's single channel: small LL in one block, then direct
    CHECK(shape(split4, plan_of<coll_kind::allreduce>(2)).blocks == 1);
    CHECK(shape(split4, plan_of<coll_kind::allreduce>(64 * 1024)).blocks == 32);
    // put/get: one block
    CHECK(shape<pgas::coll::rma_policy>(world4, plan_of<coll_kind::allreduce>(1024 * 1024)).blocks == 1);
}

// The kernels of PEs sharing a GPU wait for each other, so each PE's kernel (and the one successor waiting behind it)
// takes at most its share of the SMs: without it four PEs on one H200 hung in a 2 MiB allreduce_on_stream.
TEST_CASE("PEs sharing a GPU: an on-stream launch keeps to the PE's share of the GPU's SMs") {
    using namespace pgas::detail;
    CHECK(block_share(132, 1) == ~0u);  // one PE per GPU: no bound
    CHECK(block_share(132, 2) == 33);
    CHECK(block_share(132, 4) == 16);
    CHECK(block_share(132, 100) == 1);
    const pgas::team world4 = pgas::team::world_team(0, 4);
    const unsigned share = block_share(132, 4);
    // direct: 16 blocks where 64 would run on their own GPUs
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(512 * 1024), share).blocks == 16);
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(512 * 1024)).blocks == 64);
    // LL: 16 of the 32 channels, each block's part twice as large (more threads, up to ll_stream_threads)
    const launch_grid ll = shape(world4, plan_of<coll_kind::allreduce>(64 * 1024), share);
    CHECK(ll.blocks == 16);
    CHECK(ll.threads == ll_stream_threads);
    CHECK(shape(world4, plan_of<coll_kind::allreduce>(1024), share).blocks == 4);  // under the share: as before
}

// The share above divides by the most PEs on one GPU, which the world counts by GPU UUID: ordinals differ between
// processes (CUDA_VISIBLE_DEVICES), the UUID names the GPU.
TEST_CASE("most_pes_on_one_gpu counts the PEs of each GPU by its UUID") {
    using pgas::detail::gpu_identity;
    gpu_identity a, b;
    a.uuid[0] = 1;
    b.uuid[0] = 2;
    gpu_identity b_elsewhere = b;  // the same GPU seen as ordinal 0 by another process
    a.ordinal = 0;
    b.ordinal = 1;
    b_elsewhere.ordinal = 0;
    CHECK(pgas::detail::most_pes_on_one_gpu({}) == 1);
    CHECK(pgas::detail::most_pes_on_one_gpu({a, b}) == 1);
    CHECK(pgas::detail::most_pes_on_one_gpu({a, b, b_elsewhere}) == 2);
    CHECK(pgas::detail::most_pes_on_one_gpu({a, a, a, b}) == 3);
}

TEST_CASE("an on-stream LL launch gives a small call no more warps than one 8-byte unit of its part per thread") {
    using namespace pgas::detail;
    const pgas::team world4 = pgas::team::world_team(0, 4);
    auto threads = [&](const coll_plan& p) { return shape(world4, p).threads; };
    CHECK(threads(plan_of<coll_kind::allreduce>(2)) == 32);      // 8 B (+16 of slice rounding): 3 units, one warp
    CHECK(threads(plan_of<coll_kind::allreduce>(256)) == 160);   // 1 KiB: 130 units, five warps
    CHECK(threads(plan_of<coll_kind::allgather>(64)) == 64);     // 256 B from each PE: 34 units
    CHECK(threads(plan_of<coll_kind::allreduce>(4096)) == 160);  // 16 KiB on 16 blocks: 130 units each
    CHECK(threads(plan_of<coll_kind::allreduce>(16384)) == ll_stream_threads);  // 64 KiB on 32 blocks: 258 units each
    CHECK(threads(plan_of<coll_kind::allreduce>(1024 * 1024)) == P::stream_threads);  // direct
    CHECK(shape<pgas::coll::rma_policy>(world4, plan_of<coll_kind::allreduce>(2)).threads ==
          pgas::coll::rma_policy::stream_threads);
}

// An on-stream launch picks its kernel (LL or direct) on the host with takes_ll; the kernel holds that path only.
// Here the device collective runs on the host transport around the LL bound of 2 PEs (256 KiB to the peer): LL ran
// exactly where takes_ll says, seen in channel 0's sent counter.
TEST_CASE("takes_ll on the host names the path the collective runs") {
    using namespace pgas::detail;
    auto w = pgas::world::init_local(2, options());
    const std::size_t most = (256 * KiB) / sizeof(float) + 4;
    const auto src = w.alloc<float>(most);
    const auto dst = w.alloc<float>(most);
    for (const std::size_t count : {std::size_t{2}, (256 * KiB) / sizeof(float), (256 * KiB) / sizeof(float) + 2}) {
        CAPTURE(count);
        std::vector<int> predicted(2, -1), ran(2, -1);
        w.launch_host([&](const ctx& c) {
            const pgas::team t = c.world_team().bound_to(c.my_pe());
            const coll_call<pgas::host> call{c, t, t.my_pe(), t.n_pes(), "allreduce", 0};
            predicted[std::size_t(c.my_pe())] = takes_ll<P>(call, count * sizeof(float));
            auto* sent = c.local(coll_scratch::at<std::uint64_t>(
                coll_scratch::counter_offset(0, coll_scratch::counter::sent, 0, 1 - c.my_pe())));
            const std::uint64_t before = *sent;
            pgas::allreduce(c, c.world_team(), dst, src, count, pgas::op::sum);
            // PGAS_CHECKS exchanges the call's signature on channel 0 too, whatever the path: one message.
            ran[std::size_t(c.my_pe())] = *sent - before > (PGAS_CHECKS ? 1u : 0u);
        });
        CHECK(predicted[0] == ran[0]);
        CHECK(predicted[1] == ran[1]);
        CHECK(predicted[0] == (count * sizeof(float) <= 256 * KiB));
    }
}

// Runs on 2 PEs: an LL allreduce in 3 parts sends part p's message on channel p, so channels 1 and 2 carry one
// message each to the peer, channel 3 none; the direct path leaves the channels alone.
TEST_CASE("each part of an LL collective uses its own channel of the world team") {
    auto w = pgas::world::init_local(2, options());
    const auto src = w.alloc<float>(1031);
    const auto dst = w.alloc<float>(1031);
    std::vector<std::uint64_t> sent(2 * 4, 0);
    w.launch_host([&](const ctx& c) {
        const pgas::team t = c.world_team();
        for (unsigned p = 0; p < 3; ++p)
            pgas::detail::run_collective<pgas::thread, pgas::coll::ll_policy>(
                c, t, pgas::detail::plan_of<pgas::detail::coll_kind::allreduce>(1031), dst,
                pgas::symmetric_ptr<const float>(src), pgas::op::sum, coll_part{p, 3});
        for (unsigned p = 0; p < 3; ++p)
            pgas::detail::run_collective<pgas::thread, pgas::coll::direct_policy>(
                c, t, pgas::detail::plan_of<pgas::detail::coll_kind::allreduce>(1031), dst,
                pgas::symmetric_ptr<const float>(src), pgas::op::sum, coll_part{p, 3});
        const int peer = 1 - c.my_pe();
        for (int channel = 1; channel < 4; ++channel)
            sent[std::size_t(c.my_pe() * 4 + channel)] = *c.local(coll_scratch::at<std::uint64_t>(
                coll_scratch::counter_offset(0, coll_scratch::counter::sent, channel, peer)));
    });
    for (int pe = 0; pe < 2; ++pe) {
        CAPTURE(pe);
        CHECK(sent[std::size_t(pe * 4 + 1)] == 1);
        CHECK(sent[std::size_t(pe * 4 + 2)] == 1);
        CHECK(sent[std::size_t(pe * 4 + 3)] == 0);
    }
}
