// Internals of the ep bodies: rows as 16-byte vectors, the fp8 cast of tokens, and the weighted top-k reductions.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/detail/memory_ops.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/ep/config.hpp>
#include <pgas/ep/detail/sync.hpp>
#include <pgas/ep/fp8.hpp>
#include <pgas/ep/grid.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace ep::detail {

// Eight bf16 read through L2 (data a peer wrote in this kernel; L1 may hold an
// older copy from the previous call).
struct alignas(16) bf16x8 {
    bf16 v[8];
};
PGAS_HD inline bf16x8 load_peer_written(const bf16* p) {
    bf16x8 r;
    NV_IF_TARGET(
        NV_IS_DEVICE,
        (const uint4 u = __ldcg(reinterpret_cast<const uint4*>(p)); std::memcpy(static_cast<void*>(&r), &u, 16);),
        (std::memcpy(static_cast<void*>(&r), p, 16);))
    return r;
}
// Eight bf16 stored as one 16-byte vector (p 16-byte aligned: rows of a
// multiple of 8 elements in 256-byte aligned buffers). A memcpy through a
// bf16* compiles to sixteen byte stores on the GPU.
PGAS_HD inline void store8(bf16* p, const bf16x8& r) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (uint4 u; std::memcpy(&u, static_cast<const void*>(&r), 16); *reinterpret_cast<uint4*>(p) = u;),
                 (std::memcpy(static_cast<void*>(p), &r, 16);))
}

// Eight bf16 as one plain 16-byte load (p 16-byte aligned, as store8's).
PGAS_HD inline bf16x8 load8(const bf16* p) {
    bf16x8 r;
    NV_IF_TARGET(NV_IS_DEVICE,
                 (const uint4 u = *reinterpret_cast<const uint4*>(p); std::memcpy(static_cast<void*>(&r), &u, 16);),
                 (std::memcpy(static_cast<void*>(&r), p, 16);))
    return r;
}
// Eight fp8 stored as one 8-byte vector (p 8-byte aligned: eight values of a 128-value group).
struct alignas(8) fp8x8 {
    fp8 v[8];
};
PGAS_HD inline void store8(fp8* p, const fp8x8& r) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (uint2 u; std::memcpy(&u, static_cast<const void*>(&r), 8); *reinterpret_cast<uint2*>(p) = u;),
                 (std::memcpy(static_cast<void*>(p), &r, 8);))
}

// Casts 128-value groups [first, last) of x (groups numbered from x, q and scale) to fp8 with one scale each. Each
// group is taken by `group_lanes` lanes of a warp, each lane 8 values (16 bytes) per load; a warp takes
// lanes / group_lanes groups a step, `steps` steps a trip, and loads the next trip's groups before it casts this
// trip's. Called by the whole block.
template <int group_lanes, int steps>
PGAS_HD void cast_groups(const bf16* x, fp8* q, float* scale, std::size_t first, std::size_t last) {
    constexpr int loads = fp8_group / 8 / group_lanes;  // 16-byte loads per lane and group
    const std::size_t per_warp = grid::lanes() / group_lanes, per_trip = steps * per_warp * grid::warps();
    const std::size_t mine = grid::warp() * per_warp + grid::lane() / group_lanes;
    const std::size_t at = 8 * (grid::lane() % group_lanes);  // this lane's first value in its group
    const auto group = [&](std::size_t base, int s) { return base + (s * grid::warps()) * per_warp + mine; };
    bf16x8 next[steps][loads] = {};
    const auto load_trip = [&](std::size_t base) {
        for (int s = 0; s < steps; ++s)
            if (const std::size_t g = group(base, s); g < last)
                for (int j = 0; j < loads; ++j) next[s][j] = load8(x + g * fp8_group + at + 8 * group_lanes * j);
    };
    load_trip(first);
    for (std::size_t base = first; base < last; base += per_trip) {  // the same trips in the whole block
        bf16x8 in[steps][loads];
        for (int s = 0; s < steps; ++s)
            for (int j = 0; j < loads; ++j) in[s][j] = next[s][j];
        load_trip(base + per_trip);
        for (int s = 0; s < steps; ++s) {
            const std::size_t g = group(base, s);
            float amax = 0.0f;
            for (int j = 0; j < loads; ++j)
                for (int e = 0; e < 8; ++e) amax = fmaxf(amax, fabsf(to_float(in[s][j].v[e])));
            const float sc = fp8_scale(warp_max<group_lanes>(amax));  // every lane: the shuffles need them all
            if (g >= last) continue;
            for (int j = 0; j < loads; ++j) {
                fp8x8 packed;
                for (int e = 0; e < 8; ++e) packed.v[e] = quantize(to_float(in[s][j].v[e]), sc);
                store8(q + g * fp8_group + at + 8 * group_lanes * j, packed);
            }
            if (at == 0) scale[g] = sc;
        }
    }
}

// Casts tokens [begin, end) of x (the token array) into q and scale (theirs) with one scale per 128 values. The
// block's warps take the tokens' groups as one flat range (a token's groups are consecutive in memory): on a GPU
// 16 lanes per group and 8 values a lane, two groups per warp and step, the group's largest magnitude reduced
// over its half-warp, the values quantized from registers, and the next four steps' loads in flight while a warp
// casts these four: the cast is bound by its loads' latency, and four steps ahead is what the throughput dispatch
// kernel's registers allow (122, within two blocks per SM). On the host transport a warp is one lane: it takes a
// group a step. Called by the whole block.
PGAS_HD inline void cast_tokens(const bf16* x, fp8* q, float* scale, int hidden, int begin, int end) {
    const std::size_t groups = std::size_t(hidden) / fp8_group;
    const std::size_t first = std::size_t(begin) * groups, last = std::size_t(end) * groups;
    NV_IF_TARGET(NV_IS_DEVICE, (cast_groups<16, 4>(x, q, scale, first, last);),
                 (cast_groups<1, 1>(x, q, scale, first, last);))
}

// Puts `count` elements at src (this PE's) to dst on PE pe through `chan`: put_nbi, the same checks and
// completion, but on load/store transports each lane keeps loads_in_flight loads of 16 bytes in flight, not
// put_nbi's 4. The throughput phases' copying warps (16 a SM, by registers, on DeepEP's 24 SMs) are otherwise
// bound by the latency of their loads. As many as the calling kernel's registers allow within 128 a thread
// (tests/ep's register check; the callers say what they took). Called by a whole warp.
template <unsigned loads_in_flight, class Tr, class T>
PGAS_HD void push_row(const pgas::device::context<Tr>& chan, pgas::symmetric_ptr<T> dst, const T* src,
                      std::size_t count, int pe) {
    if constexpr (pgas::load_store_transport<Tr>) {
        pgas::detail::check_rma<Tr, T>(chan, "put_nbi", dst.offset(), count, pe);
        pgas::detail::group_copy<pgas::warp, false, loads_in_flight>(chan.peer(dst, pe), src, count * sizeof(T));
    } else {
        pgas::put_nbi<pgas::warp>(chan, dst, src, count, pe);
    }
}

// A small array that travels with a row (a token's fp8 scales, its top-k choices and weights). On a load/store
// transport a warp loads its first per_lane * lanes words before the row's loads, lane l words l, l + lanes, ...,
// and stores them after, so that their loads' latency overlaps the row's instead of following it (as a put_nbi
// after the row did: one more round trip per array); words beyond those (a longer array, or the host transport's
// one-lane warps) follow one a lane. Another transport puts the array with put_nbi after the row.
template <class T, int per_lane>
struct riding_words {
    T v[per_lane] = {};

    template <class Tr>
    PGAS_HD void load(const pgas::device::context<Tr>&, const T* src, int count) {
        if constexpr (pgas::load_store_transport<Tr>)
            for (int m = 0; m < per_lane; ++m)
                if (const int j = int(grid::lane()) + m * int(grid::lanes()); j < count) v[m] = src[j];
    }
    // Puts src's `count` words at dst on PE pe through chan (the words load took from src, and the rest). Called by
    // a whole warp after load.
    template <class Tr>
    PGAS_HD void put(const pgas::device::context<Tr>& chan, pgas::symmetric_ptr<T> dst, const T* src, int count,
                     int pe) const {
        if constexpr (pgas::load_store_transport<Tr>) {
            pgas::detail::check_rma<Tr, T>(chan, "put_nbi", dst.offset(), std::size_t(count), pe);
            T* to = chan.peer(dst, pe);
            const int lane = int(grid::lane()), lanes = int(grid::lanes());
            for (int m = 0; m < per_lane; ++m)
                if (const int j = lane + m * lanes; j < count) to[j] = v[m];
            for (int j = per_lane * lanes + lane; j < count; j += lanes) to[j] = src[j];
        } else {
            pgas::put_nbi<pgas::warp>(chan, dst, src, std::size_t(count), pe);
        }
    }
};

// Puts this PE's token t (bf16, or its fp8 cast and its scales riding along: riding_words, two a lane) into row
// `row` of PE pe's receive buffers (recv_x, or recv_x8 and recv_scale) through `chan`, a channel of this PE's
// context, with loads_in_flight loads a lane in flight (push_row). Called by a whole warp.
template <unsigned loads_in_flight, class Tr, class Layout>
PGAS_HD void put_token(const pgas::device::context<Tr>& chan, const Layout& b, std::size_t row, int t, int pe) {
    const std::size_t h = std::size_t(b.cfg.hidden), groups = h / fp8_group, from = std::size_t(t);
    if (!b.cfg.fp8) {
        push_row<loads_in_flight>(chan, b.recv_x + row * h, chan.local(b.io.x) + from * h, h, pe);
        return;
    }
    const float* scales = chan.local(b.io.x_scale) + from * groups;
    riding_words<float, 2> scale_words;
    scale_words.load(chan, scales, int(groups));
    push_row<loads_in_flight>(chan, b.recv_x8 + row * h, chan.local(b.io.x8) + from * h, h, pe);
    scale_words.put(chan, b.recv_scale + row * groups, scales, int(groups), pe);
}

// out[t] = sum_c w[t][c] * comb_recv[t][c], in float, rounded once. Called by the block.
template <class Tr>
PGAS_HD void reduce_token(const pgas::device::context<Tr>& ctx, const io_layout& io, const config& c, int t) {
    const std::size_t h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    const bf16* rows = ctx.local(io.comb_recv) + std::size_t(t) * k * h;
    const float* w = ctx.local(io.topk_w) + std::size_t(t) * k;
    bf16* out = ctx.local(io.out) + std::size_t(t) * h;
    for (std::size_t v = grid::thread(); v < h / 8; v += grid::threads()) {
        float acc[8] = {};
        for (std::size_t choice = 0; choice < k; ++choice) {
            const bf16x8 in = load_peer_written(rows + choice * h + 8 * v);
            for (int j = 0; j < 8; ++j) acc[j] += w[choice] * to_float(in.v[j]);
        }
        bf16x8 r;
        for (int j = 0; j < 8; ++j) r.v[j] = to_bf16(acc[j]);
        store8(out + 8 * v, r);
    }
}

// Throughput combine's sum for home tokens [begin, end): each token's partial sums, one from each PE it went to
// (send_row says which: -1 where it did not go), added per element in PE order, in float, rounded once. Another
// PE's arrived in comb_recv[token][PE] (pushed by that PE's combine); this PE's own is read in place, at the row
// of expert_y dispatch recorded in send_row. All loads are local. Called by whole warps: warp `worker` of the
// `workers` that share the range (every warp of the summing blocks), each calling ready(t) before it reads token t
// (tokens in increasing order): the combine waits there until t's partial sums have arrived.
//
// The loads' latency bounds this pass on 24 SMs, so each lane keeps eight 16-byte loads in flight: the workers
// take (token, tile) pairs in turn, a tile giving each lane `per` = 8 / N vectors of 8 values (at least
// one), lane l's vectors l, l + lanes, ..., so that each load of a warp reads 512 contiguous bytes. A lane
// computes its token's N source addresses once, then issues all per x N loads before it sums any. N, the PEs
// summed per pass, is a compile-time bound on n (2, 4 or 8; past eight, passes of eight): with n known only at
// run time, the bookkeeping of which load came from which PE took 136 registers for eight loads, past the 128
// that two blocks of 256 threads per SM allow (CI's `ep: kernels fit two blocks per SM`).
template <int N, class Tr, class Ready>
PGAS_HD void sum_partials_upto(const pgas::device::context<Tr>& ctx, const throughput_layout& b, int begin, int end,
                               int worker, int workers, Ready& ready) {
    constexpr int loads = 8, per = loads / N > 0 ? loads / N : 1;
    const int h = b.cfg.hidden, h8 = h / 8, n = ctx.n_pes(), me = ctx.my_pe(), lanes = int(grid::lanes());
    const int span = per * lanes, tiles = (h8 + span - 1) / span;
    const int* row = ctx.local(b.send_row);
    bf16* out = ctx.local(b.io.out);
    const bf16* own = ctx.local(b.expert_y);
    const bf16* received = ctx.local(b.io.comb_recv);
    for (int i = worker; i < (end - begin) * tiles; i += workers) {
        const int t = begin + i / tiles, v0 = (i % tiles) * span + int(grid::lane());
        ready(t);
        float acc[per][8] = {};
        const int passes = N < 8 ? 1 : (n + N - 1) / N;  // known to be one below eight: acc then lives briefly
        for (int first = 0; first < passes * N; first += N) {
            const bf16* src[N];
            for (int j = 0; j < N; ++j) {
                const int pe = first + j, r = pe < n ? row[t * n + pe] : -1;
                src[j] = r < 0      ? nullptr
                         : pe == me ? own + std::int64_t(r) * h
                                    : received + (std::int64_t(t) * n + pe) * h;
            }
            bf16x8 in[per][N];
            for (int m = 0; m < per; ++m)
                for (int j = 0; j < N; ++j)
                    if (const int v = v0 + m * lanes; v < h8 && src[j] != nullptr)
                        in[m][j] = load_peer_written(src[j] + 8 * v);
            for (int m = 0; m < per; ++m)
                for (int j = 0; j < N; ++j)
                    if (src[j] != nullptr)
                        for (int e = 0; e < 8; ++e) acc[m][e] += to_float(in[m][j].v[e]);
        }
        for (int m = 0; m < per; ++m)
            if (const int v = v0 + m * lanes; v < h8) {
                bf16x8 sum;
                for (int e = 0; e < 8; ++e) sum.v[e] = to_bf16(acc[m][e]);
                store8(out + std::int64_t(t) * h + 8 * v, sum);
            }
    }
}
}  // namespace ep::detail
PGAS_NAMESPACE_END
