// Layout of the reserved head of every PE's symmetric heap (sync counters, collective scratch, heartbeat).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/team.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Per team slot: the barrier epoch (read and written only by its own PE) and
// one arrival counter per dissemination round, each on its own 64-byte line so
// peers' remote increments never share a line with the local epoch.
struct team_sync_slot {
    static constexpr int max_rounds = 16;  // 2^16 PEs
    alignas(64) std::uint64_t epoch;
    struct alignas(64) counter {
        std::uint64_t value;
    };
    counter arrivals[max_rounds];
};

struct heap_layout {
    static constexpr std::uint64_t team_sync_offset = 0;
    static constexpr std::uint64_t team_sync_bytes = sizeof(team_sync_slot) * team::max_slots;
    // Scratch owned by coll/ (flags and low-latency packet buffers; coll/detail/scratch.hpp): 64 KiB per team
    // slot, plus 4 MiB of LL channels (and their counters) for each of the world and node teams.
    static constexpr std::uint64_t coll_scratch_offset = (team_sync_bytes + 4095) / 4096 * 4096;
    static constexpr std::uint64_t coll_scratch_bytes = (std::uint64_t{12} << 20) + (std::uint64_t{128} << 10);
    // The process's heartbeat (detail/heartbeat.hpp): one line, written by its
    // owner every ~50 ms and read by the node's other processes in long waits.
    static constexpr std::uint64_t heartbeat_offset = coll_scratch_offset + coll_scratch_bytes;
    static constexpr std::uint64_t heartbeat_bytes = 256;
    // User allocations start here, on a 4 KiB boundary; symmetric_ptrs below it are rejected. When the heartbeat
    // line pushed the start 256 bytes past one, every user buffer moved with it, and bench_nvlink's L2-resident
    // rows moved by 5-18% (put 8 MiB, get 2 MiB, one H100 and one H200): where a buffer starts relative to a page
    // is part of its speed, so reserved words never shift it.
    static constexpr std::uint64_t user_offset = (heartbeat_offset + heartbeat_bytes + 4095) / 4096 * 4096;
    static_assert(user_offset % 4096 == 0);
    // A word nobody writes (zero since the heap was made), after the heartbeat line and before user_offset: the
    // target of the libfabric proxy's flush, an 8-byte read whose completion orders the puts before it. The flush
    // read offset 0 before, the world team's barrier epoch, which its owner increments meanwhile: a data race
    // (ThreadSanitizer in the sanitizer lane), harmless to the value thrown away but undefined behaviour.
    static constexpr std::uint64_t flush_word_offset = heartbeat_offset + heartbeat_bytes;
    static_assert(flush_word_offset + 8 <= user_offset);

    PGAS_HD static constexpr std::uint64_t slot_offset(int slot) {
        return team_sync_offset + std::uint64_t(slot) * sizeof(team_sync_slot);
    }
    PGAS_HD static constexpr std::uint64_t epoch_offset(int slot) { return slot_offset(slot); }
    PGAS_HD static constexpr std::uint64_t arrival_offset(int slot, int round) {
        return slot_offset(slot) + 64 + std::uint64_t(round) * 64;
    }
};

static_assert(sizeof(team_sync_slot) == 64 * (1 + team_sync_slot::max_rounds));

}  // namespace detail
PGAS_NAMESPACE_END
