// Host transport: the shared RMA cases on PEs as threads of one world and as SPMD threads, and the raw pointers
// peer() and local() give.
#include "support.hpp"

#include "../common/rma_cases.hpp"

#include <cstdint>

PGAS_TEST_RMA_CASES(test::host_threads, test::host_spmd);

TEST_CASE("peer() gives load/store pointers on the host transport, local() the own copy") {
    auto w = pgas::world::init_local(3, test::options());
    auto x = w.alloc<int>(4);
    w.launch_host([&](const test::ctx& ctx) {
        int* mine = ctx.local(x);
        CHECK(mine == ctx.peer(x, ctx.my_pe()));
        mine[1] = 10 + ctx.my_pe();
        pgas::barrier_all(ctx);
        const int right = (ctx.my_pe() + 1) % 3;
        CHECK(ctx.peer(x, right)[1] == 10 + right);
        CHECK(ctx.peer(x, 3) == nullptr);
        pgas::barrier_all(ctx);
    });
    CHECK(w.local(x, 2)[1] == 12);
}

TEST_CASE("peer() on a route is Near's pointer for near peers only - collectives keep the load/store path on near teams") {
    using route_t = pgas::route<pgas::host, pgas::host>;
    static_assert(pgas::peer_pointer_transport<route_t> && !pgas::load_store_transport<route_t>);
    pgas::world::run_threads(4, [&](pgas::world& w) {
        const int me = w.my_pe();
        // Near pairs {0, 1} and {2, 3}.
        pgas::transport_builder_t<route_t> routes(w, {.near_pes = pgas::pe_range{me / 2 * 2, 2}});
        const auto ctx = routes.context();
        auto x = w.alloc<std::uint64_t>(1000);
        auto y = w.alloc<std::uint64_t>(1000);
        CHECK(ctx.peer(x, me ^ 1) == w.context<pgas::host>().peer(x, me ^ 1));
        CHECK(ctx.peer(x, (me + 2) % 4) == nullptr);
        const pgas::team pair = w.split_2d(w.team_world(), 2).first;  // this PE's near pair
        const pgas::team all = w.team_world();
        CHECK(pgas::detail::begin_call(ctx, pair, "test").all_mapped());
        CHECK_FALSE(pgas::detail::begin_call(ctx, all, "test").all_mapped());
        for (std::size_t count : {std::size_t{3}, std::size_t{1000}}) {  // LL and direct on the pair
            for (std::size_t i = 0; i < count; ++i) ctx.local(x)[i] = std::uint64_t(me) * 1000 + i;
            pgas::allreduce(ctx, pair, y, x, count, pgas::op::sum);
            for (std::size_t i = 0; i < count; ++i)
                REQUIRE(ctx.local(y)[i] == std::uint64_t(me / 2 * 2 * 2 + 1) * 1000 + 2 * i);
            pgas::allreduce(ctx, all, y, x, count, pgas::op::sum);  // put/get: far members
            for (std::size_t i = 0; i < count; ++i) REQUIRE(ctx.local(y)[i] == 6000 + 4 * i);
        }
        pgas::barrier_all(ctx);
    }, test::options());
}
