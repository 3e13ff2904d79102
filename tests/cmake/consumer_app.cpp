// A consumer of pgas built outside its tree: a ring shift on the host transport.
#include <pgas/pgas.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 3;
    auto world = pgas::world::init_local(n);
    auto received = world.alloc<int>(1);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
        pgas::p(ctx, received, ctx.my_pe(), (ctx.my_pe() + 1) % ctx.n_pes());
        pgas::barrier_all(ctx);
    });
    for (int pe = 0; pe < n; ++pe) std::printf("PE %d received %d\n", pe, *world.local(received, pe));
    return *world.local(received, 0) == n - 1 ? 0 : 1;
}
