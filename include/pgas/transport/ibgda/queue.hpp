// The shared state of one IBGDA queue pair: send queue, doorbell record and register, collapsed CQ, counters.
#pragma once

#include <pgas/core/config.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace detail {

// A monotonically growing count of send-queue building blocks, alone on its
// cache line so that producers on one counter do not slow pollers of another.
struct alignas(64) ibgda_counter {
    std::uint64_t value;
};

// A memory region the NIC may access: [base, base + bytes) under `key`.
struct ibgda_region {
    std::uint64_t base = 0;
    std::uint64_t bytes = 0;
    std::uint32_t key = 0;
};

// One RC queue pair from a local PE to one peer PE (itself included, through a
// loopback connection), in memory both the producers (GPU or host threads)
// and the NIC reach. Setup fills the fixed part; the counters count building
// blocks from 0 and never wrap (2^64 blocks outlive any job).
//
//   reserved  >= ready >= rung >= completed: claimed by producers / written and
//   published in order / announced to the NIC / known complete through a CQE.
struct ibgda_qp {
    // --- fixed at setup
    std::uint32_t* send_queue = nullptr;          // blocks * 64 bytes
    std::uint32_t blocks = 0;                     // power of two, <= ibgda_traits::max_send_queue_blocks
    std::uint32_t qpn = 0;                        // 24 bits
    std::uint32_t* doorbell_record = nullptr;     // [0] receive, [1] send counter: big-endian, mod 2^16
    std::uint64_t* doorbell = nullptr;            // the UAR (BlueFlame) register: one 8-byte store rings
    std::uint32_t doorbell_is_mmio = 0;           // 1: a real UAR mapping (st.mmio); 0: ordinary memory
    std::uint64_t* cqe = nullptr;                 // the CQ: cq_entries 64-byte CQEs
    std::uint32_t cq_entries = 1;                 // 1: a collapsed CQ (one CQE, rewritten by every completion);
                                                  // else a ring (power of two) read in order by owner bit
    std::uint32_t* cq_doorbell_record = nullptr;  // ring CQ: [0] consumer index (big-endian, 24 bits)
    std::uint64_t* wqe_end = nullptr;             // per block: end counter of the WQE that starts there
    std::uint32_t* held = nullptr;                // per block: its scratch holds a result not yet read
    std::byte* scratch = nullptr;                 // per block: ibgda_traits::scratch_bytes_per_block bytes
    std::uint32_t scratch_lkey = 0;
    std::uint64_t remote_heap = 0;  // the peer's heap base in its NIC's address space
    std::uint32_t rkey = 0;         // the peer heap's remote key
    int pe = -1;                    // the peer
    // --- mutable, each on its own line
    ibgda_counter reserved{0};
    ibgda_counter ready{0};
    ibgda_counter rung{0};
    ibgda_counter completed{0};
    ibgda_counter error{0};        // first error CQE seen (see ibgda_error), 0 while none
    ibgda_counter cq_consumed{0};  // ring CQ: CQEs consumed
    ibgda_counter cq_poller{0};    // ring CQ: 1 while a thread consumes CQEs (one at a time)
};

// What an error CQE says, packed into one word so the first one seen can be
// latched with a single compare-exchange.
struct ibgda_error {
    std::uint8_t syndrome = 0;
    std::uint8_t vendor_syndrome = 0;
    std::uint8_t wqe_opcode = 0;
    std::uint16_t wqe_counter = 0;

    PGAS_HD constexpr std::uint64_t pack() const {
        return (std::uint64_t{1} << 63) | (std::uint64_t(vendor_syndrome) << 32) | (std::uint64_t(syndrome) << 24) |
               (std::uint64_t(wqe_opcode) << 16) | wqe_counter;
    }
    PGAS_HD static constexpr ibgda_error unpack(std::uint64_t v) {
        return {std::uint8_t(v >> 24), std::uint8_t(v >> 32), std::uint8_t(v >> 16), std::uint16_t(v)};
    }
};

}  // namespace detail
PGAS_NAMESPACE_END
