// A PE whose kernel traps ends the other PEs' device waits with the peer-failure diagnostic, well inside the
// wait's own timeout (issue 13). Run as `pgasrun -n 2 pgas_gpu_peer_fault`, one GPU is enough:
//   PE 1 launches a kernel that traps; its cudaDeviceSynchronize fails and the program throws (uncaught, as a
//   user's CUDA check would), so the process dies.
//   PE 0 waits in a kernel for a flag nobody sets (wait_until, timeout 60 s). Its world sees PE 1's process go,
//   raises the GPU heap's peer-failure flag, and the wait stops with "stopped waiting: failed PE 1".
// PE 0 prints how long its wait took and exits non-zero when it took longer than the bound (10 s) or returned
// without an error. The test runs outside MPS: under MPS a fatal fault of one client ends every client's work on
// that GPU, which would end PE 0's kernel without the diagnostic this test is about.
#include <pgas/pgas.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

constexpr long long bound_ms = 10000;  // the wait's own timeout is 60 s

PGAS_KERNEL void wait_for_nobody(__grid_constant__ const pgas::device::context<pgas::nvlink> ctx,
                                 pgas::symmetric_ptr<std::uint64_t> flag) {
    pgas::wait_until(ctx, flag, pgas::cmp::ge, std::uint64_t(1));
}

PGAS_KERNEL void fail_here() { __trap(); }

void cuda_ok(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

}  // namespace

int main() {
    pgas::world_options options;
    options.timeout_ms = 60000;
    auto w = pgas::world::init_gpu(options);
    if (w.n_pes() != 2) {
        std::printf("peer fault: run me as pgasrun -n 2 (got %d PEs)\n", w.n_pes());
        return 2;
    }
    auto flag = w.alloc<std::uint64_t>(1);
    w.barrier();
    if (w.my_pe() == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // PE 0's kernel is waiting by now
        fail_here<<<1, 1>>>();
        std::printf("PE 1: launching a kernel that traps\n");
        std::fflush(stdout);
        cuda_ok(cudaDeviceSynchronize(), "PE 1: kernel");  // throws: the process dies here
        std::printf("PE 1: the trap did not fail the kernel\n");
        return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    wait_for_nobody<<<1, 1>>>(w.context<pgas::nvlink>(), flag);
    const cudaError_t rc = cudaDeviceSynchronize();
    const long long ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (rc == cudaSuccess) {
        std::printf("PE 0: the device wait returned after %lld ms although nobody set the flag\n", ms);
        return 1;
    }
    std::printf("PE 0: device wait ended after %lld ms (%s), %s the bound of %lld ms\n", ms, cudaGetErrorString(rc),
                ms <= bound_ms ? "within" : "past", bound_ms);
    std::fflush(stdout);
    std::_Exit(ms <= bound_ms ? 0 : 1);  // the CUDA context is gone: no teardown
}
