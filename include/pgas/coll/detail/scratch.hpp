// Layout of the collectives' scratch (heap_layout::coll_scratch_*): per team slot, LL counters, acks, staging, LL cells.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/detail/heap_layout.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Every team slot owns an equal share of the scratch, so collectives on
// different teams (a PE runs at most one per team at a time) never share
// bytes. Within a slot:
//
//   sent[i]    messages this PE has sent to team member i (local only)
//   recv[i]    messages this PE has consumed from member i (local only)
//   credit[i]  the highest ack[i] this PE has seen (local only): a send whose
//              cell is already known free skips reading ack[i]
//   ack[i]     written by member i: how many of this PE's messages it consumed
//   staging    local bounce buffer of the put/get path (never written by peers)
//   parts      one barrier per block of a multi-block on-stream collective:
//              the block's local epoch, and its arrival counter per
//              dissemination round (peers add to these)
//   cells      LL cells: member i writes its messages to this PE into region i,
//              a ring of ll_depth cells, message m into cell m % ll_depth.
//
// Counters only grow and every message carries its number in its flags, so
// repeated calls need no reset and a stale cell is never taken for a new one.
// The geometry depends only on the team size: all members agree on it.
struct coll_scratch {
    static constexpr std::uint64_t slot_bytes = heap_layout::coll_scratch_bytes / team::max_slots;
    // LL (and the PGAS_CHECKS argument exchange) serves teams up to this size;
    // larger teams take the direct path.
    static constexpr int max_ll_pes = 64;
    // Cells in flight per pair. Fixed, not a policy: sender and receiver must
    // agree on the cell of a message whatever policy each call used.
    // placeholder: to be measured on 2xH200 (2 lets a sender run one chunk
    // ahead; deeper rings mean smaller cells in the same 52 KiB).
    static constexpr std::uint64_t ll_depth = 2;

    static constexpr std::uint64_t sent_offset = 0;
    static constexpr std::uint64_t recv_offset = sent_offset + 8 * max_ll_pes;
    static constexpr std::uint64_t credit_offset = recv_offset + 8 * max_ll_pes;
    static constexpr std::uint64_t ack_offset = 2048;  // peers write here: its own lines
    static constexpr std::uint64_t staging_offset = 4096;
    static constexpr std::uint64_t staging_bytes = 8192;
    // Blocks a multi-block collective may spread over (coll::tuning_policy's
    // stream_max_blocks), and dissemination rounds of their barriers: parts
    // run only in teams of at most max_ll_pes = 2^6 members.
    static constexpr int max_parts = 64;
    static constexpr int max_part_rounds = 6;
    static constexpr std::uint64_t part_epoch_offset = staging_offset + staging_bytes;
    static constexpr std::uint64_t part_arrival_offset = part_epoch_offset + 8 * max_parts;
    static constexpr std::uint64_t cells_offset = part_arrival_offset + 8 * max_parts * max_part_rounds;
    static constexpr std::uint64_t cells_bytes = slot_bytes - cells_offset;

    PGAS_HD static constexpr std::uint64_t slot_base(int slot) {
        return heap_layout::coll_scratch_offset + std::uint64_t(slot) * slot_bytes;
    }
    // Bytes of one cell for a team of n: a multiple of 16 (8 data bytes per
    // two LL words), so a message's payload is a multiple of 8 bytes.
    PGAS_HD static constexpr std::uint64_t cell_bytes(int n) {
        return cells_bytes / std::uint64_t(n) / ll_depth / 16 * 16;
    }
    PGAS_HD static constexpr std::uint64_t payload_bytes(int n) { return cell_bytes(n) / 2; }
    PGAS_HD static constexpr std::uint64_t cell_offset(int slot, int n, int from, std::uint64_t message) {
        return slot_base(slot) + cells_offset + std::uint64_t(from) * cell_bytes(n) * ll_depth +
               (message % ll_depth) * cell_bytes(n);
    }
    template <class T>
    PGAS_HD static constexpr symmetric_ptr<T> at(std::uint64_t offset) {
        return symmetric_ptr<T>(offset_tag{}, offset);
    }
};

static_assert(coll_scratch::slot_bytes * team::max_slots <= heap_layout::coll_scratch_bytes);
static_assert(coll_scratch::credit_offset + 8 * coll_scratch::max_ll_pes <= coll_scratch::ack_offset);
static_assert(coll_scratch::ack_offset + 8 * coll_scratch::max_ll_pes <= coll_scratch::staging_offset);
static_assert(std::uint64_t{1} << coll_scratch::max_part_rounds >= coll_scratch::max_ll_pes);
static_assert(coll_scratch::cells_offset % 64 == 0);
static_assert(coll_scratch::payload_bytes(coll_scratch::max_ll_pes) >= 64, "LL cells too small for the largest team");

}  // namespace detail
PGAS_NAMESPACE_END
