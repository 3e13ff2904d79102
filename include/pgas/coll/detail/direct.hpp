// The direct algorithm's building blocks: slice reduction, push and pull, over peer pointers or through put/get.
#pragma once

#include <pgas/coll/detail/common.hpp>
#include <pgas/detail/memory_ops.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Where a reduced slice goes: to one member's dst (team index), or to every
// member's dst (all_members).
inline constexpr int all_members = -1;

// 16-byte packs each thread of reduce_slice_peers loads from every member before it combines them.
inline constexpr unsigned reduce_packs_in_flight = 4;

// Reduces elements [0, len) of src over every member, in team order (so every
// PE computes the same bits, floats included), and stores the result at dst on
// `target`. Loads peers' src and stores into peers' dst directly; each thread
// of G takes 16-byte vectors, then single elements for the tail.
template <group G, class T, class Op, class Tr>
PGAS_HD void reduce_slice_peers(const coll_call<Tr>& c, symmetric_ptr<const T> src, symmetric_ptr<T> dst,
                                std::size_t len, Op op, int target) {
    constexpr std::size_t lanes = vec16<T>::lanes;
    const bool vector = (src.offset() % 16 == 0) && (dst.offset() % 16 == 0);
    const std::size_t packs = vector ? len / lanes : 0;
    const int first = target == all_members ? 0 : target;
    const int last = target == all_members ? c.n - 1 : target;
    // reduce_packs_in_flight packs a thread at a time: every member's loads of them issued before any is combined,
    // so more bytes are on the link per thread than one pack per member; the rest one pack a thread.
    const std::size_t stride = G::size();
    std::size_t p = G::rank();
    for (; p + (reduce_packs_in_flight - 1) * stride < packs; p += reduce_packs_in_flight * stride) {
        vec16<T> acc[reduce_packs_in_flight];
        PGAS_UNROLL
        for (unsigned u = 0; u < reduce_packs_in_flight; ++u)
            acc[u] = load16(c.ctx.peer(src, c.world_pe(0)) + (p + u * stride) * lanes);
        for (int q = 1; q < c.n; ++q) {
            vec16<T> more[reduce_packs_in_flight];
            PGAS_UNROLL
            for (unsigned u = 0; u < reduce_packs_in_flight; ++u)
                more[u] = load16(c.ctx.peer(src, c.world_pe(q)) + (p + u * stride) * lanes);
            PGAS_UNROLL
            for (unsigned u = 0; u < reduce_packs_in_flight; ++u)
                for (std::size_t l = 0; l < lanes; ++l) acc[u].v[l] = op(acc[u].v[l], more[u].v[l]);
        }
        for (int q = first; q <= last; ++q) {
            PGAS_UNROLL
            for (unsigned u = 0; u < reduce_packs_in_flight; ++u)
                store16(c.ctx.peer(dst, c.world_pe(q)) + (p + u * stride) * lanes, acc[u]);
        }
    }
    for (; p < packs; p += stride) {
        vec16<T> acc = load16(c.ctx.peer(src, c.world_pe(0)) + p * lanes);
        for (int q = 1; q < c.n; ++q) {
            const vec16<T> more = load16(c.ctx.peer(src, c.world_pe(q)) + p * lanes);
            for (std::size_t l = 0; l < lanes; ++l) acc.v[l] = op(acc.v[l], more.v[l]);
        }
        for (int q = first; q <= last; ++q) store16(c.ctx.peer(dst, c.world_pe(q)) + p * lanes, acc);
    }
    for (std::size_t i = packs * lanes + G::rank(); i < len; i += G::size()) {
        T acc = load_peer(c.ctx.peer(src, c.world_pe(0)) + i);
        for (int q = 1; q < c.n; ++q) acc = op(acc, load_peer(c.ctx.peer(src, c.world_pe(q)) + i));
        for (int q = first; q <= last; ++q) c.ctx.peer(dst, c.world_pe(q))[i] = acc;
    }
    G::sync();
}

// As reduce_slice_peers, through get and put only (any RMA transport):
// members' pieces are fetched into the caller's staging scratch, reduced
// there, and the result is put to the target(s).
template <group G, class T, class Op, class Tr>
PGAS_HD void reduce_slice_rma(const coll_call<Tr>& c, symmetric_ptr<const T> src, symmetric_ptr<T> dst, std::size_t len,
                              Op op, int target) {
    constexpr std::size_t piece = coll_scratch::staging_bytes / 2 / sizeof(T);
    T* acc = reinterpret_cast<T*>(
        c.ctx.local(coll_scratch::at<unsigned char>(c.slot_base() + coll_scratch::staging_offset)));
    T* more = acc + piece;
    const int first = target == all_members ? 0 : target;
    const int last = target == all_members ? c.n - 1 : target;
    for (std::size_t base = 0; base < len; base += piece) {
        const std::size_t k = min_size(piece, len - base);
        get<G>(c.ctx, acc, src + std::ptrdiff_t(base), k, c.world_pe(0));
        for (int q = 1; q < c.n; ++q) {
            get<G>(c.ctx, more, src + std::ptrdiff_t(base), k, c.world_pe(q));
            for (std::size_t i = G::rank(); i < k; i += G::size()) acc[i] = op(acc[i], more[i]);
            G::sync();
        }
        for (int q = first; q <= last; ++q) put<G>(c.ctx, dst + std::ptrdiff_t(base), acc, k, c.world_pe(q));
        G::sync();
    }
}

template <group G, class T, class Op, class Tr>
PGAS_HD void reduce_slice(const coll_call<Tr>& c, coll_path path, symmetric_ptr<const T> src, symmetric_ptr<T> dst,
                          std::size_t len, Op op, int target) {
    if (len == 0) return;
    if (path.peers)
        reduce_slice_peers<G>(c, src, dst, len, op, target);
    else
        reduce_slice_rma<G>(c, src, dst, len, op, target);
}

// Copies count elements of local src into dst on member `to` (a put, or a
// store through the peer pointer).
template <group G, class T, class Tr>
PGAS_HD void push(const coll_call<Tr>& c, coll_path path, symmetric_ptr<T> dst, const T* src, std::size_t count,
                  int to) {
    if (count == 0) return;
    if (path.peers) {
        group_copy<G>(c.ctx.peer(dst, c.world_pe(to)), src, count * sizeof(T));
        G::sync();
    } else {
        put<G>(c.ctx, dst, src, count, c.world_pe(to));
    }
}

// Copies count elements of src on member `from` into local dst.
template <group G, class T, class Tr>
PGAS_HD void pull(const coll_call<Tr>& c, coll_path path, T* dst, symmetric_ptr<const T> src, std::size_t count,
                  int from) {
    if (count == 0) return;
    if (path.peers) {
        group_copy<G>(dst, c.ctx.peer(src, c.world_pe(from)), count * sizeof(T));
        G::sync();
    } else {
        get<G>(c.ctx, dst, src, count, c.world_pe(from));
    }
}

// A local copy by the whole group (skipped when in place).
template <group G>
PGAS_HD void local_copy(void* dst, const void* src, std::size_t bytes) {
    if (dst != src && bytes != 0) group_copy<G>(dst, src, bytes);
    G::sync();
}

PGAS_HD inline bool everyone(int) { return true; }
PGAS_HD inline bool no_one(int) { return false; }

}  // namespace detail
PGAS_NAMESPACE_END
