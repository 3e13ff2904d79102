// The classic first PGAS program: every PE puts its id to the next PE, then all meet at a barrier.
//
//   ring_shift [--host] [n_pes]
//       with GPUs: n_pes PEs (default: one per GPU), PE i on GPU i % n_gpus (NVLink transport), so
//                  `ring_shift 2` on a one-GPU machine runs two PEs sharing it;
//       without (or --host): n_pes PEs as threads on the host transport (default 4).
#include <pgas/pgas.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The same code runs as a GPU kernel body and as a host-transport PE: it only
// talks to the context it is given.
template <class Transport>
PGAS_HD void ring_shift(const pgas::device::context<Transport>& ctx, pgas::symmetric_ptr<int> received) {
    const int me = ctx.my_pe();
    const int next = (me + 1) % ctx.n_pes();
    pgas::p(ctx, received, me, next);  // write my id into the next PE's `received`
    pgas::barrier_all(ctx);            // every put is complete and visible after this
}

__global__ void ring_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx,
                            pgas::symmetric_ptr<int> received) {
    ring_shift(ctx, received);
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static int on_gpus(int n_gpus, int n_pes) {
    std::vector<int> devices;
    for (int pe = 0; pe < n_pes; ++pe) devices.push_back(pe % n_gpus);
    auto world = pgas::world::init_local(devices);
    std::printf("%d GPU(s): running %d PEs on the NVLink transport\n", n_gpus, world.n_pes());
    auto received = world.alloc<int>(1);
    // A non-blocking stream per PE: PEs sharing a GPU must run side by side (each waits for the other).
    std::vector<cudaStream_t> streams(n_pes);
    for (int pe = 0; pe < world.n_local_pes(); ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaStreamCreateWithFlags(&streams[pe], cudaStreamNonBlocking), "stream");
        ring_kernel<<<1, 1, 0, streams[pe]>>>(world.context<pgas::nvlink>(pe), received);
        check(cudaGetLastError(), "launch");
    }
    int wrong = 0;
    for (int pe = 0; pe < world.n_local_pes(); ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaStreamSynchronize(streams[pe]), "ring kernel");
        check(cudaStreamDestroy(streams[pe]), "stream");
        int value = -1;
        check(cudaMemcpy(&value, world.device_address(received, pe), sizeof value, cudaMemcpyDeviceToHost), "copy");
        std::printf("PE %d received %d\n", pe, value);
        wrong += value != (pe + world.n_pes() - 1) % world.n_pes();
    }
    return wrong == 0 ? 0 : 1;
}

static int on_host(int n_pes) {
    auto world = pgas::world::init_local(n_pes);
    std::printf("host transport: running %d PEs as threads\n", world.n_pes());
    auto received = world.alloc<int>(1);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) { ring_shift(ctx, received); });
    int wrong = 0;
    for (int pe = 0; pe < world.n_pes(); ++pe) {
        const int value = *world.local(received, pe);
        std::printf("PE %d received %d\n", pe, value);
        wrong += value != (pe + world.n_pes() - 1) % world.n_pes();
    }
    return wrong == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    // PEs sharing a GPU wait for each other inside running kernels: load every kernel up front, since a lazily
    // loaded kernel's first launch waits for the GPU to go idle (set before the first CUDA call).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    const bool host = argc > 1 && std::strcmp(argv[1], "--host") == 0;
    const int first_number = host ? 2 : 1;
    int n_gpus = 0;
    if (host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    const int n_pes = argc > first_number ? std::atoi(argv[first_number]) : (n_gpus > 0 ? n_gpus : 4);
    if (n_pes < 1) {
        std::fprintf(stderr, "usage: ring_shift [--host] [n_pes]\n");
        return 2;
    }
    try {
        return n_gpus > 0 ? on_gpus(n_gpus, n_pes) : on_host(n_pes);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
