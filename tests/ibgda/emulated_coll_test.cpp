// Collectives run unchanged on pgas::ibgda: allreduce, broadcast, allgather, alltoall over the emulated NIC.
#include "support.hpp"

#include <cstdint>

TEST_CASE("collectives from coll/ run unchanged over context<ibgda>") {
    for (int n_pes : {1, 2, 3, 4}) {
        CAPTURE(n_pes);
        auto w = pgas::world::init_local(n_pes, test::options());
        constexpr std::size_t count = 333;
        auto src = w.alloc<std::int64_t>(count * std::size_t(n_pes));
        auto dst = w.alloc<std::int64_t>(count * std::size_t(n_pes));
        pgas::ibgda_domain ib(w, test::emulated(128));
        test::launch(w, ib, [&](const test::ib_ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            const auto t = ctx.world_team();
            for (int round = 0; round < 3; ++round) {
                for (std::size_t i = 0; i < count * std::size_t(n); ++i) ctx.local(src)[i] = std::int64_t(me * 1000 + i + round);
                pgas::barrier_all(ctx);

                pgas::allreduce(ctx, t, dst, src, count, pgas::op::sum);
                for (std::size_t i = 0; i < count; ++i) {
                    std::int64_t want = 0;
                    for (int pe = 0; pe < n; ++pe) want += pe * 1000 + std::int64_t(i) + round;
                    REQUIRE(ctx.local(dst)[i] == want);
                }
                pgas::barrier_all(ctx);

                pgas::broadcast(ctx, t, dst, src, count, n - 1);
                for (std::size_t i = 0; i < count; ++i)
                    REQUIRE(ctx.local(dst)[i] == std::int64_t((n - 1) * 1000 + i + round));
                pgas::barrier_all(ctx);

                pgas::allgather(ctx, t, dst, src, count);
                for (int pe = 0; pe < n; ++pe)
                    for (std::size_t i = 0; i < count; ++i)
                        REQUIRE(ctx.local(dst)[std::size_t(pe) * count + i] == std::int64_t(pe * 1000 + i + round));
                pgas::barrier_all(ctx);

                pgas::alltoall(ctx, t, dst, src, count);
                for (int pe = 0; pe < n; ++pe)
                    for (std::size_t i = 0; i < count; ++i)
                        REQUIRE(ctx.local(dst)[std::size_t(pe) * count + i] ==
                                std::int64_t(pe * 1000 + std::size_t(me) * count + i + round));
                pgas::barrier_all(ctx);
            }
        });
        CHECK(ib.emulated_nic().first_violation() == "");
    }
}
