// IBGDA over the emulated NIC, end to end through the device API: put/get/p/g in every form, every group.
#include "support.hpp"

#include <cstdint>
#include <vector>

namespace {

std::uint32_t pattern(int pe, std::size_t i, int round) { return std::uint32_t(test::mix(std::uint64_t(pe), i, std::uint64_t(round))); }

template <class G>
void check_put_get(int n_pes, std::uint32_t blocks, std::uint32_t cq_entries) {
    auto w = pgas::world::init_local(n_pes, test::options());
    constexpr std::size_t count = 1031;  // neither inline nor a multiple of any piece size
    auto inbox = w.alloc<std::uint32_t>(count);
    auto outbox = w.alloc<std::uint32_t>(count);
    auto staging = w.alloc<std::uint32_t>(count);
    pgas::ibgda_domain ib(w, test::emulated(blocks, 1, cq_entries));
    test::launch(w, ib, [&](const test::ib_ctx& ctx) {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        for (int round = 0; round < 3; ++round) {
            // from registered memory (the heap): one RDMA WRITE
            auto* source = ctx.local(staging);
            for (std::size_t i = 0; i < count; ++i) source[i] = pattern(me, i, round);
            pgas::put<G>(ctx, inbox, source, count, right);
            for (std::size_t i = 0; i < count; ++i) source[i] = 0xdeadbeef;  // reusable on return
            for (std::size_t i = 0; i < count; ++i) ctx.local(outbox)[i] = pattern(me, i, round + 100);
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < count; ++i) REQUIRE(ctx.local(inbox)[i] == pattern(left, i, round));
            pgas::barrier_all<G>(ctx);

            // from unregistered memory: inline pieces
            std::vector<std::uint32_t> stack(count);
            for (std::size_t i = 0; i < count; ++i) stack[i] = pattern(me, i, round + 200);
            pgas::put<G>(ctx, inbox, stack.data(), count, right);
            stack.assign(count, 0);
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < count; ++i) REQUIRE(ctx.local(inbox)[i] == pattern(left, i, round + 200));
            pgas::barrier_all<G>(ctx);  // before the left neighbour's put_nbi below rewrites the inbox

            // get into unregistered memory (through scratch) and into the heap (RDMA READ)
            std::vector<std::uint32_t> fetched(count);
            pgas::get<G>(ctx, fetched.data(), outbox, count, left);
            for (std::size_t i = 0; i < count; ++i) REQUIRE(fetched[i] == pattern(left, i, round + 100));
            pgas::get_nbi<G>(ctx, ctx.local(staging), outbox + 3, count - 3, right);
            pgas::quiet<G>(ctx);
            for (std::size_t i = 0; i + 3 < count; ++i) REQUIRE(ctx.local(staging)[i] == pattern(right, i + 3, round + 100));

            // put_nbi completes at quiet
            for (std::size_t i = 0; i < count; ++i) ctx.local(staging)[i] = pattern(me, i, round + 300);
            pgas::put_nbi<G>(ctx, inbox + 5, ctx.local(staging), count - 5, right);
            pgas::quiet<G>(ctx);
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i + 5 < count; ++i) REQUIRE(ctx.local(inbox)[i + 5] == pattern(left, i, round + 300));
            pgas::barrier_all<G>(ctx);
        }
    });
    CHECK(ib.emulated_nic().first_violation() == "");
}

}  // namespace

TEST_CASE_TEMPLATE("ibgda put/get/put_nbi/get_nbi move every byte through the emulated NIC", G, pgas::thread,
                   pgas::warp, pgas::block) {
    for (int n : {1, 2, 3}) {
        CAPTURE(n);
        check_put_get<G>(n, 64, 1);   // collapsed CQ
        check_put_get<G>(n, 16, 16);  // ring CQ
    }
}

TEST_CASE("ibgda p and g of every size, inline and through scratch") {
    for (int n_pes : {1, 2, 4}) {
        CAPTURE(n_pes);
        auto w = pgas::world::init_local(n_pes, test::options());
        auto i8 = w.alloc<std::int8_t>(n_pes);
        auto i16 = w.alloc<std::int16_t>(n_pes);
        auto u64 = w.alloc<std::uint64_t>(n_pes);
        auto f64 = w.alloc<double>(n_pes);
        struct triple {
            int a;
            float b;
            double c;
        };
        auto triples = w.alloc<triple>(n_pes);  // 16 bytes: above the 12-byte inline limit of p
        pgas::ibgda_domain ib(w, test::emulated());
        test::launch(w, ib, [&](const test::ib_ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            for (int pe = 0; pe < n; ++pe) {
                pgas::p(ctx, i8 + me, std::int8_t(me - 100), pe);
                pgas::p(ctx, i16 + me, std::int16_t(me * 300), pe);
                pgas::p(ctx, u64 + me, (std::uint64_t(me) << 40) + 5, pe);
                pgas::p(ctx, f64 + me, me + 0.25, pe);
                pgas::p(ctx, triples + me, triple{me, me * 0.5f, me * 2.0}, pe);
            }
            pgas::barrier_all(ctx);
            for (int pe = 0; pe < n; ++pe) {
                const int from = (me + pe) % n;
                REQUIRE(pgas::g(ctx, i8 + pe, from) == std::int8_t(pe - 100));
                REQUIRE(pgas::g(ctx, i16 + pe, from) == std::int16_t(pe * 300));
                REQUIRE(pgas::g(ctx, u64 + pe, from) == (std::uint64_t(pe) << 40) + 5);
                REQUIRE(pgas::g(ctx, f64 + pe, from) == pe + 0.25);
                const triple t = pgas::g(ctx, triples + pe, from);
                REQUIRE(t.a == pe);
                REQUIRE(t.b == pe * 0.5f);
                REQUIRE(t.c == pe * 2.0);
            }
            pgas::barrier_all(ctx);
        });
        CHECK(ib.emulated_nic().first_violation() == "");
    }
}
