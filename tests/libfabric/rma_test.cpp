// put/get/p/g and their _nbi forms through the proxy on shm and tcp;ofi_rxm, small (inline) to large (chunked).
#include "support.hpp"

#include <cstdint>
#include <vector>

namespace {

std::uint8_t pattern(int pe, std::size_t i, int round) { return std::uint8_t(test::mix(std::uint64_t(pe), i, std::uint64_t(round))); }

// Sizes around the inline limit (48 B), odd sizes, and one that spans chunks.
constexpr std::size_t sizes[] = {1, 8, 48, 49, 4127, (std::size_t{1} << 20) + 3};

template <class G>
void check_put_get(const std::string& provider, int n_pes) {
    test::run(provider, n_pes, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
        const std::size_t max = sizes[std::size(sizes) - 1];
        auto inbox = w.alloc<std::uint8_t>(max + 64);
        auto outbox = w.alloc<std::uint8_t>(max + 64);
        auto ctx = fabric.context();
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        int round = 0;
        for (std::size_t bytes : sizes) {
            CAPTURE(bytes);
            ++round;
            std::vector<std::uint8_t> source(bytes);
            for (std::size_t i = 0; i < bytes; ++i) source[i] = pattern(me, i, round);
            for (std::size_t i = 0; i < bytes; ++i) ctx.local(outbox)[i + 5] = pattern(me, i, round + 100);
            pgas::put<G>(ctx, inbox + 3, source.data(), bytes, right);  // blocking: reuse the source at once
            source.assign(bytes, 0xee);
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < bytes; ++i) REQUIRE(ctx.local(inbox)[i + 3] == pattern(left, i, round));

            std::vector<std::uint8_t> fetched(bytes);
            pgas::get<G>(ctx, fetched.data(), outbox + 5, bytes, left);
            for (std::size_t i = 0; i < bytes; ++i) REQUIRE(fetched[i] == pattern(left, i, round + 100));
            pgas::barrier_all<G>(ctx);

            // nbi: the source stays untouched until quiet
            std::vector<std::uint8_t> tail(bytes);
            for (std::size_t i = 0; i < bytes; ++i) tail[i] = pattern(me, i, round + 200);
            pgas::put_nbi<G>(ctx, inbox, tail.data(), bytes, right);
            std::vector<std::uint8_t> got(bytes);
            pgas::get_nbi<G>(ctx, got.data(), outbox + 5, bytes, right);
            pgas::quiet<G>(ctx);
            for (std::size_t i = 0; i < bytes; ++i) REQUIRE(got[i] == pattern(right, i, round + 100));
            pgas::barrier_all<G>(ctx);
            for (std::size_t i = 0; i < bytes; ++i) REQUIRE(ctx.local(inbox)[i] == pattern(left, i, round + 200));
            pgas::barrier_all<G>(ctx);
        }
    });
}

}  // namespace

TEST_CASE_TEMPLATE("put/get/put_nbi/get_nbi move every byte - inline and chunked", G, pgas::thread, pgas::warp) {
    test::for_each_provider([](const std::string& p) { check_put_get<G>(p, 3); });
}

TEST_CASE("p and g move single elements of every size - puts from the heap itself go zero-copy") {
    test::for_each_provider([](const std::string& provider) {
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            struct pair { int a; float b; };
            auto i8 = w.alloc<std::int8_t>(2);
            auto u64 = w.alloc<std::uint64_t>(2);
            auto f64 = w.alloc<double>(2);
            auto pairs = w.alloc<pair>(2);
            auto big = w.alloc<std::uint32_t>(4096);
            auto ctx = fabric.context();
            const int me = ctx.my_pe(), other = 1 - me;
            for (int pe = 0; pe < 2; ++pe) {
                pgas::p(ctx, i8 + me, std::int8_t(me - 100), pe);
                pgas::p(ctx, u64 + me, (std::uint64_t(me) << 40) + 5, pe);
                pgas::p(ctx, f64 + me, me + 0.25, pe);
                pgas::p(ctx, pairs + me, pair{me, me * 0.5f}, pe);
            }
            for (int i = 0; i < 4096; ++i) ctx.local(big)[i] = std::uint32_t(i * 7 + me);
            pgas::barrier_all(ctx);
            for (int pe = 0; pe < 2; ++pe) {
                REQUIRE(pgas::g(ctx, i8 + pe, other) == std::int8_t(pe - 100));
                REQUIRE(pgas::g(ctx, u64 + pe, other) == (std::uint64_t(pe) << 40) + 5);
                REQUIRE(pgas::g(ctx, f64 + pe, other) == pe + 0.25);
                const pair got = pgas::g(ctx, pairs + pe, other);
                REQUIRE(got.a == pe);
                REQUIRE(got.b == pe * 0.5f);
            }
            // symmetric source: the backend uses the registered heap directly
            pgas::barrier_all(ctx);
            if (me == 0) pgas::put(ctx, big + 2048, ctx.local(big), 2048, 1);
            pgas::barrier_all(ctx);
            if (me == 1)
                for (int i = 0; i < 2048; ++i) REQUIRE(ctx.local(big)[2048 + i] == std::uint32_t(i * 7));
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE("the context is a trivially copyable value with the world's PE numbering - peer() is null") {
    static_assert(std::is_trivially_copyable_v<test::ctx>);
    test::run("shm", 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
        auto x = w.alloc<int>(4);
        auto ctx = fabric.context();
        CHECK(ctx.my_pe() == w.my_pe());
        CHECK(ctx.n_pes() == 2);
        CHECK(ctx.peer(x, 1 - w.my_pe()) == nullptr);
        CHECK(ctx.local(x) == w.local(x));
        CHECK(fabric.provider() == "shm");
    });
}

TEST_CASE("staged path: local buffers through few small bounce buffers (as FI_MR_LOCAL and GPU memory need)") {
    test::for_each_provider([](const std::string& provider) {
        auto o = test::fabric(provider);
        o.stage_local_buffers = true;
        o.bounce_chunk_bytes = 4096;
        o.bounce_chunks = 3;  // a 1 MiB transfer waits for bounce buffers hundreds of times
        test::run(provider, 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
            auto ctx = fabric.context();
            const int me = ctx.my_pe(), other = 1 - me;
            for (std::size_t bytes : {std::size_t{8}, std::size_t{60}, std::size_t{4096}, std::size_t{5000},
                                      (std::size_t{1} << 20) + 1}) {
                CAPTURE(bytes);
                auto box = w.alloc<std::uint8_t>(bytes);
                auto out = w.alloc<std::uint8_t>(bytes);
                std::vector<std::uint8_t> source(bytes), fetched(bytes);
                for (std::size_t i = 0; i < bytes; ++i) source[i] = pattern(me, i, 9);
                for (std::size_t i = 0; i < bytes; ++i) ctx.local(out)[i] = pattern(me, i, 10);
                pgas::put(ctx, box, source.data(), bytes, other);
                pgas::barrier_all(ctx);
                for (std::size_t i = 0; i < bytes; ++i) REQUIRE(ctx.local(box)[i] == pattern(other, i, 9));
                pgas::get(ctx, fetched.data(), out, bytes, other);
                for (std::size_t i = 0; i < bytes; ++i) REQUIRE(fetched[i] == pattern(other, i, 10));
                pgas::get_nbi(ctx, fetched.data(), box, bytes, other);  // nbi: copied out at completion
                pgas::quiet(ctx);
                for (std::size_t i = 0; i < bytes; ++i) REQUIRE(fetched[i] == pattern(me, i, 9));
                pgas::barrier_all(ctx);
                w.free(out);
                w.free(box);
            }
        }, o);
    });
}
