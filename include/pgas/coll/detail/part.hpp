// Parts: one block's share of a collective spread over many blocks (an LL channel, or a direct part with its barrier).
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/scratch.hpp>
#include <pgas/device/sync.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Which share of a collective this group moves: part `index` of `count`. The
// device collectives run as one part; an *_on_stream kernel on the LL or the
// direct peer-pointer path runs one part per block. Every part talks only to
// the same part on the other members (each part touches only its own
// elements of every buffer), so no grid-wide barrier is needed: a member's
// kernel ends after each of its parts saw every peer's part finish.
struct coll_part {
    unsigned index = 0;
    unsigned count = 1;
};

// Whether this group runs `path` at all, and as which part. The LL path
// spreads over up to the team's LL channels (one per part), the direct path
// over peer pointers up to max_parts parts; every other case (put/get, one
// member, no data, a team too large for LL channels and part barriers, more
// parts than the path takes) runs whole in part 0 while the other blocks
// return at once. Identical on every member: it depends only on the path,
// the team, the count and the launch.
template <class Tr>
PGAS_HD bool settle_part(coll_part& part, coll_path path, const coll_call<Tr>& c, std::size_t count) {
    if (part.count == 1) return true;
    if (c.n > 1 && c.n <= coll_scratch::max_ll_pes && count != 0) {
        if (path.ll && part.count <= unsigned(coll_scratch::channels(c.t.slot()))) return true;
        if (!path.ll && path.peers && part.count <= unsigned(coll_scratch::max_parts)) return true;
    }
    if (part.index != 0) return false;
    part = coll_part{};
    return true;
}

// The direct path's team synchronization, for one part: the team's sync (or,
// with `complete`, barrier) when the call is one part; otherwise a
// dissemination barrier of this part's own words in the team slot's scratch.
// On a load/store transport each arrival is a release add, so the part's
// stores before it are visible to the peer's part after it.
template <group G, class Tr>
PGAS_HD void part_sync(const coll_call<Tr>& c, coll_part part, bool complete) {
    if (part.count == 1) {
        if (complete)
            barrier<G>(c.ctx, c.t);
        else
            sync<G>(c.ctx, c.t);
        return;
    }
    G::sync();
    if (G::rank() == 0) {
        if constexpr (!load_store_transport<Tr>) {
            if (complete) ::pgas::quiet<thread>(c.ctx);
        }
        const std::uint64_t base = c.slot_base();
        const std::uint64_t index = part.index;
        disseminate_over(c.ctx, c.t, c.name, base + coll_scratch::part_epoch_offset + 8 * index,
                         [base, index](int round) {
                             return base + coll_scratch::part_arrival_offset +
                                    8 * (index * coll_scratch::max_part_rounds + std::uint64_t(round));
                         });
    }
    G::sync();
}

// Elements [begin, begin + size) of `count` that part `part` moves: the
// count split into part.count runs on 16-byte boundaries (see slice_of).
template <class T>
PGAS_HD slice<T> part_of(std::size_t count, coll_part part) {
    return slice_of<T>(count, int(part.count), int(part.index));
}

}  // namespace detail
PGAS_NAMESPACE_END
