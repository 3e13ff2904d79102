// Inputs for the expert-parallel tests and benchmark (routings that stress the layouts) and the comparison with the reference.
//
// Buffers are read and written through an `access` object with
//   template <class T> std::vector<T> read(pgas::symmetric_ptr<T>, int pe, std::size_t count);
//   template <class T> void write(pgas::symmetric_ptr<T>, int pe, const std::vector<T>&);
// (host_access for the host transport, gpu_access for GPU worlds: both below).
#pragma once

#include "reference.hpp"
#include "toy_expert.hpp"

#include <pgas/pgas.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>

namespace ep_test::check {

enum class routing {
    uneven,        // skewed towards low expert indices, distinct experts per token
    even_only,     // only even experts: every odd expert receives nothing
    all_to_one,    // every token's first choice is the last expert
    same_pe,       // a token's choices are consecutive experts: several on one PE
    uniform,       // distinct experts drawn uniformly (the benchmark's routing)
};
inline const char* name(routing r) {
    switch (r) {
        case routing::uneven: return "uneven";
        case routing::even_only: return "even_only";
        case routing::all_to_one: return "all_to_one";
        case routing::same_pe: return "same_pe";
        case routing::uniform: return "uniform";
    }
    return "?";
}

// Tokens of PE pe: uneven across PEs (max, max - 2, max - 4, max, ...), PE 1 of 3 or more sends none.
inline int tokens_of(const config& c, int pe, int n_pes) {
    if (n_pes >= 3 && pe == 1) return 0;
    return std::max(0, c.max_tokens - 2 * (pe % 3));
}

inline std::vector<reference::pe_input> make_inputs(const config& c, int n_pes, routing r, unsigned seed) {
    std::vector<reference::pe_input> in(static_cast<std::size_t>(n_pes));
    for (int pe = 0; pe < n_pes; ++pe) {
        std::mt19937 rng(seed * 1000003u + unsigned(pe));
        std::uniform_real_distribution<float> value(-2.0f, 2.0f), weight(0.05f, 1.0f), unit(0.0f, 1.0f);
        auto& p = in[std::size_t(pe)];
        p.tokens = tokens_of(c, pe, n_pes);
        p.x.resize(std::size_t(c.max_tokens) * c.hidden);
        for (auto& v : p.x) v = to_bf16(value(rng));
        p.idx.assign(std::size_t(c.max_tokens) * c.top_k, 0);
        p.w.assign(std::size_t(c.max_tokens) * c.top_k, 0.0f);
        for (int t = 0; t < c.max_tokens; ++t) {
            int* idx = p.idx.data() + std::size_t(t) * c.top_k;
            const int start = int(unit(rng) * float(c.experts)) % c.experts;
            for (int k = 0; k < c.top_k; ++k) {
                p.w[std::size_t(t) * c.top_k + k] = weight(rng);
                int e = 0;
                for (bool fresh = false; !fresh;) {
                    switch (r) {
                        case routing::uneven: e = int(float(c.experts) * unit(rng) * unit(rng)) % c.experts; break;
                        case routing::even_only: e = (2 * int(unit(rng) * float(c.experts / 2))) % c.experts; break;
                        case routing::all_to_one:
                            e = k == 0 ? c.experts - 1 : int(unit(rng) * float(c.experts - 1)) % (c.experts - 1);
                            break;
                        case routing::same_pe: e = (start + k) % c.experts; break;
                        case routing::uniform: e = int(unit(rng) * float(c.experts)) % c.experts; break;
                    }
                    fresh = std::find(idx, idx + k, e) == idx + k;
                    if (r == routing::even_only && c.top_k > c.experts / 2) fresh = true;  // too few even experts
                }
                idx[k] = e;
            }
        }
    }
    return in;
}

template <class Access>
void upload(Access& access, const io_layout& io, const std::vector<reference::pe_input>& in) {
    for (int pe = 0; pe < int(in.size()); ++pe) {
        access.write(io.x, pe, in[std::size_t(pe)].x);
        access.write(io.topk_idx, pe, in[std::size_t(pe)].idx);
        access.write(io.topk_w, pe, in[std::size_t(pe)].w);
    }
}

// As upload, for a caller that casts its own tokens to fp8 (batch::cast = false): x8 and x_scale get each token's
// cast (one scale per 128 values, as the reference's), and x is filled with NaN, so that a dispatch that still read
// it would fail the checks.
template <class Access>
void upload_cast(Access& access, const io_layout& io, const std::vector<reference::pe_input>& in) {
    for (int pe = 0; pe < int(in.size()); ++pe) {
        const auto& x = in[std::size_t(pe)].x;
        std::vector<fp8> q(x.size());
        std::vector<float> scale(x.size() / fp8_group);
        for (std::size_t g = 0; g < scale.size(); ++g) {
            float amax = 0.0f;
            for (int i = 0; i < fp8_group; ++i) amax = std::max(amax, std::fabs(to_float(x[g * fp8_group + i])));
            scale[g] = fp8_scale(amax);
            for (int i = 0; i < fp8_group; ++i) q[g * fp8_group + i] = quantize(to_float(x[g * fp8_group + i]), scale[g]);
        }
        access.write(io.x8, pe, q);
        access.write(io.x_scale, pe, scale);
        access.write(io.x, pe, std::vector<bf16>(x.size(), to_bf16(std::nanf(""))));
        access.write(io.topk_idx, pe, in[std::size_t(pe)].idx);
        access.write(io.topk_w, pe, in[std::size_t(pe)].w);
    }
}

namespace detail {
// The values of received row `row` as the expert reads them.
template <class Access>
std::vector<float> row_values(Access& access, const config& c, pgas::symmetric_ptr<bf16> x,
                              pgas::symmetric_ptr<fp8> x8, pgas::symmetric_ptr<float> scale, int pe,
                              std::size_t row) {
    const std::size_t h = std::size_t(c.hidden);
    std::vector<float> out(h);
    if (c.fp8) {
        auto q = access.read(x8 + std::ptrdiff_t(row * h), pe, h);
        auto s = access.read(scale + std::ptrdiff_t(row * h / fp8_group), pe, h / fp8_group);
        for (std::size_t i = 0; i < h; ++i) out[i] = dequantize(q[i], s[i / fp8_group]);
    } else {
        auto v = access.read(x + std::ptrdiff_t(row * h), pe, h);
        for (std::size_t i = 0; i < h; ++i) out[i] = to_float(v[i]);
    }
    return out;
}

// Same values? bf16 moves exactly; fp8 within one e4m3 step of the reference's own cast.
inline bool same_values(const std::vector<float>& got, const std::vector<float>& want, bool fp8) {
    for (std::size_t i = 0; i < want.size(); ++i) {
        const float tol = fp8 ? 0.07f * std::fabs(want[i]) + 1e-6f : 0.0f;
        if (!(std::fabs(got[i] - want[i]) <= tol)) return false;
    }
    return true;
}

inline std::string where(int pe, int le, const reference::row& r) {
    std::ostringstream s;
    s << "PE " << pe << " local expert " << le << " row from PE " << r.source << " token " << r.token << " choice "
      << r.choice;
    return s.str();
}
}  // namespace detail

// Low-latency dispatch: every (local expert, source) holds exactly the
// reference's rows (in any slot order). Returns "" or what differs first.
template <class Access>
std::string dispatch(Access& access, const low_latency_layout& b, const reference::result& ref) {
    const config& c = b.cfg;
    const int n = b.n_pes, nl = c.experts / n;
    for (int pe = 0; pe < n; ++pe) {
        auto count = access.read(b.recv_count, pe, std::size_t(nl * n));
        auto src = access.read(b.recv_src, pe, std::size_t(nl * n) * c.max_tokens);
        for (int le = 0; le < nl; ++le) {
            const auto& want = ref.received[std::size_t(pe)][std::size_t(le)];
            for (int s = 0; s < n; ++s) {
                std::vector<reference::row> expected;
                for (const auto& r : want)
                    if (r.source == s) expected.push_back(r);
                const int got = count[std::size_t(le * n + s)];
                if (got != int(expected.size()))
                    return "PE " + std::to_string(pe) + " local expert " + std::to_string(le) + " from PE " +
                           std::to_string(s) + ": " + std::to_string(got) + " rows, expected " +
                           std::to_string(expected.size());
                std::vector<std::tuple<int, int, std::size_t>> slots;  // (token, choice, slot)
                for (int j = 0; j < got; ++j) {
                    const std::size_t cell = std::size_t(le * n + s) * c.max_tokens + std::size_t(j);
                    const std::uint64_t tc = src[cell];
                    slots.emplace_back(int(tc / c.top_k), int(tc % c.top_k), cell);
                }
                std::sort(slots.begin(), slots.end());
                for (int j = 0; j < got; ++j) {
                    const auto& r = expected[std::size_t(j)];
                    const auto [t, k, cell] = slots[std::size_t(j)];
                    if (t != r.token || k != r.choice) return detail::where(pe, le, r) + ": not received";
                    auto v = detail::row_values(access, c, b.recv_x, b.recv_x8, b.recv_scale, pe, cell);
                    if (!detail::same_values(v, r.values, c.fp8)) return detail::where(pe, le, r) + ": wrong values";
                }
            }
        }
    }
    return "";
}

namespace detail {
// What throughput dispatch must deliver to one PE: per (source, token) that chose one of its experts, the
// token's values and, per choice, its local expert (-1 elsewhere) and weight (0 elsewhere); keys in row order.
struct received_token {
    std::vector<int> local;
    std::vector<float> weight;
    const std::vector<float>* values = nullptr;
};
inline std::map<std::pair<int, int>, received_token> tokens_received(const config& c, const reference::result& ref,
                                                                     int pe) {
    std::map<std::pair<int, int>, received_token> out;
    for (int le = 0; le < int(ref.received[std::size_t(pe)].size()); ++le)
        for (const auto& r : ref.received[std::size_t(pe)][std::size_t(le)]) {
            auto& tok = out[{r.source, r.token}];
            if (tok.local.empty()) tok.local.assign(std::size_t(c.top_k), -1), tok.weight.assign(std::size_t(c.top_k), 0.0f);
            tok.local[std::size_t(r.choice)] = le;
            tok.weight[std::size_t(r.choice)] = r.weight;
            tok.values = &r.values;
        }
    return out;
}
}  // namespace detail

// Throughput dispatch: each PE holds, source by source in PE order and token by token, every token that chose one
// of its experts, once, with its choices as local indices and weights; and its per-expert row counts.
template <class Access>
std::string dispatch(Access& access, const throughput_layout& b, const reference::result& ref) {
    const config& c = b.cfg;
    const int n = b.n_pes, nl = c.experts / n;
    const std::size_t k = std::size_t(c.top_k);
    for (int pe = 0; pe < n; ++pe) {
        const std::string on = "PE " + std::to_string(pe);
        const auto want = detail::tokens_received(c, ref, pe);
        auto begin = access.read(b.source_begin, pe, std::size_t(n + 1));
        const int rows = begin[std::size_t(n)];
        if (rows != int(want.size()))
            return on + ": " + std::to_string(rows) + " rows, expected " + std::to_string(want.size());
        for (int s = 0; s < n; ++s) {
            const auto from = std::count_if(want.begin(), want.end(), [&](const auto& kv) { return kv.first.first == s; });
            if (begin[std::size_t(s + 1)] - begin[std::size_t(s)] != int(from))
                return on + ": " + std::to_string(begin[std::size_t(s + 1)] - begin[std::size_t(s)]) + " rows from PE " +
                       std::to_string(s) + ", expected " + std::to_string(from);
        }
        if (rows == 0) continue;
        auto src = access.read(b.recv_src, pe, std::size_t(rows));
        auto idx = access.read(b.recv_topk_idx, pe, std::size_t(rows) * k);
        auto w = access.read(b.recv_topk_w, pe, std::size_t(rows) * k);
        std::vector<int> per_expert(std::size_t(nl), 0);
        std::size_t row = 0;
        for (const auto& [key, tok] : want) {
            const std::string at = on + " row " + std::to_string(row) + " (PE " + std::to_string(key.first) +
                                   " token " + std::to_string(key.second) + ")";
            if (src[row] != (std::uint64_t(key.first) << 32 | std::uint64_t(key.second))) return at + ": wrong recv_src";
            for (std::size_t ch = 0; ch < k; ++ch) {
                if (idx[row * k + ch] != tok.local[ch] || w[row * k + ch] != tok.weight[ch])
                    return at + " choice " + std::to_string(ch) + ": local expert " + std::to_string(idx[row * k + ch]) +
                           " weight " + std::to_string(w[row * k + ch]) + ", expected " + std::to_string(tok.local[ch]) +
                           " and " + std::to_string(tok.weight[ch]);
                if (tok.local[ch] >= 0) ++per_expert[std::size_t(tok.local[ch])];
            }
            auto v = detail::row_values(access, c, b.recv_x, b.recv_x8, b.recv_scale, pe, row);
            if (!detail::same_values(v, *tok.values, c.fp8)) return at + ": wrong values";
            ++row;
        }
        if (access.read(b.expert_count, pe, std::size_t(nl)) != per_expert) return on + ": wrong expert_count";
    }
    return "";
}

// Combine: each PE's out matches the reference within bf16 rounding (the
// reference sums in the same order; the GPU may fuse multiply-adds).
template <class Access>
std::string combine(Access& access, const config& c, const io_layout& io, const reference::result& ref,
                    const std::vector<reference::pe_input>& in) {
    for (int pe = 0; pe < int(in.size()); ++pe) {
        const std::size_t count = std::size_t(in[std::size_t(pe)].tokens) * c.hidden;
        if (count == 0) continue;
        auto out = access.read(io.out, pe, count);
        const auto& want = ref.combined[std::size_t(pe)];
        for (std::size_t i = 0; i < count; ++i) {
            const float got = to_float(out[i]);
            if (!(std::fabs(got - want[i]) <= 0.01f * std::fabs(want[i]) + 1e-3f))
                return "PE " + std::to_string(pe) + " token " + std::to_string(i / c.hidden) + " element " +
                       std::to_string(i % c.hidden) + ": " + std::to_string(got) + ", expected " +
                       std::to_string(want[i]);
        }
    }
    return "";
}

// --- stage-by-stage diagnosis of a failed combine -----------------------------
//
// Walks the path of a round trip after combine and reports, per stage, how
// many rows (or values) differ from what the host computes from the same
// inputs, and the first one, with values and raw bf16 bits:
//   topk      topk_idx / topk_w as the PEs hold them (what combine reads)
//   expert_y  every received row's toy expert output (on the expert's PE)
//   returned  every [token][choice] expert output as combine reads it: low
//             latency: comb_recv at home; throughput: each PE's partial
//             sum at home (comb_recv, or the home's own expert_y row)
//   out       against the reduction of those rows and the home's topk_w
//             (isolates the reduction) and against the reference
// Only reads; the first stage that differs is where it goes wrong.
namespace detail {
inline std::string show(bf16 v) {
    unsigned short u;
    std::memcpy(&u, &v, 2);
    char s[48];
    std::snprintf(s, sizeof s, "%g (0x%04x)", double(to_float(v)), unsigned(u));
    return s;
}
inline std::string show(float v) {
    unsigned u;
    std::memcpy(&u, &v, 4);
    char s[48];
    std::snprintf(s, sizeof s, "%.7g (0x%08x)", double(v), u);
    return s;
}

// A stage's count of what was checked and what differs, and the first difference.
struct stage {
    explicit stage(const char* what) : name(what) {}
    const char* name;
    long long checked = 0, wrong = 0;
    std::string first;
    void miss(const std::string& what) {
        if (wrong++ == 0) first = what;
    }
    std::string line() const {
        std::string s = std::string(name) + ": " + std::to_string(wrong) + " of " + std::to_string(checked) + " differ";
        return wrong ? s + "; first: " + first : s;
    }
};

// Token t's values as an expert reads them (after the fp8 round trip with fp8).
inline std::vector<float> expert_input(const config& c, const reference::pe_input& p, int t) {
    const bf16* x = p.x.data() + std::size_t(t) * c.hidden;
    if (c.fp8) return reference::fp8_round_trip(x, c.hidden);
    std::vector<float> v(std::size_t(c.hidden));
    for (int i = 0; i < c.hidden; ++i) v[std::size_t(i)] = to_float(x[i]);
    return v;
}

// Compares one row the GPU holds with expert e's output of `values`; the
// first differing element (bf16 exactly; fp8 within the dispatch check's step).
inline void check_expert_row(stage& st, const config& c, const bf16* got, const std::vector<float>& values, int e,
                             const std::string& where) {
    ++st.checked;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const bf16 want = to_bf16(toy_expert(e, values[i]));
        const float tol = c.fp8 ? 0.07f * std::fabs(toy_expert(e, values[i])) + 1e-6f : 0.0f;
        if (!(std::fabs(to_float(got[i]) - to_float(want)) <= tol)) {
            st.miss(where + " element " + std::to_string(i) + ": got " + show(got[i]) + ", expected " + show(want) +
                    " (expert " + std::to_string(e) + ", input " + show(values[i]) + ")");
            return;
        }
    }
}

// A received row: expert e's output for token tc / top_k of PE `source`.
inline void check_received(stage& st, const config& c, const std::vector<reference::pe_input>& in, int pe, int e,
                           int source, std::uint64_t tc, const bf16* got, const std::string& where) {
    const std::uint64_t k = std::uint64_t(c.top_k);
    if (source < 0 || source >= int(in.size()) || tc >= std::uint64_t(in[std::size_t(source)].tokens) * k) {
        ++st.checked;
        st.miss(where + ": recv_src names PE " + std::to_string(source) + " token*top_k+choice " + std::to_string(tc));
        return;
    }
    (void)pe;
    check_expert_row(st, c, got, expert_input(c, in[std::size_t(source)], int(tc / k)), e,
                     where + " (from PE " + std::to_string(source) + " token " + std::to_string(tc / k) + " choice " +
                         std::to_string(tc % k) + ")");
}

// expert_y on every PE, low-latency layout.
template <class Access>
void check_expert_y(Access& access, const low_latency_layout& b, const std::vector<reference::pe_input>& in, stage& st) {
    const config& c = b.cfg;
    const int n = b.n_pes, nl = c.experts / n;
    const std::size_t h = std::size_t(c.hidden), slots = std::size_t(c.max_tokens);
    for (int pe = 0; pe < n; ++pe) {
        auto count = access.read(b.recv_count, pe, std::size_t(nl * n));
        auto src = access.read(b.recv_src, pe, std::size_t(nl * n) * slots);
        for (int i = 0; i < nl * n; ++i)
            for (int j = 0; j < count[std::size_t(i)] && j < int(slots); ++j) {
                const std::size_t cell = std::size_t(i) * slots + std::size_t(j);
                auto y = access.read(b.expert_y + std::ptrdiff_t(cell * h), pe, h);
                check_received(st, c, in, pe, pe * nl + i / n, i % n, src[cell], y.data(),
                               "PE " + std::to_string(pe) + " local expert " + std::to_string(i / n) + " slot " +
                                   std::to_string(j));
            }
    }
}

// Token t of `p` through the toy experts of its choices on PE d (nl experts per PE), weighted and summed in
// choice order: the partial sum throughput mode's experts write, before its one rounding to bf16.
inline std::vector<float> partial_sum(const config& c, const reference::pe_input& p, int t, int d, int nl) {
    const auto values = expert_input(c, p, t);
    std::vector<float> sum(values.size(), 0.0f);
    for (int ch = 0; ch < c.top_k; ++ch) {
        const int e = p.idx[std::size_t(t * c.top_k + ch)];
        if (e / nl != d) continue;
        for (std::size_t i = 0; i < values.size(); ++i)
            sum[i] += p.w[std::size_t(t * c.top_k + ch)] * to_float(to_bf16(toy_expert(e, values[i])));
    }
    return sum;
}

// Compares a row with what it should hold (before rounding to bf16); the first differing element.
inline void check_row(stage& st, const config& c, const bf16* got, const std::vector<float>& want, const std::string& where) {
    ++st.checked;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const float tol = c.fp8 ? 0.07f * std::fabs(want[i]) + 1e-6f : 0.01f * std::fabs(want[i]) + 1e-3f;
        if (!(std::fabs(to_float(got[i]) - want[i]) <= tol)) {
            st.miss(where + " element " + std::to_string(i) + ": got " + show(got[i]) + ", expected " + show(want[i]));
            return;
        }
    }
}

// expert_y on every PE, throughput layout: each received token's partial sum over its choices there.
template <class Access>
void check_expert_y(Access& access, const throughput_layout& b, const std::vector<reference::pe_input>& in, stage& st) {
    const config& c = b.cfg;
    const int n = b.n_pes, nl = c.experts / n;
    const std::size_t h = std::size_t(c.hidden);
    for (int pe = 0; pe < n; ++pe) {
        const int rows = std::min(access.read(b.source_begin, pe, std::size_t(n + 1))[std::size_t(n)],
                                  throughput_recv_rows(c, n));
        if (rows <= 0) continue;
        auto src = access.read(b.recv_src, pe, std::size_t(rows));
        auto y = access.read(b.expert_y, pe, std::size_t(rows) * h);
        for (int r = 0; r < rows; ++r) {
            const int s = int(src[std::size_t(r)] >> 32), t = int(src[std::size_t(r)] & 0xffffffffu);
            const std::string where = "PE " + std::to_string(pe) + " row " + std::to_string(r);
            if (s < 0 || s >= n || t >= in[std::size_t(s)].tokens) {
                ++st.checked;
                st.miss(where + ": recv_src names PE " + std::to_string(s) + " token " + std::to_string(t));
                continue;
            }
            check_row(st, c, y.data() + std::size_t(r) * h, partial_sum(c, in[std::size_t(s)], t, pe, nl),
                      where + " (PE " + std::to_string(s) + " token " + std::to_string(t) + ")");
        }
    }
}

// What combine reads for one home token: the rows, how it weights each, what each should hold, and their names.
struct returned {
    std::vector<std::vector<bf16>> rows;
    std::vector<float> weight;
    std::vector<std::vector<float>> want;
    std::vector<std::string> name;
};
// Low latency: the token's top-k expert outputs put home (comb_recv), weighted by the gate.
template <class Access>
std::vector<returned> returned_rows(Access& access, const low_latency_layout& b, const reference::pe_input& p, int pe) {
    const config& c = b.cfg;
    const std::size_t h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    const auto all = access.read(b.io.comb_recv, pe, std::size_t(p.tokens) * k * h);
    const auto w = access.read(b.io.topk_w, pe, std::size_t(p.tokens) * k);
    std::vector<returned> out(std::size_t(p.tokens));
    for (int t = 0; t < p.tokens; ++t) {
        const auto values = expert_input(c, p, t);
        for (std::size_t ch = 0; ch < k; ++ch) {
            const std::size_t at = std::size_t(t) * k + ch;
            const int e = p.idx[at];
            std::vector<float> want(values.size());
            for (std::size_t i = 0; i < values.size(); ++i) want[i] = to_float(to_bf16(toy_expert(e, values[i])));
            out[std::size_t(t)].rows.emplace_back(all.begin() + std::ptrdiff_t(at * h), all.begin() + std::ptrdiff_t((at + 1) * h));
            out[std::size_t(t)].weight.push_back(w[at]);
            out[std::size_t(t)].want.push_back(std::move(want));
            out[std::size_t(t)].name.push_back("choice " + std::to_string(ch));
        }
    }
    return out;
}
// Throughput: the token's partial sums as combine reads them at home: another PE's in comb_recv[token][PE] (pushed
// there), the home's own in its expert_y at the row send_row names; added unweighted.
template <class Access>
std::vector<returned> returned_rows(Access& access, const throughput_layout& b, const reference::pe_input& p, int pe) {
    const config& c = b.cfg;
    const int n = b.n_pes, nl = c.experts / n;
    const std::size_t h = std::size_t(c.hidden);
    const auto row = access.read(b.send_row, pe, std::size_t(p.tokens) * std::size_t(n));
    std::vector<returned> out(std::size_t(p.tokens));
    for (int t = 0; t < p.tokens; ++t)
        for (int d = 0; d < n; ++d) {
            const int r = row[std::size_t(t) * std::size_t(n) + std::size_t(d)];
            if (r < 0 || r >= throughput_recv_rows(c, n)) continue;
            const auto at = d == pe ? b.expert_y + std::ptrdiff_t(std::size_t(r) * h)
                                    : b.io.comb_recv + std::ptrdiff_t((std::size_t(t) * std::size_t(n) + std::size_t(d)) * h);
            out[std::size_t(t)].rows.push_back(access.read(at, pe, h));
            out[std::size_t(t)].weight.push_back(1.0f);
            out[std::size_t(t)].want.push_back(partial_sum(c, p, t, d, nl));
            out[std::size_t(t)].name.push_back("from PE " + std::to_string(d));
        }
    return out;
}
}  // namespace detail

// The report (one line per stage) of a round trip whose combine failed, for
// these inputs and their reference. Buffers: low_latency_layout or throughput_layout.
template <class Access, class Buffers>
std::string diagnose(Access& access, const Buffers& b, const std::vector<reference::pe_input>& in,
                     const reference::result& ref) {
    const config& c = b.cfg;
    const io_layout& io = b.io;
    const std::size_t h = std::size_t(c.hidden), k = std::size_t(c.top_k);
    detail::stage topk{"topk_idx/topk_w"}, ey{"expert_y rows"}, comb{"returned rows"},
        red{"out vs the weighted sum of the returned rows"}, out_ref{"out vs the reference"};
    std::vector<std::vector<int>> gidx(in.size());
    std::vector<std::vector<float>> gw(in.size());
    for (int pe = 0; pe < int(in.size()); ++pe) {
        const auto& p = in[std::size_t(pe)];
        const std::size_t m = std::size_t(p.tokens) * k;
        if (m == 0) continue;
        gidx[std::size_t(pe)] = access.read(io.topk_idx, pe, m);
        gw[std::size_t(pe)] = access.read(io.topk_w, pe, m);
        for (std::size_t i = 0; i < m; ++i) {
            ++topk.checked;
            const int gi = gidx[std::size_t(pe)][i];
            const float gwv = gw[std::size_t(pe)][i];
            if (gi != p.idx[i] || std::memcmp(&gwv, &p.w[i], sizeof(float)) != 0)
                topk.miss("PE " + std::to_string(pe) + " token " + std::to_string(i / k) + " choice " +
                          std::to_string(i % k) + ": idx " + std::to_string(gi) + " w " + detail::show(gwv) +
                          ", expected idx " + std::to_string(p.idx[i]) + " w " + detail::show(p.w[i]));
        }
    }
    detail::check_expert_y(access, b, in, ey);
    for (int pe = 0; pe < int(in.size()); ++pe) {
        const auto& p = in[std::size_t(pe)];
        if (p.tokens == 0) continue;
        const std::string on = "PE " + std::to_string(pe) + " token ";
        const auto back = detail::returned_rows(access, b, p, pe);
        auto out = access.read(io.out, pe, std::size_t(p.tokens) * h);
        const auto& want = ref.combined[std::size_t(pe)];
        for (int t = 0; t < p.tokens; ++t) {
            const auto& r = back[std::size_t(t)];
            for (std::size_t u = 0; u < r.rows.size(); ++u)
                detail::check_row(comb, c, r.rows[u].data(), r.want[u], on + std::to_string(t) + " " + r.name[u]);
            for (std::size_t i = 0; i < h; ++i) {
                float acc = 0.0f;
                std::string terms;
                for (std::size_t u = 0; u < r.rows.size(); ++u) {
                    acc += r.weight[u] * to_float(r.rows[u][i]);
                    terms += " + " + std::to_string(r.weight[u]) + " * " + detail::show(r.rows[u][i]);
                }
                const float got = to_float(out[std::size_t(t) * h + i]), w = want[std::size_t(t) * h + i];
                const std::string at = on + std::to_string(t) + " element " + std::to_string(i) + ": got " +
                                       detail::show(out[std::size_t(t) * h + i]) + ", expected ";
                ++red.checked;
                if (!(std::fabs(got - acc) <= 0.01f * std::fabs(acc) + 1e-3f))
                    red.miss(at + detail::show(to_bf16(acc)) + " =" + terms.substr(2));
                ++out_ref.checked;
                if (!(std::fabs(got - w) <= 0.01f * std::fabs(w) + 1e-3f)) out_ref.miss(at + detail::show(w));
            }
        }
    }
    std::string s;
    for (const auto* st : {&topk, &ey, &comb, &red, &out_ref}) s += "  " + st->line() + "\n";
    for (const auto* st : {&topk, &ey, &comb, &red, &out_ref})
        if (st->wrong) return "combine diagnosis (first stage that differs: " + std::string(st->name) + ")\n" + s;
    return "combine diagnosis (no stage differs now: a race, or out read before it was written?)\n" + s;
}

inline reference::result expected(const config& c, int n_pes, const std::vector<reference::pe_input>& in) {
    return reference::run(n_pes, c.experts, c.top_k, c.hidden, c.fp8, in, toy_expert);
}

inline std::vector<batch> batches(const config& c, const std::vector<reference::pe_input>& in) {
    std::vector<batch> out;
    for (const auto& p : in) out.push_back({p.tokens, c.hidden});
    return out;
}

// The host transport's access: PEs' heaps are host memory.
struct host_access {
    pgas::world& w;
    template <class T>
    std::vector<T> read(pgas::symmetric_ptr<T> p, int pe, std::size_t count) {
        const T* at = w.local(p, pe);
        return std::vector<T>(at, at + count);
    }
    template <class T>
    void write(pgas::symmetric_ptr<T> p, int pe, const std::vector<T>& v) {
        std::copy(v.begin(), v.end(), w.local(p, pe));
    }
};

// A GPU world's access (cudaMemcpy). Callers synchronize the PEs' streams before a read. A write waits for the
// device: cudaMemcpy from pageable memory may return before its DMA has landed, and the PEs' kernels run on
// non-blocking streams, which do not wait for the legacy stream that copy went on.
struct gpu_access {
    const pgas::world& w;
    static void cuda_check(cudaError_t status, int pe, const char* call) {
        if (status != cudaSuccess) throw pgas::error(pgas::errc::cuda, pe, call, cudaGetErrorString(status));
    }
    template <class T>
    std::vector<T> read(pgas::symmetric_ptr<T> p, int local, std::size_t count) {
        std::vector<T> out(count);
        cuda_check(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost),
                   w.local_pe(local), "gpu_access::read");
        return out;
    }
    template <class T>
    void write(pgas::symmetric_ptr<T> p, int local, const std::vector<T>& v) {
        cuda_check(cudaMemcpy(w.device_address(p, local), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                   w.local_pe(local), "gpu_access::write");
        cuda_check(cudaSetDevice(w.device_of(local)), w.local_pe(local), "gpu_access::write");
        cuda_check(cudaDeviceSynchronize(), w.local_pe(local), "gpu_access::write");
    }
};

}  // namespace ep_test::check
