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
//   copy from one sender (broadcast): scatter, then allgather. The piece is
//     cut into n - 1 sub-slices, the k-th owned by the k-th non-root member
//     in team order; each owner pulls its own from the root's src (the root
//     copies its block locally), a sync, then each owner pulls the others'
//     sub-slices from their dst; the last sync also keeps those dst and the
//     root's src until every reader is done. The root's links carry one copy
//     of the block, not n - 1 (4xH100, 256 KiB-256 MiB: every member pulling
//     the whole block reached 124 GB/s per GPU, NCCL 352). Two members: one
//     owner, no middle sync, no second phase;
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
    } else if (pulls) {
        const auto piece = part_of<T>(p.count, part);
        const int owners = c.n - 1;
        auto owner_slice = [&](int k) { return slice_of<T>(piece.size, owners, k); };
        auto owner_member = [&](int k) { return k < p.root ? k : k + 1; };
        const int mine = c.me < p.root ? c.me : c.me - 1;
        T* d = c.ctx.local(dst) + piece.begin;
        if (c.me == p.root) {
            local_copy<G>(d, c.ctx.local(src) + piece.begin, piece.size * sizeof(T));
        } else {
            const auto own = owner_slice(mine);
            pull<G>(c, path, d + own.begin, src + std::ptrdiff_t(piece.begin + own.begin), own.size, p.root);
        }
        if (owners > 1) part_sync<G>(c, part, false);
        for (int j = 1; c.me != p.root && j < owners; ++j) {
            const int k = (mine + j) % owners;
            const auto other = owner_slice(k);
            pull<G>(c, path, d + other.begin, symmetric_ptr<const T>(dst) + std::ptrdiff_t(piece.begin + other.begin),
                    other.size, owner_member(k));
        }
    } else {
        const auto piece = part_of<T>(p.count, part);
        T* d = c.ctx.local(dst) + piece.begin;
        const T* s = c.ctx.local(src) + piece.begin;
        // The caller's own block (allgather, alltoall) goes with the first push, in one loop: its copy in this GPU's
        // memory then runs while the link is busy, not before it.
        bool own = p.keeps_own(c.me) && d + p.recv_offset(c.me) != s + p.send_offset(c.me);
        for (int j = 1; j < c.n; ++j) {
            const int other = (c.me + j) % c.n;
            if (!p.moves(c.me, other)) continue;
            const auto to = dst + std::ptrdiff_t(p.recv_offset(c.me) + piece.begin);
            if (own && path.peers && piece.size != 0) {
                group_copy_pair<G>(c.ctx.peer(to, c.world_pe(other)), s + p.send_offset(other), d + p.recv_offset(c.me),
                                   s + p.send_offset(c.me), piece.size * sizeof(T));
                G::sync();
                own = false;
            } else {
                push<G>(c, path, to, s + p.send_offset(other), piece.size, other);
            }
        }
        if (own) local_copy<G>(d + p.recv_offset(c.me), s + p.send_offset(c.me), piece.size * sizeof(T));
    }
    part_sync<G>(c, part, !pulls);
}

}  // namespace detail
PGAS_NAMESPACE_END
