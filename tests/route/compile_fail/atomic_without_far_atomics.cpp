// expect: this transport cannot do remote atomics
#include "../mock_transports.hpp"
#include <pgas/transport/route/route.hpp>
void misuse(const pgas::device::context<pgas::route<pgas::host, mock::rma_only>>& ctx, pgas::symmetric_ptr<int> p) {
    pgas::atomic_inc(ctx, p, 1);
}
