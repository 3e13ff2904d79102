// expect: this transport cannot put/get
#include "../host/mock_transport.hpp"
void misuse(const pgas::device::context<test::identity_only_transport>& ctx, pgas::symmetric_ptr<int> p, const int* src) {
    pgas::put(ctx, p, src, 1, 0);
}
