// The direct algorithm: blocks moved straight between users' buffers (peer pointers or put/get) between two syncs.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/coll/detail/direct.hpp>
#include <pgas/coll/detail/part.hpp>
#include <pgas/coll/detail/plan.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Runs plan p as part `part` with the data going straight from src to dst:
// through ctx.peer() when path.peers, else put/get through the staging
// scratch. The first sync says every member's src is ready and its dst free;
// the last says the data has landed (a barrier where this PE wrote to peers).
// Who does what:
//   reduce, one src block for all: member m combines slice m of the block
//     over every member and stores it into every receiver's dst (two-shot);
//   reduce, a src block per member: each receiver combines its own block;
//   copy from one sender: the receivers pull the root's block (the reads
//     spread over every member instead of one member writing n - 1 copies);
//   copy from every member: each sender pushes its blocks to their receivers.
template <group G, class T, class Op, class Tr>
PGAS_HD void direct_algorithm(const coll_call<Tr>& c, const coll_plan& p, coll_path path, symmetric_ptr<T> dst,
                              symmetric_ptr<const T> src, Op op, coll_part part) {
    const bool pulls = !reduces_with<Op> && p.senders == coll_plan::members::root_only;
    part_sync<G>(c, part, false);
    if constexpr (reduces_with<Op>) {
        if (p.src == coll_plan::layout::one_block) {
            const auto slice = slice_of<T>(p.count, c.n, c.me);
            const auto piece = part_of<T>(slice.size, part);
            const auto at = std::ptrdiff_t(slice.begin + piece.begin);
            const int target = p.receivers == coll_plan::members::everyone ? all_members : p.root;
            reduce_slice<G>(c, path, src + at, dst + at, piece.size, op, target);
        } else {
            const auto piece = part_of<T>(p.count, part);
            reduce_slice<G>(c, path, src + std::ptrdiff_t(p.send_offset(c.me) + piece.begin),
                            dst + std::ptrdiff_t(piece.begin), piece.size, op, c.me);
        }
    } else {
        const auto piece = part_of<T>(p.count, part);
        T* d = c.ctx.local(dst) + piece.begin;
        const T* s = c.ctx.local(src) + piece.begin;
        for (int j = 0; j < c.n; ++j) {
            const int other = (c.me + j) % c.n;
            if (other == c.me) {
                if (p.keeps_own(c.me))
                    local_copy<G>(d + p.recv_offset(c.me), s + p.send_offset(c.me), piece.size * sizeof(T));
            } else if (pulls && p.moves(other, c.me)) {
                pull<G>(c, path, d + p.recv_offset(other), src + std::ptrdiff_t(p.send_offset(c.me) + piece.begin),
                        piece.size, other);
            } else if (!pulls && p.moves(c.me, other)) {
                push<G>(c, path, dst + std::ptrdiff_t(p.recv_offset(c.me) + piece.begin), s + p.send_offset(other),
                        piece.size, other);
            }
        }
    }
    part_sync<G>(c, part, !pulls);
}

}  // namespace detail
PGAS_NAMESPACE_END
