// The launcher table (host/bootstrap/launchers.hpp) as the parser reads it: each row is found by its own
// variables and yields what they say, in the table's order.
#include "support.hpp"

namespace {

using test::parse;

}  // namespace

TEST_CASE("launchers: each row's rank, size and node-local variables make a world named after it") {
    for (const auto& launcher : pgas::detail::launchers) {
        CAPTURE(launcher.source);
        test::environment env{{launcher.rank, "1"}, {launcher.size[0], "3"}, {"PGAS_ROOT", "127.0.0.1:4000"},
                              {"PGAS_TOKEN", "t"}};
        if (launcher.local_size) {
            env[launcher.local_rank] = "0";
            env[launcher.local_size] = "1";
        }
        const auto info = parse(env);
        CHECK(info.source == launcher.source);
        CHECK(info.rank == 1);
        CHECK(info.size == 3);
        CHECK(info.local_size == (launcher.local_size ? 1 : -1));
        CHECK(info.root_port == 4000);
    }
}

TEST_CASE("launchers: the first row whose variables are set wins, and a size alone selects only where it may") {
    const auto& first = pgas::detail::launchers[0];
    const auto& last = std::end(pgas::detail::launchers)[-1];
    const auto info = parse({{last.rank, "0"}, {last.size[0], "1"}, {first.rank, "0"}, {first.size[0], "1"}});
    CHECK(info.source == first.source);
    for (const auto& launcher : pgas::detail::launchers) {
        CAPTURE(launcher.source);
        const test::environment size_alone{{launcher.size[0], "1"}};
        if (launcher.size_selects)
            CHECK_THROWS_WITH_AS(parse(size_alone), doctest::Contains((std::string(launcher.rank) + " is not set").c_str()),
                                 pgas::error);
        else
            CHECK(parse(size_alone).source == "no launcher (one process)");
    }
}
