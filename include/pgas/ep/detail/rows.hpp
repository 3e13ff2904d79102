// Internals of the ep bodies: rows as 16-byte vectors, the fp8 cast of a token, and the weighted top-k reductions.
#pragma once

#include <pgas/core/config.hpp>
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
    NV_IF_TARGET(NV_IS_DEVICE, (const uint4 u = __ldcg(reinterpret_cast<const uint4*>(p)); std::memcpy(static_cast<void*>(&r), &u, 16);),
                 (std::memcpy(static_cast<void*>(&r), p, 16);))
    return r;
}
// Eight bf16 stored as one 16-byte vector (p 16-byte aligned: rows of a
// multiple of 8 elements in 256-byte aligned buffers). A memcpy through a
// bf16* compiles to sixteen byte stores on the GPU.
PGAS_HD inline void store8(bf16* p, const bf16x8& r) {
    NV_IF_TARGET(NV_IS_DEVICE, (uint4 u; std::memcpy(&u, static_cast<const void*>(&r), 16); *reinterpret_cast<uint4*>(p) = u;),
                 (std::memcpy(static_cast<void*>(p), &r, 16);))
}

// Four bf16 in, four fp8 out, as one 8-byte load and one 4-byte store (p 8- and 4-byte aligned: groups of 128
// values in rows of a multiple of 128).
struct alignas(8) bf16x4 {
    bf16 v[4];
};
struct alignas(4) fp8x4 {
    fp8 v[4];
};
PGAS_HD inline bf16x4 load4(const bf16* p) {
    bf16x4 r;
    NV_IF_TARGET(NV_IS_DEVICE, (const uint2 u = *reinterpret_cast<const uint2*>(p); std::memcpy(static_cast<void*>(&r), &u, 8);),
                 (std::memcpy(static_cast<void*>(&r), p, 8);))
    return r;
}
PGAS_HD inline void store4(fp8* p, const fp8x4& r) {
    NV_IF_TARGET(NV_IS_DEVICE, (unsigned u; std::memcpy(&u, static_cast<const void*>(&r), 4); *reinterpret_cast<unsigned*>(p) = u;),
                 (std::memcpy(static_cast<void*>(p), &r, 4);))
}

// Casts one token to fp8 with one scale per 128 values: each warp takes groups, each lane four consecutive values
// (one load and one store: a warp covers a group at once; a lane per value made 2-byte loads and 1-byte stores,
// four of each per lane and group). Called by the whole block.
PGAS_HD inline void cast_token(const bf16* x, fp8* q, float* scale, int hidden) {
    const int lanes = int(grid::lanes()), lane = int(grid::lane());
    for (int g = int(grid::warp()); g < hidden / fp8_group; g += int(grid::warps())) {
        const bf16* in = x + std::size_t(g) * fp8_group;
        fp8* out = q + std::size_t(g) * fp8_group;
        float amax = 0.0f;
        for (int i = 4 * lane; i < fp8_group; i += 4 * lanes) {
            const bf16x4 four = load4(in + i);
            for (int j = 0; j < 4; ++j) amax = fmaxf(amax, fabsf(to_float(four.v[j])));
        }
        const float s = fp8_scale(warp_max(amax));
        for (int i = 4 * lane; i < fp8_group; i += 4 * lanes) {
            const bf16x4 four = load4(in + i);
            fp8x4 packed;
            for (int j = 0; j < 4; ++j) packed.v[j] = quantize(to_float(four.v[j]), s);
            store4(out + i, packed);
        }
        if (lane == 0) scale[g] = s;
    }
}

// Puts this PE's token t (bf16, or its fp8 cast and scales) into row `row` of PE pe's receive buffers (recv_x, or
// recv_x8 and recv_scale) through `chan`, a channel of this PE's context. Called by a whole warp.
template <class Tr, class Layout>
PGAS_HD void put_token(const pgas::device::context<Tr>& chan, const Layout& b, std::size_t row, int t, int pe) {
    const std::size_t h = std::size_t(b.cfg.hidden), groups = h / fp8_group, from = std::size_t(t);
    if (b.cfg.fp8) {
        pgas::put_nbi<pgas::warp>(chan, b.recv_x8 + row * h, chan.local(b.io.x8) + from * h, h, pe);
        pgas::put_nbi<pgas::warp>(chan, b.recv_scale + row * groups, chan.local(b.io.x_scale) + from * groups, groups,
                                  pe);
    } else {
        pgas::put_nbi<pgas::warp>(chan, b.recv_x + row * h, chan.local(b.io.x) + from * h, h, pe);
    }
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

// Throughput combine's sum for home tokens [begin, end): each token's partial sums (expert_y, one row on each PE
// it went to, at the row dispatch recorded in send_row) read in place and added. The block's threads take
// (token, 8-value vector) pairs of the whole range in turn and issue the loads of up to eight PEs before summing
// any: one token per pass left threads idle (7168 / 8 = 3.5 vectors per thread). One pair per thread and pass:
// two (d69a99f) kept sixteen vectors and their pointers live, 182 registers a thread, so one block of 256
// threads filled an SM and resident_blocks gave every kernel half its blocks (combine at 0.40 of the copy rate on
// one H200, 2026-11-26). The CI test `ep: kernels fit two blocks per SM` keeps every ep kernel within two blocks
// per SM.
template <class Tr>
PGAS_HD void sum_partials_in_place(const pgas::device::context<Tr>& ctx, const throughput_layout& b, int begin,
                                   int end) {
    const std::size_t h = std::size_t(b.cfg.hidden), h8 = h / 8, n = std::size_t(ctx.n_pes());
    const int* row = ctx.local(b.send_row);
    bf16* out = ctx.local(b.io.out);
    constexpr std::size_t batch = 8;
    const std::size_t total = std::size_t(end - begin) * h8;
    for (std::size_t i = grid::thread(); i < total; i += grid::threads()) {
        const std::size_t t = std::size_t(begin) + i / h8, v = i % h8;
        float acc[8] = {};
        for (std::size_t first = 0; first < n; first += batch) {
            bf16x8 in[batch];
            bool sent[batch];
            for (std::size_t j = 0; j < batch; ++j) {
                const std::size_t pe = first + j;
                sent[j] = pe < n && row[t * n + pe] >= 0;
                if (sent[j]) {
                    const bf16* y = ctx.peer(b.expert_y + std::int64_t(row[t * n + pe]) * std::int64_t(h), int(pe));
                    in[j] = load_peer_written(y + 8 * v);
                }
            }
            for (std::size_t j = 0; j < batch; ++j)
                if (sent[j])
                    for (int e = 0; e < 8; ++e) acc[e] += to_float(in[j].v[e]);
        }
        bf16x8 r;
        for (int e = 0; e < 8; ++e) r.v[e] = to_bf16(acc[e]);
        store8(out + t * h + 8 * v, r);
    }
}

}  // namespace ep::detail
PGAS_NAMESPACE_END
