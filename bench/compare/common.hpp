// What every side-by-side program shares: the size sweep, the graph-replay timer, forked ranks and the JSON line.
//
// One timing method for pgas, NVSHMEM and NCCL (docs/perf/README.md): the
// operation is enqueued `iters` times into a CUDA graph (so host launch cost
// is out), the graph is replayed once to warm up, then `reps` times between
// CUDA events; each replay gives time / iters and the figure is the median
// replay. Slow operations get fewer iterations and replays, so that one size
// costs about PGAS_COMPARE_BUDGET_MS of GPU time (fit()). Kept C++17 so that
// the NVSHMEM program may build with its headers' preferred standard.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace compare {

#define COMPARE_CUDA(call)                                                                              \
    do {                                                                                                \
        cudaError_t compare_err_ = (call);                                                              \
        if (compare_err_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                  \
                         cudaGetErrorString(compare_err_));                                            \
            std::exit(2);                                                                               \
        }                                                                                               \
    } while (0)

#define COMPARE_REQUIRE(cond, ...)                                                                      \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                       \
            std::fprintf(stderr, __VA_ARGS__);                                                          \
            std::fprintf(stderr, "\n");                                                                 \
            std::exit(2);                                                                               \
        }                                                                                               \
    } while (0)

inline long env_long(const char* name, long fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

// --- progress: where a run is, for scripts/bench-compare ----------------------
//
// The script runs each program with PGAS_COMPARE_PROGRESS=<file>; every
// program appends "begin <benchmark>" as a benchmark starts (selected()) and
// "size <bytes>" as a size starts (plan_for()). When a run hangs or crashes,
// the file's last lines name the benchmark and size it was in: the script
// records them and reruns the rest (PGAS_COMPARE_ONLY) without that size
// (PGAS_COMPARE_SKIP). A file, not stderr, so that the logs stay readable.
// Forked ranks both append; lines are short single writes, so they do not mix.

// The benchmark running now: set by selected(), read by sweep_sizes().
inline std::string& current_benchmark() {
    static std::string name;
    return name;
}
inline std::size_t& current_bytes() {
    static std::size_t bytes = 0;
    return bytes;
}

inline void note_progress(const char* what, const std::string& value) {
    const char* path = std::getenv("PGAS_COMPARE_PROGRESS");
    if (!path || !*path) return;
    if (FILE* f = std::fopen(path, "a")) {
        std::fprintf(f, "%s %s\n", what, value.c_str());
        std::fclose(f);
    }
}

// PGAS_COMPARE_SKIP="reduce_scatter@268435456,...": sizes a benchmark leaves
// out (the size at which an earlier run of it hung or crashed).
inline bool skipped(const std::string& benchmark, std::size_t bytes) {
    const char* skip = std::getenv("PGAS_COMPARE_SKIP");
    if (!skip || !*skip || benchmark.empty()) return false;
    const std::string list = std::string(",") + skip + ",";
    return list.find("," + benchmark + "@" + std::to_string(bytes) + ",") != std::string::npos;
}

// --- sizes -------------------------------------------------------------------

constexpr std::size_t max_bytes_default = std::size_t{256} << 20;

// 8 B, then 16 B to 256 MiB by factors of 4: holds every size the issues
// quote (8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB) in 14 points.
// PGAS_COMPARE_MAX_BYTES caps it (a quick run). Inside a benchmark (after
// selected()), the sizes PGAS_COMPARE_SKIP names for it are left out; outside
// one (the programs size their buffers first) the list is never empty.
inline std::vector<std::size_t> sweep_sizes() {
    const std::size_t cap = std::size_t(env_long("PGAS_COMPARE_MAX_BYTES", long(max_bytes_default)));
    std::vector<std::size_t> sizes{8};
    for (std::size_t s = 16; s <= max_bytes_default; s *= 4) sizes.push_back(s);
    std::vector<std::size_t> kept;
    for (auto s : sizes)
        if ((s == 8 || s <= cap) && !skipped(current_benchmark(), s)) kept.push_back(s);
    return kept;
}

// Iterations per graph and timed replays: about 200 operations for small
// messages, fewer for large ones (about 200 MiB moved per graph). This is the
// most a size gets; capture() shrinks it for slow operations (fit()).
// Every program calls it as each size starts, so it also notes the size
// (progress, above).
struct plan {
    int iters;
    int reps;
};
inline plan plan_for(std::size_t bytes) {
    current_bytes() = bytes;
    note_progress("size", std::to_string(bytes));
    const long scale = std::max(1L, env_long("PGAS_COMPARE_ITER_DIVISOR", 1));
    int iters = bytes <= (std::size_t{1} << 20) ? 200 : int(std::max<std::size_t>(5, (std::size_t{200} << 20) / bytes));
    iters = std::max(2, int(iters / scale));
    const int reps = bytes >= (std::size_t{16} << 20) ? 7 : 15;
    return {iters, reps};
}

// The fewest timed replays a figure has: the median of 3 still drops one
// outlier either way.
constexpr int min_reps = 3;

// GPU time one size may spend in its graph replays (warm-up + timed), in µs:
// PGAS_COMPARE_BUDGET_MS, default 1 s. Why: the last full run spent ~20 s of
// GPU time in all of nvshmem_compare, 8 s of it in one size (NVSHMEM's
// allreduce of 256 MiB: 204 ms per call x 5 iterations x 8 replays); with the
// budget, the whole sweep of a program stays within a minute of GPU time.
inline double budget_us() { return 1e3 * double(std::max(1L, env_long("PGAS_COMPARE_BUDGET_MS", 1000))); }

// `p` shrunk so that iters * (reps + 1) operations of op_us each fit in
// budget: iterations go first, down to 1 (an operation this slow, tens of ms,
// dwarfs the few µs between graph nodes), then replays, down to min_reps (the
// budget gives way there: a figure needs a median).
inline plan fit(plan p, double op_us, double budget = budget_us()) {
    if (!(op_us > 0)) return p;
    const double ops = budget / op_us;  // operations the budget holds
    if (p.iters * (p.reps + 1.0) <= ops) return p;
    p.iters = std::max(1, std::min(p.iters, int(ops / (p.reps + 1))));
    p.reps = std::max(std::min(p.reps, min_reps), std::min(p.reps, int(ops / p.iters) - 1));
    return p;
}

// --- forked ranks (every program: one process per rank) --------------------------
//
// A program runs PGAS_COMPARE_RANKS ranks (default 2), rank r on GPU r % GPUs
// (scripts/bench-compare sets it: one rank per GPU). It is read from the
// environment because main forks the ranks before any CUDA call, so it cannot
// count the GPUs itself. Point-to-point benchmarks run between ranks 0 and 1
// while the others wait (rank_timer::rank0_only, or a kernel that returns at
// once on ranks >= 2); barriers and collectives run on all of them.

// Memory shared by the forked ranks: a barrier, a failure flag, a blob in
// which rank 0 publishes its unique id (NCCL's or NVSHMEM's) and one value per
// rank for max_over_ranks. Sized for max_ranks, whatever the run's count.
constexpr int max_ranks = 64;

// The rank count of this run: PGAS_COMPARE_RANKS, default 2; at least 2 (the
// point-to-point benchmarks need ranks 0 and 1), at most max_ranks.
inline int rank_count() {
    const long n = env_long("PGAS_COMPARE_RANKS", 2);
    COMPARE_REQUIRE(n >= 2 && n <= max_ranks, "PGAS_COMPARE_RANKS=%ld: between 2 and %d ranks", n, max_ranks);
    return int(n);
}
struct shared_area {
    std::atomic<unsigned> arrived{0};
    std::atomic<unsigned> generation{0};
    std::atomic<int> failed{0};
    std::atomic<int> blob_ready{0};
    std::atomic<int> bad[2] = {0, 0};  // all_ok's votes, alternating slots
    unsigned char blob[4096];
    std::atomic<double> values[max_ranks];
};

class ranks {
public:
    ranks(shared_area* area, int rank, int n) : area_(area), rank_(rank), n_(n) {}
    int rank() const { return rank_; }
    int size() const { return n_; }

    // Host barrier over the forked ranks; gives up (exit) after the timeout
    // or when another rank failed, so a dead peer never hangs the run.
    void barrier() const {
        const unsigned gen = area_->generation.load();
        if (area_->arrived.fetch_add(1) + 1 == unsigned(n_)) {
            area_->arrived.store(0);
            area_->generation.fetch_add(1);
            return;
        }
        wait([&] { return area_->generation.load() != gen; }, "barrier");
    }

    // Collective: true when every rank passes true.
    bool all_ok(bool mine) {
        const int slot = votes_++ % 2;
        if (!mine) area_->bad[slot].fetch_add(1);
        barrier();
        const bool ok = area_->bad[slot].load() == 0;
        barrier();
        if (rank_ == 0) area_->bad[slot].store(0);  // before anyone can use this slot again (next-but-one call)
        return ok;
    }

    // Collective: the largest of the ranks' values, the same on every rank
    // (what keeps their measurement plans, and so their graphs, identical).
    double max_over_ranks(double mine) {
        area_->values[rank_].store(mine);
        barrier();
        double most = mine;
        for (int r = 0; r < n_; ++r) most = std::max(most, area_->values[r].load());
        barrier();  // every rank has read before any writes its next value
        return most;
    }

    // Rank 0 passes its bytes; every rank returns them.
    template <class T>
    T broadcast_blob(const T& mine) const {
        static_assert(sizeof(T) <= sizeof(shared_area::blob), "blob too large");
        if (rank_ == 0) {
            std::memcpy(area_->blob, &mine, sizeof(T));
            area_->blob_ready.store(1);
        }
        wait([&] { return area_->blob_ready.load() == 1; }, "unique id");
        T out;
        std::memcpy(&out, area_->blob, sizeof(T));
        barrier();
        return out;
    }

private:
    template <class Done>
    void wait(Done&& done, const char* what) const {
        const auto start = std::chrono::steady_clock::now();
        const long timeout_s = env_long("PGAS_COMPARE_BARRIER_TIMEOUT_S", 120);
        while (!done()) {
            if (area_->failed.load()) {
                std::fprintf(stderr, "rank %d: another rank failed during %s\n", rank_, what);
                std::_Exit(3);
            }
            if (std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout_s)) {
                std::fprintf(stderr, "rank %d: %s timed out after %ld s\n", rank_, what, timeout_s);
                area_->failed.store(1);
                std::_Exit(3);
            }
            std::this_thread::yield();
        }
    }

    shared_area* area_;
    int rank_, n_;
    int votes_ = 0;
};

// --- timing ------------------------------------------------------------------

// One GPU's part of a measurement: its stream, the graph of p.iters enqueued
// operations, and p.reps: the most timed replays the budget allows (0: no
// limit known; replay() then asks the warm-up).
struct lane {
    int device = 0;
    cudaStream_t stream = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    plan p{0, 0};
};

namespace detail {
inline void build_graph(lane& l, const std::function<void(cudaStream_t)>& enqueue) {
    cudaGraph_t graph = nullptr;
    COMPARE_CUDA(cudaStreamBeginCapture(l.stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < l.p.iters; ++i) enqueue(l.stream);
    COMPARE_CUDA(cudaStreamEndCapture(l.stream, &graph));
    COMPARE_CUDA(cudaGraphInstantiate(&l.exec, graph, 0));
    COMPARE_CUDA(cudaGraphDestroy(graph));
    COMPARE_CUDA(cudaEventCreate(&l.start));
    COMPARE_CUDA(cudaEventCreate(&l.stop));
}

// One eager call, completed; its wall time in µs (host launch included, which
// only overstates it). With a group, the ranks start together and all get the
// slowest rank's time.
inline double timed_call(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueue, ranks* group) {
    if (group) group->barrier();
    const auto t0 = std::chrono::steady_clock::now();
    enqueue(stream);
    COMPARE_CUDA(cudaStreamSynchronize(stream));
    COMPARE_CUDA(cudaGetLastError());
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return group ? group->max_over_ranks(us) : us;
}

inline void say_shrunk(const char* why, double op_us, const plan& from, const plan& to, const ranks* group) {
    if (group && group->rank() != 0) return;
    std::fprintf(stderr, "note: %s at %zu B: %s %.3g ms; %d x %d replays instead of %d x %d (budget %.0f ms)\n",
                 current_benchmark().c_str(), current_bytes(), why, op_us / 1e3, to.iters, to.reps, from.iters,
                 from.reps, budget_us() / 1e3);
}
}  // namespace detail

// Captures `iters` calls of enqueue(stream) into a graph on device's stream.
// One call runs eagerly first (and completes), so that a library's lazy
// first-call setup, which may not be capturable, happens outside the graph.
// Every rank of a collective must capture at the same time. A process that
// drives several GPUs primes them all itself first (prime = false here).
// No budget: replay() bounds the replays from the warm-up (prefer the plan
// form below, which also bounds the iterations).
inline lane capture(int device, cudaStream_t stream, int iters, const std::function<void(cudaStream_t)>& enqueue,
                    bool prime = true) {
    lane l;
    l.device = device;
    l.stream = stream;
    l.p = {iters, 0};
    COMPARE_CUDA(cudaSetDevice(device));
    if (prime) detail::timed_call(stream, enqueue, nullptr);
    detail::build_graph(l, enqueue);
    return l;
}

// The budgeted form: as above, with the eager call timed and the plan fit()
// to the budget. A first call may carry one-time setup (NCCL connects, NVSHMEM
// sets up a team's scratch), so when the first says the plan is too long, a
// second call is timed and the faster one counts. With a group (forked ranks
// of a collective), the ranks time together and agree on the slowest rank's
// time, so that all capture graphs of the same length: a rank that replays
// more operations than its peer would wait for it forever.
inline lane capture(int device, cudaStream_t stream, plan asked, const std::function<void(cudaStream_t)>& enqueue,
                    ranks* group = nullptr) {
    lane l;
    l.device = device;
    l.stream = stream;
    COMPARE_CUDA(cudaSetDevice(device));
    auto shrinks = [&](double op_us) {
        const plan p = fit(asked, op_us);
        return p.iters != asked.iters || p.reps != asked.reps;
    };
    double op_us = detail::timed_call(stream, enqueue, group);
    if (shrinks(op_us)) op_us = std::min(op_us, detail::timed_call(stream, enqueue, group));
    l.p = fit(asked, op_us);
    if (shrinks(op_us)) detail::say_shrunk("a call takes", op_us, asked, l.p, group);
    detail::build_graph(l, enqueue);
    return l;
}

inline void release(lane& l) {
    COMPARE_CUDA(cudaSetDevice(l.device));
    COMPARE_CUDA(cudaGraphExecDestroy(l.exec));
    COMPARE_CUDA(cudaEventDestroy(l.start));
    COMPARE_CUDA(cudaEventDestroy(l.stop));
    l.exec = nullptr;
}

struct timing {
    double us = 0;      // median over replays of (replay time / iters)
    double min_us = 0;
    double max_us = 0;
    int iters = 0;
    int reps = 0;
};

// Replays every lane's graph once to warm up, then up to reps times; the
// figure is lane 0's (the reporting GPU), per operation of its graph (the
// lane's p.iters: `iters` is what the caller captured, kept for the callers
// that pass it). between() runs before each replay: a host barrier between
// processes, so that every rank starts its replay together.
// Fewer replays than `reps` when the lane's plan says so, or when the timed
// warm-up shows that reps + 1 replays would overrun the budget (min_reps at
// least). That decision must be the same on every rank: forked ranks pass
// their group (they agree on the slowest warm-up); ranks synchronised by
// `between` without a group skip it.
inline timing replay(std::vector<lane>& lanes, int iters, int reps, const std::function<void()>& between,
                     ranks* group = nullptr) {
    const lane& head = lanes[0];
    if (head.p.iters > 0) iters = head.p.iters;
    if (head.p.reps > 0) reps = std::min(reps, head.p.reps);
    auto launch_all = [&] {
        for (auto& l : lanes) {
            COMPARE_CUDA(cudaSetDevice(l.device));
            COMPARE_CUDA(cudaEventRecord(l.start, l.stream));
            COMPARE_CUDA(cudaGraphLaunch(l.exec, l.stream));
            COMPARE_CUDA(cudaEventRecord(l.stop, l.stream));
        }
        for (auto& l : lanes) {
            COMPARE_CUDA(cudaSetDevice(l.device));
            COMPARE_CUDA(cudaStreamSynchronize(l.stream));
            COMPARE_CUDA(cudaGetLastError());
        }
        float ms = 0;
        COMPARE_CUDA(cudaEventElapsedTime(&ms, head.start, head.stop));
        return double(ms) * 1000.0;  // µs for the whole graph
    };
    if (between) between();
    double warm_us = launch_all();
    if (group || !between) {
        if (group) warm_us = group->max_over_ranks(warm_us);
        const double fits = warm_us > 0 ? budget_us() / warm_us - 1 : double(reps);  // timed replays after this one
        if (fits < reps) {
            const int fewer = std::max(std::min(reps, min_reps), int(fits));
            detail::say_shrunk("the warm-up replay says a call takes", warm_us / iters, {iters, reps}, {iters, fewer}, group);
            reps = fewer;
        }
    }
    std::vector<double> per_iter;
    for (int r = 0; r < reps; ++r) {
        if (between) between();
        per_iter.push_back(launch_all() / iters);
    }
    std::sort(per_iter.begin(), per_iter.end());
    timing t;
    t.us = per_iter[per_iter.size() / 2];
    t.min_us = per_iter.front();
    t.max_us = per_iter.back();
    t.iters = iters;
    t.reps = reps;
    return t;
}

// The budgeted form's partner: the lanes' own plan.
inline timing replay(std::vector<lane>& lanes, const std::function<void()>& between, ranks* group = nullptr) {
    return replay(lanes, lanes[0].p.iters, lanes[0].p.reps, between, group);
}

// Threads per block for `kernel`: `want`, or fewer when the kernel's
// registers do not allow that many (said on stderr, since it changes the
// comparison).
template <class Kernel>
int threads_for(Kernel* kernel, int want, const char* name) {
    cudaFuncAttributes attr{};
    COMPARE_CUDA(cudaFuncGetAttributes(&attr, kernel));
    if (attr.maxThreadsPerBlock >= want) return want;
    std::fprintf(stderr, "note: %s runs %d threads per block, not %d (%d registers)\n", name,
                 attr.maxThreadsPerBlock, want, attr.numRegs);
    return attr.maxThreadsPerBlock;
}

// --- collectives: sizes as nccl-tests defines them ----------------------------

enum class coll { allreduce, allgather, reduce_scatter, broadcast, alltoall };
constexpr coll all_colls[] = {coll::allreduce, coll::allgather, coll::reduce_scatter, coll::broadcast,
                              coll::alltoall};

inline const char* name(coll c) {
    switch (c) {
        case coll::allreduce: return "allreduce";
        case coll::allgather: return "allgather";
        case coll::reduce_scatter: return "reduce_scatter";
        case coll::broadcast: return "broadcast";
        case coll::alltoall: return "alltoall";
    }
    return "?";
}

// `bytes` is nccl-tests' size: the whole buffer (allreduce, broadcast), the
// gathered output (allgather), the input to scatter (reduce_scatter), one
// rank's send buffer (alltoall). Elements are float (sum for reductions).
// Where the elements do not split evenly over the ranks (a rank count that
// is not a power of two), each rank's share is rounded down, as nccl-tests
// does, and `bytes` of the shape is the size measured (the record's size);
// with a power-of-two rank count it is always the size asked.
struct coll_shape {
    std::size_t send_elems = 0;  // per rank
    std::size_t recv_elems = 0;  // per rank
    std::size_t count = 0;       // the count argument NCCL/NVSHMEM take
    std::size_t bytes = 0;       // nccl-tests' size of what is measured (see above)
    bool valid = false;          // false: not one element per rank
};

inline coll_shape shape(coll c, std::size_t bytes, int n_ranks) {
    coll_shape s;
    const std::size_t total = bytes / sizeof(float);
    const std::size_t n = std::size_t(n_ranks);
    if (total == 0 || n == 0) return s;
    const std::size_t share = total / n;  // elements per rank (allgather, reduce_scatter, alltoall)
    switch (c) {
        case coll::allreduce:
        case coll::broadcast:
            s.send_elems = s.recv_elems = s.count = total;
            break;
        case coll::allgather:
            if (share == 0) return s;
            s.send_elems = share, s.recv_elems = share * n, s.count = share;
            break;
        case coll::reduce_scatter:
            if (share == 0) return s;
            s.send_elems = share * n, s.recv_elems = share, s.count = share;
            break;
        case coll::alltoall:
            if (share == 0) return s;
            s.send_elems = s.recv_elems = share * n, s.count = share;  // count: elements to each peer
            break;
    }
    s.bytes = std::max(s.send_elems, s.recv_elems) * sizeof(float);
    s.valid = true;
    return s;
}

// nccl-tests' bus-bandwidth factors: busbw = algbw * factor.
inline double busbw_factor(coll c, int n_ranks) {
    const double n = n_ranks;
    switch (c) {
        case coll::allreduce: return 2.0 * (n - 1) / n;
        case coll::allgather:
        case coll::reduce_scatter:
        case coll::alltoall: return (n - 1) / n;
        case coll::broadcast: return 1.0;
    }
    return 1.0;
}

// Inputs: rank r's send buffer holds float(r + 1) everywhere (broadcast root
// is rank 0). The value every output element must then hold:
inline float expected(coll c, int rank, int n_ranks, std::size_t index, const coll_shape& s) {
    (void)rank;
    switch (c) {
        case coll::allreduce:
        case coll::reduce_scatter: return float(n_ranks * (n_ranks + 1) / 2);
        case coll::broadcast: return 1.0f;
        case coll::allgather:
        case coll::alltoall: return float(index / s.count + 1);  // block j came from rank j
    }
    return 0;
}

// Reads the first and last output elements of device memory `recv` (on the
// current device) and compares them with expected().
inline bool check_output(coll c, int rank, int n_ranks, const float* recv, const coll_shape& s) {
    float first = 0, last = 0;
    COMPARE_CUDA(cudaMemcpy(&first, recv, sizeof(float), cudaMemcpyDeviceToHost));
    COMPARE_CUDA(cudaMemcpy(&last, recv + (s.recv_elems - 1), sizeof(float), cudaMemcpyDeviceToHost));
    const bool ok = first == expected(c, rank, n_ranks, 0, s) &&
                    last == expected(c, rank, n_ranks, s.recv_elems - 1, s);
    if (!ok)
        std::fprintf(stderr, "check failed: %s rank %d: first %g (want %g) last %g (want %g)\n", name(c), rank,
                     first, expected(c, rank, n_ranks, 0, s), last, expected(c, rank, n_ranks, s.recv_elems - 1, s));
    return ok;
}

// Fills n floats on the current device with value (on `stream`, synchronously).
__global__ void fill_kernel(float* p, std::size_t n, float value) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = value;
}
inline void fill(float* p, std::size_t n, float value, cudaStream_t stream = nullptr) {
    fill_kernel<<<264, 512, 0, stream>>>(p, n, value);
    COMPARE_CUDA(cudaGetLastError());
    COMPARE_CUDA(cudaStreamSynchronize(stream));
}

// --- one rank per process (pgas_compare and nvshmem_compare time the same way) ------------

// This rank's GPU and stream among the forked ranks, and the three ways the programs time with them.
struct rank_timer {
    ranks& rk;
    int device = 0;
    cudaStream_t stream = nullptr;

    // Every rank captures and replays its own graph; replays start together. The ranks agree on the plan
    // (capture's group): graphs of different lengths would leave one rank waiting in a collective for ever.
    timing all(plan pl, const std::function<void(cudaStream_t)>& enqueue) {
        std::vector<lane> lanes{capture(device, stream, pl, enqueue, &rk)};
        auto t = replay(lanes, [&] { rk.barrier(); }, &rk);
        release(lanes[0]);
        return t;
    }

    // Rank 0 alone (one-sided benchmarks); the other ranks wait.
    template <class Body>
    void rank0_only(Body&& body) {
        rk.barrier();
        if (rk.rank() == 0) body();
        rk.barrier();
    }

    // The calling rank alone (inside rank0_only).
    timing alone(plan pl, const std::function<void(cudaStream_t)>& enqueue) {
        std::vector<lane> lanes{capture(device, stream, pl, enqueue)};
        auto t = replay(lanes, nullptr);
        release(lanes[0]);
        return t;
    }
};

// --- output --------------------------------------------------------------------

inline std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// The GPUs a run of n_ranks uses, "4x NVIDIA H100 80GB HBM3" (one GPU per
// rank, fewer when ranks share them: "1x" for two ranks on one GPU), or
// PGAS_COMPARE_MACHINE when set (e.g. the lent kind). The rank count is the
// record's own field.
inline std::string machine_name(int n_ranks, int device) {
    if (const char* m = std::getenv("PGAS_COMPARE_MACHINE"); m && *m) return m;
    int gpus = 0;
    COMPARE_CUDA(cudaGetDeviceCount(&gpus));
    cudaDeviceProp prop{};
    COMPARE_CUDA(cudaGetDeviceProperties(&prop, device));
    return std::to_string(std::min(n_ranks, gpus)) + "x " + prop.name;
}

// One result: one JSON object on one line of stdout (the schema of
// docs/perf/README.md). `bytes` is the message size; algbw = bytes / us.
struct record {
    std::string impl, benchmark;
    int ranks = 0;              // the run's rank count (every rank, also those a point-to-point figure leaves idle)
    std::size_t bytes = 0;
    timing t;
    double busbw_factor = 1.0;  // 0: a latency figure with no bandwidth
    bool ok = true;
    double rate_mops = 0;       // message-rate figures only
};

inline void emit(const record& r, const std::string& machine, const std::string& date) {
    COMPARE_REQUIRE(r.ranks >= 1, "emit: %s/%s has no rank count", r.impl.c_str(), r.benchmark.c_str());
    const double algbw = r.busbw_factor > 0 && r.t.us > 0 ? double(r.bytes) / (r.t.us * 1e3) : 0.0;
    std::printf("{\"impl\": \"%s\", \"benchmark\": \"%s\", \"bytes\": %zu, \"us\": %.4f, \"algbw_GBps\": %.3f, "
                "\"busbw_GBps\": %.3f, \"min_us\": %.4f, \"max_us\": %.4f, \"iters\": %d, \"reps\": %d, "
                "\"ok\": %s",
                r.impl.c_str(), r.benchmark.c_str(), r.bytes, r.t.us, algbw, algbw * r.busbw_factor, r.t.min_us,
                r.t.max_us, r.t.iters, r.t.reps, r.ok ? "true" : "false");
    if (r.rate_mops > 0) std::printf(", \"rate_Mops\": %.3f", r.rate_mops);
    std::printf(", \"ranks\": %d", r.ranks);
    std::printf(", \"machine\": \"%s\", \"date\": \"%s\"}\n", machine.c_str(), date.c_str());
    std::fflush(stdout);
}

// Which benchmarks to run: PGAS_COMPARE_ONLY="allreduce,p_pingpong" (all when
// unset). Every program asks once per benchmark, right before running it, so
// a yes also marks the benchmark as started (progress, above).
inline bool selected(const char* benchmark) {
    const char* only = std::getenv("PGAS_COMPARE_ONLY");
    if (only && *only) {
        const std::string list = std::string(",") + only + ",";
        if (list.find(std::string(",") + benchmark + ",") == std::string::npos) return false;
    }
    current_benchmark() = benchmark;
    current_bytes() = 0;
    note_progress("begin", benchmark);
    return true;
}

// Forks n ranks (before any CUDA call in this process), runs body(ranks) in
// each, waits for all. When one rank fails the others are stopped. Returns
// the exit status for main.
inline int run_forked(int n, const std::function<int(ranks&)>& body) {
    COMPARE_REQUIRE(n >= 1 && n <= max_ranks, "run_forked: %d ranks (at most %d)", n, max_ranks);
    void* mem = mmap(nullptr, sizeof(shared_area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    COMPARE_REQUIRE(mem != MAP_FAILED, "mmap failed: %s", std::strerror(errno));
    auto* area = new (mem) shared_area();
    std::vector<pid_t> children;
    for (int r = 0; r < n; ++r) {
        std::fflush(stdout);
        const pid_t pid = fork();
        COMPARE_REQUIRE(pid >= 0, "fork failed: %s", std::strerror(errno));
        if (pid == 0) {
            ranks mine(area, r, n);
            const int rc = body(mine);
            std::fflush(stdout);
            if (rc != 0) area->failed.store(1);
            std::_Exit(rc);
        }
        children.push_back(pid);
    }
    int result = 0;
    const std::size_t started = children.size();
    for (std::size_t done = 0; done < started;) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) break;
        ++done;
        children.erase(std::remove(children.begin(), children.end(), pid), children.end());
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok) {
            std::fprintf(stderr, "rank process %d failed (%s %d)\n", int(pid),
                         WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            result = 1;
            area->failed.store(1);
            for (pid_t c : children) kill(c, SIGTERM);  // only our own children still running
        }
    }
    return result;
}

}  // namespace compare
