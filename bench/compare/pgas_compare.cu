// pgas's side of the side-by-side comparison: the same measurements as nvshmem_compare and nccl_compare, one JSON line each.
//
// One PE per process, as users launch it and as nvshmem_compare runs: PGAS_COMPARE_RANKS forked ranks
// (default 2), rank r on GPU r % GPUs (so on a one-GPU machine two ranks share GPU 0; run them under CUDA
// MPS), each joining the world with world::init_gpu over the TCP bootstrap on 127.0.0.1. Point-to-point
// figures time PE 0 alone (towards PE 1); the ping-pong runs on PEs 0 and 1; barriers and collectives run
// on every PE; all are timed on PE 0.
#include "common.hpp"
#include "p2p_kernels.cuh"

#include <pgas/pgas.hpp>
#include <pgas/host/stream/collectives.cuh>  // barrier_all_on_stream
#include <pgas/host/stream/rma.cuh>

// The collectives are measured when their headers exist (CMake's
// PGAS_COMPARE_WITH_COLLECTIVES=OFF defines this to 0).
#ifndef PGAS_COMPARE_COLLECTIVES
#if __has_include(<pgas/coll/reduce.hpp>)
#define PGAS_COMPARE_COLLECTIVES 1
#else
#define PGAS_COMPARE_COLLECTIVES 0
#endif
#endif
#if PGAS_COMPARE_COLLECTIVES
#include <pgas/coll/allgather.hpp>
#include <pgas/coll/alltoall.hpp>
#include <pgas/coll/broadcast.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/reduce_scatter.hpp>
#if __has_include(<pgas/host/stream/collectives.cuh>) && !defined(PGAS_COMPARE_COLL_ON_STREAM)
#define PGAS_COMPARE_COLL_ON_STREAM 1
#endif
#endif
#ifndef PGAS_COMPARE_COLL_ON_STREAM
#define PGAS_COMPARE_COLL_ON_STREAM 0
#endif
#if PGAS_COMPARE_COLL_ON_STREAM
#include <pgas/host/stream/collectives.cuh>
#endif

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::nvlink>;
using compare::block_threads;

// --- kernels -------------------------------------------------------------------

// PE 0 and PE 1 bounce one flag `rounds` times; values grow across launches
// (base lives in each GPU's own memory) so graph replays need no reset.
// PEs 2 and up return at once (their graphs still replay with the others').
__global__ void pingpong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> flag,
                         std::uint64_t* base, int rounds) {
    const int me = ctx.my_pe(), peer = 1 - me;
    if (me > 1) return;
    const std::uint64_t start = *base;
    for (int i = 1; i <= rounds; ++i) {
        const std::uint64_t v = start + std::uint64_t(i);
        if (me == 0) {
            pgas::p(ctx, flag, v, peer);
            pgas::wait_until(ctx, flag, pgas::cmp::ge, v);
        } else {
            pgas::wait_until(ctx, flag, pgas::cmp::ge, v);
            pgas::p(ctx, flag, v, peer);
        }
    }
    *base = start + std::uint64_t(rounds);
}

// One block: put<block> of the whole message, then quiet.
__global__ void __launch_bounds__(compare::block_threads)
put_block(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<char> dst, const char* src,
                          std::size_t bytes, int pe) {
    pgas::put<pgas::block>(ctx, dst, src, bytes, pe);
    pgas::quiet<pgas::block>(ctx);
}

// Many blocks: each put_nbi<block>s its chunk, then quiet.
__global__ void __launch_bounds__(compare::block_threads)
put_nbi_grid(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<char> dst, const char* src,
                             std::size_t bytes, int pe) {
    const std::size_t chunk = compare::chunk_bytes(bytes, gridDim.x);
    const std::size_t first = chunk * blockIdx.x;
    if (first < bytes) {
        const std::size_t n = bytes - first < chunk ? bytes - first : chunk;
        pgas::put_nbi<pgas::block>(ctx, dst + first, src + first, n, pe);
    }
    pgas::quiet<pgas::block>(ctx);
}

__global__ void __launch_bounds__(compare::block_threads)
get_block(const __grid_constant__ ctx_t ctx, char* dst, pgas::symmetric_ptr<char> src,
                          std::size_t bytes, int pe) {
    pgas::get<pgas::block>(ctx, dst, src, bytes, pe);
}

__global__ void __launch_bounds__(compare::block_threads)
get_nbi_grid(const __grid_constant__ ctx_t ctx, char* dst, pgas::symmetric_ptr<char> src,
                             std::size_t bytes, int pe) {
    const std::size_t chunk = compare::chunk_bytes(bytes, gridDim.x);
    const std::size_t first = chunk * blockIdx.x;
    if (first < bytes) {
        const std::size_t n = bytes - first < chunk ? bytes - first : chunk;
        pgas::get_nbi<pgas::block>(ctx, dst + first, src + first, n, pe);
    }
    pgas::quiet<pgas::block>(ctx);
}

// Every thread issues rate_per_thread 8-byte put_nbi to distinct words, then quiet.
__global__ void put_rate(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> dst,
                         const std::uint64_t* src, int pe) {
    const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int k = 0; k < compare::rate_per_thread; ++k) {
        const std::size_t i = std::size_t(k) * threads + tid;
        pgas::put_nbi<pgas::thread>(ctx, dst + i, src + i, 1, pe);
    }
    pgas::quiet<pgas::thread>(ctx);
}

// One thread: `rounds` fetch-adds on PE pe's word, each waiting for the one
// before (the next addend depends on the fetched value): round-trip latency.
__global__ void fetch_add_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> word,
                               std::uint64_t* sink, int rounds, int pe) {
    std::uint64_t seen = 0;
    for (int i = 0; i < rounds; ++i) seen = pgas::atomic_fetch_add(ctx, word, 1 + (seen >> 63), pe);
    *sink = seen;
}

__global__ void barrier_loop(const __grid_constant__ ctx_t ctx, int rounds) {
    for (int i = 0; i < rounds; ++i) pgas::barrier_all<pgas::thread>(ctx);
}

#if PGAS_COMPARE_COLLECTIVES
#if PGAS_COMPARE_COLL_ON_STREAM
// pgas's on-stream collectives (pgas/host/stream/collectives.cuh), on the world team.
constexpr const char* coll_form = "on_stream";
template <class Policy>
void launch_with(compare::coll c, const ctx_t& ctx, pgas::symmetric_ptr<float> dst, pgas::symmetric_ptr<float> src,
                 std::size_t count, cudaStream_t s) {
    using compare::coll;
    const pgas::team world = ctx.world_team();
    switch (c) {
        case coll::allreduce: pgas::allreduce_on_stream<Policy>(ctx, world, dst, src, count, pgas::op::sum, s); break;
        case coll::allgather: pgas::allgather_on_stream<Policy>(ctx, world, dst, src, count, s); break;
        case coll::reduce_scatter:
            pgas::reduce_scatter_on_stream<Policy>(ctx, world, dst, src, count, pgas::op::sum, s);
            break;
        case coll::broadcast: pgas::broadcast_on_stream<Policy>(ctx, world, dst, src, count, 0, s); break;
        case coll::alltoall: pgas::alltoall_on_stream<Policy>(ctx, world, dst, src, count, s); break;
    }
}
// PGAS_COMPARE_COLL_POLICY=ll or direct forces that algorithm at every size (the records' impl is then "pgas-ll"
// or "pgas-direct"): tuning runs of coll/tuning.hpp's size rule with one process per GPU, as users launch, where
// one process driving every GPU (bench_coll_tune) varied 7.5-39 us between runs of one size.
const char* forced_policy() {
    const char* v = std::getenv("PGAS_COMPARE_COLL_POLICY");
    if (v == nullptr || *v == '\0' || std::string(v) == "auto") return nullptr;
    if (std::string(v) == "ll" || std::string(v) == "direct") return v;
    std::fprintf(stderr, "pgas_compare: PGAS_COMPARE_COLL_POLICY=%s: expected auto, ll or direct\n", v);
    std::exit(2);
}
#ifdef PGAS_COMPARE_LL_BLOCK_BYTES
// Built with -DPGAS_COMPARE_LL_BLOCK_BYTES=N (CMake cache variable of that name): the default policy with N bytes
// per LL block, the tuning runs of coll::load_store_policy::ll_bytes_per_block (records' impl pgas-llblock-N).
struct default_policy : pgas::coll::load_store_policy {
    static constexpr std::size_t ll_bytes_per_block = PGAS_COMPARE_LL_BLOCK_BYTES;
};
static_assert(pgas::coll::tuning_policy<default_policy>, "PGAS_COMPARE_LL_BLOCK_BYTES must be at least 1");
#else
using default_policy = pgas::coll::automatic;
#endif
void launch_collective(compare::coll c, const ctx_t& ctx, pgas::symmetric_ptr<float> dst,
                       pgas::symmetric_ptr<float> src, std::size_t count, cudaStream_t s) {
    static const char* forced = forced_policy();
    if (forced == nullptr) return launch_with<default_policy>(c, ctx, dst, src, count, s);
    if (forced[0] == 'l') return launch_with<pgas::coll::ll_policy>(c, ctx, dst, src, count, s);
    launch_with<pgas::coll::direct_policy>(c, ctx, dst, src, count, s);
}
// The records' impl: "pgas", or "pgas-ll" / "pgas-direct" under a forced policy, or "pgas-llblock-N" when built
// with PGAS_COMPARE_LL_BLOCK_BYTES=N (and no policy forced).
std::string impl_name() {
#ifdef PGAS_COMPARE_LL_BLOCK_BYTES
    static const std::string name = forced_policy() ? std::string("pgas-") + forced_policy()
                                                    : "pgas-llblock-" + std::to_string(PGAS_COMPARE_LL_BLOCK_BYTES);
#else
    static const std::string name = forced_policy() ? std::string("pgas-") + forced_policy() : "pgas";
#endif
    return name;
}
#else
// Without on-stream collectives, each PE runs the device-side collective in
// one kernel of one block of coll_threads threads.
constexpr const char* coll_form = "device block kernel";
template <compare::coll C>
__global__ void __launch_bounds__(compare::coll_threads)
collective_block(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<float> dst, pgas::symmetric_ptr<float> src,
                 std::size_t count) {
    const pgas::team world = ctx.world_team();
    if constexpr (C == compare::coll::allreduce) pgas::allreduce<pgas::block>(ctx, world, dst, src, count, pgas::op::sum);
    if constexpr (C == compare::coll::allgather) pgas::allgather<pgas::block>(ctx, world, dst, src, count);
    if constexpr (C == compare::coll::reduce_scatter)
        pgas::reduce_scatter<pgas::block>(ctx, world, dst, src, count, pgas::op::sum);
    if constexpr (C == compare::coll::broadcast) pgas::broadcast<pgas::block>(ctx, world, dst, src, count, 0);
    if constexpr (C == compare::coll::alltoall) pgas::alltoall<pgas::block>(ctx, world, dst, src, count);
}

void launch_collective(compare::coll c, const ctx_t& ctx, pgas::symmetric_ptr<float> dst,
                       pgas::symmetric_ptr<float> src, std::size_t count, cudaStream_t s) {
    using compare::coll;
    constexpr int threads = compare::coll_threads;
    switch (c) {
        case coll::allreduce: collective_block<coll::allreduce><<<1, threads, 0, s>>>(ctx, dst, src, count); break;
        case coll::allgather: collective_block<coll::allgather><<<1, threads, 0, s>>>(ctx, dst, src, count); break;
        case coll::reduce_scatter: collective_block<coll::reduce_scatter><<<1, threads, 0, s>>>(ctx, dst, src, count); break;
        case coll::broadcast: collective_block<coll::broadcast><<<1, threads, 0, s>>>(ctx, dst, src, count); break;
        case coll::alltoall: collective_block<coll::alltoall><<<1, threads, 0, s>>>(ctx, dst, src, count); break;
    }
    COMPARE_CUDA(cudaGetLastError());
}
#endif

// The in-kernel figure: one block calls allreduce<block> of 2 floats
// `rounds` times inside one running kernel.
__global__ void __launch_bounds__(compare::coll_threads)
allreduce_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<float> dst, pgas::symmetric_ptr<float> src,
               int rounds) {
    for (int i = 0; i < rounds; ++i)
        pgas::allreduce<pgas::block>(ctx, ctx.world_team(), dst, src, 2, pgas::op::sum);
}
#endif

#if !(PGAS_COMPARE_COLLECTIVES && PGAS_COMPARE_COLL_ON_STREAM)
std::string impl_name() { return "pgas"; }  // no algorithm to force without the on-stream collectives
#endif

// --- harness -------------------------------------------------------------------

// One PE per process, as NVSHMEM's side runs (forked ranks, rank r on GPU r % GPUs): the same timing code
// (compare::capture / replay with the ranks as the group), so the two columns differ only in the library.
struct bench {
    compare::ranks& rk;
    pgas::world& w;
    ctx_t ctx;
    int me = 0;
    cudaStream_t stream = nullptr;
    std::string machine, date;
    std::size_t max_bytes = 0;
    pgas::symmetric_ptr<char> src, dst;       // max_bytes each, on every PE
    pgas::symmetric_ptr<std::uint64_t> flag;  // [0] ping-pong flag, [1] fetch-add target
    pgas::symmetric_ptr<std::uint64_t> words; // message-rate targets
    std::uint64_t* base = nullptr;            // local: [0] ping-pong epoch, [1] fetch-add sink

    template <class T>
    T* mine(pgas::symmetric_ptr<T> p) const { return ctx.local(p); }

    void emit(const char* benchmark, std::size_t bytes, const compare::timing& t, double factor, bool ok,
              double rate = 0) const {
        if (me != 0) return;
        compare::record r;
        r.impl = impl_name();
        r.benchmark = benchmark;
        r.ranks = rk.size();
        r.bytes = bytes;
        r.t = t;
        r.busbw_factor = factor;
        r.ok = ok;
        r.rate_mops = rate;
        compare::emit(r, machine, date);
    }

    // compare::rank_timer's three ways (shared with the other program, so both time alike).
    compare::rank_timer timer() { return {rk, w.device_of(), stream}; }
    compare::timing time_all(compare::plan pl, const std::function<void(cudaStream_t)>& enqueue) {
        return timer().all(pl, enqueue);
    }
    template <class Body>
    void rank0_only(Body&& body) {
        timer().rank0_only(body);
    }
    compare::timing time_rank0(compare::plan pl, const std::function<void(cudaStream_t)>& enqueue) {
        return timer().alone(pl, enqueue);
    }

    // Both ends of a put/get destination hold the source's bytes (a peer's copy read through its mapping).
    bool same_ends(pgas::symmetric_ptr<char> a, int a_pe, pgas::symmetric_ptr<char> b, int b_pe,
                   std::size_t bytes) const {
        const char* x = ctx.peer(a, a_pe);
        const char* y = ctx.peer(b, b_pe);
        if (!x || !y) return false;
        float v[4];
        COMPARE_CUDA(cudaMemcpy(&v[0], x, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&v[1], x + bytes - 4, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&v[2], y, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&v[3], y + bytes - 4, 4, cudaMemcpyDefault));
        return v[0] == v[2] && v[1] == v[3];
    }

    void p_pingpong() {
        using namespace compare;
        auto t = time_all({loop_kernels, loop_reps},
                          [&](cudaStream_t s) { pingpong<<<1, 1, 0, s>>>(ctx, flag, base, loop_rounds); });
        const double per = 2.0 * loop_rounds;  // one-way trips per kernel
        t.us /= per, t.min_us /= per, t.max_us /= per;
        emit("p_pingpong", 8, t, 0, true);
    }

    void bandwidth(const char* benchmark, bool is_put, bool grid) {
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            // poison the destination: put lands on PE 1, get on PE 0 (PEs 2 and up wait)
            if (me == (is_put ? 1 : 0)) COMPARE_CUDA(cudaMemset(mine(dst), 0xff, bytes));
            COMPARE_CUDA(cudaDeviceSynchronize());
            rank0_only([&] {
                const auto pl = compare::plan_for(bytes);
                const unsigned blocks = grid ? unsigned(compare::grid_blocks(bytes)) : 1u;
                auto t = time_rank0(pl, [&](cudaStream_t s) {
                    if (is_put && grid) put_nbi_grid<<<blocks, block_threads, 0, s>>>(ctx, dst, mine(src), bytes, 1);
                    if (is_put && !grid) put_block<<<1, block_threads, 0, s>>>(ctx, dst, mine(src), bytes, 1);
                    if (!is_put && grid) get_nbi_grid<<<blocks, block_threads, 0, s>>>(ctx, mine(dst), src, bytes, 1);
                    if (!is_put && !grid) get_block<<<1, block_threads, 0, s>>>(ctx, mine(dst), src, bytes, 1);
                });
                const bool ok = is_put ? same_ends(dst, 1, src, 0, bytes) : same_ends(dst, 0, src, 1, bytes);
                emit(benchmark, bytes, t, 1.0, ok);
            });
        }
    }

    void put_rate_8B() {
        using namespace compare;
        rank0_only([&] {
            auto t = time_rank0({20, 15}, [&](cudaStream_t s) {
                put_rate<<<rate_blocks, rate_threads, 0, s>>>(ctx, words, mine(words), 1);
            });
            const double per = double(rate_messages);
            const double rate = per / t.us;  // messages per us = M messages per s
            t.us /= per, t.min_us /= per, t.max_us /= per;
            emit("put_rate_8B", 8, t, 1.0, true, rate);
        });
    }

    void atomic_fetch_add() {
        using namespace compare;
        rank0_only([&] {
            auto t = time_rank0({loop_kernels, loop_reps}, [&](cudaStream_t s) {
                fetch_add_loop<<<1, 1, 0, s>>>(ctx, flag + 1, base + 1, loop_rounds, 1);
            });
            t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
            emit("atomic_fetch_add", 8, t, 0, true);
        });
    }

    void barrier_all() {
        using namespace compare;
        auto t = time_all({loop_kernels, loop_reps}, [&](cudaStream_t s) { barrier_loop<<<1, 1, 0, s>>>(ctx, loop_rounds); });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("barrier_all", 0, t, 0, true);
    }

    // pgas::put_on_stream + pgas::quiet_on_stream of 8 bytes, PE 0 -> PE 1.
    void put_quiet_on_stream() {
        if (me == 1) COMPARE_CUDA(cudaMemset(mine(dst), 0xff, 8));
        COMPARE_CUDA(cudaDeviceSynchronize());
        rank0_only([&] {
            auto t = time_rank0({compare::on_stream_iters, 15}, [&](cudaStream_t s) {
                pgas::put_on_stream(ctx, dst, mine(src), 8, 1, s);
                pgas::quiet_on_stream(ctx, s);
            });
            emit("put_quiet_on_stream", 8, t, 0, same_ends(dst, 1, src, 0, 8));
        });
    }

    void barrier_all_on_stream() {
        auto t = time_all({compare::on_stream_iters, 15}, [&](cudaStream_t s) { pgas::barrier_all_on_stream(ctx, s); });
        emit("barrier_all_on_stream", 0, t, 0, true);
    }

#if PGAS_COMPARE_COLLECTIVES
    void collective(compare::coll c) {
        const int n = rk.size();
        const auto fsrc = pgas::symmetric_cast<float>(src);
        const auto fdst = pgas::symmetric_cast<float>(dst);
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            const auto sh = compare::shape(c, bytes, n);
            if (!sh.valid) continue;
            compare::fill(mine(fsrc), sh.send_elems, float(me + 1), stream);
            COMPARE_CUDA(cudaMemsetAsync(mine(fdst), 0xff, sh.recv_elems * sizeof(float), stream));
            COMPARE_CUDA(cudaStreamSynchronize(stream));
            const auto pl = compare::plan_for(bytes);
            auto t = time_all(pl, [&](cudaStream_t s) { launch_collective(c, ctx, fdst, fsrc, sh.count, s); });
            // the broadcast root's own output is not checked (as the peers: its semantics differ between libraries)
            const bool mine_ok = (c == compare::coll::broadcast && me == 0) ||
                                 compare::check_output(c, me, n, mine(fdst), sh);
            const bool ok = rk.all_ok(mine_ok);
            emit(compare::name(c), sh.bytes, t, compare::busbw_factor(c, n), ok);
        }
        // the sources hold the collectives' pattern now: restore the put/get one
        compare::fill(reinterpret_cast<float*>(mine(src)), max_bytes / 4, float(me) + 1.5f);
        COMPARE_CUDA(cudaDeviceSynchronize());
    }

    void allreduce_in_kernel() {
        using namespace compare;
        const auto fsrc = pgas::symmetric_cast<float>(src);
        const auto fdst = pgas::symmetric_cast<float>(dst);
        auto t = time_all({loop_kernels, loop_reps}, [&](cudaStream_t s) {
            allreduce_loop<<<1, coll_threads, 0, s>>>(ctx, fdst, fsrc, loop_rounds);
        });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("allreduce_8B_in_kernel", 8, t, 0, true);
    }
#endif
};

// A free TCP port on 127.0.0.1 for the ranks' rendezvous (asked of the kernel before the fork).
int free_local_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    COMPARE_REQUIRE(fd >= 0, "socket: %s", std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    COMPARE_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "bind: %s", std::strerror(errno));
    socklen_t len = sizeof addr;
    COMPARE_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0, "getsockname: %s",
                    std::strerror(errno));
    ::close(fd);
    return ntohs(addr.sin_port);
}

int run_rank(compare::ranks& rk) {
    const int me = rk.rank();
    // The launch as pgasrun would describe it; world::init_gpu reads it.
    setenv("PGAS_RANK", std::to_string(me).c_str(), 1);
    setenv("PGAS_LOCAL_RANK", std::to_string(me).c_str(), 1);
    int gpus = 0;
    COMPARE_CUDA(cudaGetDeviceCount(&gpus));
    const std::size_t max_bytes = compare::sweep_sizes().empty() ? 8 : compare::sweep_sizes().back();
    pgas::world_options options;
    if (!std::getenv("PGAS_HEAP_SIZE")) options.heap_bytes = 2 * max_bytes + (std::size_t{256} << 20);
    auto w = pgas::world::init_gpu(options, me % gpus);

    bench b{rk, w, w.context<pgas::nvlink>()};
    b.me = me;
    b.machine = compare::machine_name(rk.size(), me % gpus);
    b.date = compare::utc_now();
    b.max_bytes = max_bytes;
    COMPARE_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    b.src = w.alloc<char>(max_bytes);
    b.dst = w.alloc<char>(max_bytes);
    b.flag = w.alloc<std::uint64_t>(2);  // [0] ping-pong flag, [1] fetch-add target
    b.words = w.alloc<std::uint64_t>(compare::rate_messages);
    COMPARE_CUDA(cudaMalloc(&b.base, 2 * sizeof *b.base));  // [0] ping-pong epoch, [1] fetch-add sink
    COMPARE_CUDA(cudaMemset(b.base, 0, 2 * sizeof *b.base));
    // a pattern, never zeros (docs/perf/README.md): rank r holds r + 1.5
    compare::fill(reinterpret_cast<float*>(b.mine(b.src)), max_bytes / 4, float(me) + 1.5f);
    COMPARE_CUDA(cudaDeviceSynchronize());
    w.barrier();

    if (compare::selected("p_pingpong")) b.p_pingpong();
    if (compare::selected("put_block")) b.bandwidth("put_block", true, false);
    if (compare::selected("put_nbi_grid")) b.bandwidth("put_nbi_grid", true, true);
    if (compare::selected("get_block")) b.bandwidth("get_block", false, false);
    if (compare::selected("get_nbi_grid")) b.bandwidth("get_nbi_grid", false, true);
    if (compare::selected("put_rate_8B")) b.put_rate_8B();
    if (compare::selected("atomic_fetch_add")) b.atomic_fetch_add();
    if (compare::selected("barrier_all")) b.barrier_all();
    if (compare::selected("put_quiet_on_stream")) b.put_quiet_on_stream();
    if (compare::selected("barrier_all_on_stream")) b.barrier_all_on_stream();
#if PGAS_COMPARE_COLLECTIVES
    if (me == 0) std::fprintf(stderr, "pgas_compare: collectives through the %s form\n", coll_form);
    if (compare::selected("allreduce_8B_in_kernel")) b.allreduce_in_kernel();
    for (auto c : compare::all_colls)
        if (compare::selected(compare::name(c))) b.collective(c);
#else
    if (me == 0) std::fprintf(stderr, "pgas_compare: built without pgas collectives\n");
#endif
    COMPARE_CUDA(cudaDeviceSynchronize());
    w.barrier();
    return 0;
}

}  // namespace

int main() {
    // PGAS_COMPARE_RANKS ranks (default 2) as that many processes, like nvshmem_compare (no CUDA call before
    // the fork). Ranks beyond the GPU count share GPUs: start the CUDA MPS daemon first, or they are
    // time-sliced.
    const int n = compare::rank_count();
    const std::string root = "127.0.0.1:" + std::to_string(free_local_port());
    setenv("PGAS_ROOT", root.c_str(), 1);
    setenv("PGAS_WORLD_SIZE", std::to_string(n).c_str(), 1);
    setenv("PGAS_LOCAL_SIZE", std::to_string(n).c_str(), 1);
    if (!std::getenv("PGAS_TOKEN")) {  // 128 random bits, as pgasrun's
        std::random_device random;
        char token[33];
        std::snprintf(token, sizeof token, "%08x%08x%08x%08x", random(), random(), random(), random());
        setenv("PGAS_TOKEN", token, 1);
    }
    return compare::run_forked(n, [](compare::ranks& rk) { return run_rank(rk); });
}
