// Layout of the collectives' scratch (heap_layout::coll_scratch_*): per team slot, LL channels, staging, part barriers.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/detail/heap_layout.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Every team slot owns its own scratch, so collectives on different teams (a
// PE runs at most one per team at a time) never share bytes. Each slot has a
// small area (counters of channel 0, staging, part barriers, channel 0's
// cells for split teams); the world and node teams (slots 0 and 1, the teams
// every program has and where collectives of every size run) also own a wide
// area of ll_channels channels, so that the LL path spreads over that many
// blocks and carries mid-size messages in one or two chunks.
//
// An LL channel holds, per ordered pair of members:
//   sent[i]    messages this PE has sent to team member i (local only)
//   recv[i]    messages this PE has consumed from member i (local only)
//   ack[i]     written by member i: how many of this PE's messages it consumed
//   cells      member i writes its messages to this PE into region i, a ring
//              of ll_depth cells, message m into cell m % ll_depth.
// The small area further holds:
//   staging    local bounce buffer of the put/get path (never written by peers)
//   parts      one barrier per block of a multi-block direct collective: the
//              block's local epoch, and its arrival counter per dissemination
//              round (peers add to these)
//
// Counters only grow and every message carries its number in its flags, so
// repeated calls need no reset and a stale cell is never taken for a new one.
// The geometry depends only on the team slot and size, never on the call: all
// members agree on it, and a call with fewer blocks than channels uses the
// first channels with the same cells as any other call.
struct coll_scratch {
    // The small areas of all slots, then the wide areas of slots 0 and 1.
    static constexpr std::uint64_t small_area_bytes = std::uint64_t{4} << 20;
    static constexpr std::uint64_t slot_bytes = small_area_bytes / team::max_slots;
    static constexpr int wide_slots = 2;
    // LL channels of a wide slot (the most blocks an LL collective spreads
    // over) and their cells: a payload of 16 KiB per channel and chunk on 2
    // PEs, 8 KiB on 4, 4 KiB on 8, so a 256 KiB message is one chunk per
    // channel on up to 4 PEs.
    static constexpr int ll_channels = 32;
    static constexpr std::uint64_t wide_cells_bytes = std::uint64_t{4} << 20;
    // LL (and the PGAS_CHECKS argument exchange) serves teams up to this size;
    // larger teams take the direct path.
    static constexpr int max_ll_pes = 64;
    // Cells in flight per pair and channel. Fixed, not a policy: sender and
    // receiver must agree on the cell of a message whatever policy each call
    // used. Two let a sender run one chunk ahead of the receiver (ll_exchange);
    // with the wide slots' cells a message up to 256 KiB is one chunk per
    // channel on up to 4 PEs, so a deeper ring would only shrink the cells.
    static constexpr std::uint64_t ll_depth = 2;

    // Small area, from the slot's base.
    static constexpr std::uint64_t sent_offset = 0;
    static constexpr std::uint64_t recv_offset = sent_offset + 8 * max_ll_pes;
    static constexpr std::uint64_t ack_offset = 2048;  // peers write here: its own lines
    static constexpr std::uint64_t staging_offset = 4096;
    static constexpr std::uint64_t staging_bytes = 8192;
    // Blocks a multi-block direct collective may spread over (coll::tuning_policy's
    // stream_max_blocks), and dissemination rounds of their barriers: parts
    // run only in teams of at most max_ll_pes = 2^6 members.
    static constexpr int max_parts = 64;
    static constexpr int max_part_rounds = 6;
    static constexpr std::uint64_t part_epoch_offset = staging_offset + staging_bytes;
    static constexpr std::uint64_t part_arrival_offset = part_epoch_offset + 8 * max_parts;
    static constexpr std::uint64_t cells_offset = part_arrival_offset + 8 * max_parts * max_part_rounds;
    static constexpr std::uint64_t cells_bytes = slot_bytes - cells_offset;

    // Wide area, from its base: the three counter arrays of every channel
    // ([channel][member]), then the cells ([channel][from][depth]): channel
    // 0, the one a one-block call uses, has its counters and its cells in the
    // area's first 176 KiB, one 2 MiB page of the heap (as a split team's slot
    // has), where [from][channel] order put each sender's cells 2 MiB apart.
    static constexpr std::uint64_t wide_counter_bytes = 8 * std::uint64_t(ll_channels) * max_ll_pes;
    static constexpr std::uint64_t wide_sent_offset = 0;
    static constexpr std::uint64_t wide_recv_offset = wide_counter_bytes;
    static constexpr std::uint64_t wide_ack_offset = 2 * wide_counter_bytes;
    static constexpr std::uint64_t wide_cells_offset = 3 * wide_counter_bytes;
    static constexpr std::uint64_t wide_bytes = wide_cells_offset + wide_cells_bytes;

    enum class counter { sent, recv, ack };

    PGAS_HD static constexpr std::uint64_t slot_base(int slot) {
        return heap_layout::coll_scratch_offset + std::uint64_t(slot) * slot_bytes;
    }
    PGAS_HD static constexpr bool wide(int slot) { return slot < wide_slots; }
    PGAS_HD static constexpr std::uint64_t wide_base(int slot) {
        return heap_layout::coll_scratch_offset + small_area_bytes + std::uint64_t(slot) * wide_bytes;
    }
    // LL channels of the slot's team: the most blocks its LL collectives spread over.
    PGAS_HD static constexpr int channels(int slot) { return wide(slot) ? ll_channels : 1; }

    // The word of counter `k` that this PE keeps for `member` on `channel`.
    PGAS_HD static constexpr std::uint64_t counter_offset(int slot, counter k, int channel, int member) {
        if (!wide(slot)) {
            const std::uint64_t at[] = {sent_offset, recv_offset, ack_offset};
            return slot_base(slot) + at[int(k)] + 8 * std::uint64_t(member);
        }
        const std::uint64_t at[] = {wide_sent_offset, wide_recv_offset, wide_ack_offset};
        return wide_base(slot) + at[int(k)] + 8 * (std::uint64_t(channel) * max_ll_pes + std::uint64_t(member));
    }

    // Bytes of one cell for a team of n: a multiple of 16 (8 data bytes per
    // two LL words), so a message's payload is a multiple of 8 bytes. The
    // division by n is 32-bit (every operand fits): every LL send and
    // receive computes its cell, and the GPU's 64-bit division is a long
    // subroutine in the chain before a small call's first store.
    PGAS_HD static constexpr std::uint64_t cell_bytes(int slot, int n) {
        const std::uint32_t ring_bytes = wide(slot) ? std::uint32_t(wide_cells_bytes / ll_channels / ll_depth)
                                                    : std::uint32_t(cells_bytes / ll_depth);
        return ring_bytes / std::uint32_t(n) / 16 * 16;
    }
    PGAS_HD static constexpr std::uint64_t payload_bytes(int slot, int n) { return cell_bytes(slot, n) / 2; }
    PGAS_HD static constexpr std::uint64_t cell_offset(int slot, int n, int channel, int from, std::uint64_t message) {
        const std::uint64_t ring = (std::uint64_t(channel) * std::uint64_t(n) + std::uint64_t(from)) * ll_depth;
        const std::uint64_t base = wide(slot) ? wide_base(slot) + wide_cells_offset : slot_base(slot) + cells_offset;
        return base + (ring + message % ll_depth) * cell_bytes(slot, n);
    }
    template <class T>
    PGAS_HD static constexpr symmetric_ptr<T> at(std::uint64_t offset) {
        return symmetric_ptr<T>(offset_tag{}, offset);
    }
};

static_assert(coll_scratch::small_area_bytes + coll_scratch::wide_slots * coll_scratch::wide_bytes <=
              heap_layout::coll_scratch_bytes);
static_assert(coll_scratch::recv_offset + 8 * coll_scratch::max_ll_pes <= coll_scratch::ack_offset);
static_assert(coll_scratch::ack_offset + 8 * coll_scratch::max_ll_pes <= coll_scratch::staging_offset);
static_assert(std::uint64_t{1} << coll_scratch::max_part_rounds >= coll_scratch::max_ll_pes);
static_assert(coll_scratch::wide_cells_bytes / coll_scratch::ll_channels / coll_scratch::ll_depth <
                      (std::uint64_t{1} << 32) &&
                  coll_scratch::cells_bytes / coll_scratch::ll_depth < (std::uint64_t{1} << 32),
              "cell_bytes divides a ring's bytes in 32 bits");
static_assert(coll_scratch::cells_offset % 64 == 0 && coll_scratch::wide_cells_offset % 64 == 0);
static_assert(coll_scratch::payload_bytes(2, coll_scratch::max_ll_pes) >= 64,
              "LL cells too small for the largest team");
static_assert(coll_scratch::payload_bytes(0, coll_scratch::max_ll_pes) >= 64, "wide LL cells too small");
static_assert(coll_scratch::payload_bytes(0, 4) == 8192, "wide slots: 8 KiB per channel and chunk on 4 PEs");
static_assert(coll_scratch::cell_offset(0, coll_scratch::max_ll_pes, 0, coll_scratch::max_ll_pes - 1, 1) +
                      coll_scratch::cell_bytes(0, coll_scratch::max_ll_pes) - coll_scratch::wide_base(0) <=
                  (std::uint64_t{2} << 20),
              "channel 0's counters and cells share the wide area's first 2 MiB page");

}  // namespace detail
PGAS_NAMESPACE_END
