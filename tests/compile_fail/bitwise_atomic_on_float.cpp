// expect: bitwise atomics \(and/or/xor\) take integer types only
#include <pgas/pgas.hpp>
void misuse(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<float> p) {
    pgas::atomic_fetch_xor(ctx, p, 1.0f, 0);
}
