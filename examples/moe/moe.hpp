// MoE dispatch and combine on pgas, in DeepEP's two modes: buffers, checks and the transport-generic bodies.
//
// Every body below is one `PGAS_HD` function templated on the transport: a
// GPU kernel (moe.cuh) calls it with pgas::nvlink, and on the host transport
// each of a PE's config::blocks "blocks" is a thread of its own that calls it
// with pgas::host (a block is that one thread, so every loop over warps and
// lanes runs whole, but the blocks of a PE run concurrently, as on a GPU).
//
// Experts are spread evenly: PE p holds experts [p * L, (p + 1) * L) with
// L = experts / n_pes; expert e's local index on its PE is e % L.
//
// Low-latency mode (DeepEP's low_latency_dispatch/combine):
//   dispatch  every (token, choice) is put by one warp straight into its slot
//             of the owner's receive buffer [local expert][source PE][slot];
//             the per-(expert, source) count follows as a signal; a PE waits
//             only for the counts of its own experts.
//   combine   every expert output goes back to its token's home PE, into
//             [token][choice]; the home waits for the flags of the experts its
//             tokens chose and reduces the top-k, weighted by the gate.
// Throughput mode (DeepEP's normal dispatch/combine):
//   dispatch  notify (every PE sends its per-expert counts to every PE) and,
//             in the same kernel, each (source, expert) run of rows is put
//             contiguously at an offset every PE computes from those counts,
//             one row per warp-level put, over all warps of the grid.
//   combine   each home token reads its top-k expert outputs in place, on
//             the PEs that computed them, and reduces them weighted by the
//             gate (one pass over the bytes; a load/store transport).
//
// Channels: DeepEP spreads traffic over one queue pair per expert (low
// latency) or per channel of SMs (normal). Low-latency dispatch does the same:
// the warp that puts a token to expert e uses ctx.on_channel(e % channels), so
// warps sending to different experts post to different queues (ibgda: QPs,
// the proxy: rings) and never wait for each other's slots or doorbells; the
// grid barrier before the counts then completes every channel (quiet_all).
// On NVLink the channel changes nothing (stores from whichever SM issues them).
//
// Calls alternate: dispatch, (expert compute), combine, dispatch, ... Each
// combine ends with every PE having heard from every other PE, which is what
// makes reusing the fixed buffers in the next dispatch safe; no buffer is ever
// reset between calls (signals carry the call's epoch).
#pragma once

#include "quantize.hpp"

#include <pgas/pgas.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda/atomic>
#include <nv/target>

// Data checks in the bodies (expert index range, receive-buffer overflow):
// one compare per (token, choice), so on by default; a failure throws
// pgas::error on the host transport and prints and traps on the GPU.
#ifndef MOE_CHECKS
#define MOE_CHECKS 1
#endif

namespace moe {

// The shape the buffers are built for. The defaults are DeepSeek-V3's.
struct config {
    int hidden = 7168;       // elements per token (a multiple of 128 with fp8, else of 8)
    int experts = 256;       // experts in total, experts % n_pes == 0
    int top_k = 8;           // choices per token, <= experts
    int max_tokens = 128;    // tokens per PE and call, at most
    int recv_rows = 0;       // throughput mode: rows a PE may receive per call (0: 2 * max_tokens * top_k)
    bool fp8 = false;        // dispatch payload in e4m3 with one scale per 128 values
    int blocks = 1;          // grid of every kernel (GPU); all must be resident at once (see moe.cuh)
    int threads = 256;       // threads per block (GPU)
};

inline config low_latency_defaults() { return {}; }
inline config throughput_defaults() {
    config c;
    c.max_tokens = 4096;
    return c;
}

// What one call works on (checked against the config the buffers were built for).
struct batch {
    int tokens = 0;  // tokens this PE dispatches, <= max_tokens
    int hidden = 0;  // must equal config::hidden
};

// A PE's inputs and outputs, in the symmetric heap so that the GPU and the
// host transport address them alike. Rows of hidden elements.
struct io_buffers {
    pgas::symmetric_ptr<bf16> x;           // [max_tokens][hidden]     tokens to dispatch
    pgas::symmetric_ptr<int> topk_idx;     // [max_tokens][top_k]      expert of each choice
    pgas::symmetric_ptr<float> topk_w;     // [max_tokens][top_k]      gate weight of each choice
    pgas::symmetric_ptr<bf16> out;         // [max_tokens][hidden]     combined result
    pgas::symmetric_ptr<fp8> x8;           // [max_tokens][hidden]     fp8 cast of x (fp8 only)
    pgas::symmetric_ptr<float> x_scale;    // [max_tokens][hidden/128] its scales (fp8 only)
    pgas::symmetric_ptr<bf16> comb_recv;   // [max_tokens][top_k][hidden] expert outputs returned home
};

// Low-latency mode. The receive buffer of local expert le from source s is
// recv_*[le][s][0 .. recv_count[le][s]); row j came from token
// recv_src[le][s][j] / top_k (choice % top_k) of PE s. The expert writes its
// output for that row to expert_y at the same index.
struct ll_buffers {
    config cfg;
    int n_pes = 0;
    io_buffers io;
    pgas::symmetric_ptr<bf16> recv_x;             // [L][n][max_tokens][hidden]     (bf16)
    pgas::symmetric_ptr<fp8> recv_x8;             // [L][n][max_tokens][hidden]     (fp8)
    pgas::symmetric_ptr<float> recv_scale;        // [L][n][max_tokens][hidden/128] (fp8)
    pgas::symmetric_ptr<std::uint64_t> recv_src;  // [L][n][max_tokens]  token * top_k + choice
    pgas::symmetric_ptr<int> recv_count;          // [L][n]              rows received
    pgas::symmetric_ptr<bf16> expert_y;           // [L][n][max_tokens][hidden] expert outputs
    // internal
    pgas::symmetric_ptr<std::uint64_t> count_sig;   // [L][n]  epoch << 32 | count, set by the source
    pgas::symmetric_ptr<std::uint64_t> comb_flag;   // [experts] epoch, set by the expert's PE
    pgas::symmetric_ptr<std::uint64_t> slot_count;  // [2][experts] slots taken per expert (by epoch parity)
    pgas::symmetric_ptr<std::uint64_t> grid_bar;    // [1] grid barrier arrivals
    pgas::symmetric_ptr<std::uint64_t> epoch;       // [blocks] calls completed, one word per block
};

// Throughput mode. Local expert le received rows [expert_begin[le],
// expert_begin[le + 1]) of recv_*; within them the rows of each source PE
// are contiguous, sources in PE order, and within a source in token order.
// recv_src[row] = source PE << 32 | token * top_k + choice.
struct tp_buffers {
    config cfg;
    int n_pes = 0;
    io_buffers io;
    pgas::symmetric_ptr<bf16> recv_x;             // [recv_rows][hidden]     (bf16)
    pgas::symmetric_ptr<fp8> recv_x8;             // [recv_rows][hidden]     (fp8)
    pgas::symmetric_ptr<float> recv_scale;        // [recv_rows][hidden/128] (fp8)
    pgas::symmetric_ptr<std::uint64_t> recv_src;  // [recv_rows]
    pgas::symmetric_ptr<int> expert_begin;        // [L + 1]
    pgas::symmetric_ptr<bf16> expert_y;           // [recv_rows][hidden] expert outputs
    // internal
    pgas::symmetric_ptr<int> count_table;         // [n][experts]  per-expert counts of every source (notify)
    pgas::symmetric_ptr<int> my_count;            // [experts]     this PE's per-expert counts
    pgas::symmetric_ptr<int> block_hist;          // [blocks][experts] per-block counts
    pgas::symmetric_ptr<int> block_next;          // [blocks][experts] the block's first row per expert
    pgas::symmetric_ptr<int> send_row;            // [max_tokens][top_k] where each (token, choice) lands on its owner
    pgas::symmetric_ptr<std::uint64_t> notify_sig;  // [n] epoch: counts of source s arrived
    pgas::symmetric_ptr<std::uint64_t> data_sig;    // [n] epoch: every row of source s arrived
    pgas::symmetric_ptr<std::uint64_t> comb_sig;    // [n] epoch: PE s's expert outputs are complete
    pgas::symmetric_ptr<std::uint64_t> grid_bar;    // [3] grid barrier arrivals
    pgas::symmetric_ptr<std::uint64_t> epoch;       // [blocks]
};

PGAS_HD inline int local_experts(const config& c, int n_pes) { return c.experts / n_pes; }
PGAS_HD inline int tp_recv_rows(const config& c) { return c.recv_rows > 0 ? c.recv_rows : 2 * c.max_tokens * c.top_k; }

// --- errors ------------------------------------------------------------------

namespace detail {

[[noreturn]] inline void config_error(int pe, const char* call, const std::string& detail) {
    throw pgas::error(pgas::errc::invalid_argument, pe, call, detail);
}

// A bad (token, choice): on the host transport a pgas::error, on the GPU the
// same text and a trap. The text names the PE, the token, the choice and the value.
PGAS_HD inline void bad_expert(const char* call, int pe, int token, int choice, long long value, int experts) {
    NV_IF_TARGET(NV_IS_HOST,
                 (config_error(pe, call, "token " + std::to_string(token) + " choice " + std::to_string(choice) +
                                             ": expert index " + std::to_string(value) + " outside [0, " +
                                             std::to_string(experts) + ")");),
                 (printf("pgas: %s on PE %d: token %d choice %d: expert index %lld outside [0, %d)\n", call, pe,
                         token, choice, value, experts);
                  __trap();))
}

PGAS_HD inline void bad_slot(const char* call, int pe, int token, int choice, int expert, long long slot,
                             long long capacity) {
    NV_IF_TARGET(NV_IS_HOST,
                 (config_error(pe, call, "token " + std::to_string(token) + " choice " + std::to_string(choice) +
                                             ": expert " + std::to_string(expert) + " receive slot " +
                                             std::to_string(slot) + " beyond its buffer of " +
                                             std::to_string(capacity) + " rows");),
                 (printf("pgas: %s on PE %d: token %d choice %d: expert %d receive slot %lld beyond its buffer of "
                         "%lld rows\n",
                         call, pe, token, choice, expert, slot, capacity);
                  __trap();))
}

PGAS_HD inline void bad_batch(const char* call, int pe, const char* what, long long value, long long limit) {
    NV_IF_TARGET(NV_IS_HOST,
                 (config_error(pe, call, std::string(what) + " " + std::to_string(value) + " but the buffers were built for " +
                                             std::to_string(limit));),
                 (printf("pgas: %s on PE %d: %s %lld but the buffers were built for %lld\n", call, pe, what, value,
                         limit);
                  __trap();))
}

// The checks a call can make without reading data: host side before a launch,
// and again in the body (device side under MOE_CHECKS).
PGAS_HD inline void check_batch(const char* call, int pe, const config& c, const batch& a) {
    if (a.hidden != c.hidden) bad_batch(call, pe, "hidden size", a.hidden, c.hidden);
    if (a.tokens < 0 || a.tokens > c.max_tokens) bad_batch(call, pe, "tokens", a.tokens, c.max_tokens);
}

}  // namespace detail

// Checks a config before buffers are built for it on n_pes PEs.
inline void check_config(const config& c, int n_pes, const char* call = "moe::make_buffers") {
    using detail::config_error;
    auto num = [](long long v) { return std::to_string(v); };
    if (c.experts < 1 || n_pes < 1 || c.experts % n_pes != 0)
        config_error(-1, call, "experts = " + num(c.experts) + " must be a positive multiple of the PE count " + num(n_pes));
    if (c.top_k < 1 || c.top_k > c.experts)
        config_error(-1, call, "top_k = " + num(c.top_k) + " must be in [1, experts = " + num(c.experts) + "]");
    if (c.hidden < 1 || c.hidden % (c.fp8 ? fp8_group : 8) != 0)
        config_error(-1, call, "hidden = " + num(c.hidden) + " must be a positive multiple of " + num(c.fp8 ? fp8_group : 8));
    if (c.max_tokens < 1) config_error(-1, call, "max_tokens = " + num(c.max_tokens) + " must be positive");
    if ((long long)c.max_tokens * c.top_k >= (1ll << 31))
        config_error(-1, call, "max_tokens * top_k = " + num((long long)c.max_tokens * c.top_k) + " must fit in an int");
    if (c.blocks < 1 || c.threads < 32 || c.threads % 32 != 0)
        config_error(-1, call, "blocks = " + num(c.blocks) + ", threads = " + num(c.threads) +
                                   ": need blocks >= 1 and threads a positive multiple of 32");
}

// --- buffers (collective: every PE of the world calls them alike) ----------

namespace detail {
template <class T>
pgas::symmetric_ptr<T> alloc(pgas::world& w, std::size_t count) {
    return w.alloc<T>(count == 0 ? 1 : count);  // an unused buffer keeps one element
}

inline io_buffers make_io(pgas::world& w, const config& c) {
    const std::size_t m = std::size_t(c.max_tokens), h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    io_buffers io;
    io.x = alloc<bf16>(w, m * h);
    io.topk_idx = alloc<int>(w, m * k);
    io.topk_w = alloc<float>(w, m * k);
    io.out = alloc<bf16>(w, m * h);
    io.x8 = alloc<fp8>(w, c.fp8 ? m * h : 0);
    io.x_scale = alloc<float>(w, c.fp8 ? m * h / fp8_group : 0);
    io.comb_recv = alloc<bf16>(w, m * k * h);
    return io;
}
}  // namespace detail

inline ll_buffers make_ll_buffers(pgas::world& w, const config& c) {
    check_config(c, w.n_pes(), "moe::make_ll_buffers");
    using detail::alloc;
    ll_buffers b;
    b.cfg = c;
    b.n_pes = w.n_pes();
    const std::size_t n = std::size_t(w.n_pes()), l = std::size_t(local_experts(c, w.n_pes()));
    const std::size_t cells = l * n * std::size_t(c.max_tokens), h = std::size_t(c.hidden);
    b.io = detail::make_io(w, c);
    b.recv_x = alloc<bf16>(w, c.fp8 ? 0 : cells * h);
    b.recv_x8 = alloc<fp8>(w, c.fp8 ? cells * h : 0);
    b.recv_scale = alloc<float>(w, c.fp8 ? cells * h / fp8_group : 0);
    b.recv_src = alloc<std::uint64_t>(w, cells);
    b.recv_count = alloc<int>(w, l * n);
    b.expert_y = alloc<bf16>(w, cells * h);
    b.count_sig = alloc<std::uint64_t>(w, l * n);
    b.comb_flag = alloc<std::uint64_t>(w, std::size_t(c.experts));
    b.slot_count = alloc<std::uint64_t>(w, 2 * std::size_t(c.experts));
    b.grid_bar = alloc<std::uint64_t>(w, 1);
    b.epoch = alloc<std::uint64_t>(w, std::size_t(c.blocks));
    return b;
}

inline tp_buffers make_tp_buffers(pgas::world& w, const config& c) {
    check_config(c, w.n_pes(), "moe::make_tp_buffers");
    using detail::alloc;
    tp_buffers b;
    b.cfg = c;
    b.n_pes = w.n_pes();
    const std::size_t n = std::size_t(w.n_pes()), l = std::size_t(local_experts(c, w.n_pes()));
    const std::size_t rows = std::size_t(tp_recv_rows(c)), h = std::size_t(c.hidden), e = std::size_t(c.experts);
    b.io = detail::make_io(w, c);
    b.recv_x = alloc<bf16>(w, c.fp8 ? 0 : rows * h);
    b.recv_x8 = alloc<fp8>(w, c.fp8 ? rows * h : 0);
    b.recv_scale = alloc<float>(w, c.fp8 ? rows * h / fp8_group : 0);
    b.recv_src = alloc<std::uint64_t>(w, rows);
    b.expert_begin = alloc<int>(w, l + 1);
    b.expert_y = alloc<bf16>(w, rows * h);
    b.count_table = alloc<int>(w, n * e);
    b.my_count = alloc<int>(w, e);
    b.block_hist = alloc<int>(w, std::size_t(c.blocks) * e);
    b.block_next = alloc<int>(w, std::size_t(c.blocks) * e);
    b.send_row = alloc<int>(w, std::size_t(c.max_tokens) * std::size_t(c.top_k));
    b.notify_sig = alloc<std::uint64_t>(w, n);
    b.data_sig = alloc<std::uint64_t>(w, n);
    b.comb_sig = alloc<std::uint64_t>(w, n);
    b.grid_bar = alloc<std::uint64_t>(w, 3);
    b.epoch = alloc<std::uint64_t>(w, std::size_t(c.blocks));
    return b;
}

// --- where the calling thread is (GPU: the launch; host transport: one thread) -

namespace detail {
// The host transport's blockIdx.x and gridDim.x: set by run_host_grid on each
// thread it starts (one per block); the defaults are a one-block grid.
struct host_grid {
    unsigned block = 0, blocks = 1;
};
inline thread_local host_grid host_here;
}  // namespace detail

struct here {
    PGAS_HD static unsigned block() { NV_IF_TARGET(NV_IS_DEVICE, (return blockIdx.x;), (return detail::host_here.block;)) }
    PGAS_HD static unsigned blocks() { NV_IF_TARGET(NV_IS_DEVICE, (return gridDim.x;), (return detail::host_here.blocks;)) }
    PGAS_HD static unsigned thread() { NV_IF_TARGET(NV_IS_DEVICE, (return threadIdx.x;), (return 0;)) }
    PGAS_HD static unsigned threads() { NV_IF_TARGET(NV_IS_DEVICE, (return blockDim.x;), (return 1;)) }
    PGAS_HD static unsigned warp() { return thread() / lanes(); }
    PGAS_HD static unsigned warps() { return threads() / lanes(); }
    PGAS_HD static unsigned lane() { return thread() % lanes(); }
    PGAS_HD static unsigned lanes() { NV_IF_TARGET(NV_IS_DEVICE, (return 32;), (return 1;)) }
    // This thread's index in the whole grid, and the grid's thread count.
    PGAS_HD static unsigned grid_thread() { return block() * threads() + thread(); }
    PGAS_HD static unsigned grid_threads() { return blocks() * threads(); }
};

namespace detail {

PGAS_HD inline std::uint64_t warp_broadcast(std::uint64_t v) {
    NV_IF_TARGET(NV_IS_DEVICE, (return __shfl_sync(0xffffffffu, (unsigned long long)v, 0);), (return v;))
}

PGAS_HD inline float warp_max(float v) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (for (int d = 16; d > 0; d /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d)); return v;),
                 (return v;))
}

template <class T>
PGAS_HD T load_relaxed(const T* p) {
    return cuda::atomic_ref<T, cuda::thread_scope_system>(*const_cast<T*>(p)).load(cuda::memory_order_relaxed);
}
template <class T>
PGAS_HD void store_relaxed(T* p, T v) {
    cuda::atomic_ref<T, cuda::thread_scope_system>(*p).store(v, cuda::memory_order_relaxed);
}

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
    const int lanes = int(here::lanes()), lane = int(here::lane());
    for (int g = int(here::warp()); g < hidden / fp8_group; g += int(here::warps())) {
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

// A barrier over the blocks of one kernel on one PE (they are all resident:
// see moe.cuh). Arrivals only grow, so call `epoch` waits for epoch * blocks.
// The release add and the acquire wait carry every earlier store of the block
// (through its __syncthreads) to every later access of the others.
template <class Tr>
PGAS_HD void grid_barrier(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> word,
                          std::uint64_t epoch) {
    if constexpr (!pgas::load_store_transport<Tr>) pgas::quiet_all<pgas::block>(ctx);  // a NIC's puts, every channel
    pgas::block::sync();
    if (here::thread() == 0) {
        pgas::signal(ctx, word, 1, pgas::signal_op::add, ctx.my_pe());
        pgas::wait_until(ctx, word, pgas::cmp::ge, epoch * here::blocks());
    }
    pgas::block::sync();
}

// out[t] = sum_c w[t][c] * comb_recv[t][c], in float, rounded once. Called by the block.
template <class Tr>
PGAS_HD void reduce_token(const pgas::device::context<Tr>& ctx, const io_buffers& io, const config& c, int t) {
    const std::size_t h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    const bf16* rows = ctx.local(io.comb_recv) + std::size_t(t) * k * h;
    const float* w = ctx.local(io.topk_w) + std::size_t(t) * k;
    bf16* out = ctx.local(io.out) + std::size_t(t) * h;
    for (std::size_t v = here::thread(); v < h / 8; v += here::threads()) {
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

// The same reduction for home tokens [begin, end), each choice's row read in place on the expert's PE (throughput
// mode: expert_y at the row dispatch sent it to). The block's threads take (token, 8-value vector) pairs of the
// whole range in turn and issue the loads of up to eight choices before summing any: one token per pass left an
// eighth of the threads idle (7168 / 8 = 3.5 vectors per thread). One pair per thread and pass: two (d69a99f)
// kept sixteen vectors and their sixteen peer pointers live, 182 registers a thread, so one block of 256 threads
// filled an SM's registers and resident_blocks gave every MoE kernel half the blocks it asks for (combine read
// 0.40 of the copy rate on one H200, 2026-11-26). The CI test `example: moe kernels fit two blocks per SM`
// (check_registers.cmake, ptxas's register count) keeps every MoE kernel within two blocks per SM.
template <class Tr>
PGAS_HD void reduce_tokens_in_place(const pgas::device::context<Tr>& ctx, const tp_buffers& b, int begin, int end) {
    const config& c = b.cfg;
    const std::size_t h = std::size_t(c.hidden), h8 = h / 8, k = std::size_t(c.top_k);
    const int nl = c.experts / ctx.n_pes();
    const int* idx = ctx.local(b.io.topk_idx);
    const int* row = ctx.local(b.send_row);
    const float* w = ctx.local(b.io.topk_w);
    bf16* out = ctx.local(b.io.out);
    constexpr std::size_t batch = 8;
    const std::size_t total = std::size_t(end - begin) * h8;
    for (std::size_t i = here::thread(); i < total; i += here::threads()) {
        const std::size_t t = std::size_t(begin) + i / h8, v = i % h8;
        float acc[8] = {};
        for (std::size_t first = 0; first < k; first += batch) {
            const std::size_t m = k - first < batch ? k - first : batch;
            bf16x8 in[batch];
            for (std::size_t j = 0; j < batch; ++j) {
                if (j >= m) break;
                const std::size_t tc = t * k + first + j;
                const bf16* y = ctx.peer(b.expert_y + std::int64_t(row[tc]) * std::int64_t(h), idx[tc] / nl);
                in[j] = load_peer_written(y + 8 * v);
            }
            for (std::size_t j = 0; j < batch; ++j) {
                if (j >= m) break;
                for (int e = 0; e < 8; ++e) acc[e] += w[t * k + first + j] * to_float(in[j].v[e]);
            }
        }
        bf16x8 r;
        for (int e = 0; e < 8; ++e) r.v[e] = to_bf16(acc[e]);
        store8(out + t * h + 8 * v, r);
    }
}

template <class Tr>
PGAS_HD std::uint64_t next_epoch(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> epoch) {
    return load_relaxed(ctx.local(epoch) + here::block()) + 1;
}

// Ends a combine: the block's epoch word moves on (read by the next dispatch).
template <class Tr>
PGAS_HD void finish_call(const pgas::device::context<Tr>& ctx, pgas::symmetric_ptr<std::uint64_t> epoch,
                         std::uint64_t e) {
    pgas::block::sync();
    if (here::thread() == 0) store_relaxed(ctx.local(epoch) + here::block(), e);
}

}  // namespace detail

// --- low-latency mode ------------------------------------------------------

// Dispatch: called by every thread of every block of the kernel (or by the
// PE's thread on the host transport). On return this PE's receive buffers
// and recv_count hold what every PE sent to its experts.
template <class Tr>
PGAS_HD void ll_dispatch(const pgas::device::context<Tr>& ctx, const ll_buffers& b, const batch& a) {
    constexpr const char* call = "moe::ll_dispatch";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k;
    const std::size_t h = std::size_t(c.hidden), groups = h / fp8_group, slots = std::size_t(c.max_tokens);
    if constexpr (MOE_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const std::uint64_t parity = epoch & 1;
    const int* idx = ctx.local(b.io.topk_idx);

    // 1. One block per token: cast it (fp8), then one warp per choice puts it
    //    into its slot. The slot is this PE's next one for that expert.
    for (int t = int(here::block()); t < a.tokens; t += int(here::blocks())) {
        if (c.fp8) {
            detail::cast_token(ctx.local(b.io.x) + t * h, ctx.local(b.io.x8) + t * h,
                               ctx.local(b.io.x_scale) + t * groups, c.hidden);
            pgas::block::sync();
        }
        for (int choice = int(here::warp()); choice < k; choice += int(here::warps())) {
            const int e = idx[std::size_t(t) * k + choice];
            if constexpr (MOE_CHECKS) {
                if (e < 0 || e >= c.experts) detail::bad_expert(call, me, t, choice, e, c.experts);
            }
            const int pe = e / nl, le = e % nl;
            std::uint64_t slot = 0;
            if (here::lane() == 0) slot = pgas::atomic_fetch_add(ctx, b.slot_count + parity * c.experts + e, 1, me);
            slot = detail::warp_broadcast(slot);
            if constexpr (MOE_CHECKS) {
                if (slot >= slots) detail::bad_slot(call, me, t, choice, e, std::int64_t(slot), std::int64_t(slots));
            }
            // Expert e's channel, as DeepEP picks expert e's queue pair.
            const auto to_e = ctx.on_channel(e % ctx.n_channels());
            const std::size_t cell = (std::size_t(le) * n + me) * slots + slot;
            if (c.fp8) {
                pgas::put_nbi<pgas::warp>(to_e, b.recv_x8 + cell * h, ctx.local(b.io.x8) + t * h, h, pe);
                pgas::put_nbi<pgas::warp>(to_e, b.recv_scale + cell * groups, ctx.local(b.io.x_scale) + t * groups,
                                          groups, pe);
            } else {
                pgas::put_nbi<pgas::warp>(to_e, b.recv_x + cell * h, ctx.local(b.io.x) + t * h, h, pe);
            }
            if (here::lane() == 0) pgas::p(to_e, b.recv_src + cell, std::uint64_t(t) * k + choice, pe);
        }
    }

    // 2. Once every block's puts are done, one thread per expert sends this
    //    PE's count for it, tagged with the call's epoch.
    detail::grid_barrier(ctx, b.grid_bar, epoch);
    for (int e = int(here::grid_thread()); e < c.experts; e += int(here::grid_threads())) {
        const std::uint64_t count = detail::load_relaxed(ctx.local(b.slot_count) + parity * c.experts + e);
        const int pe = e / nl, le = e % nl;
        pgas::signal(ctx, b.count_sig + (le * n + me), epoch << 32 | count, pgas::signal_op::set, pe);
    }
    if (here::block() == 0)  // the other parity's counters were last used by the previous call
        for (int e = int(here::thread()); e < c.experts; e += int(here::threads()))
            detail::store_relaxed(ctx.local(b.slot_count) + (1 - parity) * c.experts + e, std::uint64_t{0});

    // 3. Wait for the counts of this PE's experts only.
    for (int i = int(here::grid_thread()); i < nl * n; i += int(here::grid_threads())) {
        const std::uint64_t seen = pgas::signal_wait_until(ctx, b.count_sig + i, pgas::cmp::ge, epoch << 32);
        ctx.local(b.recv_count)[i] = int(seen & 0xffffffffu);
    }
}

// Combine: every row of expert_y goes home; each home token is reduced over
// its top-k, weighted by topk_w, into io.out. topk_idx and topk_w must be the
// ones of the dispatch.
template <class Tr>
PGAS_HD void ll_combine(const pgas::device::context<Tr>& ctx, const ll_buffers& b, const batch& a) {
    constexpr const char* call = "moe::ll_combine";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k;
    const std::size_t h = std::size_t(c.hidden), slots = std::size_t(c.max_tokens);
    if constexpr (MOE_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);

    // 1. One block per (local expert, source): a warp per row, then one flag
    //    per (expert, home) once the whole block's rows are out.
    for (int i = int(here::block()); i < nl * n; i += int(here::blocks())) {
        const int le = i / n, home = i % n;
        const int count = ctx.local(b.recv_count)[i];
        for (int j = int(here::warp()); j < count; j += int(here::warps())) {
            const std::size_t cell = std::size_t(i) * slots + std::size_t(j);
            const std::uint64_t tc = ctx.local(b.recv_src)[cell];
            pgas::put_nbi<pgas::warp>(ctx, b.io.comb_recv + tc * h, ctx.local(b.expert_y) + cell * h, h, home);
        }
        if constexpr (!pgas::load_store_transport<Tr>) pgas::quiet<pgas::warp>(ctx);
        pgas::block::sync();
        if (here::thread() == 0) pgas::signal(ctx, b.comb_flag + (me * nl + le), epoch, pgas::signal_op::set, home);
        pgas::block::sync();
    }

    // 2. One block per home token: wait for the flags of its experts, reduce.
    const int* idx = ctx.local(b.io.topk_idx);
    for (int t = int(here::block()); t < a.tokens; t += int(here::blocks())) {
        for (int choice = int(here::thread()); choice < k; choice += int(here::threads()))
            pgas::signal_wait_until(ctx, b.comb_flag + idx[std::size_t(t) * k + choice], pgas::cmp::ge, epoch);
        pgas::block::sync();
        detail::reduce_token(ctx, b.io, c, t);
    }
    // 3. Every expert's flag, used or not: after this no PE still reads what
    //    the next dispatch will overwrite.
    for (int e = int(here::grid_thread()); e < c.experts; e += int(here::grid_threads()))
        pgas::signal_wait_until(ctx, b.comb_flag + e, pgas::cmp::ge, epoch);
    detail::finish_call(ctx, b.epoch, epoch);
}

// --- throughput mode -------------------------------------------------------

namespace detail {
// Tokens [begin, end) of this block: contiguous ranges, so a source's rows
// for one expert stay in token order.
struct token_range {
    int begin, end;
};
PGAS_HD inline token_range my_tokens(int tokens) {
    const int per = (tokens + int(here::blocks()) - 1) / int(here::blocks());
    const int begin = per * int(here::block());
    return {begin < tokens ? begin : tokens, begin + per < tokens ? begin + per : tokens};
}
}  // namespace detail

// Dispatch: called by every thread of every block of the kernel. Notify and
// data movement in one kernel: no host round trip, graph-capturable.
template <class Tr>
PGAS_HD void tp_dispatch(const pgas::device::context<Tr>& ctx, const tp_buffers& b, const batch& a) {
    constexpr const char* call = "moe::tp_dispatch";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes(), nl = c.experts / n, k = c.top_k, ne = c.experts;
    const std::size_t h = std::size_t(c.hidden), groups = h / fp8_group;
    const std::int64_t capacity = tp_recv_rows(c);
    if constexpr (MOE_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);
    const int* idx = ctx.local(b.io.topk_idx);
    const int* table = ctx.local(b.count_table);
    int* hist = ctx.local(b.block_hist) + std::size_t(here::block()) * ne;
    int* next = ctx.local(b.block_next) + std::size_t(here::block()) * ne;
    const auto mine = detail::my_tokens(a.tokens);

    // 1. This block's tokens: fp8 cast, and counts per expert.
    for (int e = int(here::thread()); e < ne; e += int(here::threads())) hist[e] = 0;
    pgas::block::sync();
    for (int i = mine.begin * k + int(here::thread()); i < mine.end * k; i += int(here::threads())) {
        const int e = idx[i];
        if constexpr (MOE_CHECKS) {
            if (e < 0 || e >= ne) detail::bad_expert(call, me, i / k, i % k, e, ne);
        }
        cuda::atomic_ref<int, cuda::thread_scope_block>(hist[e]).fetch_add(1, cuda::memory_order_relaxed);
    }
    if (c.fp8)
        for (int t = mine.begin; t < mine.end; ++t)
            detail::cast_token(ctx.local(b.io.x) + t * h, ctx.local(b.io.x8) + t * h,
                               ctx.local(b.io.x_scale) + t * groups, c.hidden);
    detail::grid_barrier(ctx, b.grid_bar, epoch);

    // 2. Notify: block 0 sums the blocks' counts and sends them to every PE.
    if (here::block() == 0) {
        int* count = ctx.local(b.my_count);
        for (int e = int(here::thread()); e < ne; e += int(here::threads())) {
            int sum = 0;
            for (unsigned blk = 0; blk < here::blocks(); ++blk) sum += ctx.local(b.block_hist)[std::size_t(blk) * ne + e];
            count[e] = sum;
        }
        pgas::block::sync();
        for (int pe = 0; pe < n; ++pe)
            pgas::put_signal<pgas::block>(ctx, b.count_table + std::size_t(me) * ne, count, ne, b.notify_sig + me,
                                          epoch, pgas::signal_op::set, pe);
    }
    // Meanwhile: this block's first row of each expert among this PE's rows.
    for (int e = int(here::thread()); e < ne; e += int(here::threads())) {
        int sum = 0;
        for (unsigned blk = 0; blk < here::block(); ++blk) sum += ctx.local(b.block_hist)[std::size_t(blk) * ne + e];
        next[e] = sum;
    }
    for (int s = int(here::thread()); s < n; s += int(here::threads()))
        pgas::signal_wait_until(ctx, b.notify_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();

    // 3. Where each expert's run from this PE starts on its owner: owner's
    //    rows are its experts in order, each expert's sources in PE order.
    for (int e = int(here::thread()); e < ne; e += int(here::threads())) {
        const int owner = e / nl;
        int row = 0;
        for (int e2 = owner * nl; e2 < e; ++e2)
            for (int s = 0; s < n; ++s) row += table[std::size_t(s) * ne + e2];
        for (int s = 0; s < me; ++s) row += table[std::size_t(s) * ne + e];
        next[e] += row;
    }
    if (here::block() == 0) {  // this PE as a receiver: where each local expert's rows begin
        int* begin = ctx.local(b.expert_begin);
        if (here::thread() == 0) {
            int row = 0;
            for (int le = 0; le < nl; ++le) {
                begin[le] = row;
                for (int s = 0; s < n; ++s) row += table[std::size_t(s) * ne + me * nl + le];
            }
            begin[nl] = row;
        }
    }
    pgas::block::sync();

    // 4. Where each of this block's (token, choice) rows lands: one thread per expert walks the block's rows in
    //    token order and numbers that expert's from the block's first row.
    int* row_of = ctx.local(b.send_row);
    for (int e = int(here::thread()); e < ne; e += int(here::threads())) {
        int row = next[e];
        for (int i = mine.begin * k; i < mine.end * k; ++i)
            if (idx[i] == e) row_of[i] = row++;
    }
    pgas::block::sync();

    // 5. Data: one warp-level put per row, the block's warps taking rows in turn, with no block-wide step
    //    between rows (a block-wide put per row, two __syncthreads each, ran at a sixth of the copy rate with 4
    //    PEs sharing an H100). The block's channel, as DeepEP's normal mode gives each channel its SMs.
    const auto chan = ctx.on_channel(int(here::block()) % ctx.n_channels());
    for (int i = mine.begin * k + int(here::warp()); i < mine.end * k; i += int(here::warps())) {
        const int t = i / k, e = idx[i], pe = e / nl;
        const std::int64_t row = row_of[i];
        if constexpr (MOE_CHECKS) {
            if (row >= capacity) detail::bad_slot(call, me, t, i % k, e, row, capacity);
        }
        if (c.fp8) {
            pgas::put_nbi<pgas::warp>(chan, b.recv_x8 + row * h, ctx.local(b.io.x8) + t * h, h, pe);
            pgas::put_nbi<pgas::warp>(chan, b.recv_scale + row * groups, ctx.local(b.io.x_scale) + t * groups,
                                      groups, pe);
        } else {
            pgas::put_nbi<pgas::warp>(chan, b.recv_x + row * h, ctx.local(b.io.x) + t * h, h, pe);
        }
        if (here::lane() == 0) pgas::p(chan, b.recv_src + row, std::uint64_t(me) << 32 | std::uint64_t(i), pe);
    }

    // 6. Every block done: tell every PE its rows from here are complete, and
    //    wait for theirs.
    detail::grid_barrier(ctx, b.grid_bar + 1, epoch);
    if (here::block() == 0) {
        for (int pe = int(here::thread()); pe < n; pe += int(here::threads()))
            pgas::signal(ctx, b.data_sig + me, epoch, pgas::signal_op::set, pe);
        for (int s = int(here::thread()); s < n; s += int(here::threads()))
            pgas::signal_wait_until(ctx, b.data_sig + s, pgas::cmp::ge, epoch);
    }
}

// Combine: each home token's top-k expert outputs are read in place, on the PEs that computed them (at the rows
// dispatch put them in: send_row), and reduced weighted by the gate. Reading them where they are moves each
// returned byte once; putting them home first (as low-latency mode does, which a NIC needs) writes every byte
// into comb_recv and reads it back, three passes over the bytes where this makes one. So this mode needs a
// load/store transport (NVLink, the host transport), as DeepEP's intranode normal mode does.
template <class Tr>
PGAS_HD void tp_combine(const pgas::device::context<Tr>& ctx, const tp_buffers& b, const batch& a) {
    static_assert(pgas::load_store_transport<Tr>,
                  "moe::tp_combine reads the experts' outputs in place: it needs a load/store transport");
    constexpr const char* call = "moe::tp_combine";
    const config& c = b.cfg;
    const int me = ctx.my_pe(), n = ctx.n_pes();
    if constexpr (MOE_CHECKS) detail::check_batch(call, me, c, a);
    const std::uint64_t epoch = detail::next_epoch(ctx, b.epoch);

    // 1. This PE's expert outputs are complete (the kernel that wrote them ran before this one on the PE's
    //    stream): say so to every PE, and wait until every PE has.
    if (here::block() == 0)
        for (int pe = int(here::thread()); pe < n; pe += int(here::threads()))
            pgas::signal(ctx, b.comb_sig + me, epoch, pgas::signal_op::set, pe);
    for (int s = int(here::thread()); s < n; s += int(here::threads()))
        pgas::signal_wait_until(ctx, b.comb_sig + s, pgas::cmp::ge, epoch);
    pgas::block::sync();

    // 2. This block's home tokens. No PE overwrites its expert outputs before every PE's next dispatch has
    //    begun (its notify waits for all), so nothing more is needed after the reads.
    const auto mine = detail::my_tokens(a.tokens);
    detail::reduce_tokens_in_place(ctx, b, mine.begin, mine.end);
    detail::finish_call(ctx, b.epoch, epoch);
}

// --- host transport: one call per phase, every PE a thread ------------------

// The host-side checks of a call on every local PE (before a launch: they
// need no data), with per-PE batches: batches[local PE].
inline void check_call(const pgas::world& w, const config& c, int n_pes, const std::vector<batch>& batches,
                       const char* call) {
    if (n_pes != w.n_pes())
        detail::config_error(-1, call, "buffers built for " + std::to_string(n_pes) + " PEs, world has " +
                                           std::to_string(w.n_pes()));
    if (int(batches.size()) != w.n_local_pes())
        detail::config_error(-1, call, std::to_string(batches.size()) + " batches for " +
                                           std::to_string(w.n_local_pes()) + " local PEs");
    for (int pe = 0; pe < w.n_local_pes(); ++pe) detail::check_batch(call, w.local_pe(pe), c, batches[std::size_t(pe)]);
}

namespace detail {
// Runs body(ctx) on every PE of a host-transport world as a grid of `blocks`
// threads per PE, all concurrent (as a GPU runs a kernel's resident blocks):
// grid barriers, block-to-block hand-offs and per-block state are exercised
// for real. A block that throws stops the other blocks' and PEs' waits; the
// first error is rethrown.
template <class Body>
void run_host_grid(pgas::world& w, int blocks, Body body) {
    w.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
        if (blocks == 1) return body(ctx);
        std::mutex m;
        std::exception_ptr first;
        std::vector<std::thread> grid;
        for (int blk = 0; blk < blocks; ++blk)
            grid.emplace_back([&, blk] {
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
        for (auto& t : grid) t.join();
        if (first) std::rethrow_exception(first);
    });
}

template <class Buffers, class Body>
void run_host(pgas::world& w, const Buffers& b, const std::vector<batch>& batches, const char* call, Body body) {
    check_call(w, b.cfg, b.n_pes, batches, call);
    run_host_grid(w, b.cfg.blocks, [&](const pgas::device::context<pgas::host>& ctx) {
        body(ctx, b, batches[std::size_t(ctx.my_pe())]);
    });
}
}  // namespace detail

// One phase on every PE of a host-transport world (world::init_local(n)):
// the same bodies a GPU kernel runs, config::blocks threads per PE.
inline void host_ll_dispatch(pgas::world& w, const ll_buffers& b, const std::vector<batch>& batches) {
    detail::run_host(w, b, batches, "moe::ll_dispatch", [](const auto& ctx, const auto& bb, const batch& a) { ll_dispatch(ctx, bb, a); });
}
inline void host_ll_combine(pgas::world& w, const ll_buffers& b, const std::vector<batch>& batches) {
    detail::run_host(w, b, batches, "moe::ll_combine", [](const auto& ctx, const auto& bb, const batch& a) { ll_combine(ctx, bb, a); });
}
inline void host_tp_dispatch(pgas::world& w, const tp_buffers& b, const std::vector<batch>& batches) {
    detail::run_host(w, b, batches, "moe::tp_dispatch", [](const auto& ctx, const auto& bb, const batch& a) { tp_dispatch(ctx, bb, a); });
}
inline void host_tp_combine(pgas::world& w, const tp_buffers& b, const std::vector<batch>& batches) {
    detail::run_host(w, b, batches, "moe::tp_combine", [](const auto& ctx, const auto& bb, const batch& a) { tp_combine(ctx, bb, a); });
}

}  // namespace moe
