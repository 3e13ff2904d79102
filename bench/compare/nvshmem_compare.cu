// NVSHMEM's side of the side-by-side comparison: pgas_compare's measurements with NVSHMEM 3.x, one JSON line each.
//
// One process per GPU: main forks PGAS_COMPARE_RANKS ranks (default 2) before
// any CUDA call, rank r on GPU r % GPUs; rank 0 makes an NVSHMEM unique id and
// hands it to the others through shared memory (ranks::broadcast_blob); all
// init with NVSHMEMX_INIT_WITH_UNIQUEID. Point-to-point figures run between
// PEs 0 and 1 (the others wait); barriers and collectives on every PE. Built
// with -rdc against libnvshmem_device.a. NVLink multicast (NVLS) is forced off.
#include "common.hpp"
#include "p2p_kernels.cuh"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using compare::block_threads;

#define COMPARE_NVSHMEM(call)                                                                    \
    do {                                                                                         \
        int compare_rc_ = (call);                                                                \
        if (compare_rc_ != 0) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, compare_rc_); \
            std::exit(2);                                                                        \
        }                                                                                        \
    } while (0)

// --- kernels (the same shapes as pgas_compare's) ----------------------------------

// PEs 0 and 1 bounce the flag (as pgas_compare's); PEs 2 and up return at once.
__global__ void pingpong(std::uint64_t* flag, std::uint64_t* base, int rounds) {
    const int me = nvshmem_my_pe(), peer = 1 - me;
    if (me > 1) return;
    const std::uint64_t start = *base;
    for (int i = 1; i <= rounds; ++i) {
        const std::uint64_t v = start + std::uint64_t(i);
        if (me == 0) {
            nvshmem_uint64_p(flag, v, peer);
            nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
        } else {
            nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_GE, v);
            nvshmem_uint64_p(flag, v, peer);
        }
    }
    *base = start + std::uint64_t(rounds);
}

__global__ void __launch_bounds__(compare::block_threads)
put_block(char* dst, const char* src, std::size_t bytes, int pe) {
    nvshmemx_putmem_block(dst, src, bytes, pe);
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
    __syncthreads();
}

__global__ void __launch_bounds__(compare::block_threads)
put_nbi_grid(char* dst, const char* src, std::size_t bytes, int pe) {
    const std::size_t chunk = compare::chunk_bytes(bytes, gridDim.x);
    const std::size_t first = chunk * blockIdx.x;
    if (first < bytes) {
        const std::size_t n = bytes - first < chunk ? bytes - first : chunk;
        nvshmemx_putmem_nbi_block(dst + first, src + first, n, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
    __syncthreads();
}

__global__ void __launch_bounds__(compare::block_threads)
get_block(char* dst, const char* src, std::size_t bytes, int pe) {
    nvshmemx_getmem_block(dst, src, bytes, pe);
}

__global__ void __launch_bounds__(compare::block_threads)
get_nbi_grid(char* dst, const char* src, std::size_t bytes, int pe) {
    const std::size_t chunk = compare::chunk_bytes(bytes, gridDim.x);
    const std::size_t first = chunk * blockIdx.x;
    if (first < bytes) {
        const std::size_t n = bytes - first < chunk ? bytes - first : chunk;
        nvshmemx_getmem_nbi_block(dst + first, src + first, n, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
    __syncthreads();
}

__global__ void put_rate(std::uint64_t* dst, const std::uint64_t* src, int pe) {
    const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int k = 0; k < compare::rate_per_thread; ++k) {
        const std::size_t i = std::size_t(k) * threads + tid;
        nvshmem_putmem_nbi(dst + i, src + i, sizeof(std::uint64_t), pe);
    }
    nvshmem_quiet();
}

// As pgas_compare's: dependent fetch-adds, one at a time.
__global__ void fetch_add_loop(std::uint64_t* word, std::uint64_t* sink, int rounds, int pe) {
    std::uint64_t seen = 0;
    for (int i = 0; i < rounds; ++i) seen = nvshmem_uint64_atomic_fetch_add(word, 1 + (seen >> 63), pe);
    *sink = seen;
}

__global__ void barrier_loop(int rounds) {
    for (int i = 0; i < rounds; ++i) nvshmem_barrier_all();
}

// One block calls the block-scope sum reduction of 2 floats `rounds` times
// inside one running kernel (pgas_compare's allreduce_8B_in_kernel).
__global__ void __launch_bounds__(compare::coll_threads)
allreduce_loop(float* dst, const float* src, int rounds) {
    for (int i = 0; i < rounds; ++i) nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, dst, src, 2);
}

// --- harness ---------------------------------------------------------------------

struct bench {
    compare::ranks& rk;
    int me = 0;
    int device = 0;  // this rank's GPU (rank % GPUs)
    cudaStream_t stream = nullptr;
    std::string machine, date;
    std::size_t max_bytes = 0;
    char* src = nullptr;            // symmetric, max_bytes
    char* dst = nullptr;            // symmetric, max_bytes
    std::uint64_t* flag = nullptr;  // symmetric: [0] ping-pong flag, [1] fetch-add target
    std::uint64_t* words = nullptr; // symmetric, rate_messages
    std::uint64_t* base = nullptr;  // local: [0] ping-pong epoch, [1] fetch-add sink

    void emit(const char* benchmark, std::size_t bytes, const compare::timing& t, double factor, bool ok,
              double rate = 0) const {
        if (me != 0) return;
        compare::record r;
        r.impl = "nvshmem";
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
    compare::rank_timer timer() { return {rk, device, stream}; }
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

    // Both ends of a put/get destination hold the source's bytes (peer
    // memory read through its NVLink mapping, nvshmem_ptr).
    bool same_ends(const char* a, int a_pe, const char* b, int b_pe, std::size_t bytes) const {
        auto mapped = [&](const char* p, int pe) {
            return pe == me ? p : static_cast<const char*>(nvshmem_ptr(const_cast<char*>(p), pe));
        };
        const char* x = mapped(a, a_pe);
        const char* y = mapped(b, b_pe);
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
                          [&](cudaStream_t s) { pingpong<<<1, 1, 0, s>>>(flag, base, loop_rounds); });
        const double per = 2.0 * loop_rounds;
        t.us /= per, t.min_us /= per, t.max_us /= per;
        emit("p_pingpong", 8, t, 0, true);
    }

    void bandwidth(const char* benchmark, bool is_put, bool grid) {
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            // poison the destination: put lands on PE 1, get on PE 0 (PEs 2 and up wait)
            if (me == (is_put ? 1 : 0)) COMPARE_CUDA(cudaMemset(dst, 0xff, bytes));
            COMPARE_CUDA(cudaDeviceSynchronize());
            rank0_only([&] {
                const auto pl = compare::plan_for(bytes);
                const unsigned blocks = grid ? unsigned(compare::grid_blocks(bytes)) : 1u;
                auto* kernel = is_put ? (grid ? put_nbi_grid : put_block) : (grid ? get_nbi_grid : get_block);
                const int threads = compare::threads_for(kernel, block_threads, benchmark);
                auto t = time_rank0(pl, [&](cudaStream_t s) {
                    kernel<<<blocks, threads, 0, s>>>(dst, src, bytes, 1);
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
                put_rate<<<rate_blocks, rate_threads, 0, s>>>(words, words, 1);
            });
            const double per = double(rate_messages);
            const double rate = per / t.us;
            t.us /= per, t.min_us /= per, t.max_us /= per;
            emit("put_rate_8B", 8, t, 1.0, true, rate);
        });
    }

    void atomic_fetch_add() {
        using namespace compare;
        rank0_only([&] {
            auto t = time_rank0({loop_kernels, loop_reps}, [&](cudaStream_t s) {
                fetch_add_loop<<<1, 1, 0, s>>>(flag + 1, base + 1, loop_rounds, 1);
            });
            t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
            emit("atomic_fetch_add", 8, t, 0, true);
        });
    }

    void barrier_all() {
        using namespace compare;
        auto t = time_all({loop_kernels, loop_reps}, [&](cudaStream_t s) { barrier_loop<<<1, 1, 0, s>>>(loop_rounds); });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("barrier_all", 0, t, 0, true);
    }

    void put_quiet_on_stream() {
        if (me == 1) COMPARE_CUDA(cudaMemset(dst, 0xff, 8));
        COMPARE_CUDA(cudaDeviceSynchronize());
        rank0_only([&] {
            auto t = time_rank0({compare::on_stream_iters, 15}, [&](cudaStream_t s) {
                nvshmemx_putmem_on_stream(dst, src, 8, 1, s);
                nvshmemx_quiet_on_stream(s);
            });
            emit("put_quiet_on_stream", 8, t, 0, same_ends(dst, 1, src, 0, 8));
        });
    }

    void barrier_all_on_stream() {
        auto t = time_all({compare::on_stream_iters, 15}, [&](cudaStream_t s) { nvshmemx_barrier_all_on_stream(s); });
        emit("barrier_all_on_stream", 0, t, 0, true);
    }

    void allreduce_in_kernel() {
        using namespace compare;
        auto* f_src = reinterpret_cast<float*>(src);
        auto* f_dst = reinterpret_cast<float*>(dst);
        const int threads = compare::threads_for(allreduce_loop, coll_threads, "allreduce_8B_in_kernel");
        auto t = time_all({loop_kernels, loop_reps}, [&](cudaStream_t s) {
            allreduce_loop<<<1, threads, 0, s>>>(f_dst, f_src, loop_rounds);
        });
        t.us /= loop_rounds, t.min_us /= loop_rounds, t.max_us /= loop_rounds;
        emit("allreduce_8B_in_kernel", 8, t, 0, true);
    }

    void collective(compare::coll c) {
        const int n = rk.size();
        auto* send = reinterpret_cast<float*>(src);
        auto* recv = reinterpret_cast<float*>(dst);
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            const auto sh = compare::shape(c, bytes, n);
            if (!sh.valid) continue;
            compare::fill(send, sh.send_elems, float(me + 1), stream);
            COMPARE_CUDA(cudaMemsetAsync(recv, 0xff, sh.recv_elems * sizeof(float), stream));
            COMPARE_CUDA(cudaStreamSynchronize(stream));
            const auto pl = compare::plan_for(bytes);
            // The typed on-stream forms (team world, float, sum): the same
            // arguments as NCCL's in compare::shape's counts.
            auto t = time_all(pl, [&](cudaStream_t s) {
                switch (c) {
                    case compare::coll::allreduce:
                        COMPARE_NVSHMEM(nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, recv, send, sh.count, s));
                        break;
                    case compare::coll::allgather:
                        COMPARE_NVSHMEM(nvshmemx_float_fcollect_on_stream(NVSHMEM_TEAM_WORLD, recv, send, sh.count, s));
                        break;
                    case compare::coll::reduce_scatter:  // count: elements each PE ends with
                        COMPARE_NVSHMEM(
                            nvshmemx_float_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, recv, send, sh.count, s));
                        break;
                    case compare::coll::broadcast:  // root PE 0
                        COMPARE_NVSHMEM(nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, recv, send, sh.count, 0, s));
                        break;
                    case compare::coll::alltoall:  // count: elements to each PE
                        COMPARE_NVSHMEM(nvshmemx_float_alltoall_on_stream(NVSHMEM_TEAM_WORLD, recv, send, sh.count, s));
                        break;
                }
            });
            // the broadcast root's own output is not checked (its semantics differ between libraries)
            const bool mine = (c == compare::coll::broadcast && me == 0) ||
                              compare::check_output(c, me, n, recv, sh);
            const bool ok = rk.all_ok(mine);
            emit(compare::name(c), sh.bytes, t, compare::busbw_factor(c, n), ok);
        }
    }
};

void set_default_env(const char* name, const char* value) { setenv(name, value, 0); }

int run_rank(compare::ranks& rk) {
    const int me = rk.rank();
    // Rank r on GPU r % GPUs: on a one-GPU machine two ranks share it, NVSHMEM's "multiple PEs per GPU"
    // (under CUDA MPS; point-to-point and barriers, no on-stream collectives there).
    int gpus = 0;
    COMPARE_CUDA(cudaGetDeviceCount(&gpus));
    const int device = me % gpus;
    COMPARE_CUDA(cudaSetDevice(device));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (me == 0) COMPARE_NVSHMEM(nvshmemx_get_uniqueid(&id));
    id = rk.broadcast_blob(id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    COMPARE_NVSHMEM(nvshmemx_set_attr_uniqueid_args(me, rk.size(), &id, &attr));
    COMPARE_NVSHMEM(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr));
    COMPARE_REQUIRE(nvshmem_my_pe() == me && nvshmem_n_pes() == rk.size(), "NVSHMEM PE %d of %d, expected %d of %d",
                    nvshmem_my_pe(), nvshmem_n_pes(), me, rk.size());

    bench b{rk};
    b.me = me;
    b.device = device;
    b.machine = compare::machine_name(rk.size(), device);
    b.date = compare::utc_now();
    b.max_bytes = compare::sweep_sizes().back();
    COMPARE_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    b.src = static_cast<char*>(nvshmem_malloc(b.max_bytes));
    b.dst = static_cast<char*>(nvshmem_malloc(b.max_bytes));
    b.flag = static_cast<std::uint64_t*>(nvshmem_calloc(2, sizeof(std::uint64_t)));  // [0] ping-pong, [1] fetch-add
    b.words = static_cast<std::uint64_t*>(nvshmem_malloc(compare::rate_messages * sizeof(std::uint64_t)));
    COMPARE_REQUIRE(b.src && b.dst && b.flag && b.words, "nvshmem_malloc failed (raise NVSHMEM_SYMMETRIC_SIZE)");
    COMPARE_CUDA(cudaMalloc(&b.base, 2 * sizeof *b.base));  // [0] ping-pong epoch, [1] fetch-add sink
    COMPARE_CUDA(cudaMemset(b.base, 0, 2 * sizeof *b.base));
    COMPARE_CUDA(cudaMemset(b.words, 0x5a, compare::rate_messages * sizeof(std::uint64_t)));
    compare::fill(reinterpret_cast<float*>(b.src), b.max_bytes / 4, float(me) + 1.5f);
    COMPARE_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();

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
    if (compare::selected("allreduce_8B_in_kernel")) b.allreduce_in_kernel();
    for (auto c : compare::all_colls)
        if (compare::selected(compare::name(c))) b.collective(c);

    COMPARE_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    nvshmem_free(b.words);
    nvshmem_free(b.flag);
    nvshmem_free(b.dst);
    nvshmem_free(b.src);
    nvshmem_finalize();
    return 0;
}

}  // namespace

int main() {
    // Never NVLink multicast (shared machines: ../shared/DESIGN.md §4, docs/perf/README.md).
    setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
    // NVSHMEM's own collectives, not NCCL's through NVSHMEM; one node, no network.
    set_default_env("NVSHMEM_DISABLE_NCCL", "1");
    set_default_env("NVSHMEM_REMOTE_TRANSPORT", "none");
    // src + dst of 256 MiB each plus NVSHMEM's own scratch.
    set_default_env("NVSHMEM_SYMMETRIC_SIZE", "1610612736");
    return compare::run_forked(compare::rank_count(), [](compare::ranks& rk) { return run_rank(rk); });
}
