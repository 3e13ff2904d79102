// Fixture for scripts/check-layers (never compiled): coll/ calling the transport instead of device/.
#pragma once

#include "pgas/device/context.hpp"

template <class Ctx>
void fixture_quiet(const Ctx& ctx) {
    ctx.transport.quiet();
}
