// expect: this transport reaches no registered windows
// Every transport pgas ships reaches windows now (nvlink, host and route by load/store, the libfabric proxy and ibgda
// by name), so the misuse left is a transport written elsewhere that neither maps peer memory nor resolves windows.
#include "../host/mock_transport.hpp"

#include <pgas/device/window.hpp>

void misuse(const pgas::device::context<test::identity_only_transport>& ctx, pgas::window<int> w, const int* src) {
    pgas::put(ctx, w, src, 1, 0);
}
