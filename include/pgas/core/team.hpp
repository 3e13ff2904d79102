// team: an ordered, strided set of PEs, usable as a value on host and device.
#pragma once

#include <pgas/core/config.hpp>

PGAS_NAMESPACE_BEGIN

/// An ordered, strided set of PEs, usable as a value on host and device.
/// A team is the PEs start, start+stride, ..., start+(size-1)*stride of the
/// world, seen from one PE (`bound_pe`). Team index i is the i-th of them.
/// Every team owns a sync slot in the symmetric heap (device barriers of the
/// team count there); teams from one split share a slot, since each PE belongs
/// to at most one of them. Teams are made by pgas::world (collective: every PE
/// creates the same teams in the same order) and by team::world_team, and
/// released by world::destroy_team, which frees the slot for a later split; the
/// slot's generation tells a copy of a destroyed team from its slot's new owner.
class team {
public:
    /// Upper bound on sync slots, i.e. on teams alive at once (slot 0 is the world team, slot 1 the node team);
    /// world::split_* reports the limit when it is hit, world::destroy_team frees a slot.
    static constexpr int max_slots = 64;

    /// An empty team (no members).
    constexpr team() = default;

    /// Every PE of the world, bound to `my_world_pe` (slot 0). ctx.world_team() and world::team_world make it.
    PGAS_HD static constexpr team world_team(int my_world_pe, int n_world_pes) {
        return team(0, 0, 1, n_world_pes, my_world_pe);
    }

    /// This PE's index in the team, or -1 when it is not a member.
    PGAS_HD constexpr int my_pe() const { return index_of(bound_pe_); }
    /// Members in the team.
    PGAS_HD constexpr int n_pes() const { return size_; }
    /// Whether the bound PE is a member.
    PGAS_HD constexpr bool is_member() const { return my_pe() >= 0; }

    /// World PE of team index i (no range check: see contains_index).
    PGAS_HD constexpr int world_pe(int index) const { return start_ + index * stride_; }
    /// Whether `index` is a team index (0 <= index < n_pes()).
    PGAS_HD constexpr bool contains_index(int index) const { return index >= 0 && index < size_; }

    /// Team index of a world PE, or -1 when that PE is not a member.
    PGAS_HD constexpr int index_of(int world_pe_id) const {
        int delta = world_pe_id - start_;
        if (size_ <= 0 || delta < 0 || delta % stride_ != 0) return -1;
        int index = delta / stride_;
        return index < size_ ? index : -1;
    }

    /// Index in `other` of this team's index `pe`, or -1 (as nvshmem_team_translate_pe).
    PGAS_HD constexpr int translate(int pe, const team& other) const {
        return contains_index(pe) ? other.index_of(world_pe(pe)) : -1;
    }

    /// The same team seen from another world PE (one process driving several
    /// PEs hands each of them its own binding). Device ops bind the team to the calling PE themselves.
    PGAS_HD constexpr team bound_to(int world_pe_id) const {
        team t = *this;
        t.bound_pe_ = world_pe_id;
        return t;
    }

    /// The team's sync slot in the symmetric heap (0: the world team).
    PGAS_HD constexpr int slot() const { return slot_; }
    /// How many teams held this slot before this one (world::destroy_team checks it: a copy of a destroyed team
    /// is refused even after its slot was given to a new team).
    PGAS_HD constexpr unsigned generation() const { return generation_; }
    /// World PE of team index 0.
    PGAS_HD constexpr int start() const { return start_; }
    /// Distance in world PEs between consecutive members.
    PGAS_HD constexpr int stride() const { return stride_; }
    /// The world PE this value is seen from (-1 for a default-constructed team).
    PGAS_HD constexpr int bound_pe() const { return bound_pe_; }

    /// Builds a sub-team; indices are in this team. Use world::split_strided,
    /// which validates the arguments and assigns the slot and its generation.
    PGAS_HD constexpr team sub_team(int first, int step, int count, int new_slot, unsigned new_generation = 0) const {
        team t(new_slot, world_pe(first), stride_ * step, count, bound_pe_);
        t.generation_ = new_generation;
        return t;
    }

    friend constexpr bool operator==(const team&, const team&) = default;

private:
    PGAS_HD constexpr team(int slot, int start, int stride, int size, int bound_pe)
        : slot_(slot), start_(start), stride_(stride), size_(size), bound_pe_(bound_pe) {}

    int slot_ = 0;
    int start_ = 0;
    int stride_ = 1;
    int size_ = 0;
    int bound_pe_ = -1;
    unsigned generation_ = 0;
};

PGAS_NAMESPACE_END
