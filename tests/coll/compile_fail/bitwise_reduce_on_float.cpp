// expect: bitwise reductions \(bit_and/bit_or/bit_xor\) take integer types only
#include <pgas/pgas.hpp>
void misuse(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<float> p) {
    pgas::allreduce(ctx, ctx.world_team(), p, p, 4, pgas::op::bit_xor);
}
