// pgas::runtime_state: what every wait reads besides its condition, the timeout, the peer-failure flag, the heartbeats.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN

namespace detail {
struct heartbeat_table;  // detail/heartbeat.hpp
}

/// What every wait reads besides its condition. Set by pgas::world (or a
/// transport's host side) and carried by value in every device::context and
/// proxy ring view, so waits stop with a diagnostic instead of hanging.
struct runtime_state {
    std::uint64_t timeout_ns = 0;              ///< a wait gives up after this long (errc::timeout); 0: never
    const volatile int* abort_flag = nullptr;  ///< non-zero: a peer failed (its PE is the value - 1), waits stop
    /// The node's process heartbeats (multi-process shared-memory heaps only;
    /// null elsewhere): a host-side wait names a peer silent for longer than
    /// max(500 ms, timeout / 4), and one that left, at once when the wait is
    /// for its write (errc::peer_failed). Never read on the GPU.
    const detail::heartbeat_table* heartbeats = nullptr;
    /// GPU heaps of several processes: left[q] != 0 once world PE q has left (destroyed its world in good order),
    /// set by this process's bootstrap watcher in pinned, mapped host memory, so that a kernel's wait that knows
    /// whose write it waits for (a dissemination round) names that PE at once (detail::check_awaited). Null elsewhere.
    const volatile int* left = nullptr;
    /// The most PEs of the world that share one GPU (1 on host heaps and with one PE per GPU): an on-stream launch
    /// holds each PE's kernel to its share of that GPU (detail::resident_block_share), since the kernels of PEs
    /// sharing a GPU wait for each other and must all be resident. The same on every PE; never read on the GPU.
    int pes_per_gpu = 1;
};

PGAS_NAMESPACE_END
