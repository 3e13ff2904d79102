// MoE layer communication with pgas::ep: dispatch tokens to their top-k experts, run the experts, combine, check.
//
//   moe_example [--pes N] [--mode low_latency|throughput|both] [--fp8] [--small] [--host]
//
// With GPUs: N PEs (default 2) over NVLink, one per GPU when there are N GPUs, else all sharing GPU 0, driven by
// this one process. Without a GPU (or with --host): N PEs (default 4) as threads on the host transport, running
// the same device code compiled for the host. The default shape is DeepSeek-V3's (hidden 7168, 256 experts,
// top-8; 128 tokens per PE in low-latency mode, 4096 in throughput mode); --small a small one.
#include <pgas/host/ep/on_stream.cuh>
#include <pgas/pgas.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

namespace ep = pgas::ep;

struct options {
    int pes = 0;
    std::string mode = "both";
    bool fp8 = false, small = false, host = false;
};

// The experts of this example: expert e multiplies its input by 1 + (e % 8) / 8.
PGAS_HD float expert_scale(int expert) { return 1.0f + float(expert % 8) / 8.0f; }

// Low-latency layout: one received row through expert e (bf16 input, or fp8 with one scale per 128 values) into y.
PGAS_HD void run_expert(const ep::config& c, int e, const ep::bf16* x, const ep::fp8* x8, const float* scale,
                        ep::bf16* y) {
    for (int i = int(ep::grid::thread()); i < c.hidden; i += int(ep::grid::threads())) {
        const float v = c.fp8 ? ep::dequantize(x8[i], scale[i / ep::fp8_group]) : ep::to_float(x[i]);
        y[i] = ep::to_bf16(expert_scale(e) * v);
    }
}

// Every row this PE received, one block a row. Low-latency layout: one row per (token, expert) choice.
template <class Tr>
PGAS_HD void experts(const pgas::device::context<Tr>& ctx, const ep::low_latency_layout& b) {
    const ep::config& c = b.cfg;
    const int n = ctx.n_pes(), nl = ep::local_experts(c, n);
    const std::size_t h = std::size_t(c.hidden), g = h / ep::fp8_group;
    for (int i = int(ep::grid::block()); i < nl * n * c.max_tokens; i += int(ep::grid::blocks())) {
        const int le_s = i / c.max_tokens;  // [local expert][source]
        if (i % c.max_tokens >= ctx.local(b.recv_count)[le_s]) continue;
        const std::size_t row = std::size_t(i);
        run_expert(c, ctx.my_pe() * nl + le_s / n, ctx.local(b.recv_x) + row * h, ctx.local(b.recv_x8) + row * h,
                   ctx.local(b.recv_scale) + row * g, ctx.local(b.expert_y) + row * h);
    }
}
// Throughput layout: one row per received token; the experts write its partial result, the sum over the token's
// choices on this PE of weight * expert output (combine adds those of every PE the token went to).
template <class Tr>
PGAS_HD void experts(const pgas::device::context<Tr>& ctx, const ep::throughput_layout& b) {
    const ep::config& c = b.cfg;
    const int nl = ep::local_experts(c, ctx.n_pes()), k = c.top_k;
    const std::size_t h = std::size_t(c.hidden), g = h / ep::fp8_group;
    for (int r = int(ep::grid::block()); r < ctx.local(b.source_begin)[ctx.n_pes()]; r += int(ep::grid::blocks())) {
        const std::size_t row = std::size_t(r);
        const int* local = ctx.local(b.recv_topk_idx) + row * k;
        const float* weight = ctx.local(b.recv_topk_w) + row * k;
        for (int i = int(ep::grid::thread()); i < c.hidden; i += int(ep::grid::threads())) {
            const float v = c.fp8 ? ep::dequantize(ctx.local(b.recv_x8)[row * h + i], ctx.local(b.recv_scale)[row * g + i / ep::fp8_group])
                                  : ep::to_float(ctx.local(b.recv_x)[row * h + i]);
            float sum = 0;
            for (int choice = 0; choice < k; ++choice)
                if (local[choice] >= 0) sum += weight[choice] * expert_scale(ctx.my_pe() * nl + local[choice]) * v;
            ctx.local(b.expert_y)[row * h + i] = ep::to_bf16(sum);
        }
    }
}
template <class Layout>
__global__ void experts_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx,
                               const __grid_constant__ Layout b) {
    experts(ctx, b);
}

ep::config shape(bool low_latency, const options& o, int n_pes) {
    ep::config c = low_latency ? ep::low_latency_defaults() : ep::throughput_defaults();
    if (o.small) {
        c.hidden = 512;
        c.experts = 8 * n_pes;
        c.top_k = 4;
        c.max_tokens = 32;
    }
    if (c.experts % n_pes != 0) c.experts = (c.experts / n_pes + 1) * n_pes;
    c.fp8 = o.fp8;
    return c;
}

// A PE's tokens: random values, top-k distinct experts, gate weights.
struct tokens {
    std::vector<ep::bf16> x;
    std::vector<int> idx;
    std::vector<float> w;
};
tokens make_tokens(const ep::config& c, int pe) {
    std::mt19937 rng(unsigned(pe) + 1);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f), weight(0.1f, 1.0f);
    std::uniform_int_distribution<int> expert(0, c.experts - 1);
    tokens t;
    for (int i = 0; i < c.max_tokens * c.hidden; ++i) t.x.push_back(ep::to_bf16(value(rng)));
    for (int i = 0; i < c.max_tokens; ++i)
        for (int k = 0; k < c.top_k; ++k) {
            int e = expert(rng);
            for (int j = 0; j < k; ++j)
                if (t.idx[std::size_t(i * c.top_k + j)] == e) e = (e + 1) % c.experts, j = -1;
            t.idx.push_back(e);
            t.w.push_back(weight(rng));
        }
    return t;
}

// out[t] must be sum_k w[t][k] * scale(idx[t][k]) * x[t]: the largest relative error over every value.
double worst_error(const ep::config& c, const tokens& in, const std::vector<ep::bf16>& out) {
    double worst = 0;
    for (int t = 0; t < c.max_tokens; ++t) {
        float factor = 0;
        for (int k = 0; k < c.top_k; ++k)
            factor += in.w[std::size_t(t * c.top_k + k)] * expert_scale(in.idx[std::size_t(t * c.top_k + k)]);
        for (int i = 0; i < c.hidden; ++i) {
            const double want = double(factor) * ep::to_float(in.x[std::size_t(t * c.hidden + i)]);
            const double got = ep::to_float(out[std::size_t(t * c.hidden + i)]);
            worst = std::fmax(worst, std::fabs(got - want) / (std::fabs(want) + 0.05));
        }
    }
    return worst;
}

// Copies between this program's vectors and local PE `local`'s symmetric memory (GPU memory, or host memory on
// the host transport).
template <class T>
void upload(const pgas::world& w, bool gpu, pgas::symmetric_ptr<T> p, int local, const std::vector<T>& v) {
    if (!gpu) return (void)std::copy(v.begin(), v.end(), w.local(p, local));
    cudaMemcpy(w.device_address(p, local), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
}
template <class T>
std::vector<T> download(const pgas::world& w, bool gpu, pgas::symmetric_ptr<T> p, int local, std::size_t count) {
    std::vector<T> v(count);
    if (!gpu) return std::vector<T>(w.local(p, local), w.local(p, local) + count);
    cudaMemcpy(v.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
}

// One dispatch -> experts -> combine on every PE of world w; `round_trip(buf, batches)` runs the three phases.
// Returns 0 when every PE's output is right.
template <class Buffer, class RoundTrip>
int run_mode(pgas::world& w, bool gpu, const char* mode, const ep::config& c, RoundTrip round_trip) {
    const int n = w.n_local_pes();
    const Buffer buf(w, c);  // collective: the same shape on every PE
    std::vector<tokens> in;
    std::vector<ep::batch> batches;
    for (int local = 0; local < n; ++local) {
        in.push_back(make_tokens(c, w.local_pe(local)));
        const ep::io_layout& io = buf.layout().io;
        upload(w, gpu, io.x, local, in.back().x);
        upload(w, gpu, io.topk_idx, local, in.back().idx);
        upload(w, gpu, io.topk_w, local, in.back().w);
        batches.push_back({c.max_tokens, c.hidden});
    }
    if (gpu) cudaDeviceSynchronize();  // the uploads have landed before any PE's stream reads them
    round_trip(buf, batches);
    double worst = 0;
    for (int local = 0; local < n; ++local)
        worst = std::fmax(worst, worst_error(c, in[std::size_t(local)],
                                             download(w, gpu, buf.layout().io.out, local,
                                                                    std::size_t(c.max_tokens * c.hidden))));
    const double bound = c.fp8 ? 0.15 : 0.02;  // fp8: e4m3's 3-bit mantissa; bf16: rounding of y and out
    std::printf("%s %s: hidden %d, %d experts, top-%d, %d tokens per PE, %d PEs: worst relative error %.4f (%s)\n",
                mode, c.fp8 ? "fp8" : "bf16", c.hidden, c.experts, c.top_k, c.max_tokens, w.n_pes(), worst,
                worst <= bound ? "ok" : "WRONG");
    return worst <= bound ? 0 : 1;
}

int on_host(const options& o) {
    const int n = o.pes > 0 ? o.pes : 4;
    std::printf("host transport: %d PEs as threads\n", n);
    pgas::world_options wo;
    wo.heap_bytes = o.small ? std::uint64_t{64} << 20 : std::uint64_t{4} << 30;
    auto w = pgas::world::init_local(n, wo);
    auto round_trip = [](const auto& buf, const std::vector<ep::batch>& batches) {
        buf.dispatch(batches);
        buf.launch_host([&](const auto& ctx) { experts(ctx, buf.layout()); });
        buf.combine(batches);
    };
    auto host_grid = [](ep::config c) {
        c.blocks = 3;  // three concurrent threads per PE, as a GPU's blocks
        return c;
    };
    int failures = 0;
    if (o.mode != "throughput") failures += run_mode<ep::low_latency_buffer>(w, false, "low-latency", host_grid(shape(true, o, n)), round_trip);
    if (o.mode != "low_latency") failures += run_mode<ep::throughput_buffer>(w, false, "throughput", host_grid(shape(false, o, n)), round_trip);
    return failures;
}

int on_gpus(const options& o, int gpus) {
    const int n = o.pes > 0 ? o.pes : 2;
    const int sharing = gpus >= n ? 1 : n;
    std::vector<int> devices;
    for (int i = 0; i < n; ++i) devices.push_back(sharing == 1 ? i : 0);
    std::printf("NVLink transport: %d PEs on %s\n", n, sharing > 1 ? "one GPU" : "one GPU each");
    pgas::world_options wo;
    wo.heap_bytes = o.small ? std::uint64_t{64} << 20 : std::uint64_t{4} << 30;
    auto w = pgas::world::init_local(devices, wo);
    std::vector<cudaStream_t> streams(std::size_t(n), nullptr);
    for (int i = 0; i < n; ++i) {
        cudaSetDevice(w.device_of(i));
        cudaStreamCreateWithFlags(&streams[std::size_t(i)], cudaStreamNonBlocking);
    }
    // Each phase is enqueued on every PE before the next phase on any: the PEs' kernels wait for each other.
    auto round_trip = [&](const auto& buf, const std::vector<ep::batch>& batches) {
        for (int i = 0; i < n; ++i) ep::dispatch_on_stream(buf, i, batches[std::size_t(i)], streams[std::size_t(i)]);
        for (int i = 0; i < n; ++i) {
            cudaSetDevice(w.device_of(i));
            experts_kernel<<<buf.shape().blocks, buf.shape().threads, 0, streams[std::size_t(i)]>>>(
                w.context<pgas::nvlink>(i), buf.layout());
        }
        for (int i = 0; i < n; ++i) ep::combine_on_stream(buf, i, batches[std::size_t(i)], streams[std::size_t(i)]);
        for (int i = 0; i < n; ++i)
            if (cudaError_t e = cudaStreamSynchronize(streams[std::size_t(i)]); e != cudaSuccess)
                throw pgas::error(pgas::errc::cuda, i, "moe_example", cudaGetErrorString(e));
    };
    auto gpu_grid = [&](ep::config c) {
        c.blocks = ep::resident_blocks(w.device_of(0), sharing);  // every PE's kernels resident at once
        return c;
    };
    int failures = 0;
    if (o.mode != "throughput") failures += run_mode<ep::low_latency_buffer>(w, true, "low-latency", gpu_grid(shape(true, o, n)), round_trip);
    if (o.mode != "low_latency") failures += run_mode<ep::throughput_buffer>(w, true, "throughput", gpu_grid(shape(false, o, n)), round_trip);
    for (auto s : streams) cudaStreamDestroy(s);
    return failures;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--pes" && i + 1 < argc) o.pes = std::atoi(argv[++i]);
        else if (arg == "--mode" && i + 1 < argc) o.mode = argv[++i];
        else if (arg == "--fp8") o.fp8 = true;
        else if (arg == "--small") o.small = true;
        else if (arg == "--host") o.host = true;
        else {
            std::fprintf(stderr, "usage: %s [--pes N] [--mode low_latency|throughput|both] [--fp8] [--small] [--host]\n",
                         argv[0]);
            return 2;
        }
    }
    int gpus = 0;
    if (o.host || cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    try {
        return (gpus > 0 ? on_gpus(o, gpus) : on_host(o)) == 0 ? 0 : 1;
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
