// expect: registered windows are reached by load/store
#include <pgas/device/window.hpp>
#include <pgas/transport/libfabric/libfabric.hpp>
void misuse(const pgas::device::context<pgas::libfabric>& ctx, pgas::window<int> w, const int* src) {
    pgas::put(ctx, w, src, 1, 0);
}
