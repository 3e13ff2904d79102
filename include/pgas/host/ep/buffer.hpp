// pgas::ep::buffer: the host side of expert-parallel dispatch/combine, owning one mode's symmetric buffers; runs the
// bodies on the host transport.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/ep/config.hpp>
#include <pgas/ep/grid.hpp>
#include <pgas/ep/low_latency.hpp>
#include <pgas/ep/throughput.hpp>
#include <pgas/host/host_memory/builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/host/host.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace ep {

namespace detail {

// Symmetric allocations of one buffer, freed in reverse order by release().
class allocations {
public:
    explicit allocations(world& w) : w_(&w) {}
    template <class T>
    symmetric_ptr<T> take(std::size_t count) {
        const auto p = w_->alloc<T>(count == 0 ? 1 : count);  // an unused buffer keeps one element
        taken_.push_back(symmetric_cast<std::byte>(p));
        return p;
    }
    void release() {
        for (auto at = taken_.rbegin(); at != taken_.rend(); ++at) w_->free(*at);
        taken_.clear();
    }

private:
    world* w_;
    std::vector<symmetric_ptr<std::byte>> taken_;
};

// comb_recv: the rows combine pushes home, `comb_rows` per token (low latency: one per choice; throughput: one per
// PE, the home's own slot unused).
inline io_layout make_io(allocations& a, const config& c, std::size_t comb_rows) {
    const std::size_t m = std::size_t(c.max_tokens), h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    io_layout io;
    io.x = a.take<bf16>(m * h);
    io.topk_idx = a.take<int>(m * k);
    io.topk_w = a.take<float>(m * k);
    io.out = a.take<bf16>(m * h);
    io.x8 = a.take<fp8>(c.fp8 ? m * h : 0);
    io.x_scale = a.take<float>(c.fp8 ? m * h / fp8_group : 0);
    io.comb_recv = a.take<bf16>(m * comb_rows * h);
    return io;
}

// The received rows of either layout: bf16, or fp8 with one scale per 128 values (the other left at one element).
template <class Layout>
void take_received(allocations& a, Layout& b, std::size_t rows) {
    const config& c = b.cfg;
    const std::size_t h = std::size_t(c.hidden);
    b.recv_x = a.take<bf16>(c.fp8 ? 0 : rows * h);
    b.recv_x8 = a.take<fp8>(c.fp8 ? rows * h : 0);
    b.recv_scale = a.take<float>(c.fp8 ? rows * h / fp8_group : 0);
}

inline void make_layout(allocations& a, low_latency_layout& b) {
    const config& c = b.cfg;
    const std::size_t n = std::size_t(b.n_pes), l = std::size_t(local_experts(c, b.n_pes));
    const std::size_t cells = l * n * std::size_t(c.max_tokens), h = std::size_t(c.hidden);
    b.io = make_io(a, c, std::size_t(c.top_k));
    take_received(a, b, cells);
    b.recv_src = a.take<std::uint64_t>(cells);
    b.recv_count = a.take<int>(l * n);
    b.expert_y = a.take<bf16>(cells * h);
    b.count_sig = a.take<std::uint64_t>(l * n);
    b.comb_flag = a.take<std::uint64_t>(std::size_t(c.experts));
    b.slot_count = a.take<std::uint64_t>(2 * std::size_t(c.experts));
    b.grid_bar = a.take<std::uint64_t>(1);
    b.epoch = a.take<std::uint64_t>(std::size_t(c.blocks));
}

inline void make_layout(allocations& a, throughput_layout& b) {
    const config& c = b.cfg;
    const std::size_t n = std::size_t(b.n_pes), l = std::size_t(local_experts(c, b.n_pes));
    const std::size_t rows = std::size_t(throughput_recv_rows(c, b.n_pes)), h = std::size_t(c.hidden);
    const std::size_t k = std::size_t(c.top_k), blocks = std::size_t(c.blocks);
    b.io = make_io(a, c, n);
    take_received(a, b, rows);
    b.recv_src = a.take<std::uint64_t>(rows);
    b.recv_topk_idx = a.take<int>(rows * k);
    b.recv_topk_w = a.take<float>(rows * k);
    b.source_begin = a.take<int>(n + 1);
    b.expert_count = a.take<int>(l);
    b.expert_y = a.take<bf16>(rows * h);
    b.count_table = a.take<int>(n * n);
    b.my_count = a.take<int>(n);
    b.block_count = a.take<int>(blocks * n);
    b.block_next = a.take<int>(blocks * n);
    b.block_experts = a.take<int>(blocks * l);
    b.send_row = a.take<int>(std::size_t(c.max_tokens) * n);
    b.notify_sig = a.take<std::uint64_t>(n);
    b.data_sig = a.take<std::uint64_t>(n);
    const std::size_t chunks = std::size_t(detail::combine_chunks(c));
    b.chunk_row = a.take<int>(n * (chunks + 1));
    b.chunk_sig = a.take<std::uint64_t>(chunks);
    b.grid_bar = a.take<std::uint64_t>(2);
    b.epoch = a.take<std::uint64_t>(blocks);
}

// The PE a host-side error names: this process's PE, or -1 when the process holds several.
inline int pe_of(const world& w) { return w.n_local_pes() == 1 ? w.local_pe(0) : -1; }

// Runs body(ctx) on every PE of a host-transport world as `blocks` concurrent threads per PE (as a GPU runs a
// kernel's resident blocks), so that grid barriers, block-to-block hand-offs and per-block state run for real. A
// block that throws stops the other blocks' and PEs' waits; the first error is rethrown.
template <class Body>
void run_host_grid(world& w, int blocks, Body body) {
    w.launch_host([&](const device::context<host>& ctx) {
        if (blocks == 1) return body(ctx);
        std::mutex m;
        std::exception_ptr first;
        std::vector<std::thread> threads;
        for (int blk = 0; blk < blocks; ++blk)
            threads.emplace_back([&, blk] {
                host_here = {unsigned(blk), unsigned(blocks)};
                try {
                    body(ctx);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(m);
                    if (!first) {
                        first = std::current_exception();
                        w.abort_waits(ctx.my_pe());
                    }
                }
            });
        for (auto& t : threads) t.join();
        if (first) std::rethrow_exception(first);
    });
}

}  // namespace detail

/// Expert-parallel buffers of one mode (DeepEP's `Buffer`): `buffer<low_latency_layout>` (alias
/// low_latency_buffer) or `buffer<throughput_layout>` (throughput_buffer). Construction is collective: every PE
/// of the world builds it with the same config (checked: a field that differs is errc::collective_mismatch naming
/// the PE) and the buffers come from the symmetric heap; destruction frees them, collectively again, so every
/// PE destroys its buffers in the same order, before the world.
///
///     pgas::ep::throughput_buffer buf(world, pgas::ep::throughput_defaults());
///     // fill buf.layout().io.x, topk_idx, topk_w; then on a GPU (host/ep/on_stream.cuh):
///     pgas::ep::dispatch_on_stream(buf, local, {tokens, hidden}, stream);
///     my_experts<<<...>>>(buf.layout());      // recv_x -> expert_y
///     pgas::ep::combine_on_stream(buf, local, {tokens, hidden}, stream);   // -> io.out
///
/// On the host transport (PEs as threads) dispatch() and combine() run the same bodies, config::blocks threads
/// per PE. In a kernel of your own, call pgas::ep::dispatch / combine on layout() from every thread of the grid.
template <class Layout>
class buffer {
    static_assert(std::is_same_v<Layout, low_latency_layout> || std::is_same_v<Layout, throughput_layout>,
                  "pgas: ep::buffer holds a low_latency_layout or a throughput_layout");

public:
    /// Allocates the buffers for `c` on every local PE (collective). Throws pgas::error: errc::invalid_argument
    /// for a config that cannot work (naming the field and value), errc::collective_mismatch when PEs differ,
    /// errc::out_of_memory when the heap is too small (raise PGAS_HEAP_SIZE).
    buffer(world& w, const config& c) : world_(&w), taken_(w) {
        constexpr const char* call = "ep::buffer";
        check_config(c, w.n_pes(), call, detail::pe_of(w));
        w.agree(call, "config::hidden", std::uint64_t(c.hidden));
        w.agree(call, "config::experts", std::uint64_t(c.experts));
        w.agree(call, "config::top_k", std::uint64_t(c.top_k));
        w.agree(call, "config::max_tokens", std::uint64_t(c.max_tokens));
        w.agree(call, "config::recv_rows", std::uint64_t(c.recv_rows));
        w.agree(call, "config::fp8", std::uint64_t(c.fp8));
        w.agree(call, "config::blocks", std::uint64_t(c.blocks));
        layout_.cfg = c;
        layout_.n_pes = w.n_pes();
        try {
            detail::make_layout(taken_, layout_);
        } catch (...) {
            taken_.release();
            throw;
        }
    }
    ~buffer() {
        if (world_ != nullptr) taken_.release();
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    /// Moves the ownership of the buffers.
    buffer(buffer&& other) noexcept
        : world_(std::exchange(other.world_, nullptr)), taken_(std::move(other.taken_)), layout_(other.layout_) {}

    /// What a kernel receives: the shape and every symmetric pointer (pass it by value).
    const Layout& layout() const { return layout_; }
    /// The shape it was built for.
    const config& shape() const { return layout_.cfg; }
    /// The world it lives in.
    world& owner() const { return *world_; }

    /// Host transport: dispatch on every local PE, `batches[local PE]` each, config::blocks threads per PE.
    void dispatch(const std::vector<batch>& batches) const {
        run_phase(batches, dispatch_call(),
                  [](const auto& ctx, const Layout& b, const batch& a) { ep::dispatch(ctx, b, a); });
    }
    /// Host transport: combine on every local PE, after dispatch with the same batches.
    void combine(const std::vector<batch>& batches) const {
        run_phase(batches, combine_call(),
                  [](const auto& ctx, const Layout& b, const batch& a) { ep::combine(ctx, b, a); });
    }
    /// Host transport: body(ctx) on every local PE with this buffer's grid (config::blocks threads per PE, each
    /// reading its block from pgas::ep::grid): for the experts between dispatch and combine.
    template <class Body>
    void launch_host(Body body) const {
        detail::run_host_grid(*world_, layout_.cfg.blocks, body);
    }

    /// The host-side checks of one call of local PE `local` (before a launch; they read no data): throws
    /// errc::invalid_argument naming the call, the PE and the value.
    void check(const char* call, int local, const batch& a) const {
        detail::check_batch(call, world_->local_pe(local), layout_.cfg, a);
    }
    /// "ep::dispatch (low latency)" or "ep::dispatch (throughput)": how errors name the call.
    static constexpr const char* dispatch_call() {
        return std::is_same_v<Layout, low_latency_layout> ? "ep::dispatch (low latency)" : "ep::dispatch (throughput)";
    }
    /// How errors name combine.
    static constexpr const char* combine_call() {
        return std::is_same_v<Layout, low_latency_layout> ? "ep::combine (low latency)" : "ep::combine (throughput)";
    }

private:
    template <class Body>
    void run_phase(const std::vector<batch>& batches, const char* call, Body body) const {
        if (int(batches.size()) != world_->n_local_pes())
            detail::config_error(detail::pe_of(*world_), call,
                                 std::to_string(batches.size()) + " batches for " +
                                     std::to_string(world_->n_local_pes()) + " local PEs");
        for (int local = 0; local < world_->n_local_pes(); ++local) check(call, local, batches[std::size_t(local)]);
        detail::run_host_grid(*world_, layout_.cfg.blocks, [&](const device::context<host>& ctx) {
            body(ctx, layout_, batches[std::size_t(ctx.my_pe() - world_->local_pe(0))]);
        });
    }

    world* world_;
    detail::allocations taken_;
    Layout layout_;
};

/// Low-latency mode's buffers (DeepEP's Buffer with low_latency_mode).
using low_latency_buffer = buffer<low_latency_layout>;
/// Throughput mode's buffers (DeepEP's Buffer, normal mode).
using throughput_buffer = buffer<throughput_layout>;

}  // namespace ep
PGAS_NAMESPACE_END
