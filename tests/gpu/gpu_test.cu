// The device API on real GPUs over the NVLink transport, on one GPU, on N GPUs (one process driving them, or one
// process each) and with two PEs sharing one GPU: what needs many threads (every group's RMA, put_signal and barriers,
// contended atomics from every thread, fence under stress, copies, on-stream forms and graphs); the one-thread bodies
// of p/g, the atomics and the waits are tests/common's, which atomic_test.cu, rma_test.cu and signal_test.cu run.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>
#include <pgas/host/stream/collectives.cuh>
#include <pgas/host/stream/rma.cuh>

#include "support.cuh"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

using namespace gpu_support;

// Every byte depends on all inputs (splitmix64's finaliser): catches misplaced, missing or stale bytes.
__host__ __device__ inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Launches kernel(ctx_i, args...) on every local PE's GPU, then waits for all.
template <class T>
std::vector<T> read_back(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count, int local) {
    std::vector<T> out(count);
    CHECK_CUDA(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
}

// Whether the calling thread belongs to group G (the first lanes of the block).
template <class G>
__device__ bool in_group() {
    if constexpr (std::is_same_v<G, pgas::thread>) return threadIdx.x == 0;
    else if constexpr (std::is_same_v<G, pgas::block>) return true;
    else return threadIdx.x < G::size();
}

// put, get, put_nbi, get_nbi between ring neighbours by group G; mismatches counted into errors.
template <class G>
__global__ void ring_rma(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint32_t> inbox,
                         pgas::symmetric_ptr<std::uint32_t> outbox, pgas::symmetric_ptr<std::uint32_t> scratch,
                         std::size_t count, int round, unsigned long long* errors) {
    const int me = ctx.my_pe(), n = ctx.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    std::uint32_t* out = ctx.local(outbox);
    for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) out[i] = std::uint32_t(mix(me, i, round));
    __syncthreads();
    pgas::barrier_all<pgas::block>(ctx);
    if (in_group<G>()) pgas::put<G>(ctx, inbox + 1, out, count - 1, right);  // offset by one element
    __syncthreads();
    pgas::barrier_all<pgas::block>(ctx);
    const std::uint32_t* in = ctx.local(inbox);
    for (std::size_t i = threadIdx.x; i + 1 < count; i += blockDim.x)
        if (in[i + 1] != std::uint32_t(mix(left, i, round))) atomicAdd_system(errors, 1ull);
    // The peer's put_nbi below overwrites this inbox: not before every PE has checked the put. (Without this
    // barrier two time-sliced processes on one GPU saw count - 3 errors: the peer ran ahead within its slice.)
    pgas::barrier_all<pgas::block>(ctx);
    // get the left neighbour's outbox into local scratch, then nbi forms
    std::uint32_t* local_scratch = ctx.local(scratch);
    if (in_group<G>()) pgas::get<G>(ctx, local_scratch, outbox, count, left);
    __syncthreads();
    for (std::size_t i = threadIdx.x; i < count; i += blockDim.x)
        if (local_scratch[i] != std::uint32_t(mix(left, i, round))) atomicAdd_system(errors, 1ull);
    __syncthreads();
    if (in_group<G>()) {
        pgas::get_nbi<G>(ctx, local_scratch + count, outbox + 3, count - 3, right);
        pgas::put_nbi<G>(ctx, inbox, out + 2, count - 2, left);
        pgas::quiet<G>(ctx);
    }
    __syncthreads();
    for (std::size_t i = threadIdx.x; i + 3 < count; i += blockDim.x)
        if (local_scratch[count + i] != std::uint32_t(mix(right, i + 3, round))) atomicAdd_system(errors, 1ull);
    pgas::barrier_all<pgas::block>(ctx);
    for (std::size_t i = threadIdx.x; i + 2 < count; i += blockDim.x)
        if (in[i] != std::uint32_t(mix(right, i + 2, round))) atomicAdd_system(errors, 1ull);
    pgas::barrier_all<pgas::block>(ctx);
}

template <class G>
void check_ring_rma(int n_gpus) {
    auto w = make_world(n_gpus);
    const std::size_t max_count = (1 << 20) + 5;
    auto inbox = w.alloc<std::uint32_t>(max_count);
    auto outbox = w.alloc<std::uint32_t>(max_count);
    auto scratch = w.alloc<std::uint32_t>(2 * max_count);
    unsigned long long* errors = nullptr;
    CHECK_CUDA(cudaMallocManaged(&errors, sizeof(unsigned long long)));
    int round = 0;
    for (std::size_t count : {std::size_t(4), std::size_t(5), std::size_t(1031), std::size_t(65539), max_count}) {
        CAPTURE(count);
        *errors = 0;
        launch_all(w, 1, 256, ring_rma<G>, inbox, outbox, scratch, count, ++round, errors);
        CHECK(*errors == 0);
    }
    cudaFree(errors);
}

// Every thread of every block of every PE adds to counters on every PE.
__global__ void atomics_contended(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> counter,
                                  pgas::symmetric_ptr<float> fsum, pgas::symmetric_ptr<unsigned int> bits,
                                  pgas::symmetric_ptr<int> cas_word, unsigned long long* tickets) {
    const int n = ctx.n_pes();
    const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
    for (int pe = 0; pe < n; ++pe) {
        pgas::atomic_add(ctx, counter, 1ull, pe);
        pgas::atomic_inc(ctx, counter + 1, pe);
        // every ticket below the total is handed out exactly once
        const unsigned long long ticket = pgas::atomic_fetch_inc(ctx, counter + 2, 0);
        if (ticket < (1ull << 20)) atomicAdd_system(tickets + ticket, 1ull);
        pgas::atomic_add(ctx, fsum, 0.5f, pe);
        pgas::atomic_or(ctx, bits, 1u << (global % 32), pe);
        pgas::atomic_fetch_xor(ctx, bits + 1, 1u << (global % 32), pe);
        pgas::atomic_and(ctx, bits + 2, ~(1u << (global % 32)), pe);
    }
    // compare_swap elects exactly one winner per PE
    if (pgas::atomic_compare_swap(ctx, cas_word, 0, int(global + 1), (ctx.my_pe() + 1) % n) == 0)
        pgas::atomic_add(ctx, counter + 3, 1ull, 0);
}

// put_signal hammer: the receiver must never see data older than the signal it waited for.
template <class G>
__global__ void put_signal_hammer(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> data,
                                  pgas::symmetric_ptr<std::uint64_t> sig, pgas::symmetric_ptr<std::uint64_t> ack,
                                  std::size_t count, int rounds, unsigned long long* errors) {
    const int me = ctx.my_pe(), n = ctx.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    __shared__ std::uint64_t source[2048];
    for (int round = 1; round <= rounds; ++round) {
        for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) source[i] = mix(me, round, i);
        __syncthreads();
        if (in_group<G>()) {
            if (round % 2)
                pgas::put_signal<G>(ctx, data, source, count, sig, std::uint64_t(round), pgas::signal_op::set, right);
            else
                pgas::put_signal_nbi<G>(ctx, data, source, count, sig, 1, pgas::signal_op::add, right);
        }
        if (threadIdx.x == 0) pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, std::uint64_t(round));
        __syncthreads();
        const std::uint64_t* got = ctx.local(data);
        for (std::size_t i = threadIdx.x; i < count; i += blockDim.x)
            if (got[i] != mix(left, round, i)) atomicAdd_system(errors, 1ull);
        __syncthreads();
        if (threadIdx.x == 0) {
            pgas::signal(ctx, ack, 1, pgas::signal_op::add, left);  // my inbox may be overwritten
            pgas::signal_wait_until(ctx, ack, pgas::cmp::ge, std::uint64_t(round));
        }
        __syncthreads();
    }
}

// fence: a flag written after a fence is never seen before the data written before it.
__global__ void fence_order(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> value,
                            pgas::symmetric_ptr<std::uint64_t> flag, int rounds, unsigned long long* errors) {
    if (threadIdx.x != 0) return;
    const int me = ctx.my_pe(), n = ctx.n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int r = 1; r <= rounds; ++r) {
        pgas::p(ctx, value, std::uint64_t(r) * 1000 + me, right);
        pgas::fence(ctx);
        pgas::p(ctx, flag, std::uint64_t(r), right);
        pgas::wait_until(ctx, flag, pgas::cmp::eq, std::uint64_t(r));
        if (*ctx.local(value) != std::uint64_t(r) * 1000 + left) atomicAdd_system(errors, 1ull);
        pgas::sync_all(ctx);
    }
}

// Many barriers in a row: each PE adds to PE 0 before every barrier; PE 0 checks after it.
template <class G>
__global__ void barrier_storm(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> count,
                              int rounds, unsigned long long* errors) {
    for (int r = 1; r <= rounds; ++r) {
        if (in_group<G>()) {
            if (G::rank() == 0) pgas::atomic_add(ctx, count, 1ull, 0);
            pgas::barrier_all<G>(ctx);
            if (G::rank() == 0 && ctx.my_pe() == 0 &&
                pgas::atomic_fetch(ctx, count, 0) != (unsigned long long)r * ctx.n_pes())
                atomicAdd_system(errors, 1ull);
            pgas::sync_all<G>(ctx);
        }
    }
}

template <class G>
void run_group_suite(int n) {
    check_ring_rma<G>(n);
    auto w = make_world(n);
    unsigned long long* errors = nullptr;
    CHECK_CUDA(cudaMallocManaged(&errors, sizeof(unsigned long long)));
    *errors = 0;
    auto data = w.alloc<std::uint64_t>(2048);
    auto sig = w.alloc<std::uint64_t>(1);
    auto ack = w.alloc<std::uint64_t>(1);
    launch_all(w, 1, 256, put_signal_hammer<G>, data, sig, ack, std::size_t(2011), 500, errors);
    CHECK(*errors == 0);
    auto count = w.alloc<unsigned long long>(1);
    launch_all(w, 1, 128, barrier_storm<G>, count, 300, errors);
    CHECK(*errors == 0);
    cudaFree(errors);
}

void check_on_stream(int n);
void check_collectives(int n);

void run_suite(int n) {
    SUBCASE("thread") { run_group_suite<pgas::thread>(n); }
    SUBCASE("tile<8>") { run_group_suite<pgas::tile<8>>(n); }
    SUBCASE("warp") { run_group_suite<pgas::warp>(n); }
    SUBCASE("block") { run_group_suite<pgas::block>(n); }
    SUBCASE("on-stream forms in a CUDA graph") { check_on_stream(n); }
    SUBCASE("collectives on a stream, every element checked") { check_collectives(n); }
    // p/g, the single-thread atomics and the waits are the shared case bodies' (tests/common, atomic_test.cu ...).
    SUBCASE("contended atomics, fence under stress") {
        auto w = make_world(n);
        unsigned long long* errors = nullptr;
        CHECK_CUDA(cudaMallocManaged(&errors, sizeof(unsigned long long)));
        *errors = 0;
        auto counter = w.alloc<unsigned long long>(4);
        auto fsum = w.alloc<float>(1);
        auto bits = w.alloc<unsigned int>(3);
        auto cas = w.alloc<int>(1);
        unsigned long long* tickets = nullptr;
        CHECK_CUDA(cudaMallocManaged(&tickets, sizeof(unsigned long long) << 20));
        CHECK_CUDA(cudaMemset(tickets, 0, sizeof(unsigned long long) << 20));
        for (int i = 0; i < w.n_local_pes(); ++i) {  // and-target starts all ones
            unsigned int ones = ~0u;
            CHECK_CUDA(cudaMemcpy(w.device_address(bits + 2, i), &ones, sizeof ones, cudaMemcpyHostToDevice));
        }
        const int blocks = 64, threads = 256;
        launch_all(w, blocks, threads, atomics_contended, counter, fsum, bits, cas, tickets);
        const unsigned long long per_pe = (unsigned long long)blocks * threads * n;
        for (int i = 0; i < w.n_local_pes(); ++i) {
            const int pe = w.local_pe(i);
            auto c = read_back(w, counter, 4, i);
            CHECK(c[0] == per_pe);
            CHECK(c[1] == per_pe);
            if (pe == 0) CHECK(c[2] == per_pe * (unsigned long long)n);  // n fetch_inc per thread, all to PE 0
            if (pe == 0) CHECK(c[3] == (unsigned long long)n);  // one compare_swap winner per PE
            CHECK(read_back(w, fsum, 1, i)[0] == 0.5f * float(per_pe));
            auto b = read_back(w, bits, 3, i);
            CHECK(b[0] == ~0u);
            CHECK(b[1] == 0u);  // each bit flipped an even number of times
            CHECK(b[2] == 0u);
        }
        // tickets are counted per process: complete only when one process drives every PE
        const unsigned long long total_tickets = per_pe * (unsigned long long)n;
        for (unsigned long long t = 0; !one_process_per_gpu() && t < total_tickets && t < (1ull << 20); ++t)
            if (tickets[t] != 1ull) FAIL_CHECK("ticket " << t << " handed out " << tickets[t] << " times");
        cudaFree(tickets);
        auto value = w.alloc<std::uint64_t>(1);
        auto flag = w.alloc<std::uint64_t>(1);
        launch_all(w, 1, 32, fence_order, value, flag, 2000, errors);
        CHECK(*errors == 0);
        cudaFree(errors);
    }
}

// How many of a captured graph's edges are programmatic (pgas's on-stream kernels launch with programmatic
// dependent launch on sm_90+: host/stream/launch.cuh), and how many edges it has.
struct graph_edges {
    std::size_t programmatic = 0, all = 0;
};
inline graph_edges edges_of(cudaGraph_t graph) {
    std::size_t count = 0;
#if CUDART_VERSION >= 13000
    CHECK_CUDA(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count));
#else
    CHECK_CUDA(cudaGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &count));
#endif
    std::vector<cudaGraphNode_t> from(count), to(count);
    std::vector<cudaGraphEdgeData> data(count);
#if CUDART_VERSION >= 13000
    CHECK_CUDA(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count));
#else
    CHECK_CUDA(cudaGraphGetEdges_v2(graph, from.data(), to.data(), data.data(), &count));
#endif
    graph_edges e;
    e.all = count;
    for (const auto& d : data) e.programmatic += d.type == cudaGraphDependencyTypeProgrammatic;
    return e;
}

// On-stream put_signal/signal_wait/get/barrier, captured into one CUDA graph per GPU and replayed. Each replay
// starts from a zeroed inbox and signal, and copies the inbox (get from the PE itself) right after the signal wait:
// on sm_90+ that copy's kernel is launched while the wait's kernel still spins (programmatic launch, early trigger),
// so a kernel that read memory before waiting for its predecessors would copy zeros.
void check_on_stream(int n) {
    auto w = make_world(n);
    const std::size_t count = (std::size_t(3) << 20) + 7;  // many blocks, odd tail
    auto inbox = w.alloc<std::uint64_t>(count);
    auto outbox = w.alloc<std::uint64_t>(count);
    auto sig = w.alloc<std::uint64_t>(1);
    const int local_count = w.n_local_pes();
    std::vector<cudaStream_t> streams(local_count);
    std::vector<cudaGraphExec_t> graphs(local_count);
    std::vector<std::uint64_t*> fetched(local_count), received(local_count);
    for (int i = 0; i < local_count; ++i) {
        const int pe = w.local_pe(i);
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        CHECK_CUDA(cudaMalloc(&fetched[i], count * sizeof(std::uint64_t)));
        CHECK_CUDA(cudaMalloc(&received[i], count * sizeof(std::uint64_t)));
        std::vector<std::uint64_t> pattern(count);
        for (std::size_t k = 0; k < count; ++k) pattern[k] = mix(pe, k, 77);
        CHECK_CUDA(cudaMemcpy(w.device_address(outbox, i), pattern.data(), count * 8, cudaMemcpyHostToDevice));
        auto ctx = w.context<pgas::nvlink>(i);
        const int right = (pe + 1) % n, left = (pe + n - 1) % n;
        cudaGraph_t graph;
        CHECK_CUDA(cudaStreamBeginCapture(streams[i], cudaStreamCaptureModeThreadLocal));
        pgas::put_signal_on_stream(ctx, inbox, ctx.local(outbox), count, sig, 1, pgas::signal_op::add, right, streams[i]);
        pgas::signal_wait_until_on_stream(ctx, sig, pgas::cmp::ge, 1, streams[i]);
        pgas::get_on_stream(ctx, received[i], inbox, count, pe, streams[i]);
        pgas::get_on_stream(ctx, fetched[i], outbox, count, left, streams[i]);
        pgas::quiet_on_stream(ctx, streams[i]);
        pgas::barrier_all_on_stream(ctx, streams[i]);
        CHECK_CUDA(cudaStreamEndCapture(streams[i], &graph));
        int major = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, w.device_of(i)));
        const graph_edges edges = edges_of(graph);
        CHECK(edges.all == 5);  // six kernels in a chain (quiet on nvlink enqueues none)
        CHECK(edges.programmatic == (major >= 9 ? edges.all : 0));
        CHECK_CUDA(cudaGraphInstantiate(&graphs[i], graph, 0));
        CHECK_CUDA(cudaGraphDestroy(graph));
    }
    for (int replay = 0; replay < 3; ++replay) {
        for (int i = 0; i < local_count; ++i) {  // the inbox and signal zeroed on every PE before any PE's put
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            CHECK_CUDA(cudaMemset(w.device_address(inbox, i), 0, count * 8));
            CHECK_CUDA(cudaMemset(w.device_address(sig, i), 0, 8));
            CHECK_CUDA(cudaDeviceSynchronize());
        }
        if (one_process_per_gpu()) w.barrier();
        for (int i = 0; i < local_count; ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            CHECK_CUDA(cudaGraphLaunch(graphs[i], streams[i]));
        }
        for (int i = 0; i < local_count; ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            CHECK_CUDA(cudaStreamSynchronize(streams[i]));
        }
        if (one_process_per_gpu()) w.barrier();  // every PE's graph done before any zeroes its inbox again
        for (int i = 0; i < local_count; ++i) {
            const int left = (w.local_pe(i) + n - 1) % n;
            auto got = read_back(w, inbox, count, i);
            std::vector<std::uint64_t> back(count), copied(count);
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            CHECK_CUDA(cudaMemcpy(back.data(), fetched[i], count * 8, cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(copied.data(), received[i], count * 8, cudaMemcpyDeviceToHost));
            std::size_t bad = 0, early = 0;
            for (std::size_t k = 0; k < count; ++k) {
                bad += (got[k] != mix(left, k, 77)) + (back[k] != mix(left, k, 77));
                early += copied[k] != mix(left, k, 77);
            }
            CHECK(bad == 0);
            CHECK_MESSAGE(early == 0, "replay ", replay, ": the inbox copied after the signal wait missed ", early,
                          " elements");
            CHECK(read_back(w, sig, 1, i)[0] == 1u);
        }
    }
    for (int i = 0; i < local_count; ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        cudaGraphExecDestroy(graphs[i]);
        cudaStreamDestroy(streams[i]);
        cudaFree(fetched[i]);
        cudaFree(received[i]);
    }
}

// Fills local PE i's src (`count` elements) with value(pe, k), runs `call` on
// every local PE's stream, and returns nothing: callers read dst back.
template <class T, class Value>
void fill(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count, Value value) {
    for (int i = 0; i < w.n_local_pes(); ++i) {
        std::vector<T> host(count);
        for (std::size_t k = 0; k < count; ++k) host[k] = value(w.local_pe(i), k);
        CHECK_CUDA(cudaMemcpy(w.device_address(p, i), host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    }
}

template <class Call>
void on_each_stream(pgas::world& w, Call call) {
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        call(w.context<pgas::nvlink>(i), pe_stream(w, i));
        CHECK_CUDA(cudaGetLastError());
    }
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    w.barrier();
}

void check_collectives(int n) {
    auto w = make_world(n);
    const pgas::team all = pgas::team::world_team(0, n);
    // 1 and 1027 run LL; 50001 (25 blocks) and 2^20 + 3 (64 blocks) the multi-block direct path
    for (std::size_t count : {std::size_t(1), std::size_t(1027), std::size_t(50001), (std::size_t(1) << 20) + 3}) {
        CAPTURE(count);
        auto src = w.alloc<float>(count * n);
        auto dst = w.alloc<float>(count * n);
        auto isrc = w.alloc<int>(count);
        auto idst = w.alloc<int>(count);
        // small integers keep float sums exact whatever the order
        auto fval = [](int pe, std::size_t k) { return float(int((k * 7 + pe * 13) % 101) - 50); };
        fill(w, src, count * n, fval);
        fill(w, isrc, count, [](int pe, std::size_t k) { return int((k * 31 + pe * 1009) % 100003); });
        on_each_stream(w, [&](auto ctx, cudaStream_t s) {
            pgas::allreduce_on_stream(ctx, all, dst, src, count, pgas::op::sum, s);
            pgas::allreduce_on_stream(ctx, all, idst, isrc, count, pgas::op::max, s);
        });
        for (int i = 0; i < w.n_local_pes(); ++i) {
            auto got = read_back(w, dst, count, i);
            auto igot = read_back(w, idst, count, i);
            std::size_t bad = 0;
            for (std::size_t k = 0; k < count; ++k) {
                float sum = 0;
                int best = 0;
                for (int pe = 0; pe < n; ++pe) {
                    sum += fval(pe, k);
                    best = std::max(best, int((k * 31 + pe * 1009) % 100003));
                }
                bad += (got[k] != sum) + (igot[k] != best);
            }
            CHECK_MESSAGE(bad == 0, "allreduce: " << bad << " wrong elements");
        }
        on_each_stream(w, [&](auto ctx, cudaStream_t s) { pgas::allgather_on_stream(ctx, all, dst, src, count, s); });
        for (int i = 0; i < w.n_local_pes(); ++i) {
            auto got = read_back(w, dst, count * n, i);
            std::size_t bad = 0;
            for (int pe = 0; pe < n; ++pe)
                for (std::size_t k = 0; k < count; ++k) bad += got[pe * count + k] != fval(pe, k);
            CHECK_MESSAGE(bad == 0, "allgather: " << bad << " wrong elements");
        }
        on_each_stream(w, [&](auto ctx, cudaStream_t s) { pgas::alltoall_on_stream(ctx, all, dst, src, count, s); });
        for (int i = 0; i < w.n_local_pes(); ++i) {
            const int me = w.local_pe(i);
            auto got = read_back(w, dst, count * n, i);
            std::size_t bad = 0;
            for (int pe = 0; pe < n; ++pe)  // block pe of my dst = block me of pe's src
                for (std::size_t k = 0; k < count; ++k) bad += got[pe * count + k] != fval(pe, me * count + k);
            CHECK_MESSAGE(bad == 0, "alltoall: " << bad << " wrong elements");
        }
        on_each_stream(w, [&](auto ctx, cudaStream_t s) {
            pgas::broadcast_on_stream(ctx, all, dst, src, count, n - 1, s);
        });
        for (int i = 0; i < w.n_local_pes(); ++i) {
            auto got = read_back(w, dst, count, i);
            std::size_t bad = 0;
            for (std::size_t k = 0; k < count; ++k) bad += got[k] != fval(n - 1, k);
            CHECK_MESSAGE(bad == 0, "broadcast: " << bad << " wrong elements");
        }
        on_each_stream(w, [&](auto ctx, cudaStream_t s) {
            pgas::reduce_scatter_on_stream(ctx, all, dst, src, count, pgas::op::sum, s);
        });
        for (int i = 0; i < w.n_local_pes(); ++i) {
            const int me = w.local_pe(i);
            auto got = read_back(w, dst, count, i);
            std::size_t bad = 0;
            for (std::size_t k = 0; k < count; ++k) {
                float sum = 0;
                for (int pe = 0; pe < n; ++pe) sum += fval(pe, me * count + k);
                bad += got[k] != sum;
            }
            CHECK_MESSAGE(bad == 0, "reduce_scatter: " << bad << " wrong elements");
        }
        w.free(idst);
        w.free(isrc);
        w.free(dst);
        w.free(src);
    }
}

// One warp copies `bytes` from src to dst with `Depth` 16-byte loads in flight a lane (the combine's push).
template <unsigned Depth>
__global__ void deep_copy_kernel(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
    pgas::detail::group_copy<pgas::warp, false, Depth>(dst, src, bytes);
}

// group_copy with more loads in flight than the default: sizes around each step of 8 and of the 4 its tail
// halves to (a warp's step is 4 KiB at 8, 2 KiB at 4), the combine's rows (hidden 7168: 14 KiB), 8-byte aligned
// ends; every byte checked, the bytes past the end untouched.
template <unsigned Depth>
void check_deep_copy() {
    const std::size_t most = 40 << 10, guard = 64;
    unsigned char *src = nullptr, *dst = nullptr;
    CHECK_CUDA(cudaMalloc(&src, most + guard));
    CHECK_CUDA(cudaMalloc(&dst, most + guard));
    std::vector<unsigned char> pattern(most + guard);
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(mix(i, Depth, 7));
    CHECK_CUDA(cudaMemcpy(src, pattern.data(), pattern.size(), cudaMemcpyHostToDevice));
    for (std::size_t bytes : {std::size_t{0}, std::size_t{16}, std::size_t{24}, std::size_t{512}, std::size_t{2048},
                              std::size_t{2064}, std::size_t{4080}, std::size_t{4096}, std::size_t{4112},
                              std::size_t{6144}, std::size_t{6160}, std::size_t{8192 + 2048 + 512 + 8},
                              std::size_t{14336}, std::size_t{14336 + 16}, std::size_t{40 << 10}}) {
        CAPTURE(bytes);
        CHECK_CUDA(cudaMemset(dst, 0xA5, most + guard));
        deep_copy_kernel<Depth><<<1, 32>>>(dst, src, bytes);
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<unsigned char> got(most + guard);
        CHECK_CUDA(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost));
        std::size_t wrong = 0, touched = 0;
        for (std::size_t i = 0; i < bytes; ++i) wrong += got[i] != pattern[i];
        for (std::size_t i = bytes; i < got.size(); ++i) touched += got[i] != 0xA5;
        CHECK_MESSAGE(wrong == 0, wrong << " bytes copied wrong");
        CHECK_MESSAGE(touched == 0, touched << " bytes past the end written");
    }
    CHECK_CUDA(cudaFree(src));
    CHECK_CUDA(cudaFree(dst));
}

}  // namespace

TEST_SUITE("one_gpu") {
    TEST_CASE("every op with one PE on one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        run_suite(1);
    }
    TEST_CASE("a warp's copy with 8 and 16 loads in flight: every byte, every tail, nothing past the end") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        CHECK_CUDA(cudaSetDevice(0));
        check_deep_copy<8>();
        check_deep_copy<16>();
    }
}

// One process per PE under a launcher; the PE count is the world size (processes_suite_pes in support.cuh).
TEST_SUITE("processes") {
    TEST_CASE("every op between PEs of one process each (pgasrun -n N, or mpirun or torchrun with N processes)") {
        run_suite(processes_suite_pes());
    }
}

// Two PEs on one GPU, one process: the whole multi-PE suite on a machine with
// one GPU (the peers' heaps are the same GPU's memory, so this checks the
// algorithms and the memory model, not NVLink).
TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("every op between two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        run_suite(2);
    }
}

// One process drives PGAS_TEST_GPUS GPUs (default 2), one PE each.
TEST_SUITE("gpus") {
    TEST_CASE("every op between GPUs driven by one process") { run_suite(gpus_suite_pes()); }
    TEST_CASE("bad input: unknown device and empty device list") {
        CHECK_THROWS_WITH_AS(pgas::world::init_local(std::vector<int>{0, 99}, options()),
                             doctest::Contains("CUDA device 99 does not exist"), pgas::error);
        CHECK_THROWS_AS(pgas::world::init_local(std::vector<int>{}, options()), pgas::error);
    }
}
