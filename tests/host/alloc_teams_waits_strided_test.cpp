// Host transport: aligned alloc, team destruction, the node team, the *_vector waits, strided iput/iget, alltoallv
// and collective_launch's checks.
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

TEST_CASE("alloc(count, alignment): the offset and every PE's address are multiples of it, zero-filled") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto pad = w.alloc<char>(3);  // the next block would sit at 256 without the alignment
        for (std::uint64_t alignment : {std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{65536},
                                        std::uint64_t{2} << 20}) {
            CAPTURE(alignment);
            auto p = w.alloc<double>(100, alignment);
            CHECK(p.offset() % alignment == 0);
            for (int pe = 0; pe < n_pes; ++pe) {
                CHECK(reinterpret_cast<std::uintptr_t>(w.local(p, pe)) % alignment == 0);
                for (int i = 0; i < 100; ++i) REQUIRE(w.local(p, pe)[i] == 0.0);
            }
            w.launch_host([&](const test::ctx& ctx) {
                for (int q = 0; q < ctx.n_pes(); ++q)
                    CHECK(reinterpret_cast<std::uintptr_t>(ctx.peer(p, q)) % alignment == 0);
            });
            w.free(p);
        }
        w.free(pad);
    });
}

TEST_CASE("bad input: alloc(count, alignment) with an alignment that is no power of two, too small or too large") {
    auto w = pgas::world::init_local(2, test::options());
    for (long long alignment : {0LL, -8LL, 24LL, 4LL, 4LL << 20}) {
        CAPTURE(alignment);
        try {
            (void)w.alloc<double>(4, alignment);
            FAIL("no error");
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::invalid_argument);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "alloc(count, alignment)"), text);
            CHECK_MESSAGE(test::contains(text, "got " + std::to_string(alignment)), text);
            CHECK_MESSAGE(test::contains(text, "alignof(T) = 8"), text);
        }
    }
}

TEST_CASE("bad input: alloc alignments that differ between PEs are found on every PE") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(3, [&](pgas::world& w) {
        try {
            (void)w.alloc<int>(10, w.my_pe() == 2 ? 4096 : 512);
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "alloc(count, alignment) on PE " + std::to_string(w.my_pe())), text);
            CHECK_MESSAGE(test::contains(text, "alignment = "), text);
            ++errors;
        }
    }, test::options());
    CHECK(errors == 3);
    errors = 0;
    pgas::world::run_threads(2, [&](pgas::world& w) {  // the default alignment on one PE, an explicit one on the other
        try {
            (void)(w.my_pe() == 0 ? w.alloc<int>(10) : w.alloc<int>(10, 4096));
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            CHECK_MESSAGE(test::contains(e.what(), w.my_pe() == 0 ? "alignment = 0 here but 4096 on PE 1"
                                                                  : "alignment = 4096 here but 0 on PE 0"),
                          e.what());
            ++errors;
        }
    }, test::options());
    CHECK(errors == 2);
}

// ---- destroy_team ----

TEST_CASE("destroy_team frees the slot: 500 teams made and destroyed in turn, 62 alive at once, the 63rd refused") {
    auto w = pgas::world::init_local(3, test::options());
    for (int i = 0; i < 500; ++i) {
        auto t = w.split_strided(w.team_world(), i % 3, 1, 1);
        w.destroy_team(t);
        CHECK(t.n_pes() == 0);
    }
    std::vector<pgas::team> alive;
    for (int i = 0; i < 62; ++i) alive.push_back(w.split_strided(w.team_world(), 0, 1, 3));
    try {
        (void)w.split_strided(w.team_world(), 0, 1, 3);
        FAIL("no error");
    } catch (const pgas::error& e) {
        CHECK(e.code() == pgas::errc::invalid_argument);
        CHECK_MESSAGE(test::contains(e.what(), "at most 62 split teams may be alive at once"), e.what());
    }
    w.destroy_team(alive[17]);
    auto again = w.split_strided(w.team_world(), 0, 1, 3);  // takes the freed slot
    CHECK(again.n_pes() == 3);
    for (auto& t : alive)
        if (t.n_pes() > 0) w.destroy_team(t);
    w.destroy_team(again);
}

TEST_CASE("a slot reused after uneven barriers and collectives starts clean for its new team") {
    auto w = pgas::world::init_local(3, test::options());
    auto buf = w.alloc<std::int64_t>(8);
    auto first = w.split_strided(w.team_world(), 0, 1, 2);  // PEs 0 and 1
    w.launch_host([&](const test::ctx& ctx) {
        if (!first.bound_to(ctx.my_pe()).is_member()) return;
        for (int i = 0; i < 5; ++i) pgas::barrier(ctx, first);
        pgas::allreduce(ctx, first, buf, buf, 8, pgas::op::sum);
    });
    const int slot = first.slot();
    w.destroy_team(first);
    auto second = w.split_strided(w.team_world(), 1, 1, 2);  // PEs 1 and 2: PE 2 never used the slot
    CHECK(second.slot() == slot);
    w.launch_host([&](const test::ctx& ctx) {
        if (!second.bound_to(ctx.my_pe()).is_member()) return;
        for (std::int64_t i = 0; i < 8; ++i) ctx.local(buf)[i] = ctx.my_pe() * 10 + i;
        for (int i = 0; i < 3; ++i) pgas::barrier(ctx, second);
        pgas::allreduce(ctx, second, buf, buf, 8, pgas::op::sum);
        for (std::int64_t i = 0; i < 8; ++i) CHECK(ctx.local(buf)[i] == 30 + 2 * i);
    });
    w.destroy_team(second);
}

TEST_CASE("bad input: destroying a destroyed team (through a copy, also after its slot was reused), the world or node team") {
    auto w = pgas::world::init_local(2, test::options());
    auto t = w.split_strided(w.team_world(), 0, 1, 2);
    auto copy = t;
    w.destroy_team(t);
    auto reuse = w.split_strided(w.team_world(), 0, 1, 1);
    CHECK(reuse.slot() == copy.slot());
    for (int step = 0; step < 2; ++step) {
        try {
            if (step == 0) w.destroy_team(copy);
            else (void)w.split_strided(copy, 0, 1, 1);
            FAIL("no error");
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::invalid_argument);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, step == 0 ? "destroy_team" : "split_strided"), text);
            CHECK_MESSAGE(test::contains(text, "slot " + std::to_string(copy.slot()) + " (generation"), text);
            CHECK_MESSAGE(test::contains(text, "was destroyed"), text);
        }
    }
    auto world_team = w.team_world();
    CHECK_THROWS_WITH_AS(w.destroy_team(world_team), doctest::Contains("the world team cannot be destroyed"), pgas::error);
    auto node = w.team_node();
    CHECK_THROWS_WITH_AS(w.destroy_team(node), doctest::Contains("the node team cannot be destroyed"), pgas::error);
    w.destroy_team(reuse);
}

TEST_CASE("bad input: PEs destroying different teams are found on every PE") {
    std::atomic<int> errors{0};
    pgas::world::run_threads(2, [&](pgas::world& w) {
        auto a = w.split_strided(w.team_world(), 0, 1, 2);
        auto b = w.split_strided(w.team_world(), 0, 1, 2);
        try {
            w.destroy_team(w.my_pe() == 0 ? a : b);
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::collective_mismatch);
            CHECK_MESSAGE(test::contains(e.what(), "destroy_team on PE " + std::to_string(w.my_pe())), e.what());
            ++errors;
        }
    }, test::options());
    CHECK(errors == 2);
}

// ---- team_node ----

TEST_CASE("team_node: every PE of the process (threads or SPMD threads), or PGAS_NODE_SIZE's virtual node") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        auto node = w.team_node();
        CHECK(node.n_pes() == n_pes);
        CHECK(node.start() == 0);
        CHECK(node.slot() == 1);
        CHECK(w.team_node(n_pes - 1).my_pe() == n_pes - 1);
        w.launch_host([&](const test::ctx& ctx) {
            const auto mine = node.bound_to(ctx.my_pe());
            for (int i = 0; i < 3; ++i) pgas::barrier(ctx, mine);
        });
    });
    pgas::world::run_threads(3, [](pgas::world& w) {
        const auto node = w.team_node();
        CHECK(node.n_pes() == 3);
        CHECK(node.my_pe() == w.my_pe());
    }, test::options());
    ::setenv("PGAS_NODE_SIZE", "2", 1);
    pgas::world::run_threads(5, [](pgas::world& w) {
        const auto node = w.team_node();
        const int me = w.my_pe();
        CHECK(node.start() == me / 2 * 2);
        CHECK(node.n_pes() == (me == 4 ? 1 : 2));
        CHECK(node.my_pe() == me % 2);
    }, test::options());
    ::setenv("PGAS_NODE_SIZE", "two", 1);
    auto w = pgas::world::init_local(2, test::options());
    CHECK_THROWS_WITH_AS((void)w.team_node(), doctest::Contains("PGAS_NODE_SIZE: expected PEs per node in [1, 2], got 'two'"),
                         pgas::error);
    ::setenv("PGAS_NODE_SIZE", "1", 1);
    CHECK_THROWS_WITH_AS((void)w.team_node(), doctest::Contains("splits this process's PEs over two nodes"), pgas::error);
    ::unsetenv("PGAS_NODE_SIZE");
}

// ---- the *_vector waits and tests ----

TEST_CASE("wait_until_{all,any,some}_vector and test_*_vector: one comparison value per word, status mask") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        constexpr std::size_t count = 6;
        auto words = w.alloc<std::int64_t>(count * std::size_t(n_pes));  // block q: words PE q waits on
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            const auto mine = words + std::ptrdiff_t(count * std::size_t(me));
            const std::int64_t want[count] = {1, 2, 3, 4, 5, 6};
            const int status[count] = {0, 0, 1, 0, 0, 1};  // words 2 and 5 are not selected
            std::size_t indices[count];
            // nothing written yet: no selected word reaches its value
            CHECK_FALSE(pgas::test_all_vector(ctx, mine, count, status, pgas::cmp::ge, want));
            CHECK(pgas::test_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) == count);
            CHECK(pgas::test_some_vector(ctx, mine, count, indices, status, pgas::cmp::ge, want) == 0);
            pgas::barrier_all(ctx);
            // the left neighbour writes word 3 first: any and some see exactly it
            const int right = (me + 1) % n;
            const auto theirs = words + std::ptrdiff_t(count * std::size_t(right));
            pgas::p(ctx, theirs + 3, std::int64_t(4), right);
            pgas::quiet(ctx);
            CHECK(pgas::wait_until_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) == 3);
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, status, pgas::cmp::ge, want) == 1);
            CHECK(indices[0] == 3);
            CHECK(pgas::test_any_vector(ctx, mine, count, nullptr, pgas::cmp::ge, want) == 3);
            pgas::sync_all(ctx);
            // then every word (the unselected ones below their values): all is satisfied with the mask only
            for (std::size_t i = 0; i < count; ++i)
                pgas::p(ctx, theirs + std::ptrdiff_t(i), std::int64_t(status[i] ? 0 : want[i] + 10), right);
            pgas::quiet(ctx);
            pgas::wait_until_all_vector(ctx, mine, count, status, pgas::cmp::ge, want);
            CHECK(pgas::test_all_vector(ctx, mine, count, status, pgas::cmp::ge, want));
            CHECK_FALSE(pgas::test_all_vector(ctx, mine, count, nullptr, pgas::cmp::ge, want));
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, status, pgas::cmp::gt, want) == 4);
            CHECK(indices[3] == 4);
            // a mask that selects nothing returns at once
            const int none[count] = {1, 1, 1, 1, 1, 1};
            CHECK(pgas::wait_until_any_vector(ctx, mine, count, none, pgas::cmp::eq, want) == count);
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, none, pgas::cmp::eq, want) == 0);
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE("a *_vector wait that cannot finish times out naming the first selected word, its value and what it saw") {
    auto w = pgas::world::init_local(1, test::options(/*timeout_ms=*/200));
    auto words = w.alloc<std::uint64_t>(4);
    auto ctx = w.context<pgas::host>(0);
    w.local(words, 0)[1] = 7;
    const std::uint64_t want[4] = {1, 9, 9, 9};
    const int status[4] = {1, 0, 0, 0};
    for (int which = 0; which < 3; ++which) {
        CAPTURE(which);
        try {
            std::size_t indices[4];
            if (which == 0) pgas::wait_until_all_vector(ctx, words, 4, status, pgas::cmp::ge, want);
            if (which == 1) (void)pgas::wait_until_any_vector(ctx, words, 4, status, pgas::cmp::ge, want);
            if (which == 2) (void)pgas::wait_until_some_vector(ctx, words, 4, indices, status, pgas::cmp::ge, want);
            FAIL("wait returned");
        } catch (const pgas::error& e) {
            CHECK(e.code() == pgas::errc::timeout);
            const std::string text = e.what();
            CHECK_MESSAGE(test::contains(text, "_vector on PE 0"), text);
            CHECK_MESSAGE(test::contains(text, "heap offset " + std::to_string((words + 1).offset()) + " >= 9 (seen 7)"),
                          text);
        }
    }
}

// ---- strided iput / iget ----

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

// ---- collective_launch: its checks (the launch itself runs in the GPU suite) ----

TEST_CASE("collective_launch: a grid over the co-resident maximum is refused naming the call, PE, grid and maximum") {
    try {
        pgas::detail::check_co_resident("collective_launch", 3, dim3(33, 2, 1), 64);
        FAIL("no error");
    } catch (const pgas::error& e) {
        CHECK(e.code() == pgas::errc::invalid_argument);
        const std::string text = e.what();
        CHECK_MESSAGE(test::contains(text, "collective_launch on PE 3"), text);
        CHECK_MESSAGE(test::contains(text, "grid 33x2x1 = 66 blocks, but at most 64 blocks"), text);
    }
    CHECK_NOTHROW(pgas::detail::check_co_resident("collective_launch", 3, dim3(32, 2, 1), 64));
    auto w = pgas::world::init_local(2, test::options());
    CHECK(pgas::detail::launch_pe(5, w.context<pgas::host>(1), w.context<pgas::host>(0)) == 1);
    CHECK(pgas::detail::launch_pe(5, 6.0) == -1);
}

namespace {
void no_kernel(test::ctx, int) {}
}  // namespace

TEST_CASE("collective_launch without a usable GPU throws errc::cuda naming the call and the PE") {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return;  // the GPU suite covers this machine
    auto w = pgas::world::init_local(1, test::options());
    try {
        pgas::collective_launch(no_kernel, dim3(1), dim3(32), 0, nullptr, w.context<pgas::host>(0), 1);
        FAIL("no error");
    } catch (const pgas::error& e) {
        CHECK(e.code() == pgas::errc::cuda);
        CHECK_MESSAGE(test::contains(e.what(), "collective_launch on PE 0"), e.what());
    }
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
