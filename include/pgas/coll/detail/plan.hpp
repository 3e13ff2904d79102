// A collective as a plan: which member's block goes to which member, where it lands, copied or reduced.
#pragma once

#include <pgas/coll/detail/common.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace detail {

// What a collective moves, independent of how an algorithm moves it. Every
// member i that sends gives every member r that receives one block of
// `count` elements, read at src + send_offset(r) on i; a copying collective
// (its Op is no_reduction) stores it at dst + recv_offset(i) on r, a reducing
// one combines the blocks of every member, in team order, into dst on r. A member's own block takes
// part like the others (copied locally, or combined at its place in the
// order). The algorithms (coll/algorithm/) run any plan; plan_of below holds
// every collective's.
struct coll_plan {
    enum class layout : unsigned char { one_block, block_per_member };  // of src or dst
    enum class members : unsigned char { everyone, root_only };         // who sends or receives

    coll_kind kind;
    std::size_t count;  // elements of one block
    int root;           // team index of the root (rooted()), else no_root
    layout src;         // block_per_member: the block for member r is the r-th
    layout dst;         // block_per_member: the block from member i lands in the i-th
    members senders;
    members receivers;
    bool in_place_allowed;  // src may overlap dst where the caller's own block is read and lands (in_place_src)

    static constexpr int no_root = -1;

    // Whether the collective has a root (broadcast, reduce): then `root` is the caller's argument, checked.
    PGAS_HD constexpr bool rooted() const { return senders == members::root_only || receivers == members::root_only; }
    PGAS_HD constexpr bool sends(int i) const { return senders == members::everyone || i == root; }
    PGAS_HD constexpr bool receives(int r) const { return receivers == members::everyone || r == root; }
    // Whether member i's block travels to another member r.
    PGAS_HD constexpr bool moves(int i, int r) const { return i != r && sends(i) && receives(r); }
    // Whether member i keeps its own block (copied to its dst, or combined there).
    PGAS_HD constexpr bool keeps_own(int i) const { return sends(i) && receives(i); }
    // Element offsets of the block for member r in src, and of member i's block in dst.
    PGAS_HD constexpr std::size_t send_offset(int r) const {
        return src == layout::block_per_member ? count * std::size_t(r) : 0;
    }
    PGAS_HD constexpr std::size_t recv_offset(int i) const {
        return dst == layout::block_per_member ? count * std::size_t(i) : 0;
    }
    // The one src element offset allowed to overlap dst (relative to dst, modulo 2^64): where the caller's own
    // block is read is where it lands. ~0 when no in-place form exists.
    PGAS_HD constexpr std::uint64_t in_place_src(std::uint64_t dst_offset, int me, std::size_t element) const {
        if (!in_place_allowed) return ~std::uint64_t{0};
        return dst_offset + recv_offset(me) * element - send_offset(me) * element;
    }
    PGAS_HD constexpr std::size_t src_elements(int n) const {
        return src == layout::block_per_member ? count * std::size_t(n) : count;
    }
    PGAS_HD constexpr std::size_t dst_elements(int n) const {
        return dst == layout::block_per_member ? count * std::size_t(n) : count;
    }
};

// The plan of collective K, every collective's side by side. K is a template parameter so that the code running it
// (device_collective, the on-stream kernel) sees the plan's shape as constants.
template <coll_kind K>
PGAS_HD constexpr coll_plan plan_of(std::size_t count, int root = coll_plan::no_root) {
    constexpr auto one = coll_plan::layout::one_block, per_member = coll_plan::layout::block_per_member;
    constexpr auto all = coll_plan::members::everyone, root_only = coll_plan::members::root_only;
    constexpr int none = coll_plan::no_root;
    // Each row: kind, count, root; src and dst layout; who sends, who receives; whether an in-place form exists.
    // broadcast: the root's block lands in every member's dst (in place: src = dst on the root).
    if constexpr (K == coll_kind::broadcast) return {K, count, root, one, one, root_only, all, true};
    // reduce: every member's block, combined in team order, lands in the root's dst (in place: src = dst).
    if constexpr (K == coll_kind::reduce) return {K, count, root, one, one, all, root_only, true};
    // allreduce: every member's block, combined in team order, lands in every member's dst (in place: src = dst).
    if constexpr (K == coll_kind::allreduce) return {K, count, none, one, one, all, all, true};
    // allgather: every member's block lands at its index in every member's dst (in place: src = dst + my_pe *
    // count).
    if constexpr (K == coll_kind::allgather) return {K, count, none, one, per_member, all, all, true};
    // reduce_scatter: block r of every member's src, combined in team order, lands in member r's dst (in place:
    // dst = src + my_pe * count).
    if constexpr (K == coll_kind::reduce_scatter) return {K, count, none, per_member, one, all, all, true};
    // alltoall: block r of member i's src lands at block i of member r's dst (no in-place form).
    if constexpr (K == coll_kind::alltoall) return {K, count, none, per_member, per_member, all, all, false};
}

// The name of a collective in diagnostics (a literal of the calling side, host or device).
PGAS_HD constexpr const char* coll_name(coll_kind kind) {
    switch (kind) {
        case coll_kind::broadcast:
            return "broadcast";
        case coll_kind::reduce:
            return "reduce";
        case coll_kind::allreduce:
            return "allreduce";
        case coll_kind::allgather:
            return "allgather";
        case coll_kind::reduce_scatter:
            return "reduce_scatter";
        case coll_kind::alltoall:
            return "alltoall";
    }
    return "collective";
}

// The Op of a collective that copies: no reduction (code 0 in the signature). The algorithms compile their
// reducing branches only for a real op (reduces_with), so a copy of any trivially copyable type instantiates no
// arithmetic on it.
struct no_reduction {
    static constexpr unsigned code = 0;
};
template <class Op>
inline constexpr bool reduces_with = !std::is_same_v<Op, no_reduction>;

}  // namespace detail
PGAS_NAMESPACE_END
