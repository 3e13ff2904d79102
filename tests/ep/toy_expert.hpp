// The tests' stand-in for the experts: expert e scales its input by 1 + (e % 8) / 8, on the received layout of either mode.
#pragma once

#include <pgas/pgas.hpp>

namespace ep_test {
using namespace pgas::ep;

// What expert e computes from one input value (exact in float; rounded to bf16 once).
PGAS_HD inline float toy_expert(int expert, float v) { return v * (1.0f + float(expert % 8) / 8.0f); }

namespace detail {
// One received row (bf16, or fp8 with its scales) through the toy expert into y.
PGAS_HD inline void expert_row(const config& c, int expert, const bf16* x, const fp8* x8, const float* scale, bf16* y) {
    for (int i = int(grid::thread()); i < c.hidden; i += int(grid::threads())) {
        const float v = c.fp8 ? dequantize(x8[i], scale[i / fp8_group]) : to_float(x[i]);
        y[i] = to_bf16(toy_expert(expert, v));
    }
}
}  // namespace detail

// Low-latency layout: every (local expert, source, slot < count). Called by every thread of the grid.
template <class Tr>
PGAS_HD void toy_experts(const pgas::device::context<Tr>& ctx, const low_latency_layout& b) {
    const config& c = b.cfg;
    const int n = ctx.n_pes(), nl = c.experts / n;
    const std::size_t h = std::size_t(c.hidden), g = h / fp8_group, slots = std::size_t(c.max_tokens);
    for (int i = int(grid::block()); i < nl * n * c.max_tokens; i += int(grid::blocks())) {
        const int cell_group = i / c.max_tokens, slot = i % c.max_tokens;
        if (slot >= ctx.local(b.recv_count)[cell_group]) continue;
        const std::size_t cell = std::size_t(cell_group) * slots + std::size_t(slot);
        detail::expert_row(c, ctx.my_pe() * nl + cell_group / n, ctx.local(b.recv_x) + cell * h,
                           ctx.local(b.recv_x8) + cell * h, ctx.local(b.recv_scale) + cell * g,
                           ctx.local(b.expert_y) + cell * h);
    }
}

// Throughput layout: one row per received token; its partial sum over the row's local choices, weighted by the
// gate, in float and rounded to bf16 once.
template <class Tr>
PGAS_HD void toy_experts(const pgas::device::context<Tr>& ctx, const throughput_layout& b) {
    const config& c = b.cfg;
    const int nl = c.experts / ctx.n_pes(), k = c.top_k;
    const std::size_t h = std::size_t(c.hidden), g = h / fp8_group;
    const int rows = ctx.local(b.source_begin)[ctx.n_pes()];
    for (int r = int(grid::block()); r < rows; r += int(grid::blocks())) {
        const std::size_t row = std::size_t(r);
        const int* idx = ctx.local(b.recv_topk_idx) + row * k;
        const float* w = ctx.local(b.recv_topk_w) + row * k;
        for (int i = int(grid::thread()); i < c.hidden; i += int(grid::threads())) {
            const float v = c.fp8 ? dequantize(ctx.local(b.recv_x8)[row * h + i], ctx.local(b.recv_scale)[row * g + i / fp8_group])
                                  : to_float(ctx.local(b.recv_x)[row * h + i]);
            float sum = 0.0f;
            for (int choice = 0; choice < k; ++choice)
                if (idx[choice] >= 0) sum += w[choice] * to_float(to_bf16(toy_expert(ctx.my_pe() * nl + idx[choice], v)));
            ctx.local(b.expert_y)[row * h + i] = to_bf16(sum);
        }
    }
}

// The experts on every PE of a host-transport world, config::blocks threads per PE.
template <class Layout>
void host_toy_experts(const pgas::ep::buffer<Layout>& buf) {
    buf.launch_host([&](const auto& ctx) { toy_experts(ctx, buf.layout()); });
}

}  // namespace ep_test
