// Teams on the host transport: destroy_team and the reuse of its slot, and team_node (the team type itself:
// core_test.cpp).
#include "support.hpp"

#include <cstdint>
#include <string>
#include <vector>

TEST_CASE("destroy_team frees the slot: 500 teams made and destroyed in turn, 62 alive at once, the 63rd refused") {
    auto w = pgas::world::init_local(3, test::options());
    for (int i = 0; i < 500; ++i) {
        auto t = w.split_strided(w.team_world(), i % 3, 1, 1);
        w.destroy_team(t);
        CHECK(t.n_pes() == 0);
    }
    std::vector<pgas::team> alive;
    for (int i = 0; i < 62; ++i) alive.push_back(w.split_strided(w.team_world(), 0, 1, 3));
    const std::string text =
        test::error_of([&] { (void)w.split_strided(w.team_world(), 0, 1, 3); }, pgas::errc::invalid_argument);
    CHECK_MESSAGE(test::contains(text, "at most 62 split teams may be alive at once"), text);
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
        const std::string text = test::error_of([&] {
            if (step == 0) w.destroy_team(copy);
            else (void)w.split_strided(copy, 0, 1, 1);
        }, pgas::errc::invalid_argument);
        CHECK_MESSAGE(test::contains(text, step == 0 ? "destroy_team" : "split_strided"), text);
        CHECK_MESSAGE(test::contains(text, "slot " + std::to_string(copy.slot()) + " (generation"), text);
        CHECK_MESSAGE(test::contains(text, "was destroyed"), text);
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
        const std::string text =
            test::error_of([&] { w.destroy_team(w.my_pe() == 0 ? a : b); }, pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(text, "destroy_team on PE " + std::to_string(w.my_pe())), text);
        if (text != "no error") ++errors;
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
