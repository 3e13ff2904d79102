// expect: reductions take int8..int64, uint8..uint64, half
#include <pgas/pgas.hpp>
struct pair { int a, b; };
void misuse(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<pair> p) {
    pgas::allreduce(ctx, ctx.world_team(), p, p, 4, pgas::op::sum);
}
