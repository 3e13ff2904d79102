// pgas::ep dispatch and combine per mode and PE count, beside pgas's own put of the bytes each phase sends across the links.
//
// GPU time from CUDA events on each PE's stream, reported through Google
// Benchmark's manual time (dispatch + combine). Each round, every PE runs
//   barrier | dispatch | experts | barrier | combine
// and the events after each barrier and each phase give that PE's phase
// times; a phase's time is the slowest PE's (the barrier kernels release all
// PEs within about a microsecond, so the PEs start each phase together).
//
// The limits, timed the same way in the same run:
//   link  every PE puts (pgas::put_nbi<block> over every SM of its share of its GPU, then quiet) to each PE on
//         another GPU exactly the bytes the phase sends it, all PEs at once (when the PEs are on more than one GPU);
//   copy  every PE copies (cudaMemcpyAsync) on its own GPU all the rows it sends, all PEs at once (only when PEs
//         share a GPU: there the "link" is the GPU's memory).
// Bytes come from the routing: low-latency mode sends one row per (token, choice) to the PE owning the expert,
// throughput mode one row per (token, PE holding one of its experts); combine brings the same rows back (bf16).
//
// Default shapes (DeepSeek-V3): hidden 7168, 256 experts, top-8; 128 tokens
// per PE in low-latency mode, 4096 in throughput mode; uniform routing.
// Payloads (the second argument, "fp8"): 0 bf16, 1 fp8 cast by dispatch, 2 (throughput mode) fp8 cast by the caller
// before the timed calls, as DeepEP's normal-mode dispatch takes its tokens.
// PEs go round-robin over min(visible GPUs, PEs) GPUs: one PE per GPU where
// there are enough. MOE_BENCH_GPUS=g uses g GPUs instead (1: all PEs share
// GPU 0). --small: a small shape (the smoke test).
// MOE_BENCH_BYTES_OUT=dir writes each phase's [[bytes from PE s to PE d]] as
// dir/<mode>_<payload>_<n>pes_<phase>.json, for bench/moe/peers/nccl_alltoall.py --bytes-matrix.
// Diagnosis knobs (defaults: the issue's shapes): MOE_BENCH_PER_SM caps the blocks per SM that the PEs sharing a
// GPU split between them (pgas::ep::resident_blocks, default 2); MOE_BENCH_TOKENS sends that many tokens per PE and
// call instead of max_tokens (0: only the notify and synchronisation cost of a phase).
// SMs: throughput mode runs on MOE_BENCH_TP_SMS SMs per PE (default 24, DeepEP's normal mode's: 24 blocks of 512
// threads; 0: every SM the PE's share of its GPU holds), low-latency mode on all of them (as DeepEP's low-latency
// kernels).
#include "check.hpp"
#include "toy_expert.cuh"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace {

bool small_shape = false;

void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::abort();
    }
}

// An integer environment knob, or `otherwise` when unset.
int knob(const char* name, int otherwise) {
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : otherwise;
}

// GPUs the PEs of an n-PE world go round-robin over: MOE_BENCH_GPUS, else every visible one; at most one per PE.
int gpus_for(int n) {
    int visible = 0;
    cuda_ok(cudaGetDeviceCount(&visible), "device count");
    return std::clamp(knob("MOE_BENCH_GPUS", visible), 1, n);
}

__global__ void barrier_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx) {
    pgas::barrier_all<pgas::block>(ctx);
}

// What one PE's link kernel puts: bytes[pe] to PE pe (0 for PEs on its own GPU), landing at to + at[pe] there,
// read from the start of its own `from`.
struct link_plan {
    static constexpr int max_pes = 8;  // the largest world below
    pgas::symmetric_ptr<std::byte> from, to;
    std::uint64_t bytes[max_pes] = {};
    std::uint64_t at[max_pes] = {};
};

// Each block puts its slice of every peer's bytes, one put per peer, peers in an order rotated by block so that
// every link carries data from the start; then quiet.
__global__ void link_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx,
                            const __grid_constant__ link_plan p) {
    const int n = ctx.n_pes();
    const std::byte* src = ctx.local(p.from);
    for (int i = 0; i < n; ++i) {
        const int pe = int((unsigned(ctx.my_pe()) + blockIdx.x + unsigned(i)) % unsigned(n));
        const std::uint64_t total = p.bytes[pe], slice = (total / gridDim.x + 15) / 16 * 16;  // 16-byte aligned
        const std::uint64_t begin = ::min(total, slice * blockIdx.x), end = ::min(total, begin + slice);
        if (end > begin)
            pgas::put_nbi<pgas::block>(ctx, p.to + std::ptrdiff_t(p.at[pe] + begin), src + begin, end - begin, pe);
    }
    pgas::quiet<pgas::block>(ctx);
}

// One world of n PEs on `gpus` GPUs with both modes' buffers; rebuilt when n changes.
struct setup {
    int n, gpus;
    pgas::world w;
    std::vector<cudaStream_t> streams;
    bool fp8;
    int all_blocks = 0;  // blocks of 256 threads on every SM of this PE's share of its GPU: the link kernels' grid
    std::unique_ptr<pgas::ep::low_latency_buffer> ll;  // after the world: destroyed before it
    std::unique_ptr<pgas::ep::throughput_buffer> tp;

    static pgas::world make_world(int n, int gpus) {
        std::vector<int> devices;
        for (int i = 0; i < n; ++i) devices.push_back(i % gpus);
        pgas::world_options o;
        // Buffers at the default shape, 8 PEs: throughput ~1.1 GB per PE, low latency ~1 GB.
        o.heap_bytes = small_shape ? std::uint64_t{256} << 20 : std::uint64_t{4} << 30;
        o.timeout_ms = 20000;
        return pgas::world::init_local(devices, o);
    }
    pgas::ep::config shape(bool low_latency, int blocks, int threads = 256) const {
        pgas::ep::config c = low_latency ? pgas::ep::low_latency_defaults() : pgas::ep::throughput_defaults();
        if (small_shape) {
            c.hidden = 1024;
            c.experts = 64;
            c.top_k = 4;
            c.max_tokens = low_latency ? 32 : 256;
        }
        c.fp8 = fp8;
        c.blocks = blocks;
        c.threads = threads;
        return c;
    }
    setup(int n_pes, bool use_fp8) : n(n_pes), gpus(gpus_for(n_pes)), w(make_world(n_pes, gpus)), fp8(use_fp8) {
        const int sharing = (n + gpus - 1) / gpus;
        const int per_sm = knob("MOE_BENCH_PER_SM", 2);
        const int blocks = pgas::ep::resident_blocks(w.device_of(0), sharing, 256, per_sm);
        all_blocks = pgas::ep::resident_blocks(w.device_of(0), sharing, 256, 2);
        const int tp_sms = knob("MOE_BENCH_TP_SMS", 24);
        ll = std::make_unique<pgas::ep::low_latency_buffer>(w, shape(true, blocks));
        // On tp_sms SMs: one block per SM of per_sm x 256 threads (the registers of per_sm blocks of 256). As
        // per_sm x tp_sms blocks of 256, an idle GPU would place them on as many SMs, not tp_sms.
        const int tp_threads = 256 * per_sm;
        const int tp_blocks = std::min(tp_sms, pgas::ep::resident_blocks(w.device_of(0), sharing, tp_threads, 1));
        tp = std::make_unique<pgas::ep::throughput_buffer>(
            w, tp_sms > 0 ? shape(false, tp_blocks, tp_threads) : shape(false, blocks));
        streams.resize(std::size_t(n));
        for (int i = 0; i < n; ++i) {
            cuda_ok(cudaSetDevice(w.device_of(i)), "set device");
            cuda_ok(cudaStreamCreateWithFlags(&streams[std::size_t(i)], cudaStreamNonBlocking), "stream");
        }
    }
    ~setup() {
        for (auto s : streams) cudaStreamDestroy(s);
    }
};

std::unique_ptr<setup>& current() {
    static std::unique_ptr<setup> s;
    return s;
}
setup& get(int n, bool fp8) {
    auto& s = current();
    if (!s || s->n != n || s->fp8 != fp8) {
        s.reset();
        s = std::make_unique<setup>(n, fp8);
    }
    return *s;
}

struct events {
    std::vector<cudaEvent_t> e;  // per PE: start, dispatched, experts done + barrier, combined
    explicit events(const setup& s) : e(std::size_t(4 * s.n)) {
        for (int i = 0; i < s.n; ++i) {
            cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
            for (int k = 0; k < 4; ++k) cuda_ok(cudaEventCreate(&e[std::size_t(4 * i + k)]), "event");
        }
    }
    ~events() {
        for (auto ev : e) cudaEventDestroy(ev);
    }
    cudaEvent_t at(int pe, int k) const { return e[std::size_t(4 * pe + k)]; }
    // Slowest PE's time between marks a and b, in ms.
    double span(int n, int a, int b) const {
        double worst = 0;
        for (int i = 0; i < n; ++i) {
            float ms = 0;
            cuda_ok(cudaEventElapsedTime(&ms, at(i, a), at(i, b)), "elapsed");
            worst = std::max(worst, double(ms));
        }
        return worst;
    }
};

// One round on every PE; `dispatch`/`combine` launch a phase of local PE i,
// `experts` what runs between them. Returns {dispatch ms, combine ms}.
template <class Dispatch, class Experts, class Combine>
std::pair<double, double> round(setup& s, const events& ev, Dispatch dispatch, Experts experts, Combine combine) {
    for (int i = 0; i < s.n; ++i) {
        cudaStream_t st = s.streams[std::size_t(i)];
        cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
        barrier_kernel<<<1, 32, 0, st>>>(s.w.context<pgas::nvlink>(i));
        cuda_ok(cudaEventRecord(ev.at(i, 0), st), "record");
        dispatch(i, st);
        cuda_ok(cudaEventRecord(ev.at(i, 1), st), "record");
    }
    for (int i = 0; i < s.n; ++i) {
        cudaStream_t st = s.streams[std::size_t(i)];
        cuda_ok(cudaSetDevice(s.w.device_of(i)), "set device");
        experts(i, st);
        barrier_kernel<<<1, 32, 0, st>>>(s.w.context<pgas::nvlink>(i));
        cuda_ok(cudaEventRecord(ev.at(i, 2), st), "record");
        combine(i, st);
        cuda_ok(cudaEventRecord(ev.at(i, 3), st), "record");
    }
    for (int i = 0; i < s.n; ++i) cuda_ok(cudaStreamSynchronize(s.streams[std::size_t(i)]), "round");
    return {ev.span(s.n, 0, 1), ev.span(s.n, 2, 3)};
}

// Mean {dispatch, combine} µs of `reps` rounds, after one untimed round (module load, first touch).
template <class Dispatch, class Combine>
std::pair<double, double> limit_us(setup& s, const events& ev, Dispatch dispatch, Combine combine) {
    constexpr int reps = 10;
    const auto nothing = [](int, cudaStream_t) {};
    round(s, ev, dispatch, nothing, combine);
    double d = 0, c = 0;
    for (int r = 0; r < reps; ++r) {
        const auto [dm, cm] = round(s, ev, dispatch, nothing, combine);
        d += dm, c += cm;
    }
    return {d * 1e3 / reps, c * 1e3 / reps};
}

using byte_matrix = std::vector<std::vector<std::uint64_t>>;  // [source PE][destination PE]

// What one phase moves, from the routing: every PE's bytes to every PE (its own included), and DeepEP's logical
// bytes summed over the PEs.
struct traffic {
    byte_matrix bytes;
    double logical = 0;
};

// Each PE's bytes in `m`: what it sends (a row's sum) or receives (a column's).
std::vector<std::uint64_t> sent_by(const byte_matrix& m) {
    std::vector<std::uint64_t> out(m.size(), 0);
    for (std::size_t from = 0; from < m.size(); ++from)
        for (std::uint64_t bytes : m[from]) out[from] += bytes;
    return out;
}
std::vector<std::uint64_t> received_by(const byte_matrix& m) {
    std::vector<std::uint64_t> out(m.size(), 0);
    for (const auto& row : m)
        for (std::size_t to = 0; to < row.size(); ++to) out[to] += row[to];
    return out;
}

// Bytes that cross a link (between PEs on different GPUs) in `m`.
std::uint64_t link_bytes(const setup& s, const byte_matrix& m) {
    std::uint64_t sum = 0;
    for (int from = 0; from < s.n; ++from)
        for (int to = 0; to < s.n; ++to)
            if (s.w.device_of(from) != s.w.device_of(to)) sum += m[std::size_t(from)][std::size_t(to)];
    return sum;
}

// {dispatch, combine} of `tokens` tokens per PE under routing `in`. Low-latency mode sends one row per (token,
// choice) and combine returns the same rows in bf16; throughput mode sends a token once to each PE holding one of
// its experts and combine returns one bf16 partial sum home from each (the choices' indices and weights, 8 bytes
// per choice, are left out, as DeepEP's convention leaves its own). DeepEP's logical bytes (as bench/moe/peers counts them, so that GB/s
// compare there): throughput mode counts a token once per destination GPU, the sender's own included;
// low-latency mode once per choice, with DeepEP's 16-byte message header on dispatch.
std::pair<traffic, traffic> phase_bytes(const setup& s, const pgas::ep::config& c, bool low_latency, int tokens,
                                        const std::vector<ep_test::reference::pe_input>& in) {
    const std::uint64_t h = std::uint64_t(c.hidden), bf16_row = 2 * h;
    const std::uint64_t dispatch_row = c.fp8 ? h + h / pgas::ep::fp8_group * 4 : bf16_row;
    constexpr std::uint64_t ll_header = 16;
    const int nl = pgas::ep::local_experts(c, s.n);
    traffic d{byte_matrix(std::size_t(s.n), std::vector<std::uint64_t>(std::size_t(s.n)))}, cb = d;
    double units = 0;  // tokens per destination GPU (throughput) or choices (low latency)
    for (int pe = 0; pe < s.n; ++pe)
        for (int t = 0; t < tokens; ++t) {
            std::set<int> gpus, owners;
            for (int k = 0; k < c.top_k; ++k) {
                const int owner = in[std::size_t(pe)].idx[std::size_t(t) * c.top_k + k] / nl;
                if (low_latency || owners.insert(owner).second) {
                    d.bytes[std::size_t(pe)][std::size_t(owner)] += dispatch_row;
                    cb.bytes[std::size_t(owner)][std::size_t(pe)] += bf16_row;
                }
                gpus.insert(s.w.device_of(owner));
            }
            units += low_latency ? double(c.top_k) : double(gpus.size());
        }
    d.logical = units * double(low_latency ? dispatch_row + ll_header : dispatch_row);
    cb.logical = units * double(bf16_row);
    return {d, cb};
}

// Rows of expert_y: the link kernels' landing zone (it holds every row a PE receives in either phase).
std::size_t expert_rows(const pgas::ep::low_latency_layout& b) {
    return std::size_t(pgas::ep::local_experts(b.cfg, b.n_pes)) * std::size_t(b.n_pes) * std::size_t(b.cfg.max_tokens);
}
std::size_t expert_rows(const pgas::ep::throughput_layout& b) {
    return std::size_t(pgas::ep::throughput_recv_rows(b.cfg, b.n_pes));
}
// Where the link kernels read, and its bf16 rows: at least what a PE sends one peer in either phase (low latency:
// a row per choice, in io.comb_recv; throughput: a row per token, in io.x).
std::pair<pgas::symmetric_ptr<pgas::ep::bf16>, std::size_t> link_source(const pgas::ep::low_latency_layout& b) {
    return {b.io.comb_recv, std::size_t(b.cfg.max_tokens) * std::size_t(b.cfg.top_k)};
}
std::pair<pgas::symmetric_ptr<pgas::ep::bf16>, std::size_t> link_source(const pgas::ep::throughput_layout& b) {
    return {b.io.x, std::size_t(b.cfg.max_tokens)};
}

// Every PE's link_plan for the link bytes of `m`: PE s's bytes land on PE d after those of the PEs before s, in
// expert_y; they are read from link_source.
template <class Layout>
std::vector<link_plan> link_plans(const setup& s, const Layout& b, const byte_matrix& m) {
    const std::uint64_t row = 2 * std::uint64_t(b.cfg.hidden);
    const auto [from_rows, source_rows] = link_source(b);
    const std::uint64_t room = expert_rows(b) * row, source = source_rows * row;
    if (s.n > link_plan::max_pes) {
        std::fprintf(stderr, "bench_moe: %d PEs, link_plan holds %d\n", s.n, link_plan::max_pes);
        std::abort();
    }
    std::vector<link_plan> plans(std::size_t(s.n));
    std::vector<std::uint64_t> landed(std::size_t(s.n), 0);
    for (int from = 0; from < s.n; ++from) {
        link_plan& p = plans[std::size_t(from)];
        p.from = pgas::symmetric_cast<std::byte>(from_rows);
        p.to = pgas::symmetric_cast<std::byte>(b.expert_y);
        for (int to = 0; to < s.n; ++to) {
            if (s.w.device_of(from) == s.w.device_of(to)) continue;
            p.bytes[to] = m[std::size_t(from)][std::size_t(to)];
            p.at[to] = landed[std::size_t(to)];
            landed[std::size_t(to)] += p.bytes[to];
            if (p.bytes[to] > source || landed[std::size_t(to)] > room) {
                std::fprintf(stderr, "bench_moe: link bytes from PE %d to PE %d do not fit the buffers\n", from, to);
                std::abort();
            }
        }
    }
    return plans;
}

// MOE_BENCH_BYTES_OUT: `m` as JSON [[bytes from s to d, ...], ...] in dir/<name>.json.
void write_matrix(const std::string& name, const byte_matrix& m) {
    const char* dir = std::getenv("MOE_BENCH_BYTES_OUT");
    if (dir == nullptr) return;
    std::filesystem::create_directories(dir);
    const std::string path = std::string(dir) + "/" + name + ".json";
    std::ofstream out(path);
    out << "[";
    for (std::size_t s = 0; s < m.size(); ++s) {
        out << (s ? ",\n [" : "[");
        for (std::size_t d = 0; d < m[s].size(); ++d) out << (d ? ", " : "") << m[s][d];
        out << "]";
    }
    out << "]\n";
    if (!out) {
        std::fprintf(stderr, "bench_moe: cannot write %s\n", path.c_str());
        std::abort();
    }
}

template <class Buffer>
void run(benchmark::State& state, const char* mode, std::unique_ptr<Buffer> setup::*which) {
    constexpr bool low_latency = std::is_same_v<Buffer, pgas::ep::low_latency_buffer>;
    const int n = int(state.range(0));
    const bool fp8 = state.range(1) != 0, caller_casts = state.range(1) == 2;
    setup& s = get(n, fp8);
    const Buffer& buf = *(s.*which);
    const auto& b = buf.layout();
    const pgas::ep::config& c = b.cfg;
    ep_test::check::gpu_access access{s.w};
    const auto in = ep_test::check::make_inputs(c, n, ep_test::check::routing::uniform, 3);
    ep_test::check::upload(access, b.io, in);
    std::vector<pgas::ep::batch> batches;
    const int tokens = std::clamp(knob("MOE_BENCH_TOKENS", c.max_tokens), 0, c.max_tokens);
    for (int i = 0; i < n; ++i) batches.push_back({tokens, c.hidden});  // every PE at full load by default

    const auto [dispatched, combined] = phase_bytes(s, c, low_latency, tokens, in);
    const std::string name = std::string(mode) + (fp8 ? "_fp8_" : "_bf16_") + std::to_string(n) + "pes_";
    write_matrix(name + "dispatch", dispatched.bytes);
    write_matrix(name + "combine", combined.bytes);

    events ev(s);
    auto dispatch = [&](int i, cudaStream_t st) { pgas::ep::dispatch_on_stream(buf, i, batches[std::size_t(i)], st); };
    auto combine = [&](int i, cudaStream_t st) { pgas::ep::combine_on_stream(buf, i, batches[std::size_t(i)], st); };
    auto experts = [&](int i, cudaStream_t st) { ep_test::launch_toy_experts(buf, i, st); };
    round(s, ev, dispatch, experts, combine);  // warm-up (and module load); it cast the tokens into io.x8 (fp8)
    if (caller_casts)
        for (auto& a : batches) a.cast = false;  // from here the timed dispatches read that cast, as given

    // The limits run before the phases' timed rounds: the link kernels overwrite expert_y, which the round trip
    // checked below reads.
    const bool links = s.gpus > 1, shared = s.gpus < n;
    std::pair<double, double> link_us{}, copy_us{};
    if (links) {
        const auto to_d = link_plans(s, b, dispatched.bytes), to_c = link_plans(s, b, combined.bytes);
        auto put = [&](const std::vector<link_plan>& plans) {
            return [&s, &plans](int i, cudaStream_t st) {
                link_kernel<<<s.all_blocks, 256, 0, st>>>(s.w.context<pgas::nvlink>(i), plans[std::size_t(i)]);
                cuda_ok(cudaGetLastError(), "link kernel");
            };
        };
        link_us = limit_us(s, ev, put(to_d), put(to_c));
    }
    if (shared) {  // every PE copies, within its GPU, the bytes it sends in dispatch (gets back in combine)
        const std::vector<std::uint64_t> sent_d = sent_by(dispatched.bytes), sent_c = received_by(combined.bytes);
        const std::uint64_t most = std::max({std::uint64_t{1}, *std::max_element(sent_d.begin(), sent_d.end()),
                                             *std::max_element(sent_c.begin(), sent_c.end())});
        const auto scratch = s.w.alloc<unsigned char>(2 * most);  // from its first half to its second
        auto copy = [&](const std::vector<std::uint64_t>& bytes) {
            return [&s, &bytes, scratch, most](int i, cudaStream_t st) {
                cuda_ok(cudaMemcpyAsync(s.w.device_address(scratch + std::ptrdiff_t(most), i),
                                        s.w.device_address(scratch, i), bytes[std::size_t(i)], cudaMemcpyDeviceToDevice,
                                        st),
                        "copy");
            };
        };
        copy_us = limit_us(s, ev, copy(sent_d), copy(sent_c));
        s.w.free(scratch);
    }

    double dispatch_ms = 0, combine_ms = 0;
    for (auto _ : state) {
        const auto [d, cm] = round(s, ev, dispatch, experts, combine);
        dispatch_ms += d;
        combine_ms += cm;
        state.SetIterationTime((d + cm) / 1e3);
    }
    const double iters = double(state.iterations());
    const double d_us = dispatch_ms * 1e3 / iters, c_us = combine_ms * 1e3 / iters;
    // GB/s per GPU: bytes summed over the PEs, divided by the GPUs and the phase's time.
    auto per_gpu_gbps = [&](double bytes, double us) { return bytes / s.gpus / (us * 1e3); };
    state.counters["gpus"] = s.gpus;
    state.counters["dispatch_us"] = d_us;
    state.counters["combine_us"] = c_us;
    state.counters["dispatch_logical_GBps"] = per_gpu_gbps(dispatched.logical, d_us);
    state.counters["combine_logical_GBps"] = per_gpu_gbps(combined.logical, c_us);
    if (links) {
        state.counters["dispatch_link_GBps"] = per_gpu_gbps(double(link_bytes(s, dispatched.bytes)), d_us);
        state.counters["combine_link_GBps"] = per_gpu_gbps(double(link_bytes(s, combined.bytes)), c_us);
        state.counters["link_dispatch_us"] = link_us.first;
        state.counters["link_combine_us"] = link_us.second;
        state.counters["dispatch_vs_link"] = link_us.first / d_us;  // target: >= 0.85 in throughput mode
        state.counters["combine_vs_link"] = link_us.second / c_us;
    }
    if (shared) {
        state.counters["copy_dispatch_us"] = copy_us.first;
        state.counters["copy_combine_us"] = copy_us.second;
        state.counters["dispatch_vs_copy"] = copy_us.first / d_us;
        state.counters["combine_vs_copy"] = copy_us.second / c_us;
    }
    state.counters["blocks_per_pe"] = c.blocks;  // pgas::ep::resident_blocks: fewer when a kernel's registers leave no room
    state.counters["threads_per_block"] = c.threads;
    state.counters["sms_per_pe"] = double(c.blocks) * c.threads / (256.0 * knob("MOE_BENCH_PER_SM", 2));
    state.SetLabel(std::string(mode) + (caller_casts ? " fp8 cast by the caller" : fp8 ? " fp8" : " bf16") + ", " +
                   std::to_string(n) + " PEs on " +
                   std::to_string(s.gpus) + (s.gpus == 1 ? " GPU" : " GPUs"));

    // The round trip must still be right at this shape (checked once, outside the timing; not when
    // MOE_BENCH_TOKENS sent fewer tokens than the reference's inputs hold).
    if (tokens != c.max_tokens) return;
    const auto want = ep_test::check::expected(c, n, in);
    const std::string wrong = ep_test::check::combine(access, c, b.io, want, in);
    if (!wrong.empty()) state.SkipWithError(("combine differs from the reference: " + wrong).c_str());
}

void low_latency(benchmark::State& state) {
    run(state, "low_latency", &setup::ll);
}
void throughput(benchmark::State& state) {
    run(state, "throughput", &setup::tp);
}

// Args: {PEs, payload}: 0 bf16, 1 fp8 (dispatch casts), 2 fp8 cast by the caller (batch::cast = false, as
// DeepEP's normal dispatch takes its tokens); grouped by PE count so each world is built once.
void shapes(benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Iterations(20)->ArgNames({"pes", "fp8"});
}
BENCHMARK(low_latency)->Apply(shapes)->Args({2, 0})->Args({2, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({2, 0})->Args({2, 1})->Args({2, 2});
BENCHMARK(low_latency)->Apply(shapes)->Args({4, 0})->Args({4, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({4, 0})->Args({4, 1})->Args({4, 2});
BENCHMARK(low_latency)->Apply(shapes)->Args({8, 0})->Args({8, 1});
BENCHMARK(throughput)->Apply(shapes)->Args({8, 0})->Args({8, 1})->Args({8, 2});

}  // namespace

int main(int argc, char** argv) {
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--small") == 0)
            small_shape = true;
        else
            args.push_back(argv[i]);
    }
    int count = int(args.size());
    benchmark::Initialize(&count, args.data());
    benchmark::RunSpecifiedBenchmarks();
    current().reset();
    benchmark::Shutdown();
    return 0;
}
