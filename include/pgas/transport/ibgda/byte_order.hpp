// Byte order of mlx5 work requests: constexpr swaps and the big-endian words WQEs and CQEs are made of.
#pragma once

#include <pgas/core/config.hpp>

#include <bit>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
namespace mlx5 {

// Every machine pgas drives (x86-64, aarch64 hosts, NVIDIA GPUs) is
// little-endian; the NIC's structures are big-endian, so each multi-byte
// field is swapped once when it is encoded and once when it is decoded.
static_assert(std::endian::native == std::endian::little, "pgas: the IBGDA encoders assume a little-endian host");

PGAS_HD constexpr std::uint16_t byte_swap16(std::uint16_t v) { return std::uint16_t((v >> 8) | (v << 8)); }
PGAS_HD constexpr std::uint32_t byte_swap32(std::uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0x0000ff00u) | ((v << 8) & 0x00ff0000u) | (v << 24);
}
PGAS_HD constexpr std::uint64_t byte_swap64(std::uint64_t v) {
    return (std::uint64_t(byte_swap32(std::uint32_t(v))) << 32) | byte_swap32(std::uint32_t(v >> 32));
}

// The 32-bit word whose bytes in memory are v in big-endian order.
PGAS_HD constexpr std::uint32_t be32(std::uint32_t v) { return byte_swap32(v); }
// The value of a big-endian 32-bit word read from memory.
PGAS_HD constexpr std::uint32_t from_be32(std::uint32_t word) { return byte_swap32(word); }
PGAS_HD constexpr std::uint16_t from_be16(std::uint16_t word) { return byte_swap16(word); }
PGAS_HD constexpr std::uint64_t from_be64(std::uint64_t word) { return byte_swap64(word); }
PGAS_HD constexpr std::uint64_t be64(std::uint64_t v) { return byte_swap64(v); }

}  // namespace mlx5
PGAS_NAMESPACE_END
