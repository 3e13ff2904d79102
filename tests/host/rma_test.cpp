// Host transport: the shared RMA cases on PEs as threads of one world and as SPMD threads, the raw pointers peer()
// and local() give, iput/iget's bad input, and the put/get path of iput/iget and alltoallv that the transports
// without load/store take.
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

TEST_CASE("bad input (PGAS_CHECKS): iput/iget with a stride below 1 or a strided span past the heap") {
    auto w = pgas::world::init_local(2, test::options());
    auto buf = w.alloc<std::uint64_t>(16);
    auto ctx = w.context<pgas::host>(0);
    std::uint64_t local[64] = {};
    CHECK_THROWS_WITH_AS(pgas::iput(ctx, buf, local, 0, 1, 4, 1), doctest::Contains("iput on PE 0: dst_stride must be >= 1, got 0"),
                         pgas::error);
    CHECK_THROWS_WITH_AS(pgas::iget(ctx, local, buf, 1, -2, 4, 1), doctest::Contains("iget on PE 0: src_stride must be >= 1, got -2"),
                         pgas::error);
    const auto near_end = pgas::symmetric_ptr<std::uint64_t>(pgas::detail::offset_tag{}, w.heap_bytes() - 64);
    CHECK_THROWS_WITH_AS(pgas::iput(ctx, near_end, local, 4, 1, 4, 1), doctest::Contains("outside the heap's user area"),
                         pgas::error);
    CHECK_THROWS_WITH_AS(pgas::iget(ctx, local, buf, 1, 1, 4, 2), doctest::Contains("target PE 2"), pgas::error);
}

// ---- the put/get paths of iput/iget and alltoallv (what libfabric and ibgda take), over host memory ----

namespace {
// The host transport with its load/store capability hidden: ops take the transport's put/get path.
struct host_rma_only : pgas::host {
    static constexpr const char* name = "host (put/get only)";
    static constexpr bool provides_load_store = false;
};
static_assert(pgas::rma_transport<host_rma_only> && !pgas::load_store_transport<host_rma_only>);

pgas::device::context<host_rma_only> rma_only(const test::ctx& ctx) {
    pgas::device::context<host_rma_only> c;
    static_cast<pgas::host&>(c.transport) = ctx.transport;
    c.runtime = ctx.runtime;
    return c;
}
}  // namespace

TEST_CASE("iput, iget and alltoallv through a transport without load/store (one-element puts and gets)") {
    for (int n_pes : {1, 3}) {
        CAPTURE(n_pes);
        auto w = pgas::world::init_local(n_pes, test::options());
        constexpr std::size_t count = 11;
        auto buf = w.alloc<std::uint32_t>(count * 4);
        auto src = w.alloc<std::uint32_t>(64);
        auto dst = w.alloc<std::uint32_t>(64);
        w.launch_host([&](const test::ctx& host_ctx) {
            const auto ctx = rma_only(host_ctx);
            const int me = ctx.my_pe(), n = ctx.n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
            std::uint32_t values[count * 2];
            for (std::size_t i = 0; i < count * 2; ++i) values[i] = std::uint32_t(me * 1000 + i);
            pgas::iput(ctx, buf, values, 4, 2, count, right);
            pgas::barrier_all(ctx);
            for (std::size_t i = 0; i < count * 4; ++i)
                REQUIRE(host_ctx.local(buf)[i] == (i % 4 ? 0u : std::uint32_t(left * 1000 + i / 4 * 2)));
            std::uint32_t back[count] = {};
            pgas::iget(ctx, back, buf, 1, 4, count, left);
            const int writer = (left + n - 1) % n;
            for (std::size_t i = 0; i < count; ++i) REQUIRE(back[i] == std::uint32_t(writer * 1000 + 2 * i));
            // alltoallv: j + 1 elements to member j, at dst offset 8 * sender
            std::size_t counts[8], sdispls[8], ddispls[8];
            for (int j = 0; j < n; ++j) {
                counts[j] = std::size_t(j + 1);
                sdispls[j] = std::size_t(8 * j);
                ddispls[j] = std::size_t(8 * me);
            }
            for (std::size_t i = 0; i < 64; ++i) host_ctx.local(src)[i] = std::uint32_t(me * 1000 + i);
            pgas::alltoallv(ctx, ctx.world_team(), dst, ddispls, src, counts, sdispls);
            for (int from = 0; from < n; ++from)
                for (int k = 0; k < 8; ++k)
                    REQUIRE(host_ctx.local(dst)[8 * from + k] ==
                            (k <= me ? std::uint32_t(from * 1000 + 8 * me + k) : 0u));
            pgas::barrier_all(ctx);
        });
    }
}
