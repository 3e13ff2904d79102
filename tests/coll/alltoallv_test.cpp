// Host transport: alltoallv, variable counts and displacements per peer, by every group, on the world and a sub-team.
#include "support.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

// Member i sends (i + 2 * j) % 5 elements to member j (some zero), packed in member order in src; member j
// receives the blocks in sender order, each `gap` elements after the previous one in dst.
struct plan {
    int n;
    std::size_t gap = 3;
    static std::size_t count(int from, int to) { return std::size_t((from + 2 * to) % 5); }
    std::size_t src_displ(int from, int to) const {
        std::size_t at = 0;
        for (int j = 0; j < to; ++j) at += count(from, j);
        return at;
    }
    std::size_t dst_displ(int from, int to) const {
        std::size_t at = 0;
        for (int i = 0; i < from; ++i) at += count(i, to) + gap;
        return at;
    }
};

std::uint64_t value(int world_pe, std::size_t i, int round) {
    return (std::uint64_t(world_pe) << 40) + (std::uint64_t(round) << 20) + i;
}

}  // namespace

TEST_CASE_TEMPLATE("alltoallv: every block lands at its displacement, nothing between blocks is written", G, pgas::thread,
                   pgas::warp, pgas::block) {
    for (int n_pes : {1, 2, 3, 8}) {
        CAPTURE(n_pes);
        auto w = pgas::world::init_local(n_pes, pgas::world_options{std::uint64_t{16} << 20, 20000, {}});
        const int strided_size = (n_pes + 1) / 2;
        auto sub = w.split_strided(w.team_world(), 0, 2, strided_size);
        auto src = w.alloc<std::uint64_t>(64);
        auto dst = w.alloc<std::uint64_t>(128);
        int round = 0;
        for (const pgas::team* team : std::initializer_list<const pgas::team*>{&sub, nullptr}) {
            ++round;
            w.launch_host([&](const coll_test::ctx& ctx) {
                const pgas::team t = (team ? *team : ctx.world_team()).bound_to(ctx.my_pe());
                if (!t.is_member()) return;
                const int me = t.my_pe(), n = t.n_pes();
                const plan p{n};
                std::vector<std::size_t> counts(static_cast<std::size_t>(n)), sdispls(counts), ddispls(counts);
                for (int j = 0; j < n; ++j) {
                    counts[std::size_t(j)] = plan::count(me, j);
                    sdispls[std::size_t(j)] = p.src_displ(me, j);
                    ddispls[std::size_t(j)] = p.dst_displ(me, j);
                }
                for (std::size_t i = 0; i < 64; ++i) ctx.local(src)[i] = value(ctx.my_pe(), i, round);
                for (std::size_t i = 0; i < 128; ++i) ctx.local(dst)[i] = ~std::uint64_t{0};
                pgas::alltoallv<G>(ctx, t, dst, ddispls.data(), src, counts.data(), sdispls.data());
                // block from member i: its src elements src_displ(i, me) .. + count(i, me), at dst_displ(i, me)
                std::vector<std::uint64_t> want(128, ~std::uint64_t{0});
                for (int i = 0; i < n; ++i)
                    for (std::size_t k = 0; k < plan::count(i, me); ++k)
                        want[p.dst_displ(i, me) + k] = value(t.world_pe(i), p.src_displ(i, me) + k, round);
                for (std::size_t i = 0; i < 128; ++i) REQUIRE(ctx.local(dst)[i] == want[i]);
                pgas::barrier<G>(ctx, t);  // nobody refills src/dst while a peer still reads or writes them
            });
        }
    }
}

TEST_CASE("bad input: alltoallv blocks outside the heap name the team member") {
    auto w = pgas::world::init_local(2, pgas::world_options{std::uint64_t{16} << 20, 2000, {}});
    auto buf = w.alloc<std::uint64_t>(16);
    auto ctx = w.context<pgas::host>(0);
    const std::size_t counts[2] = {1, 4}, ok[2] = {0, 0};
    const std::size_t huge[2] = {0, std::size_t(1) << 61};
    CHECK_THROWS_WITH_AS(pgas::alltoallv(ctx, ctx.world_team(), buf, ok, buf, counts, huge),
                         doctest::Contains("alltoallv on PE 0: src block (src_displs + src_counts) outside the heap's "
                                           "user area, for team member 1"),
                         pgas::error);
    CHECK_THROWS_WITH_AS(pgas::alltoallv(ctx, ctx.world_team(), buf, huge, buf, counts, ok),
                         doctest::Contains("dst block (dst_displs + src_counts) outside the heap's user area, for team "
                                           "member 1"),
                         pgas::error);
}
