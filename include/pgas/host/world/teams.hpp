// The world's team calls behind world::split_strided, split_2d and destroy_team, and the agreement check they use.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/team.hpp>
#include <pgas/coll/detail/scratch.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/world/state.hpp>

#include <cstdint>
#include <string>
#include <utility>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Collective: throws errc::collective_mismatch (naming `call`, `what`, this value and the first PE whose value
// differs; `pe` the caller) unless every process of the bootstrap passes the same `mine`.
inline void agree_all(bootstrap& channel, int pe, const char* call, const char* what, std::uint64_t mine) {
    auto all = channel.allgather_value(mine);
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i] != mine)
            throw_error(errc::collective_mismatch, pe, call,
                        std::string(what) + " = " + std::to_string(mine) + " here but " + std::to_string(all[i]) +
                            " on PE " + std::to_string(i));
}

// world::split_strided: the members' checks, then the team on the lowest free slot (`pe` names the caller).
inline team split_strided_team(world_state& s, int pe, const team& parent, int start, int stride, int size) {
    s.slots.check_alive("split_strided", parent, pe);
    agree_all(*s.bootstrap, pe, "split_strided", "start", std::uint64_t(std::int64_t(start)));
    agree_all(*s.bootstrap, pe, "split_strided", "stride", std::uint64_t(std::int64_t(stride)));
    agree_all(*s.bootstrap, pe, "split_strided", "size", std::uint64_t(std::int64_t(size)));
    const auto members = [&] {
        return "members start=" + std::to_string(start) + " stride=" + std::to_string(stride) +
               " size=" + std::to_string(size);
    };
    if (size <= 0 || stride <= 0 || start < 0)
        throw_error(errc::pe_out_of_range, parent.bound_pe(), "split_strided",
                    members() + ": start must be >= 0, stride and size > 0");
    // In 64 bits: start + stride * (size - 1) overflows int for hostile arguments.
    const std::int64_t last = std::int64_t(start) + std::int64_t(stride) * (std::int64_t(size) - 1);
    if (last >= parent.n_pes())
        throw_error(errc::pe_out_of_range, parent.bound_pe(), "split_strided",
                    members() + ": the last member start + stride * (size - 1) = " + std::to_string(last) +
                        " is outside a parent team of " + std::to_string(parent.n_pes()) + " PEs");
    // One member: the stride is never used, and parent stride * stride may not fit an int.
    const int slot = s.slots.next("split_strided", pe);
    return parent.sub_team(start, size == 1 ? 1 : stride, size, slot, s.slots.generation[std::size_t(slot)]);
}

// world::split_2d: {the caller's row of xrange consecutive members, its column}, each on a slot of its own.
inline std::pair<team, team> split_2d_teams(world_state& s, int pe, const team& parent, int xrange) {
    s.slots.check_alive("split_2d", parent, pe);
    agree_all(*s.bootstrap, pe, "split_2d", "xrange", std::uint64_t(std::int64_t(xrange)));
    if (xrange <= 0)
        throw_error(errc::invalid_argument, parent.bound_pe(), "split_2d",
                    "xrange must be positive, got " + std::to_string(xrange));
    const int n = parent.n_pes();
    const int x = xrange < n ? xrange : n;
    const int me = parent.my_pe() < 0 ? 0 : parent.my_pe();
    const int row = me / x, column = me % x;
    const int row_size = (row + 1) * x <= n ? x : n - row * x;
    const int column_size = (n - column + x - 1) / x;
    const int x_slot = s.slots.next("split_2d", pe);
    const int y_slot = s.slots.next("split_2d", pe);
    return {parent.sub_team(row * x, 1, row_size, x_slot, s.slots.generation[std::size_t(x_slot)]),
            parent.sub_team(column, x, column_size, y_slot, s.slots.generation[std::size_t(y_slot)])};
}

// world::destroy_team: its checks, the slot's counters and scratch cleared on every PE between two barriers, the
// slot freed and `t` emptied.
inline void destroy_split_team(world_state& s, int pe, team& t) {
    agree_all(*s.bootstrap, pe, "destroy_team", "team slot", std::uint64_t(std::int64_t(t.slot())));
    agree_all(*s.bootstrap, pe, "destroy_team", "team generation", t.generation());
    if (t.slot() == 0 || t.slot() == team_slots::node_slot)
        throw_error(errc::invalid_argument, pe, "destroy_team",
                    std::string("the ") + (t.slot() == 0 ? "world" : "node") + " team cannot be destroyed");
    s.slots.check_alive("destroy_team", t, pe);
    s.bootstrap->barrier();  // no PE still enters a barrier or collective of the team
    const auto slot = std::size_t(t.slot());
    for (int local = 0; local < int(s.local_pes.size()); ++local) {
        s.memory->zero(local, heap_layout::slot_offset(t.slot()), sizeof(team_sync_slot));
        s.memory->zero(local, coll_scratch::slot_base(t.slot()), coll_scratch::slot_bytes);
    }
    s.bootstrap->barrier();  // the slot is clean on every PE before a split may hand it out again
    s.slots.live[slot] = false;
    t = team();
}

}  // namespace detail
PGAS_NAMESPACE_END
