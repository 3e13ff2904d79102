// route<nvlink, libfabric> on GPUs: 4 PEs (one GPU is enough), near pairs over NVLink load/store, far peers
// through the libfabric proxy into GPU heaps registered with FI_HMEM; route_checks.hpp's checks run in kernels.
//
//   PGAS_NODE_SIZE=2 pgasrun -n 4 pgas_route_gpu_worker shm                 processes (world::init_gpu)
//   PGAS_NODE_SIZE=2 pgas_route_gpu_worker shm --one-process                 one process, 4 PEs (init_local)
//
// PE i's heap is on GPU i % count (processes: local rank % count). PGAS_NODE_SIZE=2 splits the PEs into the
// virtual nodes {0,1} and {2,3} (host/route/context.hpp), so that one machine stands for two: near peers are
// reached by NVLink stores and loads into the peer's heap (same GPU here: CUDA IPC of the VMM chunks between
// processes), far peers only through libfabric. Each PE runs route_checks::run_all in a <<<1, 1>>> kernel on
// its own non-blocking stream. This file is the host side (g++); the two kernels are route_gpu_data_kernel.cu and
// route_gpu_sync_kernel.cu, so that nvcc's three steps run in parallel, none the GPU build's longest. Exits 77 (skipped) with the reason when the provider has no FI_HMEM (a libfabric
// built without CUDA), non-zero with "route worker: ..." on a wrong value or an error.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>
#include <pgas/host/route/context.hpp>

#include "route_checks.hpp"
#include "route_gpu_kernels.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using route_gpu_kernels::far_ctx_t;
using route_gpu_kernels::near_ctx_t;
using route_gpu_kernels::route_ctx_t;

void cuda_check(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

// One local PE's run: its contexts, scratch, failure counter and stream.
struct local_run {
    route_ctx_t ctx;
    near_ctx_t near_ctx;
    far_ctx_t far_ctx;
    route_checks::buffers b;
    unsigned* failures = nullptr;  // mapped pinned memory
    std::uint8_t* scratch = nullptr;
    cudaStream_t stream = nullptr;
    int device = 0;
};

int host_failures = 0;

void expect(bool ok, int pe, const std::string& what) {
    if (ok) return;
    ++host_failures;
    std::printf("route worker: PE %d: %s\n", pe, what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: pgas_route_gpu_worker <provider> [--one-process]\n");
        return 2;
    }
    std::string provider = argv[1];
    for (char& c : provider)
        if (c == '+') c = ';';
    const bool one_process = argc > 2 && std::string(argv[2]) == "--one-process";
    try {
        int gpus = 0;
        if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
            std::printf("route worker: no CUDA GPU\n");
            return 1;
        }
        // Before any world (every process decides alike): the far path needs FI_HMEM for GPU heaps.
        if (!pgas::ofi::provider_has_hmem(provider)) {
            std::printf("SKIPPED: libfabric provider %s has no FI_HMEM here (libfabric %u.%u built without CUDA?): "
                        "it cannot reach GPU heaps\n",
                        provider.c_str(), FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
            return 77;
        }
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{64} << 20;
        std::vector<int> devices;
        for (int i = 0; i < 4; ++i) devices.push_back(i % gpus);
        auto w = one_process ? pgas::world::init_local(devices, wo) : pgas::world::init_gpu(wo);
        if (w.n_pes() != 4) {
            std::printf("route worker: needs 4 PEs, got %d\n", w.n_pes());
            return 2;
        }
        pgas::libfabric_options fo;
        fo.provider = provider;
        fo.iface = "lo";
        pgas::libfabric_domain fabric(w, fo);
        expect(fabric.heap_path() == pgas::libfabric_heap_path::hmem, w.local_pe(0),
               "the far path is not FI_HMEM: " + fabric.describe_heap_path());

        auto b = route_checks::allocate(w);
        const pgas::team column0 = w.split_2d(w.team_world(0), 2).second;
        std::vector<local_run> runs(std::size_t(w.n_local_pes()));
        for (int local = 0; local < w.n_local_pes(); ++local) {
            local_run& r = runs[std::size_t(local)];
            const int pe = w.local_pe(local);
            // The near range: PGAS_NODE_SIZE's virtual node (one process holds several of them when
            // it drives all four PEs, so ask per PE rather than route_node_pes(w)).
            const auto node = pgas::virtual_node_pes(pe, w.n_pes());
            const pgas::pe_range near = node ? *node : pgas::pe_range{pe / 2 * 2, 2};
            expect(node.has_value() && node->first == pe / 2 * 2 && node->count == 2, pe,
                   "PGAS_NODE_SIZE=2 should give the near pair {" + std::to_string(pe / 2 * 2) + ", " +
                       std::to_string(pe / 2 * 2 + 1) + "} (is it set?)");
            r.far_ctx = fabric.context(local);
            r.near_ctx = w.context<pgas::nvlink>(local);
            r.ctx = pgas::route_context(r.near_ctx, r.far_ctx, near);
            const int near_peer = pe ^ 1, far_peer = (pe + 2) % 4;
            expect(r.ctx.transport.is_near(near_peer) && !r.ctx.transport.is_near(far_peer), pe, "near range");
            expect(r.ctx.peer(pgas::symmetric_ptr<int>{}, near_peer) != nullptr &&
                       r.ctx.peer(pgas::symmetric_ptr<int>{}, far_peer) == nullptr,
                   pe, "ctx.peer is Near's pointer for the near peer only");
            expect(r.ctx.transport.near_address(0, near_peer) != nullptr &&
                       r.ctx.transport.near_address(0, far_peer) == nullptr,
                   pe, "near_address: a load/store pointer for the near peer only");
            r.device = w.device_of(local);
            cuda_check(cudaSetDevice(r.device), "cudaSetDevice");
            cuda_check(cudaMalloc(&r.scratch, route_checks::scratch_bytes), "cudaMalloc of the scratch");
            cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&r.failures), sizeof(unsigned), cudaHostAllocMapped),
                       "cudaHostAlloc");
            *r.failures = 0;
            cuda_check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate");
            r.b = b;
            // This PE's column ({0, 2} or {1, 3}), on the slot the split gave both columns.
            r.b.column = w.team_world(local).sub_team(pe % 2, 2, 2, column0.slot());
            r.b.scratch = r.scratch;
            r.b.failures = r.failures;
        }
        w.barrier();
        // Every local PE's kernel at once (they wait for each other), and only then the next phase: a kernel
        // queued behind a running one would sit in a hardware work queue that streams share (fewer of them under
        // MPS), where it can hold up the CUDA copies the proxy thread makes for the running one.
        for (auto& r : runs) {
            cuda_check(cudaSetDevice(r.device), "cudaSetDevice");
            cuda_check(route_gpu_kernels::launch_data_checks(r.ctx, r.b, r.stream), "launching data_checks_kernel");
        }
        for (auto& r : runs) {
            cuda_check(cudaSetDevice(r.device), "cudaSetDevice");
            cuda_check(cudaStreamSynchronize(r.stream), "data_checks_kernel");
        }
        for (auto& r : runs) {
            cuda_check(cudaSetDevice(r.device), "cudaSetDevice");
            cuda_check(route_gpu_kernels::launch_sync_checks(r.ctx, r.near_ctx, r.far_ctx, r.b, r.stream),
                       "launching sync_checks_kernel");
        }
        unsigned wrong = 0;
        for (auto& r : runs) {
            cuda_check(cudaSetDevice(r.device), "cudaSetDevice");
            cuda_check(cudaStreamSynchronize(r.stream), "sync_checks_kernel");
            wrong += *r.failures;
        }
        w.barrier();
        for (auto& r : runs) {
            cudaStreamDestroy(r.stream);
            cudaFreeHost(r.failures);
            cudaFree(r.scratch);
        }
        if (wrong + unsigned(host_failures) == 0)
            for (int local = 0; local < w.n_local_pes(); ++local)
                std::printf("route worker: PE %d of 4 ok: route<nvlink, libfabric> on GPU %d, far path %s (%s)\n",
                            w.local_pe(local), w.device_of(local), fabric.provider().c_str(),
                            pgas::to_string(fabric.heap_path()));
        return wrong + unsigned(host_failures) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("route worker: %s\n", e.what());
        return 1;
    }
}
