// A consumer of pgas built outside its tree: a ring shift, a signalled put and allreduces on the host transport.
#include <pgas/pgas.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Every PE contributes 1 to each of `count` elements; all see n_pes.
template <class T>
bool allreduce_counts(pgas::world& world, int n) {
    constexpr std::size_t count = 64;  // past the LL and into the direct path of the host transport
    auto data = world.alloc<T>(count);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
        for (std::size_t i = 0; i < count; ++i) ctx.local(data)[i] = T(1.0f);
        pgas::barrier_all(ctx);
        pgas::allreduce(ctx, ctx.world_team(), data, data, count, pgas::op::sum);
    });
    for (int pe = 0; pe < n; ++pe)
        for (std::size_t i = 0; i < count; ++i)
            if (float(world.local(data, pe)[i]) != float(n)) return false;
    return true;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 3;
    auto world = pgas::world::init_local(n);
    auto received = world.alloc<int>(1);
    auto payload = world.alloc<int>(4);
    auto sig = world.alloc<std::uint64_t>(1);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
        const int next = (ctx.my_pe() + 1) % ctx.n_pes();
        pgas::p(ctx, received, ctx.my_pe(), next);
        const int mine[4] = {ctx.my_pe(), ctx.my_pe(), ctx.my_pe(), ctx.my_pe()};
        pgas::put_signal(ctx, payload, mine, 4, sig, 1, pgas::signal_op::add, next);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, 1);
        pgas::barrier_all(ctx);
    });
    bool ok = *world.local(received, 0) == n - 1 && world.local(payload, 0)[3] == n - 1;
    ok = ok && allreduce_counts<float>(world, n) && allreduce_counts<__half>(world, n) &&
         allreduce_counts<__nv_bfloat16>(world, n);
    for (int pe = 0; pe < n; ++pe) std::printf("PE %d received %d\n", pe, *world.local(received, pe));
    return ok ? 0 : 1;
}
