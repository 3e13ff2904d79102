// pgas::runtime_state: what every wait reads besides its condition, the timeout and the peer-failure flag.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN

// Set by pgas::world (or a transport's host side) and carried by value in
// every device::context and proxy ring view, so waits stop with a diagnostic
// instead of hanging.
struct runtime_state {
    std::uint64_t timeout_ns = 0;              // 0: waits never time out
    const volatile int* abort_flag = nullptr;  // non-zero: a peer failed (its PE is the value - 1)
};

PGAS_NAMESPACE_END
