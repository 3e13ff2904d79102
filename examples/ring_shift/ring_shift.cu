// The classic first PGAS program: every PE puts its id to the next PE, then all meet at a barrier.
//
//   ring_shift [n_pes]   with GPUs: one PE per visible GPU (NVLink transport);
//                        without: n_pes PEs as threads on the host transport (default 4)
#include <pgas/pgas.hpp>

#include <cstdio>
#include <cstdlib>
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

static int on_gpus(int n_gpus) {
    std::vector<int> devices;
    for (int d = 0; d < n_gpus; ++d) devices.push_back(d);
    auto world = pgas::world::init_local(devices);
    std::printf("%d GPU(s): running %d PEs on the NVLink transport\n", n_gpus, world.n_pes());
    auto received = world.alloc<int>(1);
    for (int pe = 0; pe < world.n_local_pes(); ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        ring_kernel<<<1, 1>>>(world.context<pgas::nvlink>(pe), received);
        check(cudaGetLastError(), "launch");
    }
    int wrong = 0;
    for (int pe = 0; pe < world.n_local_pes(); ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaDeviceSynchronize(), "ring kernel");
        int value = -1;
        check(cudaMemcpy(&value, world.device_address(received, pe), sizeof value, cudaMemcpyDeviceToHost), "copy");
        std::printf("PE %d received %d\n", pe, value);
        wrong += value != (pe + world.n_pes() - 1) % world.n_pes();
    }
    return wrong == 0 ? 0 : 1;
}

static int on_host(int n_pes) {
    auto world = pgas::world::init_local(n_pes);
    std::printf("no GPU: running %d PEs as threads on the host transport\n", world.n_pes());
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
    const int n_pes = argc > 1 ? std::atoi(argv[1]) : 4;
    int n_gpus = 0;
    if (cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    try {
        return n_gpus > 0 ? on_gpus(n_gpus) : on_host(n_pes);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
