// NCCL's side of the side-by-side comparison: the five collectives on plain buffers ("nccl") and symmetric windows ("nccl-symm").
//
// One process per GPU, as NCCL is normally run:
// main forks PGAS_COMPARE_RANKS ranks (default 2) before any CUDA call, rank r
// on GPU r % GPUs (NCCL refuses two ranks on one GPU); rank 0 makes the unique
// id and hands it to the others through shared memory; ncclCommInitRank(N) in each.
// Plain buffers come from cudaMalloc; symmetric ones from ncclMemAlloc,
// registered with ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC).
// NVLink multicast (NVLS) is forced off.
#include "common.hpp"

#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define COMPARE_NCCL(call)                                                                           \
    do {                                                                                             \
        ncclResult_t compare_rc_ = (call);                                                           \
        if (compare_rc_ != ncclSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,               \
                         ncclGetErrorString(compare_rc_));                                           \
            std::exit(2);                                                                            \
        }                                                                                            \
    } while (0)

struct buffers {
    const char* impl;
    float* send = nullptr;
    float* recv = nullptr;
};

struct bench {
    compare::ranks& rk;
    int me = 0;
    int device = 0;  // this rank's GPU (rank % GPUs)
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    std::string machine, date;
    std::size_t max_bytes = 0;

    void enqueue(compare::coll c, const buffers& b, const compare::coll_shape& sh, cudaStream_t s) const {
        switch (c) {
            case compare::coll::allreduce:
                COMPARE_NCCL(ncclAllReduce(b.send, b.recv, sh.count, ncclFloat, ncclSum, comm, s));
                break;
            case compare::coll::allgather:
                COMPARE_NCCL(ncclAllGather(b.send, b.recv, sh.count, ncclFloat, comm, s));
                break;
            case compare::coll::reduce_scatter:
                COMPARE_NCCL(ncclReduceScatter(b.send, b.recv, sh.count, ncclFloat, ncclSum, comm, s));
                break;
            case compare::coll::broadcast:
                COMPARE_NCCL(ncclBroadcast(b.send, b.recv, sh.count, ncclFloat, 0, comm, s));
                break;
            case compare::coll::alltoall:
                // grouped send/recv to every rank (self included): works on every NCCL 2.x
                COMPARE_NCCL(ncclGroupStart());
                for (int r = 0; r < rk.size(); ++r) {
                    COMPARE_NCCL(ncclSend(b.send + std::size_t(r) * sh.count, sh.count, ncclFloat, r, comm, s));
                    COMPARE_NCCL(ncclRecv(b.recv + std::size_t(r) * sh.count, sh.count, ncclFloat, r, comm, s));
                }
                COMPARE_NCCL(ncclGroupEnd());
                break;
        }
    }

    void collective(compare::coll c, const buffers& b) {
        const int n = rk.size();
        for (std::size_t bytes : compare::sweep_sizes()) {
            if (bytes > max_bytes) break;
            const auto sh = compare::shape(c, bytes, n);
            if (!sh.valid) continue;
            compare::fill(b.send, sh.send_elems, float(me + 1), stream);
            COMPARE_CUDA(cudaMemsetAsync(b.recv, 0xff, sh.recv_elems * sizeof(float), stream));
            COMPARE_CUDA(cudaStreamSynchronize(stream));
            const auto pl = compare::plan_for(bytes);
            // the ranks agree on the plan (capture's group): graphs of different lengths would hang
            std::vector<compare::lane> lanes{
                compare::capture(device, stream, pl, [&](cudaStream_t s) { enqueue(c, b, sh, s); }, &rk)};
            auto t = compare::replay(lanes, [&] { rk.barrier(); }, &rk);
            compare::release(lanes[0]);
            const bool mine = (c == compare::coll::broadcast && me == 0) ||
                              compare::check_output(c, me, n, b.recv, sh);
            const bool ok = rk.all_ok(mine);
            if (me != 0) continue;
            compare::record r;
            r.impl = b.impl;
            r.benchmark = compare::name(c);
            r.ranks = n;
            r.bytes = sh.bytes;
            r.t = t;
            r.busbw_factor = compare::busbw_factor(c, n);
            r.ok = ok;
            compare::emit(r, machine, date);
        }
    }
};

int run_rank(compare::ranks& rk) {
    const int me = rk.rank();
    int gpus = 0;
    COMPARE_CUDA(cudaGetDeviceCount(&gpus));
    const int device = me % gpus;
    COMPARE_CUDA(cudaSetDevice(device));
    ncclUniqueId id{};
    if (me == 0) COMPARE_NCCL(ncclGetUniqueId(&id));
    id = rk.broadcast_blob(id);

    bench b{rk};
    b.me = me;
    b.device = device;
    COMPARE_NCCL(ncclCommInitRank(&b.comm, rk.size(), id, me));
    COMPARE_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    b.machine = compare::machine_name(rk.size(), device);
    b.date = compare::utc_now();
    b.max_bytes = compare::sweep_sizes().back();
    if (me == 0) {
        int version = 0;
        COMPARE_NCCL(ncclGetVersion(&version));
        std::fprintf(stderr, "nccl_compare: NCCL %d, %d ranks, one process per GPU\n", version, rk.size());
    }

    buffers plain{"nccl"};
    COMPARE_CUDA(cudaMalloc(&plain.send, b.max_bytes));
    COMPARE_CUDA(cudaMalloc(&plain.recv, b.max_bytes));

    buffers symm{"nccl-symm"};
    void* p = nullptr;
    COMPARE_NCCL(ncclMemAlloc(&p, b.max_bytes));
    symm.send = static_cast<float*>(p);
    COMPARE_NCCL(ncclMemAlloc(&p, b.max_bytes));
    symm.recv = static_cast<float*>(p);
    ncclWindow_t send_win = nullptr, recv_win = nullptr;
    COMPARE_NCCL(ncclCommWindowRegister(b.comm, symm.send, b.max_bytes, &send_win, NCCL_WIN_COLL_SYMMETRIC));
    COMPARE_NCCL(ncclCommWindowRegister(b.comm, symm.recv, b.max_bytes, &recv_win, NCCL_WIN_COLL_SYMMETRIC));

    for (auto c : compare::all_colls) {
        if (!compare::selected(compare::name(c))) continue;
        b.collective(c, plain);
        b.collective(c, symm);
    }

    COMPARE_CUDA(cudaDeviceSynchronize());
    rk.barrier();
    COMPARE_NCCL(ncclCommWindowDeregister(b.comm, send_win));
    COMPARE_NCCL(ncclCommWindowDeregister(b.comm, recv_win));
    COMPARE_NCCL(ncclMemFree(symm.send));
    COMPARE_NCCL(ncclMemFree(symm.recv));
    COMPARE_CUDA(cudaFree(plain.send));
    COMPARE_CUDA(cudaFree(plain.recv));
    COMPARE_NCCL(ncclCommDestroy(b.comm));
    return 0;
}

}  // namespace

int main() {
    // Never NVLink multicast (shared machines: docs/perf/README.md).
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    return compare::run_forked(compare::rank_count(), [](compare::ranks& rk) { return run_rank(rk); });
}
