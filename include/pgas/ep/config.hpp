// Expert-parallel (MoE) dispatch/combine: the shape (config), the buffer layouts a kernel receives, and their checks.
//
// Experts are spread evenly: PE p holds experts [p * L, (p + 1) * L) with L = experts / n_pes; expert e's local
// index on its PE is e % L. Two modes, as DeepEP's: low latency (ep/low_latency.hpp: fixed per-(expert, source)
// receive slots) and throughput (ep/throughput.hpp: contiguous runs of rows per expert). Their buffers are
// allocated by pgas::ep::buffer (host/ep/buffer.hpp); kernels receive the layouts below by value.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/ep/fp8.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#include <nv/target>

/// 1 (default): the dispatch bodies check every (token, choice) as they read it (expert index in range, receive
/// slot within the buffer): one compare each. A failure throws pgas::error on the host transport and prints the
/// same text and traps on a GPU. 0: no data checks (shape checks on the host stay).
#ifndef PGAS_EP_CHECKS
#define PGAS_EP_CHECKS 1
#endif

PGAS_NAMESPACE_BEGIN
namespace ep {

/// The shape a pgas::ep::buffer is built for; every PE passes the same. The defaults are DeepSeek-V3's
/// (low_latency_defaults(), throughput_defaults()).
struct config {
    int hidden = 7168;     ///< elements per token: a multiple of 128 with fp8, else of 8
    int experts = 256;     ///< experts in total, a multiple of the PE count
    int top_k = 8;         ///< choices per token, at most `experts`
    int max_tokens = 128;  ///< tokens a PE dispatches per call, at most
    int recv_rows = 0;  ///< throughput mode: tokens a PE may receive per call (0: n_pes * max_tokens, never exceeded)
    bool fp8 = false;   ///< dispatch payload in e4m3 with one scale per 128 values (combine stays bf16)
    int blocks = 1;     ///< blocks of every kernel (GPU), all resident at once: see pgas::ep::resident_blocks
    int threads = 256;  ///< threads per block (GPU), a multiple of 32
};

/// DeepSeek-V3's shape in low-latency mode: 128 tokens per PE.
inline config low_latency_defaults() { return {}; }
/// DeepSeek-V3's shape in throughput mode: 4096 tokens per PE.
inline config throughput_defaults() {
    config c;
    c.max_tokens = 4096;
    return c;
}

/// What one dispatch or combine works on; checked against the config the buffer was built for.
struct batch {
    int tokens = 0;    ///< tokens this PE dispatches, at most config::max_tokens (0 is allowed)
    int hidden = 0;    ///< must equal config::hidden
    bool cast = true;  ///< fp8 dispatch: casts io.x into io.x8 and io.x_scale; false: the caller wrote them (its
                       ///< own fp8 tokens, as DeepEP's normal dispatch takes them) and io.x is not read
};

/// A PE's inputs and outputs, in the symmetric heap (so that a GPU and the host transport address them alike).
/// Rows of `hidden` elements; the caller fills x, topk_idx and topk_w before dispatch and reads out after combine.
struct io_layout {
    symmetric_ptr<bf16> x;          ///< [max_tokens][hidden] tokens to dispatch
    symmetric_ptr<int> topk_idx;    ///< [max_tokens][top_k] expert of each choice, in [0, experts)
    symmetric_ptr<float> topk_w;    ///< [max_tokens][top_k] gate weight of each choice
    symmetric_ptr<bf16> out;        ///< [max_tokens][hidden] the combined result: sum over choices of weight * output
    symmetric_ptr<fp8> x8;          ///< [max_tokens][hidden] fp8 cast of x (fp8 only; written by dispatch)
    symmetric_ptr<float> x_scale;   ///< [max_tokens][hidden/128] its scales (fp8 only)
    symmetric_ptr<bf16> comb_recv;  ///< expert outputs combine pushes home: [max_tokens][top_k][hidden] (low latency),
                                    ///< [max_tokens][n_pes][hidden] (throughput: PE d's partial sum, none from home)
};

/// Low-latency mode's buffers (DeepEP's low_latency_dispatch/combine), as a kernel receives them. With
/// L = experts / n_pes local experts, the rows local expert `le` received from PE `s` are
/// `recv_*[le][s][0 .. recv_count[le][s])`; row j came from token `recv_src[..][j] / top_k` (choice
/// `recv_src % top_k`) of PE s. The expert writes its output for that row to `expert_y` at the same index.
struct low_latency_layout {
    config cfg;                             ///< the shape it was built for
    int n_pes = 0;                          ///< the PEs it was built for
    io_layout io;                           ///< this PE's inputs and outputs
    symmetric_ptr<bf16> recv_x;             ///< [L][n][max_tokens][hidden] received rows (bf16)
    symmetric_ptr<fp8> recv_x8;             ///< [L][n][max_tokens][hidden] received rows (fp8)
    symmetric_ptr<float> recv_scale;        ///< [L][n][max_tokens][hidden/128] their scales (fp8)
    symmetric_ptr<std::uint64_t> recv_src;  ///< [L][n][max_tokens] token * top_k + choice on the source
    symmetric_ptr<int> recv_count;          ///< [L][n] rows received
    symmetric_ptr<bf16> expert_y;           ///< [L][n][max_tokens][hidden] the experts' outputs, written by the user
    /// @cond internal
    symmetric_ptr<std::uint64_t> count_sig;   // [L][n]  epoch << 32 | count, set by the source
    symmetric_ptr<std::uint64_t> comb_flag;   // [experts] epoch, set by the expert's PE
    symmetric_ptr<std::uint64_t> slot_count;  // [2][experts] slots taken per expert (by epoch parity)
    symmetric_ptr<std::uint64_t> grid_bar;    // [1] grid barrier arrivals
    symmetric_ptr<std::uint64_t> epoch;       // [blocks] calls completed, one word per block
    /// @endcond
};

/// Throughput mode's buffers (DeepEP's normal dispatch/combine), as a kernel receives them. A token goes once to
/// each PE that holds one of its experts (not once per expert). A PE's received rows are grouped by source PE,
/// sources in PE order, each source's tokens in token order: rows `[source_begin[s], source_begin[s + 1])` came
/// from PE s. For each row, `recv_topk_idx` holds the token's top-k choices as local expert indices, -1 for a
/// choice on another PE, and `recv_topk_w` their gate weights (0 where -1). The experts write, per row,
/// `expert_y[row]` = the sum over the row's local choices of weight * expert output (DeepEP's convention); combine
/// adds those partial sums of every PE the token went to.
struct throughput_layout {
    config cfg;                             ///< the shape it was built for
    int n_pes = 0;                          ///< the PEs it was built for
    io_layout io;                           ///< this PE's inputs and outputs
    symmetric_ptr<bf16> recv_x;             ///< [recv_rows][hidden] received tokens (bf16)
    symmetric_ptr<fp8> recv_x8;             ///< [recv_rows][hidden] received tokens (fp8)
    symmetric_ptr<float> recv_scale;        ///< [recv_rows][hidden/128] their scales (fp8)
    symmetric_ptr<std::uint64_t> recv_src;  ///< [recv_rows] source PE << 32 | token index on the source
    symmetric_ptr<int> recv_topk_idx;       ///< [recv_rows][top_k] local expert of each choice, -1 if on another PE
    symmetric_ptr<float> recv_topk_w;       ///< [recv_rows][top_k] gate weight of each choice, 0 where the index is -1
    symmetric_ptr<int> source_begin;        ///< [n + 1] first row from each source PE; source_begin[n] rows in all
    symmetric_ptr<int> expert_count;        ///< [L] rows with a choice on each local expert
    symmetric_ptr<bf16> expert_y;           ///< [recv_rows][hidden] per row: its local choices' weighted sum (user)
    /// @cond internal
    symmetric_ptr<int> count_table;           // [n][n]  tokens from source s to PE d (notify)
    symmetric_ptr<int> my_count;              // [n] this PE's tokens per destination (the row it sends)
    symmetric_ptr<int> block_count;           // [blocks][n] this PE's tokens per destination, per block
    symmetric_ptr<int> block_next;            // [blocks][n] the block's first row on each destination
    symmetric_ptr<int> block_experts;         // [blocks][L] the block's share of expert_count
    symmetric_ptr<int> send_row;              // [max_tokens][n] the row token t landed in on PE d, -1: not sent there
    symmetric_ptr<std::uint64_t> notify_sig;  // [n] epoch: counts of source s arrived
    symmetric_ptr<std::uint64_t> data_sig;    // [n] epoch: every row of source s arrived
    symmetric_ptr<int> chunk_row;             // [n][chunks + 1] first row from source s of its token chunk j
    symmetric_ptr<std::uint64_t> chunk_sig;   // [chunks] pushes of home token chunk j arrived: n - 1 per call
    symmetric_ptr<std::uint64_t> grid_bar;    // [2] grid barrier arrivals
    symmetric_ptr<std::uint64_t> epoch;       // [blocks]
    /// @endcond
};

/// Experts per PE: PE p holds experts [p * L, (p + 1) * L).
PGAS_HD inline int local_experts(const config& c, int n_pes) { return c.experts / n_pes; }
/// Rows (tokens) a PE may receive per throughput-mode call: config::recv_rows, or n_pes * max_tokens (every
/// token of every PE, which no routing exceeds).
PGAS_HD inline int throughput_recv_rows(const config& c, int n_pes) {
    return c.recv_rows > 0 ? c.recv_rows : n_pes * c.max_tokens;
}

namespace detail {
// The throughput combine's pipeline unit: a home PE's tokens in chunks of combine_chunk_tokens, at most
// max_combine_chunks of them, so that a home sums chunk j while later chunks are still on their way
// (ep/throughput.hpp).
inline constexpr int max_combine_chunks = 64;
PGAS_HD inline int combine_chunk_tokens(const config& c) {
    return (c.max_tokens + max_combine_chunks - 1) / max_combine_chunks;
}
PGAS_HD inline int combine_chunks(const config& c) {
    const int per = combine_chunk_tokens(c);
    return (c.max_tokens + per - 1) / per;
}
}  // namespace detail

// --- errors ------------------------------------------------------------------

namespace detail {

[[noreturn]] inline void config_error(int pe, const char* call, const std::string& detail) {
    throw pgas::error(pgas::errc::invalid_argument, pe, call, detail);
}

// A bad (token, choice): on the host transport a pgas::error, on the GPU the
// same text and a trap. The text names the PE, the token, the choice and the value.
PGAS_HD inline void bad_expert(const char* call, int pe, int token, int choice, long long value, int experts) {
    NV_IF_TARGET(
        NV_IS_HOST,
        (config_error(pe, call,
                      "token " + std::to_string(token) + " choice " + std::to_string(choice) + ": expert index " +
                          std::to_string(value) + " outside [0, " + std::to_string(experts) + ")");),
        (printf("pgas: %s on PE %d: token %d choice %d: expert index %lld outside [0, %d)\n", call, pe, token, choice,
                value, experts);
         __trap();))
}

PGAS_HD inline void bad_slot(const char* call, int pe, int token, int choice, int expert, long long slot,
                             long long capacity) {
    NV_IF_TARGET(NV_IS_HOST,
                 (config_error(pe, call,
                               "token " + std::to_string(token) + " choice " + std::to_string(choice) + ": expert " +
                                   std::to_string(expert) + " receive slot " + std::to_string(slot) +
                                   " beyond its buffer of " + std::to_string(capacity) + " rows");),
                 (printf("pgas: %s on PE %d: token %d choice %d: expert %d receive slot %lld beyond its buffer of "
                         "%lld rows\n",
                         call, pe, token, choice, expert, slot, capacity);
                  __trap();))
}

// A token whose row on PE `dest` is beyond that PE's receive buffer (throughput mode).
PGAS_HD inline void bad_row(const char* call, int pe, int token, int dest, long long row, long long capacity) {
    NV_IF_TARGET(NV_IS_HOST,
                 (config_error(pe, call,
                               "token " + std::to_string(token) + " to PE " + std::to_string(dest) + ": receive row " +
                                   std::to_string(row) + " beyond its buffer of " + std::to_string(capacity) +
                                   " rows (config::recv_rows)");),
                 (printf("pgas: %s on PE %d: token %d to PE %d: receive row %lld beyond its buffer of %lld rows "
                         "(config::recv_rows)\n",
                         call, pe, token, dest, row, capacity);
                  __trap();))
}

PGAS_HD inline void bad_batch(const char* call, int pe, const char* what, long long value, long long limit) {
    NV_IF_TARGET(
        NV_IS_HOST,
        (config_error(pe, call,
                      std::string(what) + " " + std::to_string(value) + " but the buffer was built for " +
                          std::to_string(limit));),
        (printf("pgas: %s on PE %d: %s %lld but the buffer was built for %lld\n", call, pe, what, value, limit);
         __trap();))
}

// batch::cast = false (fp8 tokens given) to a bf16 buffer.
PGAS_HD inline void bad_cast(const char* call, int pe) {
    constexpr const char* what =
        "batch::cast = false (tokens given in fp8) but the buffer was built for bf16 "
        "(config::fp8 = false)";
    NV_IF_TARGET(NV_IS_HOST, (config_error(pe, call, what);),
                 (printf("pgas: %s on PE %d: %s\n", call, pe, what); __trap();))
}

// The checks a call can make without reading data: host side before a launch,
// and again in the body (device side under PGAS_EP_CHECKS).
PGAS_HD inline void check_batch(const char* call, int pe, const config& c, const batch& a) {
    if (a.hidden != c.hidden) bad_batch(call, pe, "hidden size", a.hidden, c.hidden);
    if (a.tokens < 0 || a.tokens > c.max_tokens) bad_batch(call, pe, "tokens", a.tokens, c.max_tokens);
    if (!a.cast && !c.fp8) bad_cast(call, pe);
}

}  // namespace detail

/// Checks a config for n_pes PEs; throws pgas::error (errc::invalid_argument) naming the call, the PE (`pe`, -1
/// for every PE of the process), the field and its value. pgas::ep::buffer calls it before it allocates.
inline void check_config(const config& c, int n_pes, const char* call, int pe = -1) {
    using detail::config_error;
    auto num = [](long long v) { return std::to_string(v); };
    if (c.experts < 1 || n_pes < 1 || c.experts % n_pes != 0)
        config_error(pe, call,
                     "experts = " + num(c.experts) + " must be a positive multiple of the PE count " + num(n_pes));
    if (c.top_k < 1 || c.top_k > c.experts)
        config_error(pe, call, "top_k = " + num(c.top_k) + " must be in [1, experts = " + num(c.experts) + "]");
    if (c.hidden < 1 || c.hidden % (c.fp8 ? fp8_group : 8) != 0)
        config_error(pe, call,
                     "hidden = " + num(c.hidden) + " must be a positive multiple of " + num(c.fp8 ? fp8_group : 8));
    if (c.max_tokens < 1) config_error(pe, call, "max_tokens = " + num(c.max_tokens) + " must be positive");
    if ((long long)c.max_tokens * c.top_k >= (1ll << 31))
        config_error(pe, call,
                     "max_tokens * top_k = " + num((long long)c.max_tokens * c.top_k) + " must fit in an int");
    if ((long long)c.max_tokens * n_pes >= (1ll << 31))
        config_error(pe, call, "max_tokens * n_pes = " + num((long long)c.max_tokens * n_pes) + " must fit in an int");
    if (c.blocks < 1 || c.threads < 32 || c.threads % 32 != 0)
        config_error(pe, call,
                     "blocks = " + num(c.blocks) + ", threads = " + num(c.threads) +
                         ": need blocks >= 1 and threads a positive multiple of 32");
}

}  // namespace ep
PGAS_NAMESPACE_END
