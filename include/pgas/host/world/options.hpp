// pgas::world_options: how a world is set up (heap size, timeout, channels, heap backend).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/host/heap/gpu.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// How a world is set up (every field has a default that reads the environment).
struct world_options {
    /// Bytes of symmetric heap per PE; 0 reads PGAS_HEAP_SIZE, else the default.
    std::uint64_t heap_bytes = 0;
    /// Device waits give up after this long; -1 reads PGAS_TIMEOUT_MS, 0 never.
    std::int64_t timeout_ms = -1;
    /// Channels per peer of the contexts this world hands out (nvlink, host) and the default of the domains
    /// built on it (ibgda_options::channels, libfabric_options::channels), in [1, pgas::max_channels]; 0 reads
    /// PGAS_CHANNELS, else 1 (nvlink and host have one path whatever the channel; see device::context::on_channel).
    int channels = 0;
    /// Heap backend of world::init (one PE per process); empty: host memory
    /// shared between the node's processes (the host transport).
    detail::heap_factory heap;

    /// Heap bytes per PE of a host-memory world when neither heap_bytes nor PGAS_HEAP_SIZE says (64 MiB).
    static constexpr std::uint64_t default_host_heap_bytes = std::uint64_t{64} << 20;
};

PGAS_NAMESPACE_END
