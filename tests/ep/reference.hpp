// Plain C++ reference of expert-parallel dispatch and combine (no pgas): what every PE must receive and what combine returns.
#pragma once

#include <pgas/ep/fp8.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace ep_test {
using namespace pgas::ep;
}  // namespace ep_test

namespace ep_test::reference {

// One PE's tokens: x [tokens][hidden], idx and w [tokens][top_k].
struct pe_input {
    int tokens = 0;
    std::vector<bf16> x;
    std::vector<int> idx;
    std::vector<float> w;
};

// A row an expert receives: from which PE, token and choice, and its values
// as the expert reads them (after the fp8 round trip when fp8 is on).
struct row {
    int source = 0, token = 0, choice = 0;
    float weight = 0;
    std::vector<float> values;
};

struct result {
    std::vector<std::vector<std::vector<row>>> received;  // [pe][local expert][rows by source, token, choice]
    std::vector<std::vector<float>> combined;             // [pe][token * hidden], before the final bf16 rounding
};

// What an fp8 dispatch delivers for one token: each group of 128 scaled by
// its largest magnitude / 448, cast to e4m3 and back.
inline std::vector<float> fp8_round_trip(const bf16* x, int hidden) {
    std::vector<float> out(static_cast<std::size_t>(hidden));
    for (int g = 0; g < hidden / fp8_group; ++g) {
        float amax = 0.0f;
        for (int i = 0; i < fp8_group; ++i) amax = std::fmax(amax, std::fabs(to_float(x[g * fp8_group + i])));
        const float s = fp8_scale(amax);
        for (int i = 0; i < fp8_group; ++i)
            out[std::size_t(g * fp8_group + i)] = dequantize(quantize(to_float(x[g * fp8_group + i]), s), s);
    }
    return out;
}

// experts over n_pes PEs, expert e on PE e / (experts / n_pes); expert(e, v)
// is what expert e computes per value; its output is rounded to bf16 and the
// combine sums w * output over a token's choices in choice order, in float.
inline result run(int n_pes, int experts, int top_k, int hidden, bool fp8, const std::vector<pe_input>& in,
                  const std::function<float(int, float)>& expert) {
    const int nl = experts / n_pes;
    result r;
    r.received.assign(std::size_t(n_pes), std::vector<std::vector<row>>(std::size_t(nl)));
    r.combined.resize(std::size_t(n_pes));
    for (int s = 0; s < n_pes; ++s) {
        const pe_input& p = in[std::size_t(s)];
        r.combined[std::size_t(s)].assign(std::size_t(p.tokens) * hidden, 0.0f);
    }
    for (int s = 0; s < n_pes; ++s) {
        const pe_input& p = in[std::size_t(s)];
        for (int t = 0; t < p.tokens; ++t) {
            const bf16* x = p.x.data() + std::size_t(t) * hidden;
            std::vector<float> values(static_cast<std::size_t>(hidden));
            if (fp8)
                values = fp8_round_trip(x, hidden);
            else
                for (int i = 0; i < hidden; ++i) values[std::size_t(i)] = to_float(x[i]);
            for (int c = 0; c < top_k; ++c) {
                const int e = p.idx[std::size_t(t) * top_k + c];
                const float w = p.w[std::size_t(t) * top_k + c];
                r.received[std::size_t(e / nl)][std::size_t(e % nl)].push_back({s, t, c, w, values});
                float* out = r.combined[std::size_t(s)].data() + std::size_t(t) * hidden;
                for (int i = 0; i < hidden; ++i) out[i] += w * to_float(to_bf16(expert(e, values[std::size_t(i)])));
            }
        }
    }
    return r;
}

}  // namespace ep_test::reference
