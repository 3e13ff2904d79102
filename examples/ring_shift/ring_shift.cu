// The classic first PGAS program: every PE puts its id to the next PE, then all meet at a barrier.
//
//   ring_shift [n_pes]   on a machine without a GPU: n host PEs (default 4)
#include <pgas/pgas.hpp>

#include <cstdio>
#include <cstdlib>

// The same code runs as a GPU kernel body and as a host-transport PE: it only
// talks to the context it is given.
template <class Transport>
PGAS_HD void ring_shift(const pgas::device::context<Transport>& ctx, pgas::symmetric_ptr<int> received) {
    const int me = ctx.my_pe();
    const int next = (me + 1) % ctx.n_pes();
    pgas::p(ctx, received, me, next);  // write my id into the next PE's `received`
    pgas::barrier_all(ctx);            // every put is complete and visible after this
}

int main(int argc, char** argv) {
    const int n_pes = argc > 1 ? std::atoi(argv[1]) : 4;
    try {
        auto world = pgas::world::init_local(n_pes);
        std::printf("no GPU transport in this build: running %d PEs as threads on the host transport\n",
                    world.n_pes());
        auto received = world.alloc<int>(1);
        world.launch_host([&](const pgas::device::context<pgas::host>& ctx) { ring_shift(ctx, received); });
        for (int pe = 0; pe < world.n_pes(); ++pe)
            std::printf("PE %d received %d\n", pe, *world.local(received, pe));
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
