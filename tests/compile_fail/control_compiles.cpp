// expect: ^$
// The control case: the same harness accepts correct code, so the other cases fail for their reason.
#include "../host/mock_transport.hpp"
void fine(const pgas::device::context<pgas::host>& ctx, pgas::symmetric_ptr<int> p, const int* src) {
    pgas::put(ctx, p, src, 1, 0);
    pgas::atomic_fetch_xor(ctx, p, 1, 0);
}
