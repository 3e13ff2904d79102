// expect: this transport cannot signal
#include "../mock_transports.hpp"
#include <pgas/transport/route/route.hpp>
void misuse(const pgas::device::context<pgas::route<pgas::host, mock::rma_only>>& ctx,
            pgas::symmetric_ptr<std::uint64_t> sig) {
    pgas::signal(ctx, sig, 1, pgas::signal_op::add, 1);
}
