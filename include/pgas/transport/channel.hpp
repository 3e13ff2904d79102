// Channels: which of a transport's k independent queues per peer a transport value (and its context) posts to.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// The most channels per peer any transport accepts (world_options::channels, PGAS_CHANNELS, the domains'
/// options): 32, DeepEP's largest QP count per peer in its low-latency kernels is of that order, and ibgda's
/// queue memory grows with it (k send queues, CQs and scratch areas per peer).
inline constexpr int max_channels = 32;

namespace detail {
// A transport value's channel and how many its builder made (1 <= count <= max_channels). Transports whose
// channels are all the same path (nvlink, host) keep only this; ibgda and the proxy also pick their queue by it.
struct channel_choice {
    std::uint16_t index = 0;
    std::uint16_t count = 1;
};
}  // namespace detail

PGAS_NAMESPACE_END
