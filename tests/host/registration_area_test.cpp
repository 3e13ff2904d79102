// Where world::register_symmetric places buffers in each PE's registration area (host/heap/registration_area.hpp):
// first fit, slots freed and reused, a full area refused, and which ranges count as registered memory. The mapping
// itself needs a GPU (tests/gpu/gpu_window_test.cu); this bookkeeping runs in CI.
#include <pgas/host/heap/registration_area.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>

namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

}  // namespace

TEST_CASE("registration area: first fit from the area's start, a freed slot reused, a full area refused") {
    pgas::detail::registration_area area(64 * mib, 64 * mib + 10 * mib);  // a 64 MiB heap, then 10 MiB of area
    CHECK(area.size() == 10 * mib);
    CHECK(!area.end_of_last());

    const auto a = area.place(2 * mib);
    REQUIRE(a);
    CHECK(*a == 64 * mib);  // the first slot starts right after the heap
    area.take(*a, 2 * mib);
    const auto b = area.place(4 * mib);
    REQUIRE(b);
    CHECK(*b == 66 * mib);
    area.take(*b, 4 * mib);
    CHECK(area.end_of_last() == std::optional<std::uint64_t>(70 * mib));

    CHECK(!area.place(5 * mib));  // 4 MiB are left
    const auto c = area.place(4 * mib);
    REQUIRE(c);
    CHECK(*c == 70 * mib);
    area.take(*c, 4 * mib);
    CHECK(!area.place(1));  // full

    area.release(*a);  // the first 2 MiB free again: the next fit goes there, not after the last slot
    CHECK(area.place(2 * mib) == std::optional<std::uint64_t>(64 * mib));
    CHECK(!area.place(3 * mib));
    area.release(*b);  // now 6 MiB at the start
    CHECK(area.place(3 * mib) == std::optional<std::uint64_t>(64 * mib));
    CHECK(area.end_of_last() == std::optional<std::uint64_t>(74 * mib));
    area.release(*c);
    CHECK(!area.end_of_last());
    CHECK(!area.place(0));  // nothing to place
    CHECK(!area.place(11 * mib));  // larger than the whole area
}

TEST_CASE("registration area: a range is registered memory only inside one taken slot") {
    pgas::detail::registration_area area(64 * mib, 80 * mib);
    area.take(64 * mib, 2 * mib);
    area.take(68 * mib, 2 * mib);  // a 2 MiB gap between the two
    CHECK(area.starts_at(64 * mib));
    CHECK(!area.starts_at(64 * mib + 8));
    CHECK(area.holds(64 * mib, 2 * mib));
    CHECK(area.holds(65 * mib, mib));
    CHECK(!area.holds(65 * mib, mib + 1));  // runs past the slot's end
    CHECK(!area.holds(66 * mib, 8));       // the gap
    CHECK(!area.holds(63 * mib, 8));       // the heap, not a registration
    CHECK(area.holds(69 * mib, 8));
    CHECK(!area.holds(70 * mib, 1));  // just past the last slot
    area.release(68 * mib);
    CHECK(!area.holds(69 * mib, 8));
    CHECK(!area.starts_at(68 * mib));
}
