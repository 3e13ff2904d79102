// The same consumer's CUDA translation unit: a kernel using the device API (device.hpp only) compiles without -rdc.
#include <pgas/device.hpp>

template <class Transport>
__global__ void shift(const __grid_constant__ pgas::device::context<Transport> ctx, pgas::symmetric_ptr<int> r) {
    pgas::p(ctx, r, ctx.my_pe(), (ctx.my_pe() + 1) % ctx.n_pes());
    pgas::barrier_all(ctx);
}
template __global__ void shift<pgas::host>(const __grid_constant__ pgas::device::context<pgas::host>,
                                           pgas::symmetric_ptr<int>);
