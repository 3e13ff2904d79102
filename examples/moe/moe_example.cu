// MoE dispatch -> experts -> combine in both DeepEP modes, checked against the plain C++ reference.
//
//   moe_example [--pes N] [--mode ll|tp|both] [--fp8] [--small] [--host]
//
// With a GPU: N PEs (default 2) over the NVLink transport, one per GPU when
// there are N GPUs, else all sharing GPU 0; without one (or with --host): N
// PEs as threads on the host transport (default 4), the same bodies compiled
// for the host. --small uses a small shape; the default is DeepSeek-V3's
// (hidden 7168, 256 experts, top-8; 128 tokens per PE in low-latency mode,
// 4096 in throughput mode).
#include "check.hpp"
#include "moe.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct options {
    int pes = 0;
    std::string mode = "both";
    bool fp8 = false, small = false, host = false;
};

moe::config shape(bool low_latency, const options& o, int n_pes) {
    moe::config c = low_latency ? moe::low_latency_defaults() : moe::throughput_defaults();
    if (o.small) {
        c.hidden = 512;
        c.experts = 8 * n_pes;
        c.top_k = 4;
        c.max_tokens = 32;
    }
    if (n_pes > 0 && c.experts % n_pes != 0) c.experts = (c.experts / n_pes + 1) * n_pes;
    c.fp8 = o.fp8;
    return c;
}

// The example's inputs: the uneven routing (skewed towards low experts).
std::vector<moe::reference::pe_input> inputs(const moe::config& c, int n_pes) {
    return moe::check::make_inputs(c, n_pes, moe::check::routing::uneven, 42);
}

// Throughput mode receives into fixed buffers sized before the call: size them
// for what this routing sends (the default would overflow on 8 PEs).
moe::config with_recv_rows(moe::config c, int n_pes) {
    c.recv_rows = moe::check::rows_received(c, n_pes, inputs(c, n_pes));
    return c;
}

// One dispatch -> experts -> combine on every PE, checked; returns the failure text or "".
template <class Buffers, class Access, class Run>
std::string round_trip(const char* mode, const Buffers& b, int n_pes, Access& access, Run run) {
    const auto in = inputs(b.cfg, n_pes);
    const auto want = moe::check::expected(b.cfg, n_pes, in);
    moe::check::upload(access, b.io, in);
    run(moe::check::batches(b.cfg, in));
    std::string failure;
    if constexpr (std::is_same_v<Buffers, moe::ll_buffers>)
        failure = moe::check::ll_dispatch(access, b, want);
    else
        failure = moe::check::tp_dispatch(access, b, want);
    if (failure.empty()) failure = moe::check::combine(access, b.cfg, b.io, want, in);
    std::printf("%s %s: hidden %d, %d experts, top-%d, %d tokens/PE, %d PEs: %s\n", mode, b.cfg.fp8 ? "fp8" : "bf16",
                b.cfg.hidden, b.cfg.experts, b.cfg.top_k, b.cfg.max_tokens, n_pes,
                failure.empty() ? "matches the reference" : failure.c_str());
    return failure;
}

// Heap per PE: one mode's buffers at a time (each mode gets its own world).
// Throughput mode at the default shape on 8 PEs needs ~3.1 GB.
std::uint64_t heap_bytes(const options& o) { return o.small ? std::uint64_t{64} << 20 : std::uint64_t{4} << 30; }

// On the host transport each block is a thread: a few per PE, so that the
// blocks of a PE run concurrently as on a GPU.
moe::config host_grid(moe::config c) {
    c.blocks = 3;
    return c;
}

int on_host(const options& o) {
    const int n = o.pes > 0 ? o.pes : 4;
    pgas::world_options wo;
    wo.heap_bytes = heap_bytes(o);
    std::printf("host transport: %d PEs as threads\n", n);
    int failures = 0;
    if (o.mode != "tp") {
        auto w = pgas::world::init_local(n, wo);
        moe::check::host_access access{w};
        const auto b = moe::make_ll_buffers(w, host_grid(shape(true, o, n)));
        failures += !round_trip("low-latency", b, n, access, [&](const std::vector<moe::batch>& batches) {
                         moe::host_ll_dispatch(w, b, batches);
                         moe::host_toy_experts(w, b);
                         moe::host_ll_combine(w, b, batches);
                     }).empty();
    }
    if (o.mode != "ll") {
        auto w = pgas::world::init_local(n, wo);
        moe::check::host_access access{w};
        const auto b = moe::make_tp_buffers(w, host_grid(with_recv_rows(shape(false, o, n), n)));
        failures += !round_trip("throughput", b, n, access, [&](const std::vector<moe::batch>& batches) {
                         moe::host_tp_dispatch(w, b, batches);
                         moe::host_toy_experts(w, b);
                         moe::host_tp_combine(w, b, batches);
                     }).empty();
    }
    return failures == 0 ? 0 : 1;
}

int on_gpus(const options& o, int n_gpus) {
    const int n = o.pes > 0 ? o.pes : 2;
    std::vector<int> devices;
    for (int i = 0; i < n; ++i) devices.push_back(n_gpus >= n ? i : 0);
    pgas::world_options wo;
    wo.heap_bytes = heap_bytes(o);
    const int sharing = n_gpus >= n ? 1 : n;
    std::printf("NVLink transport: %d PEs on %s\n", n, sharing > 1 ? "one GPU" : "one GPU each");
    int failures = 0;
    // One mode in its own world: init, streams, buffers, the round trip.
    auto run_mode = [&](const char* mode, auto make, auto dispatch, auto combine, moe::config c) {
        auto w = pgas::world::init_local(devices, wo);
        std::vector<cudaStream_t> streams(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            moe::detail::cuda_check(cudaSetDevice(w.device_of(i)), i, "setup");
            moe::detail::cuda_check(cudaStreamCreateWithFlags(&streams[std::size_t(i)], cudaStreamNonBlocking), i, "setup");
        }
        c.blocks = moe::resident_blocks(w.device_of(0), sharing);
        const auto b = make(w, c);
        moe::gpu_access access{w};
        // Each phase is launched on every PE before the next phase on any: the
        // PEs' kernels of one phase wait for each other and must run side by side.
        failures += !round_trip(mode, b, n, access, [&](const std::vector<moe::batch>& batches) {
                         for (int i = 0; i < n; ++i) dispatch(w, i, b, batches[std::size_t(i)], streams[std::size_t(i)]);
                         for (int i = 0; i < n; ++i) moe::launch_toy_experts(w, i, b, streams[std::size_t(i)]);
                         for (int i = 0; i < n; ++i) combine(w, i, b, batches[std::size_t(i)], streams[std::size_t(i)]);
                         for (int i = 0; i < n; ++i)
                             moe::detail::cuda_check(cudaStreamSynchronize(streams[std::size_t(i)]), i, "sync");
                     }).empty();
        for (auto s : streams) cudaStreamDestroy(s);
    };
    if (o.mode != "tp")
        run_mode("low-latency", moe::make_ll_buffers, moe::launch_ll_dispatch, moe::launch_ll_combine, shape(true, o, n));
    if (o.mode != "ll")
        run_mode("throughput", moe::make_tp_buffers, moe::launch_tp_dispatch, moe::launch_tp_combine,
                 with_recv_rows(shape(false, o, n), n));
    return failures == 0 ? 0 : 1;
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
            std::fprintf(stderr, "usage: %s [--pes N] [--mode ll|tp|both] [--fp8] [--small] [--host]\n", argv[0]);
            return 2;
        }
    }
    int n_gpus = 0;
    if (o.host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    try {
        return n_gpus > 0 ? on_gpus(o, n_gpus) : on_host(o);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
