// expect: remote atomics take 4- or 8-byte
#include <pgas/pgas.hpp>
void misuse(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<short> p) {
    pgas::atomic_add(ctx, p, short(1), 0);
}
