// GPU error paths (label gpu), one case per process since a trap ends the CUDA context:
//   error_cqe  an injected error CQE traps with the diagnostic naming PE, peer, op and syndrome
//   timeout    a NIC that never answers traps with the timeout diagnostic
#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace ibgda_gpu_errors {

PGAS_KERNEL void put_then_quiet(__grid_constant__ const pgas::device::context<pgas::ibgda> ctx,
                                pgas::symmetric_ptr<std::uint64_t> target) {
    pgas::p(ctx, target, std::uint64_t(1), 1);
    pgas::quiet(ctx);
}

}  // namespace ibgda_gpu_errors

int main(int argc, char** argv) {
    using namespace ibgda_gpu_errors;
    const std::string which = argc > 1 ? argv[1] : "";
    pgas::world_options wo;
    wo.heap_bytes = std::uint64_t{16} << 20;
    auto w = pgas::world::init_local(2, wo);
    for (int pe = 0; pe < 2; ++pe) cudaHostRegister(w.heap_memory().local_base(pe), w.heap_bytes(), cudaHostRegisterMapped);
    auto target = w.alloc<std::uint64_t>(1);
    int* abort_flag = nullptr;
    cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped);
    *abort_flag = 0;
    pgas::ibgda_options o;
    o.nic = pgas::ibgda_options::nic_kind::emulated;
    o.allocate = [](std::size_t bytes) -> void* {
        void* p = nullptr;
        if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
        std::memset(p, 0, bytes);
        return p;
    };
    o.deallocate = [](void* p) { cudaFreeHost(p); };
    o.runtime = pgas::runtime_state{std::uint64_t(2) * 1000000000ull, abort_flag};  // 2 s
    pgas::ibgda_domain ib(w, o);
    if (which == "error_cqe") {
        ib.emulated_nic().fail_next(0, 1, 0x13, 0x88);
    } else if (which == "timeout") {
        ib.emulated_nic().stop();
    } else {
        std::fprintf(stderr, "usage: %s error_cqe|timeout\n", argv[0]);
        return 2;
    }
    put_then_quiet<<<1, 1>>>(ib.context(0), target);
    const cudaError_t status = cudaDeviceSynchronize();
    std::printf("kernel ended: %s\n", cudaGetErrorString(status));
    return status == cudaSuccess ? 1 : 0;
}
