// Whole mlx5 send WQEs (RDMA WRITE/READ, inline WRITE, atomics, masked atomics, NOP) built from the raw segments.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/ibgda/segments.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace mlx5 {

inline constexpr unsigned building_block_bytes = 64;  // MLX5_SEND_WQE_BB
inline constexpr unsigned max_wqe_building_blocks =
    2;  // the largest WQE built here (masked 8-byte CS, inline up to 92 B)

// Where a WQE goes and how it completes: the index of its first building block
// (mod 2^16), the QP number and the fm_ce_se flags.
struct wqe_header {
    std::uint16_t index = 0;
    std::uint32_t qpn = 0;
    std::uint8_t flags = fm_ce_se::none;
};

// A send WQE of up to two building blocks as it lies in the send queue:
// word[i] holds bytes 4i..4i+3, ds the number of valid 16-byte segments.
struct wqe {
    std::uint32_t word[max_wqe_building_blocks * building_block_bytes / 4];
    std::uint8_t ds;

    // Building blocks the WQE occupies in the send queue.
    PGAS_HD constexpr unsigned building_blocks() const { return (ds + 3u) / 4u; }
    PGAS_HD constexpr void put(unsigned at, segment s) {
        for (unsigned i = 0; i < 4; ++i) word[4 * at + i] = s.word[i];
    }
    // The first 8 bytes of the control segment: what the doorbell carries.
    PGAS_HD constexpr std::uint64_t doorbell_value() const {
        return std::uint64_t(word[0]) | (std::uint64_t(word[1]) << 32);
    }
};

// ds of each WQE shape.
inline constexpr std::uint8_t nop_ds = 1;
inline constexpr std::uint8_t rdma_ds = 3;         // ctrl, raddr, data
inline constexpr std::uint8_t atomic_ds = 4;       // ctrl, raddr, atomic, data
inline constexpr std::uint8_t masked_cs64_ds = 5;  // ctrl, raddr, 2 x atomic, data
PGAS_HD constexpr std::uint8_t inline_write_ds(std::uint32_t bytes) { return std::uint8_t(2 + (4 + bytes + 15) / 16); }
// The most inline bytes a WQE of `building_blocks` blocks carries.
PGAS_HD constexpr std::uint32_t max_inline_bytes(unsigned building_blocks) {
    return building_blocks * building_block_bytes - 32 - 4;
}

namespace detail {
PGAS_HD constexpr wqe start(const wqe_header& h, std::uint8_t op, std::uint8_t opmod, std::uint8_t ds) {
    wqe w{};
    w.ds = ds;
    w.put(0, control(h.index, op, opmod, h.qpn, ds, h.flags));
    return w;
}
// A WQE whose control segment is followed by `segments` in order (ds: one more than their count).
template <class... Segments>
PGAS_HD constexpr wqe build(const wqe_header& h, std::uint8_t op, std::uint8_t opmod, Segments... segments) {
    wqe w = start(h, op, opmod, std::uint8_t(1 + sizeof...(segments)));
    unsigned at = 1;
    (w.put(at++, segments), ...);
    return w;
}
}  // namespace detail

PGAS_HD constexpr wqe nop(const wqe_header& h) { return detail::start(h, opcode::nop, 0, nop_ds); }

// RDMA WRITE of `bytes` from a registered local buffer.
PGAS_HD constexpr wqe rdma_write(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey, std::uint64_t laddr,
                                 std::uint32_t lkey, std::uint32_t bytes) {
    return detail::build(h, opcode::rdma_write, 0, remote_address(raddr, rkey), data(bytes, lkey, laddr));
}

// RDMA WRITE whose payload travels inside the WQE (bytes <= max_inline_bytes(2)):
// no local registration needed and the source is reusable at once.
PGAS_HD constexpr wqe rdma_write_inline(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                        const std::uint8_t* payload, std::uint32_t bytes) {
    wqe w = detail::start(h, opcode::rdma_write, 0, inline_write_ds(bytes));
    w.put(1, remote_address(raddr, rkey));
    w.word[8] = inline_header(bytes);
    for (std::uint32_t i = 0; i < bytes; ++i) {
        const std::uint32_t at = 36 + i;  // byte position in the WQE
        w.word[at / 4] |= std::uint32_t(payload[i]) << (8 * (at % 4));
    }
    return w;
}

// RDMA READ of `bytes` into a registered local buffer.
PGAS_HD constexpr wqe rdma_read(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey, std::uint64_t laddr,
                                std::uint32_t lkey, std::uint32_t bytes) {
    return detail::build(h, opcode::rdma_read, 0, remote_address(raddr, rkey), data(bytes, lkey, laddr));
}

// 8-byte fetch-add; the old value lands in the 8-byte local buffer.
PGAS_HD constexpr wqe atomic_fetch_add(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                       std::uint64_t laddr, std::uint32_t lkey, std::uint64_t add) {
    return detail::build(h, opcode::atomic_fa, 0, remote_address(raddr, rkey), atomic(add, 0), data(8, lkey, laddr));
}

// 8-byte compare-swap: writes swap where the word equals compare.
PGAS_HD constexpr wqe atomic_compare_swap(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                          std::uint64_t laddr, std::uint32_t lkey, std::uint64_t swap,
                                          std::uint64_t compare) {
    return detail::build(h, opcode::atomic_cs, 0, remote_address(raddr, rkey), atomic(swap, compare),
                         data(8, lkey, laddr));
}

// Masked 4-byte fetch-add (field_boundary: see masked_fa32).
PGAS_HD constexpr wqe masked_fetch_add32(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                         std::uint64_t laddr, std::uint32_t lkey, std::uint32_t add,
                                         std::uint32_t field_boundary) {
    return detail::build(h, opcode::atomic_masked_fa, extended_atomic_opmod(4), remote_address(raddr, rkey),
                         masked_fa32(add, field_boundary), data(4, lkey, laddr));
}

PGAS_HD constexpr wqe masked_compare_swap32(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                            std::uint64_t laddr, std::uint32_t lkey, std::uint32_t swap,
                                            std::uint32_t compare, std::uint32_t swap_mask,
                                            std::uint32_t compare_mask) {
    return detail::build(h, opcode::atomic_masked_cs, extended_atomic_opmod(4), remote_address(raddr, rkey),
                         masked_cs32(swap, compare, swap_mask, compare_mask), data(4, lkey, laddr));
}

PGAS_HD constexpr wqe masked_fetch_add64(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                         std::uint64_t laddr, std::uint32_t lkey, std::uint64_t add,
                                         std::uint64_t field_boundary) {
    return detail::build(h, opcode::atomic_masked_fa, extended_atomic_opmod(8), remote_address(raddr, rkey),
                         masked_fa64(add, field_boundary), data(8, lkey, laddr));
}

// Two building blocks: ctrl, raddr, operands, masks | data.
PGAS_HD constexpr wqe masked_compare_swap64(const wqe_header& h, std::uint64_t raddr, std::uint32_t rkey,
                                            std::uint64_t laddr, std::uint32_t lkey, std::uint64_t swap,
                                            std::uint64_t compare, std::uint64_t swap_mask,
                                            std::uint64_t compare_mask) {
    return detail::build(h, opcode::atomic_masked_cs, extended_atomic_opmod(8), remote_address(raddr, rkey),
                         masked_cs64_operands(swap, compare), masked_cs64_masks(swap_mask, compare_mask),
                         data(8, lkey, laddr));
}

}  // namespace mlx5
PGAS_NAMESPACE_END
