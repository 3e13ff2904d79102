// detail::window_registry (host/window/registry.hpp) built from its parts alone, with no world: the tables it writes,
// what it frees on failure, and the observers it tells.
#include "support.hpp"

#include <pgas/host/window/registry.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int n_local = 3;
constexpr std::uint64_t heap_bytes = std::uint64_t{1} << 20;

// One process's parts of a world of three thread PEs over host memory, and the registry made from them.
struct registry_fixture {
    pgas::detail::single_bootstrap channel;
    pgas::detail::host_heap_memory memory{{heap_bytes, {0, 1, 2}, n_local, &channel}};
    pgas::detail::heap_allocator allocator{4096, heap_bytes};
    std::string exhausted;  // what heap_exhausted was told, "call count element"
    pgas::detail::window_registry registry{pgas::detail::window_parts{
        &channel, &memory, &allocator, {0, 1, 2}, n_local,
        [this](const char* call, std::uint64_t count, std::size_t element) {
            exhausted = std::string(call) + " " + std::to_string(count) + " " + std::to_string(element);
            pgas::detail::throw_error(pgas::errc::heap_exhausted, -1, call, "the test's heap is full");
        }}};
    std::vector<std::vector<int>> owned = std::vector<std::vector<int>>(n_local, std::vector<int>(16));
    std::vector<int*> buffers{owned[0].data(), owned[1].data(), owned[2].data()};

    // Row `pe` of the window's table as local PE `local`'s heap holds it.
    pgas::detail::window_row row(int local, std::uint64_t table, int pe) const {
        pgas::detail::window_row out{};
        std::memcpy(&out, memory.local_base(local) + table + std::uint64_t(pe) * sizeof(out), sizeof(out));
        return out;
    }
};

// Gives each PE's row a key (as a NIC's domain does), or refuses every window.
struct keying_observer final : pgas::window_observer {
    bool refuse = false;
    int registered = 0;
    std::vector<std::uint64_t> released;
    void window_registered(const pgas::registered_window&, std::span<pgas::detail::window_row> rows) override {
        ++registered;
        if (refuse) throw pgas::error(pgas::errc::transport_unavailable, -1, "register_window", "refused by the test");
        for (std::size_t pe = 0; pe < rows.size(); ++pe) rows[pe].rkey = std::uint32_t(100 + pe);
    }
    void window_releasing(std::uint64_t table) override { released.push_back(table); }
};

}  // namespace

TEST_CASE("window_registry on its own parts: every local heap's table names every PE's buffer, and release frees it") {
    registry_fixture f;
    const std::uint64_t free_before = f.allocator.free_bytes();
    const auto win = f.registry.register_buffers(f.buffers, 16);
    CHECK(f.registry.size() == 1);
    CHECK(f.registry.live(win.table_offset(), win.id()));
    CHECK(f.allocator.free_bytes() < free_before);
    for (int local = 0; local < n_local; ++local)
        for (int pe = 0; pe < n_local; ++pe) {
            const auto row = f.row(local, win.table_offset(), pe);
            CHECK(row.address == reinterpret_cast<std::byte*>(f.buffers[std::size_t(pe)]));
            CHECK(row.bytes == 16 * sizeof(int));
        }
    f.registry.release(win.table_offset(), win.id());
    CHECK(f.registry.size() == 0);
    CHECK_FALSE(f.registry.live(win.table_offset(), win.id()));
    CHECK(f.allocator.free_bytes() == free_before);
    CHECK(f.row(1, win.table_offset(), 2).address == nullptr);  // the table is zeroed before its block is reused
}

TEST_CASE("window_registry: an observer that refuses leaves no window and no table, a later one keys the live ones") {
    registry_fixture f;
    const std::uint64_t free_before = f.allocator.free_bytes();
    keying_observer refusing;
    refusing.refuse = true;
    f.registry.attach(refusing);
    CHECK_THROWS_AS((void)f.registry.register_buffers(f.buffers, 16), pgas::error);
    CHECK(refusing.registered == 1);
    CHECK(f.registry.size() == 0);
    CHECK(f.allocator.free_bytes() == free_before);
    f.registry.detach(refusing);

    const auto win = f.registry.register_buffers(f.buffers, 16);
    CHECK(f.row(0, win.table_offset(), 1).rkey == 0);
    keying_observer keying;
    f.registry.attach(keying);  // told of the live window at once; its keys are written into every local heap
    CHECK(keying.registered == 1);
    CHECK(refusing.registered == 1);  // detached: hears of nothing more
    for (int local = 0; local < n_local; ++local)
        for (int pe = 0; pe < n_local; ++pe) CHECK(f.row(local, win.table_offset(), pe).rkey == std::uint32_t(100 + pe));
    f.registry.release(win.table_offset(), win.id());
    CHECK(keying.released == std::vector<std::uint64_t>{win.table_offset()});
    f.registry.detach(keying);
}

TEST_CASE("window_registry: a table the heap cannot hold goes to the world's heap_exhausted, and nothing stays") {
    registry_fixture f;
    const auto rest = f.allocator.allocate(f.allocator.largest_free_block(), 256);
    REQUIRE(rest);
    CHECK_THROWS_AS((void)f.registry.register_buffers(f.buffers, 16), pgas::error);
    CHECK(f.exhausted == "register_window 3 32");  // n_pes rows of 32 bytes
    CHECK(f.registry.size() == 0);
    f.allocator.deallocate(*rest);
    const auto win = f.registry.register_buffers(f.buffers, 16);  // the registry is still usable
    CHECK(f.registry.live(win.table_offset(), win.id()));
    f.registry.release(win.table_offset(), win.id());
}
