// Raw mlx5 send-WQE segments: opcodes, fm_ce_se flags and constexpr encoders of each 16-byte segment.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/ibgda/byte_order.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace mlx5 {

// One 16-byte segment ("octoword", the unit `ds` counts) as it lies in
// memory: word[i] holds bytes 4i..4i+3. Field positions follow the mlx5
// send WQE layout (rdma-core's <infiniband/mlx5dv.h> structs of the same
// names); tests/ibgda/golden_test.cpp checks every encoder against it.
struct segment {
    std::uint32_t word[4];
};

// Send opcodes (low byte of the control segment's first word).
namespace opcode {
inline constexpr std::uint8_t nop = 0x00;
inline constexpr std::uint8_t rdma_write = 0x08;
inline constexpr std::uint8_t rdma_write_imm = 0x09;
inline constexpr std::uint8_t rdma_read = 0x10;
inline constexpr std::uint8_t atomic_cs = 0x11;
inline constexpr std::uint8_t atomic_fa = 0x12;
inline constexpr std::uint8_t atomic_masked_cs = 0x14;
inline constexpr std::uint8_t atomic_masked_fa = 0x15;
}  // namespace opcode

// Byte 11 of the control segment: fence mode (bits 7:5), completion-event
// mode (bits 3:2; 2 = always write a CQE) and solicited event (bit 1).
namespace fm_ce_se {
inline constexpr std::uint8_t none = 0x00;
inline constexpr std::uint8_t solicited = 0x02;
inline constexpr std::uint8_t cq_update = 0x08;
// Wait for earlier RDMA READ/atomic WQEs of this QP before executing.
inline constexpr std::uint8_t initiator_small_fence = 0x20;
inline constexpr std::uint8_t fence = 0x80;
}  // namespace fm_ce_se

// opmod of the masked ("extended") atomics: bit 3 set, low bits log2(operand bytes) - 2.
PGAS_HD constexpr std::uint8_t extended_atomic_opmod(unsigned operand_bytes) {
    return operand_bytes == 8 ? std::uint8_t{0x09} : std::uint8_t{0x08};
}

// Control segment. wqe_index: the WQE's first building block, modulo 2^16;
// qpn: 24 bits; ds: the WQE's size in 16-byte segments (this one included).
// imm is stored as given (already big-endian where the opcode needs it).
PGAS_HD constexpr segment control(std::uint16_t wqe_index, std::uint8_t op, std::uint8_t opmod, std::uint32_t qpn,
                                  std::uint8_t ds, std::uint8_t flags, std::uint8_t signature = 0,
                                  std::uint32_t imm = 0) {
    return {{be32((std::uint32_t(opmod) << 24) | (std::uint32_t(wqe_index) << 8) | op),
             be32(((qpn & 0xffffffu) << 8) | ds),
             // byte 8 signature, bytes 9-10 stream/channel id (0), byte 11 fm_ce_se
             std::uint32_t(signature) | (std::uint32_t(flags) << 24), imm}};
}

// Remote-address segment: remote virtual address and rkey.
PGAS_HD constexpr segment remote_address(std::uint64_t raddr, std::uint32_t rkey) {
    return {{be32(std::uint32_t(raddr >> 32)), be32(std::uint32_t(raddr)), be32(rkey), 0}};
}

// Data (scatter/gather) segment: a local buffer of `bytes` under lkey.
PGAS_HD constexpr segment data(std::uint32_t bytes, std::uint32_t lkey, std::uint64_t address) {
    return {{be32(bytes), be32(lkey), be32(std::uint32_t(address >> 32)), be32(std::uint32_t(address))}};
}

// First word of an inline-data segment: the byte count with bit 31 set; the
// bytes follow it directly, padded to a 16-byte boundary.
PGAS_HD constexpr std::uint32_t inline_header(std::uint32_t bytes) { return be32(bytes | 0x80000000u); }

// Atomic segment of ATOMIC_FA (add in the first field, compare unused) and
// ATOMIC_CS (swap, compare); operands big-endian.
PGAS_HD constexpr segment atomic(std::uint64_t swap_or_add, std::uint64_t compare) {
    return {{be32(std::uint32_t(swap_or_add >> 32)), be32(std::uint32_t(swap_or_add)),
             be32(std::uint32_t(compare >> 32)), be32(std::uint32_t(compare))}};
}

// Masked 4-byte compare-swap: where (old & compare_mask) == (compare &
// compare_mask), the bits under swap_mask become swap's.
PGAS_HD constexpr segment masked_cs32(std::uint32_t swap, std::uint32_t compare, std::uint32_t swap_mask,
                                      std::uint32_t compare_mask) {
    return {{be32(swap), be32(compare), be32(swap_mask), be32(compare_mask)}};
}

// Masked 4-byte fetch-add: a set bit i in field_boundary stops the carry out
// of bit i (all ones: a bitwise xor).
PGAS_HD constexpr segment masked_fa32(std::uint32_t add, std::uint32_t field_boundary) {
    return {{be32(add), be32(field_boundary), 0, 0}};
}

// Masked 8-byte fetch-add: add, field boundary.
PGAS_HD constexpr segment masked_fa64(std::uint64_t add, std::uint64_t field_boundary) {
    return atomic(add, field_boundary);
}

// Masked 8-byte compare-swap takes two segments: (swap, compare), then
// (swap_mask, compare_mask).
PGAS_HD constexpr segment masked_cs64_operands(std::uint64_t swap, std::uint64_t compare) {
    return atomic(swap, compare);
}
PGAS_HD constexpr segment masked_cs64_masks(std::uint64_t swap_mask, std::uint64_t compare_mask) {
    return atomic(swap_mask, compare_mask);
}

}  // namespace mlx5
PGAS_NAMESPACE_END
