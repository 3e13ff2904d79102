// pgas's side of the side-by-side comparison: the same measurements as nvshmem_compare and nccl_compare, one JSON line each.
//
// One process drives both GPUs (world::init_local({0, 1}), one PE per GPU,
// NVLink transport). Point-to-point figures time GPU 0 (PE 0) alone; the
// ping-pong, barrier and collectives run on both GPUs, timed on GPU 0.
#include "common.hpp"
#include "p2p_kernels.cuh"

#include <pgas/pgas.hpp>
#include <pgas/host/coll_on_stream.cuh>  // barrier_all_on_stream
#include <pgas/host/on_stream.cuh>

// The collectives (issue 5) are measured when their headers exist (CMake's
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
#if __has_include(<pgas/host/coll_on_stream.cuh>) && !defined(PGAS_COMPARE_COLL_ON_STREAM)
#define PGAS_COMPARE_COLL_ON_STREAM 1
#endif
#endif
#ifndef PGAS_COMPARE_COLL_ON_STREAM
#define PGAS_COMPARE_COLL_ON_STREAM 0
#endif
#if PGAS_COMPARE_COLL_ON_STREAM
#include <pgas/host/coll_on_stream.cuh>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::nvlink>;
using compare::block_threads;

// --- kernels -------------------------------------------------------------------

// PE 0 and PE 1 bounce one flag `rounds` times; values grow across launches
// (base lives in each GPU's own memory) so graph replays need no reset.
__global__ void pingpong(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> flag,
                         std::uint64_t* base, int rounds) {
    const int me = ctx.my_pe(), peer = 1 - me;
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
// pgas's on-stream collectives (pgas/host/coll_on_stream.cuh), on the world team.
constexpr const char* coll_form = "on_stream";
void launch_collective(compare::coll c, const ctx_t& ctx, pgas::symmetric_ptr<float> dst,
                       pgas::symmetric_ptr<float> src, std::size_t count, cudaStream_t s) {
    using compare::coll;
    const pgas::team world = ctx.world_team();
    switch (c) {
        case coll::allreduce: pgas::allreduce_on_stream(ctx, world, dst, src, count, pgas::op::sum, s); break;
        case coll::allgather: pgas::allgather_on_stream(ctx, world, dst, src, count, s); break;
        case coll::reduce_scatter: pgas::reduce_scatter_on_stream(ctx, world, dst, src, count, pgas::op::sum, s); break;
        case coll::broadcast: pgas::broadcast_on_stream(ctx, world, dst, src, count, 0, s); break;
        case coll::alltoall: pgas::alltoall_on_stream(ctx, world, dst, src, count, s); break;
    }
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

// Issue 5's in-kernel figure: one block calls allreduce<block> of 2 floats
// `rounds` times inside one running kernel.
__global__ void __launch_bounds__(compare::coll_threads)
allreduce_loop(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<float> dst, pgas::symmetric_ptr<float> src,
               int rounds) {
    for (int i = 0; i < rounds; ++i)
        pgas::allreduce<pgas::block>(ctx, ctx.world_team(), dst, src, 2, pgas::op::sum);
}
#endif

// --- harness -------------------------------------------------------------------

struct bench {
    pgas::world& w;
    std::vector<ctx_t> ctx;
    std::vector<cudaStream_t> stream;
    std::string machine, date;
    std::size_t max_bytes;
    pgas::symmetric_ptr<char> src, dst;       // max_bytes each, on every PE
    pgas::symmetric_ptr<std::uint64_t> flag;  // [0] ping-pong flag, [1] fetch-add target
    pgas::symmetric_ptr<std::uint64_t> words; // message-rate targets
    std::vector<std::uint64_t*> base;         // per GPU: [0] ping-pong epoch, [1] fetch-add sink

    int n() const { return w.n_local_pes(); }
    int device(int i) const { return w.device_of(i); }
    template <class T>
    T* raw(pgas::symmetric_ptr<T> p, int i) const { return w.device_address(p, i); }

    void emit(const char* benchmark, std::size_t bytes, const compare::timing& t, double factor, bool ok,
              double rate = 0) const {
        compare::record r;
        r.impl = "pgas";
        r.benchmark = benchmark;
        r.bytes = bytes;
        r.t = t;
        r.busbw_factor = factor;
        r.ok = ok;
        r.rate_mops = rate;
        compare::emit(r, machine, date);
    }

    // Graph of `iters` enqueues on the given PEs, replayed; timed on the first.
    compare::timing time(const std::vector<int>& pes, int iters, int reps,
                         const std::function<void(int pe, cudaStream_t)>& enqueue) {
        for (int pe : pes) {  // one eager call on every GPU first (see compare::capture)
            COMPARE_CUDA(cudaSetDevice(device(pe)));
            enqueue(pe, stream[pe]);
        }
        for (int pe : pes) {
            COMPARE_CUDA(cudaSetDevice(device(pe)));
            COMPARE_CUDA(cudaStreamSynchronize(stream[pe]));
            COMPARE_CUDA(cudaGetLastError());
        }
        std::vector<compare::lane> lanes;
        for (int pe : pes)
            lanes.push_back(compare::capture(device(pe), stream[pe], iters,
                                             [&](cudaStream_t s) { enqueue(pe, s); }, false));
        auto t = compare::replay(lanes, iters, reps, nullptr);
        for (auto& l : lanes) compare::release(l);
        return t;
    }

    // The destination of a put/get holds the source pattern at both ends.
    bool same_ends(const char* a, const char* b, std::size_t bytes) const {
        float x[2], y[2];
        COMPARE_CUDA(cudaMemcpy(&x[0], a, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&x[1], a + bytes - 4, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&y[0], b, 4, cudaMemcpyDefault));
        COMPARE_CUDA(cudaMemcpy(&y[1], b + bytes - 4, 4, cudaMemcpyDefault));
        return x[0] == y[0] && x[1] == y[1];
    }

    void p_pingpong() {
        using namespace compare;
        auto t = time({0, 1}, loop_kernels, loop_reps, [&](int pe, cudaStream_t s) {
            pingpong<<<1, 1, 0, s>>>(ctx[pe], flag, base[pe], loop_rounds);
        });
        const double per = 2.0 * loop_rounds;  // one-way trips per kernel
        t.us /= per, t.min_us /= per, t.max_us /= per;
        emit("p_pingpong", 8, t, 0, true);
    }

    void bandwidth(const char* benchmark, bool is_put, bool grid) {
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            const auto pl = compare::plan_for(bytes);
            // poison the destination: put lands on PE 1, get on PE 0
            COMPARE_CUDA(cudaSetDevice(device(is_put ? 1 : 0)));
            COMPARE_CUDA(cudaMemset(raw(dst, is_put ? 1 : 0), 0xff, bytes));
            COMPARE_CUDA(cudaDeviceSynchronize());
            const unsigned blocks = grid ? unsigned(compare::grid_blocks(bytes)) : 1u;
            auto t = time({0}, pl.iters, pl.reps, [&](int, cudaStream_t s) {
                if (is_put && grid) put_nbi_grid<<<blocks, block_threads, 0, s>>>(ctx[0], dst, raw(src, 0), bytes, 1);
                if (is_put && !grid) put_block<<<1, block_threads, 0, s>>>(ctx[0], dst, raw(src, 0), bytes, 1);
                if (!is_put && grid) get_nbi_grid<<<blocks, block_threads, 0, s>>>(ctx[0], raw(dst, 0), src, bytes, 1);
                if (!is_put && !grid) get_block<<<1, block_threads, 0, s>>>(ctx[0], raw(dst, 0), src, bytes, 1);
            });
            const bool ok = is_put ? same_ends(raw(dst, 1), raw(src, 0), bytes) : same_ends(raw(dst, 0), raw(src, 1), bytes);
            emit(benchmark, bytes, t, 1.0, ok);
        }
    }

    void put_rate_8B() {
        using namespace compare;
        auto t = time({0}, 20, 15, [&](int, cudaStream_t s) {
            put_rate<<<rate_blocks, rate_threads, 0, s>>>(ctx[0], words, raw(words, 0), 1);
        });
        const double per = double(rate_messages);
        const double rate = per / t.us;  // messages per us = M messages per s
        t.us /= per, t.min_us /= per, t.max_us /= per;
        emit("put_rate_8B", 8, t, 1.0, true, rate);
    }

    void atomic_fetch_add() {
        using namespace compare;
        auto t = time({0}, loop_kernels, loop_reps, [&](int, cudaStream_t s) {
            fetch_add_loop<<<1, 1, 0, s>>>(ctx[0], flag + 1, base[0] + 1, loop_rounds, 1);
        });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("atomic_fetch_add", 8, t, 0, true);
    }

    void barrier_all() {
        using namespace compare;
        auto t = time({0, 1}, loop_kernels, loop_reps, [&](int pe, cudaStream_t s) {
            barrier_loop<<<1, 1, 0, s>>>(ctx[pe], loop_rounds);
        });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("barrier_all", 0, t, 0, true);
    }

    // pgas::put_on_stream + pgas::quiet_on_stream of 8 bytes, PE 0 -> PE 1.
    void put_quiet_on_stream() {
        COMPARE_CUDA(cudaSetDevice(device(1)));
        COMPARE_CUDA(cudaMemset(raw(dst, 1), 0xff, 8));
        auto t = time({0}, compare::on_stream_iters, 15, [&](int, cudaStream_t s) {
            pgas::put_on_stream(ctx[0], dst, raw(src, 0), 8, 1, s);
            pgas::quiet_on_stream(ctx[0], s);
        });
        emit("put_quiet_on_stream", 8, t, 0, same_ends(raw(dst, 1), raw(src, 0), 8));
    }

    void barrier_all_on_stream() {
        auto t = time({0, 1}, compare::on_stream_iters, 15,
                      [&](int pe, cudaStream_t s) { pgas::barrier_all_on_stream(ctx[pe], s); });
        emit("barrier_all_on_stream", 0, t, 0, true);
    }

#if PGAS_COMPARE_COLLECTIVES
    void collective(compare::coll c) {
        const int n_pes = n();
        const auto fsrc = pgas::symmetric_cast<float>(src);
        const auto fdst = pgas::symmetric_cast<float>(dst);
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            const auto sh = compare::shape(c, bytes, n_pes);
            if (!sh.valid) continue;
            for (int pe = 0; pe < n_pes; ++pe) {
                COMPARE_CUDA(cudaSetDevice(device(pe)));
                compare::fill(raw(fsrc, pe), sh.send_elems, float(pe + 1), stream[pe]);
                COMPARE_CUDA(cudaMemsetAsync(raw(fdst, pe), 0xff, sh.recv_elems * sizeof(float), stream[pe]));
                COMPARE_CUDA(cudaStreamSynchronize(stream[pe]));
            }
            const auto pl = compare::plan_for(bytes);
            auto t = time({0, 1}, pl.iters, pl.reps, [&](int pe, cudaStream_t s) {
                launch_collective(c, ctx[pe], fdst, fsrc, sh.count, s);
            });
            bool ok = true;
            for (int pe = 0; pe < n_pes; ++pe) {
                if (c == compare::coll::broadcast && pe == 0) continue;  // as the peers: the root is not checked
                COMPARE_CUDA(cudaSetDevice(device(pe)));
                ok = compare::check_output(c, pe, n_pes, raw(fdst, pe), sh) && ok;
            }
            emit(compare::name(c), bytes, t, compare::busbw_factor(c, n_pes), ok);
        }
        // the sources hold the collectives' pattern now: restore the put/get one
        for (int pe = 0; pe < n_pes; ++pe) {
            COMPARE_CUDA(cudaSetDevice(device(pe)));
            compare::fill(reinterpret_cast<float*>(raw(src, pe)), max_bytes / 4, float(pe) + 1.5f);
        }
    }

    void allreduce_in_kernel() {
        using namespace compare;
        const auto fsrc = pgas::symmetric_cast<float>(src);
        const auto fdst = pgas::symmetric_cast<float>(dst);
        auto t = time({0, 1}, loop_kernels, loop_reps, [&](int pe, cudaStream_t s) {
            allreduce_loop<<<1, coll_threads, 0, s>>>(ctx[pe], fdst, fsrc, loop_rounds);
        });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("allreduce_8B_in_kernel", 8, t, 0, true);
    }
#endif
};

}  // namespace

int main() {
    int gpus = 0;
    COMPARE_CUDA(cudaGetDeviceCount(&gpus));
    COMPARE_REQUIRE(gpus >= 2, "pgas_compare needs 2 GPUs, found %d", gpus);
    const std::size_t max_bytes = compare::sweep_sizes().empty() ? 8 : compare::sweep_sizes().back();

    pgas::world_options options;
    if (!std::getenv("PGAS_HEAP_SIZE")) options.heap_bytes = 2 * max_bytes + (std::size_t{256} << 20);
    auto w = pgas::world::init_local(std::vector<int>{0, 1}, options);

    bench b{w};
    b.machine = compare::machine_name(2, 0);
    b.date = compare::utc_now();
    b.max_bytes = max_bytes;
    b.src = w.alloc<char>(max_bytes);
    b.dst = w.alloc<char>(max_bytes);
    b.flag = w.alloc<std::uint64_t>(2);  // [0] ping-pong flag, [1] fetch-add target
    b.words = w.alloc<std::uint64_t>(compare::rate_messages);
    for (int i = 0; i < b.n(); ++i) {
        b.ctx.push_back(w.context<pgas::nvlink>(i));
        COMPARE_CUDA(cudaSetDevice(b.device(i)));
        cudaStream_t s;
        COMPARE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        b.stream.push_back(s);
        std::uint64_t* base = nullptr;
        COMPARE_CUDA(cudaMalloc(&base, 2 * sizeof *base));  // [0] ping-pong epoch, [1] fetch-add sink
        COMPARE_CUDA(cudaMemset(base, 0, 2 * sizeof *base));
        b.base.push_back(base);
        // a pattern, never zeros (docs/perf/README.md): rank r holds r + 1.5
        compare::fill(reinterpret_cast<float*>(b.raw(b.src, i)), max_bytes / 4, float(i) + 1.5f);
    }

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
    std::fprintf(stderr, "pgas_compare: collectives through the %s form\n", coll_form);
    if (compare::selected("allreduce_8B_in_kernel")) b.allreduce_in_kernel();
    for (auto c : compare::all_colls)
        if (compare::selected(compare::name(c))) b.collective(c);
#else
    std::fprintf(stderr, "pgas_compare: built without pgas collectives\n");
#endif
    for (int i = 0; i < b.n(); ++i) {
        COMPARE_CUDA(cudaSetDevice(b.device(i)));
        COMPARE_CUDA(cudaDeviceSynchronize());
    }
    return 0;
}
