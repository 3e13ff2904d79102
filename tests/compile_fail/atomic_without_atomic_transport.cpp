// expect: this transport cannot do remote atomics
#include "../host/mock_transport.hpp"
void misuse(const pgas::device::context<test::identity_only_transport>& ctx, pgas::symmetric_ptr<int> p) {
    pgas::atomic_fetch_add(ctx, p, 1, 0);
}
