// pgas::ep on the host transport (CI): both modes, bf16 and fp8, 2-8 PEs, five routings, against the reference; bad input.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "check.hpp"
#include "../common/support.hpp"

#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace {

using ep_test::check::routing;
using pgas::ep::low_latency_buffer;
using pgas::ep::throughput_buffer;

// Small shapes: 24 experts divide over 2, 3, 4 and 8 PEs; two fp8 groups per token unless `hidden` says otherwise.
// blocks > 1: that many concurrent threads per PE, as a GPU's resident blocks.
pgas::ep::config small(bool fp8, int blocks = 1, int hidden = 256) {
    pgas::ep::config c;
    c.blocks = blocks;
    c.hidden = hidden;
    c.experts = 24;
    c.top_k = 4;
    c.max_tokens = 12;
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

// Two rounds (the second reuses the buffers at the next epoch) of dispatch, experts, combine for every routing,
// checked after each phase. caller_casts: the tokens go in already cast to fp8 (batch::cast = false).
template <class Buffer>
void round_trips(int n_pes, bool fp8, int blocks, int channels = 0, int hidden = 256, bool caller_casts = false) {
    auto w = host_world(n_pes, channels);
    const pgas::ep::config c = small(fp8, blocks, hidden);
    const Buffer buf(w, c);
    const auto& b = buf.layout();
    ep_test::check::host_access access{w};
    unsigned seed = 1;
    for (routing r : {routing::uneven, routing::even_only, routing::all_to_one, routing::same_pe, routing::uniform}) {
        for (int round = 0; round < 2; ++round, ++seed) {
            CAPTURE(n_pes);
            CAPTURE(fp8);
            CAPTURE(blocks);
            CAPTURE(hidden);
            INFO("routing ", ep_test::check::name(r), " round ", round);
            const auto in = ep_test::check::make_inputs(c, n_pes, r, seed);
            const auto want = ep_test::check::expected(c, n_pes, in);
            auto batches = ep_test::check::batches(c, in);
            if (caller_casts) {
                for (auto& a : batches) a.cast = false;
                ep_test::check::upload_cast(access, b.io, in);
            } else {
                ep_test::check::upload(access, b.io, in);
            }
            buf.dispatch(batches);
            CHECK(ep_test::check::dispatch(access, b, want) == "");
            ep_test::host_toy_experts(buf);
            buf.combine(batches);
            CHECK(ep_test::check::combine(access, c, b.io, want, in) == "");
        }
    }
}

void low_latency(int n_pes, bool fp8, int blocks = 1, int channels = 0) {
    round_trips<low_latency_buffer>(n_pes, fp8, blocks, channels);
}
void throughput(int n_pes, bool fp8, int blocks = 1, int hidden = 256) {
    round_trips<throughput_buffer>(n_pes, fp8, blocks, 0, hidden);
}

}  // namespace

TEST_CASE("low latency, bf16, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) low_latency(n, false); }
TEST_CASE("low latency, fp8, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) low_latency(n, true); }
TEST_CASE("low latency over 5 channels (each warp on its expert's), 2/4 PEs, 2 blocks") {
    for (int n : {2, 4}) low_latency(n, false, 2, 5);
}
TEST_CASE("throughput, bf16, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) throughput(n, false); }
TEST_CASE("throughput, fp8, 2/3/4/8 PEs") { for (int n : {2, 3, 4, 8}) throughput(n, true); }

// Several concurrent blocks per PE, as on a GPU: the grid barriers, per-block epochs and token ranges, and the
// throughput dispatch's per-block counts and offsets run for real (one block per PE serialises all of them).
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

// Shapes whose work does not divide evenly: fp8 with three groups a token (the cast takes a block's groups as one
// range) over blocks whose token ranges differ in length; bf16 with 25 vectors of 8 a token, which the combine's
// sum takes 8 / N at a time per lane (N = 2, 4 or 8 by the PE count: a tail on 2, 3 and 4 PEs).
TEST_CASE("throughput, fp8, three groups a token, 1/3/5 blocks per PE, 2/3/4 PEs") {
    for (int blocks : {1, 3, 5})
        for (int n : {2, 3, 4}) throughput(n, true, blocks, 384);
}
TEST_CASE("fp8 tokens cast by the caller (batch::cast = false, x not read), both modes, 2/3/4 PEs, 3 blocks") {
    for (int n : {2, 3, 4}) {
        round_trips<low_latency_buffer>(n, true, 3, 0, 256, true);
        round_trips<throughput_buffer>(n, true, 3, 0, 256, true);
    }
}
TEST_CASE("low latency, fp8, three groups a token, 2/3 PEs") {
    for (int n : {2, 3}) round_trips<low_latency_buffer>(n, true, 3, 0, 384);
}
TEST_CASE("throughput, bf16, hidden 200 (a tail of vectors), 1/3 blocks per PE, 2/3/4/8/12 PEs") {
    // 12 PEs: the combine's sum adds eight PEs a pass, then four.
    for (int blocks : {1, 3})
        for (int n : {2, 3, 4, 8, 12}) throughput(n, false, blocks, 200);
}

// The buffer owns its memory: built and destroyed ten times in a heap that holds one at a time.
TEST_CASE("a buffer frees its symmetric memory when destroyed") {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{96} << 20;
    auto w = pgas::world::init_local(2, o);
    pgas::ep::config c = pgas::ep::throughput_defaults();
    c.hidden = 1024;
    c.experts = 8;
    c.max_tokens = 4096;  // ~65 MiB: 16 MiB each of received tokens (2 * 4096), partial sums, the partial sums
                          // pushed home (comb_recv, 4096 * 2), and io
    for (int i = 0; i < 10; ++i) {
        CAPTURE(i);
        const throughput_buffer buf(w, c);
        CHECK(buf.layout().n_pes == 2);
    }
    c.max_tokens = 65536;  // 16x: does not fit, and says so
    CHECK_THROWS_AS(throughput_buffer(w, c), pgas::error);
    const throughput_buffer again(w, small(false));  // nothing leaked by the failed one
}

// --- bad input: an error naming the PE, the token and the value, never an overwrite

namespace {
// Runs one dispatch on 2 PEs after `spoil` edits PE 1's inputs; returns the error text.
template <class Buffer>
std::string dispatch_error(pgas::ep::config c,
                           void (*spoil)(std::vector<ep_test::reference::pe_input>&, std::vector<pgas::ep::batch>&)) {
    auto w = host_world(2);
    const Buffer buf(w, c);
    ep_test::check::host_access access{w};
    auto in = ep_test::check::make_inputs(c, 2, routing::uneven, 7);
    auto batches = ep_test::check::batches(c, in);
    spoil(in, batches);
    ep_test::check::upload(access, buf.layout().io, in);
    return test::error_of([&] { buf.dispatch(batches); });
}

using inputs = std::vector<ep_test::reference::pe_input>;
using batches = std::vector<pgas::ep::batch>;
void expert_out_of_range(inputs& in, batches&) { in[1].idx[3 * 4 + 2] = 24; }  // token 3, choice 2
void expert_negative(inputs& in, batches&) { in[1].idx[5 * 4 + 0] = -1; }
// Every choice of every token of PE 1 on expert 0: 4 rows per token into a 12-slot buffer.
void one_expert_four_times(inputs& in, batches&) {
    for (auto& e : in[1].idx) e = 0;
}
void only_pe1_to_expert0(inputs& in, batches& b) {
    for (auto& e : in[1].idx) e = 0;
    b[0].tokens = 0;
}
void wrong_hidden(inputs&, batches& b) { b[1].hidden = 128; }
void too_many_tokens(inputs&, batches& b) { b[1].tokens = 13; }
void fp8_given_to_bf16(inputs&, batches& b) { b[1].cast = false; }
}  // namespace

TEST_CASE("bad input: expert index out of range (negative or >= experts)") {
    const pgas::ep::config c = small(false);
    CHECK(dispatch_error<low_latency_buffer>(c, expert_out_of_range) ==
          "pgas: ep::dispatch (low latency) on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<throughput_buffer>(c, expert_out_of_range) ==
          "pgas: ep::dispatch (throughput) on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<low_latency_buffer>(c, expert_negative) ==
          "pgas: ep::dispatch (low latency) on PE 1: token 5 choice 0: expert index -1 outside [0, 24)");
}

TEST_CASE("bad input: the error of the block that met it, with 3 blocks per PE") {
    const pgas::ep::config c = small(false);
    CHECK(dispatch_error<low_latency_buffer>(c, expert_out_of_range) ==
          "pgas: ep::dispatch (low latency) on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
    CHECK(dispatch_error<throughput_buffer>(c, expert_out_of_range) ==
          "pgas: ep::dispatch (throughput) on PE 1: token 3 choice 2: expert index 24 outside [0, 24)");
}

TEST_CASE("bad input: more rows for an expert than its receive buffer holds") {
    pgas::ep::config c = small(false);
    // Low latency: each (expert, source) has max_tokens = 12 slots; the 13th row fails (token 3 choice 0).
    CHECK(dispatch_error<low_latency_buffer>(c, one_expert_four_times) ==
          "pgas: ep::dispatch (low latency) on PE 1: token 3 choice 0: expert 0 receive slot 12 beyond its buffer of "
          "12 rows");
    // Throughput: PE 0 sends nothing and receives PE 1's 10 tokens, once each, into 9 rows.
    c.recv_rows = 9;
    CHECK(dispatch_error<throughput_buffer>(c, only_pe1_to_expert0) ==
          "pgas: ep::dispatch (throughput) on PE 1: token 9 to PE 0: receive row 9 beyond its buffer of 9 rows "
          "(config::recv_rows)");
}

TEST_CASE("bad input: top_k larger than the number of experts, experts not divisible over the PEs") {
    auto w = host_world(2);
    pgas::ep::config c = small(false);
    c.top_k = 25;
    CHECK_THROWS_WITH_AS(low_latency_buffer(w, c), "pgas: ep::buffer: top_k = 25 must be in [1, experts = 24]",
                         pgas::error);
    c.top_k = 4;
    c.experts = 25;
    CHECK_THROWS_WITH_AS(throughput_buffer(w, c),
                         "pgas: ep::buffer: experts = 25 must be a positive multiple of the PE count 2", pgas::error);
}

TEST_CASE("bad input: a hidden size, token count or payload the buffer was not built for") {
    const pgas::ep::config c = small(false);
    CHECK(dispatch_error<low_latency_buffer>(c, wrong_hidden) ==
          "pgas: ep::dispatch (low latency) on PE 1: hidden size 128 but the buffer was built for 256");
    CHECK(dispatch_error<throughput_buffer>(c, too_many_tokens) ==
          "pgas: ep::dispatch (throughput) on PE 1: tokens 13 but the buffer was built for 12");
    CHECK(dispatch_error<low_latency_buffer>(c, fp8_given_to_bf16) ==
          "pgas: ep::dispatch (low latency) on PE 1: batch::cast = false (tokens given in fp8) but the buffer was "
          "built for bf16 (config::fp8 = false)");
}

// PEs as separate worlds (one per thread, as processes): a buffer whose shape differs on one PE is refused by
// every PE, naming the field, both values and the PE that differs, before any memory is taken.
TEST_CASE("bad input: PEs that build their buffers for different shapes") {
    std::vector<std::string> errors(3);
    try {
        pgas::world::run_threads(3, [&](pgas::world& w) {
            pgas::ep::config c = small(false);
            if (w.my_pe() == 2) c.top_k = 3;
            errors[std::size_t(w.my_pe())] = test::error_of([&] { const low_latency_buffer buf(w, c); });
        }, [] {
            pgas::world_options o;
            o.heap_bytes = std::uint64_t{32} << 20;
            return o;
        }());
    } catch (const pgas::error& e) {
        FAIL("run_threads: " << e.what());
    }
    CHECK(errors[0] == "pgas: ep::buffer on PE 0: config::top_k = 4 here but 3 on PE 2");
    CHECK(errors[2] == "pgas: ep::buffer on PE 2: config::top_k = 3 here but 4 on PE 0");
}

// The combine diagnosis: nothing on a good round trip; a spoiled stage is the one it names.
template <class Buffer>
void diagnosis() {
    auto w = host_world(2);
    const pgas::ep::config c = small(false);
    const Buffer buf(w, c);
    const auto& b = buf.layout();
    ep_test::check::host_access access{w};
    const auto in = ep_test::check::make_inputs(c, 2, routing::uneven, 3);
    const auto want = ep_test::check::expected(c, 2, in);
    ep_test::check::upload(access, b.io, in);
    buf.dispatch(ep_test::check::batches(c, in));
    ep_test::host_toy_experts(buf);
    buf.combine(ep_test::check::batches(c, in));
    const std::string good = ep_test::check::diagnose(access, b, in, want);
    INFO(good);
    CHECK(good.find("no stage differs") != std::string::npos);
    CHECK(good.find(" 1 differ") == std::string::npos);
    // PE 1 token 2's result as if it came back wrong: element 5 of a row combine read at home. In low-latency mode
    // choice 1's row put home; in throughput mode the partial sum of the first PE the token went to: PE 0's, pushed
    // into comb_recv, or PE 1's own expert_y row.
    std::string first = "returned rows: 1 of 88 differ; first: PE 1 token 2 choice 1 element 5";
    if constexpr (std::is_same_v<Buffer, throughput_buffer>) {
        const auto rows = access.read(b.send_row, 1, std::size_t(3 * 2));
        const int to = rows[2 * 2] >= 0 ? 0 : 1;
        const auto at = to == 0 ? b.io.comb_recv + std::ptrdiff_t((2 * 2 + 0) * c.hidden)
                                : b.expert_y + std::ptrdiff_t(std::ptrdiff_t(rows[2 * 2 + 1]) * c.hidden);
        auto row = access.read(at, 1, std::size_t(c.hidden));
        row[5] = pgas::ep::to_bf16(pgas::ep::to_float(row[5]) + 1.0f);
        access.write(at, 1, row);
        first = "; first: PE 1 token 2 from PE " + std::to_string(to) + " element 5";
    } else {
        auto row = access.read(b.io.comb_recv + std::ptrdiff_t((2 * c.top_k + 1) * c.hidden), 1, std::size_t(c.hidden));
        row[5] = pgas::ep::to_bf16(pgas::ep::to_float(row[5]) + 1.0f);
        access.write(b.io.comb_recv + std::ptrdiff_t((2 * c.top_k + 1) * c.hidden), 1, row);
    }
    const std::string bad = ep_test::check::diagnose(access, b, in, want);
    INFO(bad);
    CHECK(bad.find("first stage that differs: returned rows") != std::string::npos);
    CHECK(bad.find(first) != std::string::npos);
}

TEST_CASE("combine diagnosis names the stage that differs") {
    diagnosis<low_latency_buffer>();
    diagnosis<throughput_buffer>();
}
