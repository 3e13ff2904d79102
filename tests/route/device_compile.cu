// route<nvlink, libfabric> in a kernel: every device op and two collectives instantiate for the GPU (built, not run).
#include <pgas/device.hpp>

using nvlink_libfabric = pgas::route<pgas::nvlink, pgas::libfabric>;

PGAS_KERNEL void route_device_ops(const __grid_constant__ pgas::device::context<nvlink_libfabric> ctx,
                                  pgas::symmetric_ptr<float> data, pgas::symmetric_ptr<std::uint64_t> sig,
                                  float* local) {
    pgas::put<pgas::tile<32>>(ctx, data, local, 64, 1);
    pgas::put_nbi<pgas::block>(ctx, data, local, 64, 5);
    pgas::get<pgas::tile<32>>(ctx, local, data, 64, 1);
    pgas::get_nbi(ctx, local, data, 4, 6);
    pgas::p(ctx, data, pgas::g(ctx, data, 3), 4);
    pgas::atomic_fetch_add(ctx, data, 1.0f, 2);
    pgas::atomic_inc(ctx, sig, 6);
    pgas::atomic_compare_swap(ctx, sig, std::uint64_t{0}, std::uint64_t{1}, 7);
    pgas::put_signal<pgas::tile<32>>(ctx, data, local, 16, sig, 1, pgas::signal_op::add, 7);
    pgas::put_signal_nbi(ctx, data, local, 16, sig, 1, pgas::signal_op::set, 1);
    pgas::signal(ctx, sig, 1, pgas::signal_op::set, 0);
    pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, std::uint64_t{1});
    pgas::fence<pgas::block>(ctx);
    pgas::quiet<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx);
    pgas::allreduce<pgas::block>(ctx, ctx.world_team(), data, data, 8, pgas::op::sum);
    pgas::broadcast<pgas::block>(ctx, ctx.world_team(), data, data, 8, 0);
}
