// Constexpr facts about the IBGDA transport that its algorithms ask instead of hard-coding numbers.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// Constexpr facts about the IBGDA transport that its algorithms ask instead of hard-coding numbers.
struct ibgda_traits {
    /// A put of at most this many bytes travels inside its WQE (ds = 3, one
    /// building block) whatever memory the source is in, and its source is
    /// reusable at once: what p() and small puts use.
    static constexpr std::uint32_t inline_put_bytes = 12;
    /// Sources outside registered memory go inline in pieces of this size
    /// (the most one building block carries).
    static constexpr std::uint32_t inline_piece_bytes = mlx5::max_inline_bytes(1);
    /// One RDMA WRITE/READ moves at most this much; larger transfers are split.
    static constexpr std::uint64_t max_message_bytes = std::uint64_t{1} << 30;
    /// The 16-bit WQE counter of a CQE is resolved against the oldest
    /// uncompleted WQE, which is unambiguous while the ring holds at most 2^15
    /// building blocks.
    static constexpr std::uint32_t max_send_queue_blocks = 1u << 15;
    /// The smallest send queue (building blocks) ibgda_options accepts.
    static constexpr std::uint32_t min_send_queue_blocks = 4;
    /// Per building block of the send queue, registered scratch for one
    /// fetched atomic value or a small get into unregistered memory.
    static constexpr std::uint32_t scratch_bytes_per_block = 64;
    /// Reply byte order of fetching atomics in the local buffer. The mlx5
    /// kernel driver puts standard 8-byte atomics in host-endian reply mode
    /// when the HCA supports it (IB_ATOMIC_HCA); the extended (masked) atomics
    /// reply big-endian. Not yet checked on a ConnectX NIC: the emulated NIC
    /// follows these two flags.
    static constexpr bool standard_atomic_reply_big_endian = false;
    /// The same for the extended (masked) atomics.
    static constexpr bool masked_atomic_reply_big_endian = true;
};

PGAS_NAMESPACE_END
