// Compile-only: the IBGDA producer, completion path and every device op instantiated in kernels (nvcc, sm_90, no -rdc).
#include <pgas/device.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>

#include <cstdint>

namespace ibgda_kernel_check {

using ctx_t = pgas::device::context<pgas::ibgda>;

struct buffers {
    pgas::symmetric_ptr<std::uint64_t> u64;
    pgas::symmetric_ptr<std::uint32_t> u32;
    pgas::symmetric_ptr<float> f32;
    pgas::symmetric_ptr<double> f64;
    pgas::symmetric_ptr<std::uint64_t> signal;
    int pe;
};

// Every thread posts on its own: the producer aggregates the warp's lanes.
PGAS_KERNEL void thread_ops(__grid_constant__ const ctx_t ctx, const buffers b) {
    const unsigned t = threadIdx.x + blockIdx.x * blockDim.x;
    pgas::p(ctx, b.u64 + t, std::uint64_t(t), b.pe);
    pgas::p(ctx, b.u32 + t, std::uint32_t(t), b.pe);
    std::uint64_t local[4] = {t, t, t, t};
    pgas::put_nbi(ctx, b.u64 + 4 * t, local, 4, b.pe);
    const std::uint64_t v = pgas::g(ctx, b.u64 + t, b.pe);
    pgas::get(ctx, local, b.u64, 4, b.pe);
    pgas::atomic_add(ctx, b.u64, v, b.pe);
    (void)pgas::atomic_fetch_add(ctx, b.u32, 1u, b.pe);
    (void)pgas::atomic_compare_swap(ctx, b.u64 + 1, std::uint64_t(0), std::uint64_t(t), b.pe);
    (void)pgas::atomic_compare_swap(ctx, b.u32 + 1, 0u, std::uint32_t(t), b.pe);
    (void)pgas::atomic_swap(ctx, b.u64 + 2, std::uint64_t(t), b.pe);
    (void)pgas::atomic_fetch_and(ctx, b.u64 + 3, ~std::uint64_t(t), b.pe);
    (void)pgas::atomic_fetch_or(ctx, b.u32 + 3, std::uint32_t(t), b.pe);
    (void)pgas::atomic_fetch_xor(ctx, b.u64 + 4, std::uint64_t(t), b.pe);
    pgas::atomic_set(ctx, b.u32 + 5, std::uint32_t(t), b.pe);
    (void)pgas::atomic_fetch(ctx, b.u64 + 5, b.pe);
    pgas::atomic_add(ctx, b.f32, 1.0f, b.pe);
    (void)pgas::atomic_fetch_add(ctx, b.f64, 1.0, b.pe);
    pgas::signal(ctx, b.signal, 1, pgas::signal_op::add, b.pe);
    pgas::fence(ctx);
    pgas::quiet(ctx);
}

// Group forms: one lane/thread posts for the group.
PGAS_KERNEL void group_ops(__grid_constant__ const ctx_t ctx, const buffers b, const std::uint64_t* src) {
    pgas::put<pgas::warp>(ctx, b.u64, src, 256, b.pe);
    pgas::put_nbi<pgas::block>(ctx, b.u64, src, 1024, b.pe);
    pgas::get_nbi<pgas::tile<8>>(ctx, const_cast<std::uint64_t*>(src), b.u64, 64, b.pe);
    pgas::put_signal<pgas::warp>(ctx, b.u64, src, 32, b.signal, 7, pgas::signal_op::set, b.pe);
    pgas::put_signal_nbi<pgas::block>(ctx, b.u64, src, 32, b.signal, 1, pgas::signal_op::add, b.pe);
    pgas::signal_wait_until(ctx, b.signal, pgas::cmp::ge, 8);
    pgas::quiet<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx);
    pgas::sync_all<pgas::warp>(ctx);
}

}  // namespace ibgda_kernel_check

// Keeps the kernels referenced so that nvcc generates their device code.
void pgas_ibgda_kernel_check_launch(const ibgda_kernel_check::ctx_t& ctx, const ibgda_kernel_check::buffers& b,
                                    const std::uint64_t* src) {
    using namespace ibgda_kernel_check;
    thread_ops<<<1, 64>>>(ctx, b);
    group_ops<<<1, 64>>>(ctx, b, src);
}
