// expect: this transport reaches no registered windows
#include <pgas/device/window.hpp>
#include <pgas/transport/ibgda/ibgda.hpp>
void misuse(const pgas::device::context<pgas::ibgda>& ctx, pgas::window<int> w, const int* src) {
    pgas::put(ctx, w, src, 1, 0);
}
