// Raw mlx5 completion-queue entries: the 64-byte CQE's fields, opcodes, error syndromes and their names.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/ibgda/byte_order.hpp>
#include <pgas/transport/ibgda/segments.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace mlx5 {

inline constexpr unsigned cqe_bytes = 64;

// CQE opcodes (high nibble of the last byte, op_own; bit 0 is the owner bit).
namespace cqe_opcode {
inline constexpr std::uint8_t requester = 0x0;
inline constexpr std::uint8_t requester_error = 0xd;
inline constexpr std::uint8_t responder_error = 0xe;
inline constexpr std::uint8_t invalid = 0xf;  // what software writes before the NIC's first CQE
}  // namespace cqe_opcode

// Byte positions inside a CQE (requester and error layouts).
namespace cqe_field {
inline constexpr unsigned byte_count = 44;       // be32
inline constexpr unsigned vendor_syndrome = 54;  // error CQE
inline constexpr unsigned syndrome = 55;         // error CQE
inline constexpr unsigned wqe_opcode_qpn = 56;   // be32: send opcode (8 bits) | QP number (24 bits)
inline constexpr unsigned wqe_counter = 60;      // be16: first building block of the completed WQE
inline constexpr unsigned signature = 62;
inline constexpr unsigned op_own = 63;
}  // namespace cqe_field

// The last 8 bytes of a CQE, read with one 8-byte load so that a poller never
// sees the counter of one CQE with the opcode of another. The NIC (and the
// emulated one) writes them last.
struct cqe_tail {
    std::uint64_t raw = 0;

    PGAS_HD constexpr std::uint8_t op_own() const { return std::uint8_t(raw >> 56); }
    PGAS_HD constexpr std::uint8_t opcode() const { return std::uint8_t(op_own() >> 4); }
    PGAS_HD constexpr bool owner() const { return (op_own() & 1u) != 0; }
    PGAS_HD constexpr std::uint16_t wqe_counter() const { return from_be16(std::uint16_t(raw >> 32)); }
    PGAS_HD constexpr std::uint32_t qpn() const { return from_be32(std::uint32_t(raw)) & 0xffffffu; }
    PGAS_HD constexpr std::uint8_t wqe_opcode() const { return std::uint8_t(from_be32(std::uint32_t(raw)) >> 24); }
    PGAS_HD constexpr bool is_error() const {
        return opcode() == cqe_opcode::requester_error || opcode() == cqe_opcode::responder_error;
    }

    PGAS_HD static constexpr cqe_tail make(std::uint8_t cqe_op, bool owner, std::uint16_t wqe_counter,
                                           std::uint8_t wqe_op, std::uint32_t qpn) {
        const std::uint64_t opcode_qpn = be32((std::uint32_t(wqe_op) << 24) | (qpn & 0xffffffu));
        const std::uint64_t counter = byte_swap16(wqe_counter);
        const std::uint64_t op_own = std::uint64_t((cqe_op << 4) | (owner ? 1 : 0));
        return {opcode_qpn | (counter << 32) | (op_own << 56)};
    }
};

// Names of the requester error syndromes (CQE byte 55).
PGAS_HD constexpr const char* syndrome_name(std::uint8_t syndrome) {
    switch (syndrome) {
        case 0x01:
            return "local length error";
        case 0x02:
            return "local QP operation error";
        case 0x04:
            return "local protection error";
        case 0x05:
            return "work request flushed";
        case 0x06:
            return "memory window bind error";
        case 0x10:
            return "bad response";
        case 0x11:
            return "local access error";
        case 0x12:
            return "remote invalid request";
        case 0x13:
            return "remote access error";
        case 0x14:
            return "remote operation error";
        case 0x15:
            return "transport retry counter exceeded";
        case 0x16:
            return "RNR retry counter exceeded";
        case 0x22:
            return "remote aborted";
    }
    return "unknown syndrome";
}

PGAS_HD constexpr const char* opcode_name(std::uint8_t op) {
    switch (op) {
        case opcode::nop:
            return "NOP";
        case opcode::rdma_write:
            return "RDMA WRITE";
        case opcode::rdma_write_imm:
            return "RDMA WRITE with immediate";
        case opcode::rdma_read:
            return "RDMA READ";
        case opcode::atomic_cs:
            return "ATOMIC compare-swap";
        case opcode::atomic_fa:
            return "ATOMIC fetch-add";
        case opcode::atomic_masked_cs:
            return "masked ATOMIC compare-swap";
        case opcode::atomic_masked_fa:
            return "masked ATOMIC fetch-add";
    }
    return "unknown opcode";
}

}  // namespace mlx5
PGAS_NAMESPACE_END
