// A PE that fails, stops or leaves ends the other PEs' device waits with a diagnostic naming it, well inside the
// wait's own timeout (issues 13 and 28). Run as `pgasrun -n 2 pgas_gpu_peer_fault trap|stop|leave`, one GPU is
// enough. PE 0 waits in a kernel for a flag nobody sets (wait_until; leave: in a device barrier_all); PE 1
//   trap: launches a kernel that traps; its cudaDeviceSynchronize fails and the program throws (uncaught, as a
//         user's CUDA check would), so the process dies. PE 0's world sees the process go and raises the GPU
//         heap's peer-failure flag. Wait timeout 60 s, bound 10 s.
//   stop: stops itself (SIGSTOP: a debugger, a frozen cgroup), its connection open. PE 0's watcher finds PE 1's
//         heartbeat (a shared host page beside the GPU heap) silent past max(500 ms, timeout / 4) = 2 s and
//         raises the same flag. Wait timeout 8 s, bound 5 s.
//   leave: destroys its world in good order without entering the barrier, and exits 0. PE 0's watcher finds PE
//         1's heartbeat marked left and marks it in the mapped left flags; the barrier's round that waits for PE
//         1's arrival reads the mark. Wait timeout 20 s, bound 1 s.
// The kernel's wait stops with "stopped waiting: failed PE 1" (leave: "... has left ...; PE 1"); PE 0 prints how long it took and whether that is
// within the bound, and exits with status 3 (the job lost a PE). The test runs outside MPS: under MPS a fatal fault
// of one client ends every client's work on that GPU, which would end PE 0's kernel without the diagnostic.
#include <pgas/pgas.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

PGAS_KERNEL void wait_for_nobody(__grid_constant__ const pgas::device::context<pgas::nvlink> ctx,
                                 pgas::symmetric_ptr<std::uint64_t> flag) {
    pgas::wait_until(ctx, flag, pgas::cmp::ge, std::uint64_t(1));
}

PGAS_KERNEL void barrier_without_pe1(__grid_constant__ const pgas::device::context<pgas::nvlink> ctx) {
    pgas::barrier_all(ctx);
}

PGAS_KERNEL void fail_here() { __trap(); }

void cuda_ok(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

}  // namespace

int main(int argc, char** argv) {
    const bool stop = argc > 1 && std::strcmp(argv[1], "stop") == 0;
    const bool leave = argc > 1 && std::strcmp(argv[1], "leave") == 0;
    if (argc < 2 || (!stop && !leave && std::strcmp(argv[1], "trap") != 0)) {
        std::printf("usage: pgasrun -n 2 pgas_gpu_peer_fault trap|stop|leave\n");
        return 2;
    }
    const long long bound_ms = stop ? 5000 : leave ? 1000 : 10000;
    pgas::world_options options;
    options.timeout_ms = stop ? 8000 : leave ? 20000 : 60000;
    auto w = pgas::world::init_gpu(options);
    if (w.n_pes() != 2) {
        std::printf("peer fault: run me as pgasrun -n 2 (got %d PEs)\n", w.n_pes());
        return 2;
    }
    auto flag = w.alloc<std::uint64_t>(1);
    w.barrier();
    if (w.my_pe() == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // PE 0's kernel is waiting by now
        if (leave) {
            { const pgas::world gone = std::move(w); }
            std::printf("PE 1: left in good order\n");
            return 0;
        }
        if (stop) {
            std::printf("PE 1: stopping (SIGSTOP)\n");
            std::fflush(stdout);
            std::raise(SIGSTOP);  // pgasrun ends it (SIGCONT, SIGTERM) once PE 0 has exited
            return 0;
        }
        fail_here<<<1, 1>>>();
        std::printf("PE 1: launching a kernel that traps\n");
        std::fflush(stdout);
        cuda_ok(cudaDeviceSynchronize(), "PE 1: kernel");  // throws: the process dies here
        std::printf("PE 1: the trap did not fail the kernel\n");
        return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    if (leave)
        barrier_without_pe1<<<1, 1>>>(w.context<pgas::nvlink>());
    else
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
    // The job lost a PE either way: a failure status makes pgasrun end a stopped PE 1 after its grace (a zero
    // status would leave pgasrun waiting for PE 1). The test's verdict is the text above. No teardown: the CUDA
    // context is gone.
    std::_Exit(3);
}
