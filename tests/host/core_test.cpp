// Core value types: symmetric_ptr, team, the heap allocator, environment parsing and errors.
#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using pgas::symmetric_ptr;
using pgas::team;

TEST_CASE("symmetric_ptr is a trivially copyable typed offset") {
    static_assert(std::is_trivially_copyable_v<symmetric_ptr<double>>);
    symmetric_ptr<int> p(pgas::detail::offset_tag{}, 1024);
    CHECK(p.offset() == 1024);
    CHECK((p + 3).offset() == 1024 + 3 * sizeof(int));
    CHECK(((p + 5) - p) == 5);
    auto q = p;
    ++q;
    q += 2;
    CHECK(q.offset() == 1024 + 12);
    CHECK(q > p);
    symmetric_ptr<const int> c = p;  // adds const like a raw pointer
    CHECK(c.offset() == p.offset());
    auto d = pgas::symmetric_cast<double>(p + 2);
    CHECK(d.offset() == 1032);
    CHECK_FALSE(symmetric_ptr<int>{});
    CHECK(static_cast<bool>(p));
    static_assert(!std::is_convertible_v<symmetric_ptr<const int>, symmetric_ptr<int>>);
}

TEST_CASE("team: strided membership, translation and 2-D split") {
    const team world = team::world_team(5, 8);
    CHECK(world.my_pe() == 5);
    CHECK(world.n_pes() == 8);
    CHECK(world.index_of(7) == 7);
    CHECK(world.index_of(8) == -1);

    const team odd = world.sub_team(1, 2, 4, 1);  // 1 3 5 7
    CHECK(odd.n_pes() == 4);
    CHECK(odd.my_pe() == 2);
    CHECK(odd.world_pe(3) == 7);
    CHECK(odd.index_of(4) == -1);
    CHECK(odd.translate(1, world) == 3);
    CHECK(world.translate(4, odd) == -1);
    CHECK(world.translate(5, odd) == 2);
    CHECK(odd.translate(9, world) == -1);

    const team odd_of_odd = odd.sub_team(1, 2, 2, 2);  // 3 7
    CHECK(odd_of_odd.world_pe(0) == 3);
    CHECK(odd_of_odd.world_pe(1) == 7);
    CHECK(odd_of_odd.bound_to(3).my_pe() == 0);
    CHECK_FALSE(odd_of_odd.is_member());  // bound to PE 5
}

TEST_CASE("team splits through the world check their arguments") {
    pgas::world::run_threads(6, [](pgas::world& w) {
        const team all = w.team_world();
        auto [row, column] = w.split_2d(all, 4);  // rows {0..3} {4,5}; columns {0,4} {1,5} {2} {3}
        const int me = w.my_pe();
        CHECK(row.my_pe() == me % 4);
        CHECK(row.n_pes() == (me < 4 ? 4 : 2));
        CHECK(column.my_pe() == me / 4);
        CHECK(column.n_pes() == (me % 4 < 2 ? 2 : 1));
        const team evens = w.split_strided(all, 0, 2, 3);
        CHECK(evens.n_pes() == 3);
        CHECK(evens.my_pe() == (me % 2 == 0 ? me / 2 : -1));
        CHECK_THROWS_AS(w.split_strided(all, 2, 2, 3), pgas::error);  // last member 6 is outside
    });
}

TEST_CASE("heap allocator: alignment, reuse after free, coalescing") {
    pgas::detail::heap_allocator heap(4096, 4096 + 64 * 1024);
    auto a = heap.allocate(100, 256);
    auto b = heap.allocate(1000, 4096);
    auto c = heap.allocate(300, 256);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(c);
    CHECK(*a % 256 == 0);
    CHECK(*b % 4096 == 0);
    CHECK(heap.contains(*b + 999, 1));
    CHECK_FALSE(heap.contains(*b + 1000, 100));

    const auto free_before = heap.free_bytes();
    CHECK(heap.deallocate(*a));
    CHECK_FALSE(heap.deallocate(*a));  // double free is refused
    auto again = heap.allocate(64, 256);
    CHECK(again == a);  // first fit reuses the hole
    CHECK(heap.deallocate(*again));
    CHECK(heap.deallocate(*b));
    CHECK(heap.deallocate(*c));
    CHECK(heap.free_bytes() == 64 * 1024);
    CHECK(heap.free_block_count() == 1);  // every hole merged back
    CHECK(free_before < heap.free_bytes());
    CHECK_FALSE(heap.allocate(64 * 1024 + 1, 256));
    CHECK(heap.allocate(64 * 1024, 256));
}

TEST_CASE("environment sizes and timeouts parse or fail with the variable named") {
    using pgas::detail::parse_size;
    CHECK(parse_size("X", "4096") == 4096);
    CHECK(parse_size("X", "256M") == (256ull << 20));
    CHECK(parse_size("X", "2g") == (2ull << 30));
    CHECK(parse_size("X", "64K") == (64ull << 10));
    for (const char* bad : {"", "-5", "12Q", "M", "0", "1.5G"}) {
        CAPTURE(bad);
        CHECK_THROWS_WITH_AS(parse_size("PGAS_HEAP_SIZE", bad), doctest::Contains("PGAS_HEAP_SIZE"), pgas::error);
    }
}

TEST_CASE("pgas::error names call, PE and detail") {
    pgas::error e(pgas::errc::pe_out_of_range, 3, "put", "target PE 9");
    CHECK(std::string(e.what()) == "pgas: put on PE 3: target PE 9");
    CHECK(e.code() == pgas::errc::pe_out_of_range);
    CHECK(e.pe() == 3);
    CHECK(e.call() == "put");
}
