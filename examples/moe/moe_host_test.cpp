// The MoE example on the host transport (CI): both modes, bf16 and fp8, 2-8 PEs, four routings, against the reference; bad input.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "check.hpp"

#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace {

using moe::check::routing;

// Small shapes: 24 experts divide over 2, 3, 4 and 8 PEs; two fp8 groups per token.
// blocks > 1: that many concurrent threads per PE, as a GPU's resident blocks.
moe::config small(bool fp8, int n_pes, int blocks = 1) {
    moe::config c;
    c.blocks = blocks;
    c.hidden = 256;
    c.experts = 24;
    c.top_k = 4;
    c.max_tokens = 12;
    c.recv_rows = n_pes * c.max_tokens * c.top_k;  // all_to_one sends every PE's tokens to one PE
    c.fp8 = fp8;
    return c;
}

pgas::world host_world(int n_pes, int channels = 0) {
    pgas::world_options o;
    o.channels = channels;
    o.heap_bytes = std::uint64_t{32} << 20;
    o.timeout_ms = 20000;
    return pgas::world::init_local(n_pes, o);
}

// Two rounds (the second reuses the buffers at the next epoch) of dispatch,
// experts, combine for every routing, checked after each phase.
template <class Buffers, class Make, class Dispatch, class Combine, class CheckDispatch>
void round_trips(int n_pes, bool fp8, int blocks, Make make, Dispatch dispatch, Combine combine,
                 CheckDispatch check_dispatch, int channels = 0) {
    auto w = host_world(n_pes, channels);
    const moe::config c = small(fp8, n_pes, blocks);
    const Buffers b = make(w, c);
    moe::check::host_access access{w};
    unsigned seed = 1;
    for (routing r : {routing::uneven, routing::even_only, routing::all_to_one, routing::same_pe, routing::uniform}) {
        for (int round = 0; round < 2; ++round, ++seed) {
            CAPTURE(n_pes);
            CAPTURE(fp8);
            CAPTURE(blocks);
            INFO("routing ", moe::check::name(r), " round ", round);
            const auto in = moe::check::make_inputs(c, n_pes, r, seed);
            const auto want = moe::check::expected(c, n_pes, in);
            const auto batches = moe::check::batches(c, in);
            moe::check::upload(access, b.io, in);
            dispatch(w, b, batches);
            CHECK(check_dispatch(access, b, want) == "");
            moe::host_toy_experts(w, b);
            combine(w, b, batches);
            CHECK(moe::check::combine(access, c, b.io, want, in) == "");
        }
    }
}

void low_latency(int n_pes, bool fp8, int blocks = 1, int channels = 0) {
    round_trips<moe::ll_buffers>(
        n_pes, fp8, blocks, moe::make_ll_buffers, moe::host_ll_dispatch, moe::host_ll_combine,
        [](auto& access, const moe::ll_buffers& b, const auto& want) { return moe::check::ll_dispatch(access, b, want); },
        channels);
}
void throughput(int n_pes, bool fp8, int blocks = 1) {
    round_trips<moe::tp_buffers>(
        n_pes, fp8, blocks, moe::make_tp_buffers, moe::host_tp_dispatch, moe::host_tp_combine,
        [](auto& access, const moe::tp_buffers& b, const auto& want) { return moe::check::tp_dispatch(access, b, want); });
}

}  // namespace

TEST_CASE("low latency, bf16, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) low_latency(n, false); }
TEST_CASE("low latency, fp8, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) low_latency(n, true); }
TEST_CASE("low latency over 5 channels (each warp on its expert's), 2/4 PEs, 2 blocks") {
    for (int n : {2, 4}) low_latency(n, false, 2, 5);
}
TEST_CASE("throughput, bf16, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) throughput(n, false); }
TEST_CASE("throughput, fp8, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) throughput(n, true); }

// Several concurrent blocks per PE, as on a GPU: the grid barriers, per-block
// epochs and token ranges, and tp_dispatch's per-block counts and offsets run
// for real (one block per PE serialises all of them).
TEST_CASE("low latency, 3 and 5 blocks per PE, 2/3/4 PEs") {
    for (int blocks : {3, 5})
        for (int n : {2, 3, 4})
            for (bool fp8 : {false, true}) low_latency(n, fp8, blocks);
}
TEST_CASE("throughput, 3 and 5 blocks per PE, 2/3/4 PEs") {
    for (int blocks : {3, 5})
        for (int n : {2, 3, 4})
            for (bool fp8 : {false, true}) throughput(n, fp8, blocks);
}

// --- bad input: an error naming the PE, the token and the value, never an overwrite

namespace {
// Runs one dispatch of the given mode on 2 PEs after `spoil` edits PE 1's inputs; returns the error text.
template <class Buffers, class Make, class Dispatch>
std::string dispatch_error(moe::config c, Make make, Dispatch dispatch,
                           void (*spoil)(std::vector<moe::reference::pe_input>&, std::vector<moe::batch>&)) {
    auto w = host_world(2);
    const Buffers b = make(w, c);
    moe::check::host_access access{w};
    auto in = moe::check::make_inputs(c, 2, routing::uneven, 7);
    auto batches = moe::check::batches(c, in);
    spoil(in, batches);
    moe::check::upload(access, b.io, in);
    try {
        dispatch(w, b, batches);
    } catch (const pgas::error& e) {
        return e.what();
    }
    return "no error";
}

void expert_out_of_range(std::vector<moe::reference::pe_input>& in, std::vector<moe::batch>&) {
    in[1].idx[3 * 4 + 2] = 24;  // token 3, choice 2
}
void expert_negative(std::vector<moe::reference::pe_input>& in, std::vector<moe::batch>&) {
    in[1].idx[5 * 4 + 0] = -1;
}
// Every choice of every token of PE 1 on expert 0: 4 rows per token into a 12-slot buffer.
void one_expert_four_times(std::vector<moe::reference::pe_input>& in, std::vector<moe::batch>&) {
    for (auto& e : in[1].idx) e = 0;
}
void only_pe1_to_expert0(std::vector<moe::reference::pe_input>& in, std::vector<moe::batch>& batches) {
    for (auto& e : in[1].idx) e = 0;
    batches[0].tokens = 0;
}
void wrong_hidden(std::vector<moe::reference::pe_input>&, std::vector<moe::batch>& batches) { batches[1].hidden = 128; }
void too_many_tokens(std::vector<moe::reference::pe_input>&, std::vector<moe::batch>& batches) { batches[1].tokens = 13; }
}  // namespace

TEST_CASE("bad input: expert index out of range (negative or >= experts)") {
    const moe::config c = small(false, 2);
    CHECK(dispatch_error<moe::ll_buffers>(c, moe::make_ll_buffers, moe::host_ll_dispatch, expert_out_of_range) ==
          "pgas: moe::ll_dispatch on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<moe::tp_buffers>(c, moe::make_tp_buffers, moe::host_tp_dispatch, expert_out_of_range) ==
          "pgas: moe::tp_dispatch on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<moe::ll_buffers>(c, moe::make_ll_buffers, moe::host_ll_dispatch, expert_negative) ==
          "pgas: moe::ll_dispatch on PE 1: token 5 choice 0: expert index -1 outside [0, 24)");
}

TEST_CASE("bad input: the error of the block that met it, with 3 blocks per PE") {
    const moe::config c = small(false, 2, 3);
    CHECK(dispatch_error<moe::ll_buffers>(c, moe::make_ll_buffers, moe::host_ll_dispatch, expert_out_of_range) ==
          "pgas: moe::ll_dispatch on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<moe::tp_buffers>(c, moe::make_tp_buffers, moe::host_tp_dispatch, expert_out_of_range) ==
          "pgas: moe::tp_dispatch on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
}

TEST_CASE("bad input: more rows for an expert than its receive buffer holds") {
    moe::config c = small(false, 2);
    // Low latency: each (expert, source) has max_tokens = 12 slots; the 13th row fails (token 3 choice 0).
    CHECK(dispatch_error<moe::ll_buffers>(c, moe::make_ll_buffers, moe::host_ll_dispatch, one_expert_four_times) ==
          "pgas: moe::ll_dispatch on PE 1: token 3 choice 0: expert 0 receive slot 12 beyond its buffer of 12 rows");
    // Throughput: PE 0 sends nothing and receives PE 1's 10 tokens * 4 choices into 39 rows.
    c.recv_rows = 39;
    CHECK(dispatch_error<moe::tp_buffers>(c, moe::make_tp_buffers, moe::host_tp_dispatch, only_pe1_to_expert0) ==
          "pgas: moe::tp_dispatch on PE 1: token 9 choice 3: expert 0 receive slot 39 beyond its buffer of 39 rows");
}

TEST_CASE("bad input: top_k larger than the number of experts, experts not divisible over the PEs") {
    auto w = host_world(2);
    moe::config c = small(false, 2);
    c.top_k = 25;
    CHECK_THROWS_WITH_AS(moe::make_ll_buffers(w, c), "pgas: moe::make_ll_buffers: top_k = 25 must be in [1, experts = 24]",
                         pgas::error);
    c.top_k = 4;
    c.experts = 25;
    CHECK_THROWS_WITH_AS(moe::make_tp_buffers(w, c),
                         "pgas: moe::make_tp_buffers: experts = 25 must be a positive multiple of the PE count 2", pgas::error);
}

TEST_CASE("bad input: a hidden size or token count the buffers were not built for") {
    const moe::config c = small(false, 2);
    CHECK(dispatch_error<moe::ll_buffers>(c, moe::make_ll_buffers, moe::host_ll_dispatch, wrong_hidden) ==
          "pgas: moe::ll_dispatch on PE 1: hidden size 128 but the buffers were built for 256");
    CHECK(dispatch_error<moe::tp_buffers>(c, moe::make_tp_buffers, moe::host_tp_dispatch, too_many_tokens) ==
          "pgas: moe::tp_dispatch on PE 1: tokens 13 but the buffers were built for 12");
}

// The combine diagnosis: nothing on a good round trip; a spoiled stage is the one it names.
template <class Buffers, class Make, class Dispatch, class Combine>
void diagnosis(Make make, Dispatch dispatch, Combine combine) {
    auto w = host_world(2);
    const moe::config c = small(false, 2);
    const Buffers b = make(w, c);
    moe::check::host_access access{w};
    const auto in = moe::check::make_inputs(c, 2, routing::uneven, 3);
    const auto want = moe::check::expected(c, 2, in);
    moe::check::upload(access, b.io, in);
    dispatch(w, b, moe::check::batches(c, in));
    moe::host_toy_experts(w, b);
    combine(w, b, moe::check::batches(c, in));
    const std::string good = moe::check::diagnose(access, b, in, want);
    INFO(good);
    CHECK(good.find("no stage differs") != std::string::npos);
    CHECK(good.find(" 1 differ") == std::string::npos);
    // PE 1 token 2 choice 1 as if its expert output came back wrong: in low-latency mode element 5 of the row put
    // home; in throughput mode, where combine reads the row in place, dispatch's record of where it went.
    const std::string first = "returned rows: 1 of 88 differ; first: PE 1 token 2 choice 1 element ";
    std::string element = "5";
    if constexpr (std::is_same_v<Buffers, moe::tp_buffers>) {
        auto rows = access.read(b.send_row, 1, std::size_t(3 * c.top_k));
        int& r = rows[std::size_t(2 * c.top_k + 1)];
        r = r + 1 < moe::tp_recv_rows(c) ? r + 1 : r - 1;
        access.write(b.send_row, 1, rows);
        element = "";  // whichever element of the other row differs first
    } else {
        auto row = access.read(b.io.comb_recv + std::ptrdiff_t((2 * c.top_k + 1) * c.hidden), 1, std::size_t(c.hidden));
        row[5] = moe::to_bf16(moe::to_float(row[5]) + 1.0f);
        access.write(b.io.comb_recv + std::ptrdiff_t((2 * c.top_k + 1) * c.hidden), 1, row);
    }
    const std::string bad = moe::check::diagnose(access, b, in, want);
    INFO(bad);
    CHECK(bad.find("first stage that differs: returned rows") != std::string::npos);
    CHECK(bad.find(first + element) != std::string::npos);
}

TEST_CASE("combine diagnosis names the stage that differs") {
    diagnosis<moe::ll_buffers>(moe::make_ll_buffers, moe::host_ll_dispatch, moe::host_ll_combine);
    diagnosis<moe::tp_buffers>(moe::make_tp_buffers, moe::host_tp_dispatch, moe::host_tp_combine);
}
