// expect: source and destination element types differ
#include <pgas/pgas.hpp>
void misuse(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<int> p, const float* src) {
    pgas::put(ctx, p, src, 1, 0);
}
