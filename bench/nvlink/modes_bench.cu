// The NVLink micro-benchmarks that make sense with two PEs on one GPU, in either launch mode, one JSON line per row.
//
//   bench_modes                    two PEs in this process (world::init_local: GPUs 0 and 1, or GPU 0 twice)
//   pgasrun -n 2 bench_modes       one PE per process (world::init_gpu), the way users launch; on one GPU the
//                                  two processes need CUDA MPS to run side by side (scripts/bench-modes starts it)
//
// scripts/bench-modes runs both in one go and prints process / in-process per row. The rows are
// pure GPU time (CUDA events on PE 0's stream around kernels that repeat the operation in-kernel), except
// allreduce_on_stream, which includes the launches because that is how users call it. Each row is run
// `repeats` times and the median is printed, so one slow time slice does not decide a ratio.
//
// Besides the rows users see (p ping-pong, barrier, fetch-add, allreduce), the signal path is taken apart
// piece by piece, because it is where process mode lost time: a release store alone, a release add alone,
// put_signal from one thread, and put_signal from a whole block whose 256 threads all wait (the halo
// exchange's shape).
// (older trees kept the stream collectives in coll/stream.cuh: this file also builds against those, to
// compare commits)
#if __has_include(<pgas/host/stream/collectives.cuh>)
#include <pgas/host/stream/collectives.cuh>
#else
#include <pgas/coll/stream.cuh>
#endif
#include <pgas/pgas.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::nvlink>;
constexpr int repeats = 5;

void cuda_ok(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "bench_modes: %s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

// The PEs this process drives (both in-process, one in process mode) and how to time a launch on them.
class pes {
public:
    pes() {
        pgas::world_options o;
        o.heap_bytes = std::uint64_t{256} << 20;
        o.timeout_ms = 20000;
        in_process_ = pgas::read_launch_env().size <= 1;  // no launcher (or a world of one): both PEs here
        if (in_process_) {
            int gpus = 0;
            cuda_ok(cudaGetDeviceCount(&gpus), "device count");
            world_.emplace(pgas::world::init_local(gpus >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0}, o));
        } else {
            // Every process on GPU local_rank % GPUs (init_gpu's own default; spelled out so that this file
            // also builds against older commits, whose default was the local rank itself).
            const pgas::launch_info launch = pgas::read_launch_env();
            int gpus = 0;
            cuda_ok(cudaGetDeviceCount(&gpus), "device count");
            world_.emplace(pgas::world::init_gpu(o, (launch.local_rank >= 0 ? launch.local_rank : launch.rank) % gpus));
        }
        if (world_->n_pes() != 2) {
            std::fprintf(stderr, "bench_modes: needs exactly 2 PEs, got %d\n", world_->n_pes());
            std::exit(1);
        }
        for (int i = 0; i < world_->n_local_pes(); ++i) {
            cuda_ok(cudaSetDevice(world_->device_of(i)), "set device");
            cudaStream_t s;
            // Non-blocking: PEs sharing a GPU must run side by side (each waits for the other).
            cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
            streams_.push_back(s);
        }
    }

    pgas::world& world() { return *world_; }
    const char* mode() const { return in_process_ ? "in_process" : "process"; }
    bool prints() const { return world_->local_pe(0) == 0; }
    ctx_t context(int local) const { return world_->context<pgas::nvlink>(local); }

    // Runs launch(ctx, stream, base, step) for step 0 .. steps-1, each step for every PE of this process (or
    // only PE 0 when !both) before the next (PEs of one process whose kernels wait for each other must not
    // queue all of one PE's launches first), and returns PE 0's milliseconds for it (0 on a process without
    // PE 0). In process mode a host barrier lines the two processes up first, so PE 0's clock starts about
    // when its peer's kernel does.
    template <class Launch>
    double timed_ms(Launch&& launch, std::uint64_t base, bool both, int steps, bool sync_each_step) {
        if (!in_process_) world_->barrier();
        cudaEvent_t start = nullptr, stop = nullptr;
        const int pe0 = world_->local_pe(0) == 0 ? 0 : -1;  // PE 0 is local PE 0 wherever it lives here
        if (pe0 == 0) {
            cuda_ok(cudaSetDevice(world_->device_of(0)), "set device");
            cuda_ok(cudaEventCreate(&start), "event");
            cuda_ok(cudaEventCreate(&stop), "event");
            cuda_ok(cudaEventRecord(start, streams_[0]), "record");
        }
        for (int step = 0; step < steps; ++step) {
            for (int i = 0; i < world_->n_local_pes(); ++i) {
                if (i != pe0 && !both) continue;
                cuda_ok(cudaSetDevice(world_->device_of(i)), "set device");
                launch(context(i), streams_[i], base, step);
            }
            if (sync_each_step)  // a time-step loop that reads a result on the host every step
                for (int i = 0; i < world_->n_local_pes(); ++i) cuda_ok(cudaStreamSynchronize(streams_[i]), "step");
        }
        if (pe0 == 0) {
            cuda_ok(cudaSetDevice(world_->device_of(0)), "set device");
            cuda_ok(cudaEventRecord(stop, streams_[0]), "record");
        }
        for (int i = 0; i < world_->n_local_pes(); ++i) cuda_ok(cudaStreamSynchronize(streams_[i]), "kernel");
        float ms = 0;
        if (start) {
            cuda_ok(cudaEventElapsedTime(&ms, start, stop), "elapsed");
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
        }
        if (!in_process_) world_->barrier();
        return ms;
    }

    // The median of `repeats` runs of timed_ms, divided by per_run (the operations one run times), in us.
    // Run r passes base = r * per_run_values: flags and signals that start at 0 keep growing across runs.
    template <class Launch>
    double median_us(Launch&& launch, double per_run, std::uint64_t per_run_values, bool both = true,
                     int steps = 1, bool sync_each_step = false) {
        timed_ms(launch, 0, both, steps, sync_each_step);  // warm-up: module load, scratch set-up, first touch
        std::vector<double> us;
        for (int r = 1; r <= repeats; ++r)
            us.push_back(timed_ms(launch, std::uint64_t(r) * per_run_values, both, steps, sync_each_step) * 1e3 /
                         per_run);
        std::sort(us.begin(), us.end());
        return us[us.size() / 2];
    }

    void emit(const char* row, std::uint64_t bytes, double us) const {
        if (!prints()) return;
        std::printf("{\"mode\": \"%s\", \"row\": \"%s\", \"bytes\": %llu, \"us\": %.4f}\n", mode(), row,
                    (unsigned long long)bytes, us);
        std::fflush(stdout);
    }

private:
    std::optional<pgas::world> world_;
    std::vector<cudaStream_t> streams_;
    bool in_process_ = true;
};

// --- kernels: each bounces or repeats one operation `iters` times; values grow across launches ---------------

__global__ void p_ping_pong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> flag,
                            std::uint64_t base, int iters) {
    const int me = ctx.my_pe(), peer = 1 - me;
    for (int i = 1; i <= iters; ++i) {
        const std::uint64_t v = base + std::uint64_t(i);
        if (me == 0) pgas::p(ctx, flag, v, peer);
        pgas::wait_until(ctx, flag, pgas::cmp::eq, v);
        if (me == 1) pgas::p(ctx, flag, v, peer);
    }
}

// signal() alone (set: a release store; add: a red.release) answered by signal_wait_until.
__global__ void signal_ping_pong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> sig,
                                 std::uint64_t base, int iters, pgas::signal_op op) {
    const int me = ctx.my_pe(), peer = 1 - me;
    for (int i = 1; i <= iters; ++i) {
        const std::uint64_t v = base + std::uint64_t(i);
        if (me == 0) pgas::signal(ctx, sig, op == pgas::signal_op::set ? v : 1, op, peer);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, v);
        if (me == 1) pgas::signal(ctx, sig, op == pgas::signal_op::set ? v : 1, op, peer);
    }
}

// put_signal of 8 bytes by group G (all its threads wait for the answer, as the halo exchange's block does).
template <class G>
__global__ void put_signal_ping_pong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> data,
                                     pgas::symmetric_ptr<std::uint64_t> sig, std::uint64_t base, int iters) {
    const int me = ctx.my_pe(), peer = 1 - me;
    const std::uint64_t* src = ctx.local(data) + 1;
    for (int i = 1; i <= iters; ++i) {
        const std::uint64_t v = base + std::uint64_t(i);
        if (me == 0) pgas::put_signal<G>(ctx, data, src, 1, sig, v, pgas::signal_op::set, peer);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, v);
        if (me == 1) pgas::put_signal<G>(ctx, data, src, 1, sig, v, pgas::signal_op::set, peer);
    }
}

template <class G>
__global__ void barrier_loop(const __grid_constant__ ctx_t ctx, int iters) {
    for (int i = 0; i < iters; ++i) pgas::barrier_all<G>(ctx);
}

// Round trips of fetch-add, cycling over `spread` words 4 KiB apart: on one GPU an atomic costs ~0.18 us
// when its word sits in the L2 partition near the caller's SM and ~0.29 us when far, so one word would make
// the row depend on where the block happened to land (seen on one H100: the same row read 0.18 and 0.29 us).
constexpr int fetch_add_spread = 64, fetch_add_stride = 512;  // 512 words = 4 KiB
__global__ void fetch_add_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> words,
                               int iters, int pe) {
    unsigned long long sum = 0;
    for (int i = 0; i < iters; ++i)
        sum += pgas::atomic_fetch_add(ctx, words + std::ptrdiff_t(i % fetch_add_spread) * fetch_add_stride, 1ull, pe);
    if (sum == 42) printf("-");  // keep the result alive
}

// One step of a halo-style exchange per kernel launch, as a user's time-step loop launches it: the block
// sends 8 bytes with put_signal and waits for the peer's (signal form), or stores with p and meets the peer
// in barrier_all (barrier form).
__global__ void step_put_signal(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> data,
                                pgas::symmetric_ptr<std::uint64_t> sig, std::uint64_t tag) {
    const std::uint64_t* src = ctx.local(data) + 1;
    pgas::put_signal<pgas::block>(ctx, data, src, 1, sig, tag, pgas::signal_op::set, 1 - ctx.my_pe());
    pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, tag);
}
__global__ void step_p_barrier(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> data,
                               std::uint64_t tag) {
    if (threadIdx.x == 0) pgas::p(ctx, data, tag, 1 - ctx.my_pe());
    pgas::barrier_all<pgas::block>(ctx);
}

}  // namespace

int main(int argc, char** argv) {
    // Optional: only the rows whose name contains argv[1].
    const char* only = argc > 1 ? argv[1] : "";
    auto wanted = [&](const char* row) { return std::strstr(row, only) != nullptr; };
    pes run;
    auto& w = run.world();
    constexpr int iters = 20000;
    const double trips = 2.0 * iters;  // a ping-pong run times 2 * iters one-way trips
    using U64 = std::uint64_t;

    if (wanted("p_pingpong")) {
        auto flag = w.alloc<U64>(1);
        run.emit("p_pingpong", 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int) {
            p_ping_pong<<<1, 1, 0, s>>>(c, flag, base, iters);
        }, trips, iters));
    }
    for (auto [name, op] : {std::pair{"signal_set_pingpong", pgas::signal_op::set},
                            std::pair{"signal_add_pingpong", pgas::signal_op::add}}) {
        if (!wanted(name)) continue;
        auto sig = w.alloc<U64>(1);
        run.emit(name, 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int) {
            signal_ping_pong<<<1, 1, 0, s>>>(c, sig, base, iters, op);
        }, trips, iters));
    }
    if (wanted("put_signal_pingpong/thread")) {
        auto sig = w.alloc<U64>(1);
        auto data = w.alloc<U64>(2);
        run.emit("put_signal_pingpong/thread", 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int) {
            put_signal_ping_pong<pgas::thread><<<1, 1, 0, s>>>(c, data, sig, base, iters);
        }, trips, iters));
    }
    if (wanted("put_signal_pingpong/block")) {
        auto sig = w.alloc<U64>(1);
        auto data = w.alloc<U64>(2);
        run.emit("put_signal_pingpong/block", 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int) {
            put_signal_ping_pong<pgas::block><<<1, 256, 0, s>>>(c, data, sig, base, iters);
        }, trips, iters));
    }
    if (wanted("barrier_all/thread"))
        run.emit("barrier_all/thread", 0, run.median_us([&](const ctx_t& c, cudaStream_t s, U64, int) {
            barrier_loop<pgas::thread><<<1, 1, 0, s>>>(c, iters);
        }, iters, 0));
    if (wanted("barrier_all/block"))
        run.emit("barrier_all/block", 0, run.median_us([&](const ctx_t& c, cudaStream_t s, U64, int) {
            barrier_loop<pgas::block><<<1, 256, 0, s>>>(c, iters);
        }, iters, 0));
    for (auto [name, pe] : {std::pair{"fetch_add_roundtrip", 1}, std::pair{"fetch_add_roundtrip/own_pe", 0}}) {
        if (!wanted(name)) continue;
        auto word = w.alloc<unsigned long long>(fetch_add_spread * fetch_add_stride);
        run.emit(name, 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64, int) {
            fetch_add_loop<<<1, 1, 0, s>>>(c, word, iters, pe);
        }, iters, 0, /*both=*/false));
    }
    // Kernel-per-step rows: `steps` launches per PE, queued back to back (step_launch) or with the host
    // waiting for every step's kernel before the next (step_sync); us per step.
    constexpr int steps = 2000;
    for (bool sync : {false, true}) {
        const std::string put_signal_row = sync ? "step_sync/put_signal" : "step_launch/put_signal";
        const std::string barrier_row = sync ? "step_sync/p_barrier" : "step_launch/p_barrier";
        if (wanted(put_signal_row.c_str())) {
            auto sig = w.alloc<U64>(1);
            auto data = w.alloc<U64>(2);
            run.emit(put_signal_row.c_str(), 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int step) {
                step_put_signal<<<1, 256, 0, s>>>(c, data, sig, base + U64(step) + 1);
            }, steps, steps, true, steps, sync));
        }
        if (wanted(barrier_row.c_str())) {
            auto data = w.alloc<U64>(1);
            run.emit(barrier_row.c_str(), 8, run.median_us([&](const ctx_t& c, cudaStream_t s, U64 base, int step) {
                step_p_barrier<<<1, 256, 0, s>>>(c, data, base + U64(step) + 1);
            }, steps, steps, true, steps, sync));
        }
    }
    if (wanted("allreduce_on_stream")) {
        constexpr std::size_t max_count = std::size_t{1} << 18;  // 1 MiB of floats
        auto dst = w.alloc<float>(max_count);
        auto src = w.alloc<float>(max_count);
        constexpr int reps = 50;
        for (std::size_t bytes : {8, 64, 512, 4096, 32768, 262144, 1048576}) {
            run.emit("allreduce_on_stream", bytes, run.median_us([&](const ctx_t& c, cudaStream_t s, U64, int) {
                for (int r = 0; r < reps; ++r)
                    pgas::allreduce_on_stream(c, c.world_team(), dst, src, bytes / sizeof(float), pgas::op::sum, s);
            }, reps, 0));
        }
    }
    return 0;
}
