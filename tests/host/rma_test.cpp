// Host transport: put/get/p/g and their _nbi forms for every group and 1, 2, 3, 8 PEs.
#include "support.hpp"

#include <cstdint>
#include <vector>

namespace {

// A pattern in which every byte depends on the writer, the element and the
// round, so a misplaced or stale element is caught.
std::uint32_t pattern(int pe, std::size_t i, int round) { return std::uint32_t(test::mix(std::uint64_t(pe), i, std::uint64_t(round))); }

template <class G>
void check_put_get(int n_pes) {
    auto w = pgas::world::init_local(n_pes, test::options());
    constexpr std::size_t count = 1031;  // not a multiple of any vector width
    auto inbox = w.alloc<std::uint32_t>(count);
    auto fetched_box = w.alloc<std::uint32_t>(count);
    auto outbox = w.alloc<std::uint32_t>(count);
    w.launch_host([&](const test::ctx& ctx) {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        for (int round = 0; round < 3; ++round) {
            std::vector<std::uint32_t> source(count);
            for (std::size_t i = 0; i < count; ++i) source[i] = pattern(me, i, round);
            // blocking put to the right neighbour, reuse the source at once
            pgas::put<G>(ctx, inbox, source.data(), count, right);
            source.assign(count, 0xdeadbeef);
            for (std::size_t i = 0; i < count; ++i) ctx.local(outbox)[i] = pattern(me, i, round + 100);
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < count; ++i) REQUIRE(ctx.local(inbox)[i] == pattern(left, i, round));

            // blocking get from the left neighbour's outbox
            std::vector<std::uint32_t> fetched(count);
            pgas::get<G>(ctx, fetched.data(), outbox, count, left);
            for (std::size_t i = 0; i < count; ++i) REQUIRE(fetched[i] == pattern(left, i, round + 100));

            // nbi forms complete at quiet; put_nbi into a sub-range with an offset
            std::vector<std::uint32_t> tail(count / 2);
            for (std::size_t i = 0; i < tail.size(); ++i) tail[i] = pattern(me, i, round + 200);
            pgas::put_nbi<G>(ctx, fetched_box + 7, tail.data(), tail.size(), right);
            std::vector<std::uint32_t> got(count / 2);
            pgas::get_nbi<G>(ctx, got.data(), outbox + 3, got.size(), right);
            pgas::quiet<G>(ctx);
            for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == pattern(right, i + 3, round + 100));
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < tail.size(); ++i)
                REQUIRE(ctx.local(fetched_box)[i + 7] == pattern(left, i, round + 200));
            pgas::barrier_all<G>(ctx);
        }
    });
}

}  // namespace

TEST_CASE_TEMPLATE("put/get/put_nbi/get_nbi move every byte to the right place", G, pgas::thread, pgas::warp,
                   pgas::tile<4>, pgas::block) {
    test::for_each_pe_count([](int n) { check_put_get<G>(n); });
}

TEST_CASE("p and g move single elements of every size") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto i8 = w.alloc<std::int8_t>(n_pes);
        auto i16 = w.alloc<std::int16_t>(n_pes);
        auto u64 = w.alloc<std::uint64_t>(n_pes);
        auto f64 = w.alloc<double>(n_pes);
        struct pair { int a; float b; };
        auto pairs = w.alloc<pair>(n_pes);
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            for (int pe = 0; pe < n; ++pe) {  // every PE writes slot `me` of every PE
                pgas::p(ctx, i8 + me, std::int8_t(me - 100), pe);
                pgas::p(ctx, i16 + me, std::int16_t(me * 300), pe);
                pgas::p(ctx, u64 + me, (std::uint64_t(me) << 40) + 5, pe);
                pgas::p(ctx, f64 + me, me + 0.25, pe);
                pgas::p(ctx, pairs + me, pair{me, me * 0.5f}, pe);
            }
            pgas::barrier_all(ctx);
            for (int pe = 0; pe < n; ++pe) {
                const int from = (me + pe) % n;  // read others' copies through g
                REQUIRE(pgas::g(ctx, i8 + pe, from) == std::int8_t(pe - 100));
                REQUIRE(pgas::g(ctx, i16 + pe, from) == std::int16_t(pe * 300));
                REQUIRE(pgas::g(ctx, u64 + pe, from) == (std::uint64_t(pe) << 40) + 5);
                REQUIRE(pgas::g(ctx, f64 + pe, from) == pe + 0.25);
                const pair got = pgas::g(ctx, pairs + pe, from);
                REQUIRE(got.a == pe);
                REQUIRE(got.b == pe * 0.5f);
            }
        });
    });
}

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

TEST_CASE("peer() on a route is Near's pointer for near peers only; collectives keep the load/store path on near teams") {
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
