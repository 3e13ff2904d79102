// Golden tests: every WQE/CQE encoder byte for byte against rdma-core's <infiniband/mlx5dv.h>, plus stored hex vectors.
#include <pgas/transport/ibgda/cqe.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <doctest/doctest.h>
#include <infiniband/mlx5dv.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace mlx5 = pgas::mlx5;

namespace {

std::string hex(const void* bytes, std::size_t n) {
    std::string out;
    char two[3];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(two, sizeof two, "%02x", static_cast<const unsigned char*>(bytes)[i]);
        out += two;
    }
    return out;
}
std::string hex(const mlx5::segment& s) { return hex(s.word, 16); }
std::string hex(const mlx5::wqe& w) { return hex(w.word, w.ds * 16u); }

// Edge values from the issue: indices 0/0xffff, QP numbers up to 24 bits,
// lengths 0/1/2^31, and whatever sits on a byte or sign boundary.
const std::uint16_t indices[] = {0, 1, 0x00ff, 0x0100, 0x7fff, 0x8000, 0xfffe, 0xffff};
const std::uint32_t qpns[] = {0, 1, 0xff, 0x100, 0x123456, 0x800000, 0xfffffe, 0xffffff};
const std::uint32_t lengths[] = {0, 1, 8, 12, 0xff, 0x10000, 0x7fffffff, 0x80000000u, 0xffffffffu};
const std::uint32_t keys[] = {0, 1, 0x1234, 0x80000000u, 0xdeadbeefu, 0xffffffffu};
const std::uint64_t addresses[] = {0, 1, 0x1000, 0x7f12345678f0ull, 0x8000000000000000ull, 0xffffffffffffffffull};
const std::uint8_t opcodes[] = {mlx5::opcode::nop, mlx5::opcode::rdma_write, mlx5::opcode::rdma_read,
                                mlx5::opcode::atomic_cs, mlx5::opcode::atomic_fa, mlx5::opcode::atomic_masked_cs,
                                mlx5::opcode::atomic_masked_fa};
const std::uint8_t flag_values[] = {0, MLX5_WQE_CTRL_CQ_UPDATE, MLX5_WQE_CTRL_SOLICITED, MLX5_WQE_CTRL_FENCE,
                                    MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE,
                                    MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_FENCE};
const std::uint64_t operands[] = {0, 1, 0xff, 0x0123456789abcdefull, 0x8000000000000000ull, ~0ull};

// rdma-core's own control segment for the same arguments (on zeroed memory:
// mlx5dv_set_ctrl_seg leaves the stream/channel id bytes alone).
mlx5_wqe_ctrl_seg reference_control(std::uint16_t index, std::uint8_t op, std::uint8_t opmod, std::uint32_t qpn,
                                    std::uint8_t flags, std::uint8_t ds, std::uint8_t signature, std::uint32_t imm) {
    mlx5_wqe_ctrl_seg seg;
    std::memset(&seg, 0, sizeof seg);
    mlx5dv_set_ctrl_seg(&seg, index, op, opmod, qpn, flags, ds, signature, imm);
    return seg;
}

mlx5_wqe_raddr_seg reference_raddr(std::uint64_t raddr, std::uint32_t rkey) {
    mlx5_wqe_raddr_seg seg;
    std::memset(&seg, 0, sizeof seg);
    seg.raddr = htobe64(raddr);
    seg.rkey = htobe32(rkey);
    return seg;
}

mlx5_wqe_data_seg reference_data(std::uint32_t bytes, std::uint32_t lkey, std::uint64_t address) {
    mlx5_wqe_data_seg seg;
    mlx5dv_set_data_seg(&seg, bytes, lkey, std::uintptr_t(address));
    return seg;
}

mlx5_wqe_atomic_seg reference_atomic(std::uint64_t swap_add, std::uint64_t compare) {
    mlx5_wqe_atomic_seg seg;
    seg.swap_add = htobe64(swap_add);
    seg.compare = htobe64(compare);
    return seg;
}

// Masked atomics have no rdma-core struct; these follow the PRM's field order
// (big-endian operands, 16-byte aligned) and are pinned by the hex vectors below.
struct masked_cs32_layout {
    __be32 swap, compare, swap_mask, compare_mask;
};
struct masked_fa32_layout {
    __be32 add, field_boundary;
    std::uint8_t reserved[8];
};

template <class Reference>
void check_same(const mlx5::segment& mine, const Reference& theirs) {
    static_assert(sizeof(Reference) == 16);
    INFO("pgas ", hex(mine), " rdma-core ", hex(&theirs, 16));
    CHECK(std::memcmp(mine.word, &theirs, 16) == 0);
}

// A WQE assembled segment by segment with rdma-core's helpers and structs.
struct reference_wqe {
    unsigned char bytes[128] = {};
    unsigned at = 0;
    template <class Segment>
    reference_wqe& add(const Segment& s) {
        std::memcpy(bytes + at, &s, sizeof s);
        at += sizeof s;
        return *this;
    }
};

void check_same(const mlx5::wqe& mine, const reference_wqe& theirs) {
    INFO("pgas ", hex(mine), "\nrdma-core ", hex(theirs.bytes, mine.ds * 16u));
    CHECK(mine.ds * 16u == (theirs.at + 15) / 16 * 16);
    CHECK(std::memcmp(mine.word, theirs.bytes, mine.ds * 16u) == 0);
}

}  // namespace

// The encoders are usable in constant expressions (and hence on the device).
static_assert(mlx5::control(0xffff, mlx5::opcode::rdma_write, 0, 0xffffff, 3, mlx5::fm_ce_se::cq_update).word[0] ==
              mlx5::be32(0x00ffff08u));
static_assert(mlx5::nop({7, 0x1234, mlx5::fm_ce_se::cq_update}).building_blocks() == 1);
static_assert(mlx5::masked_compare_swap64({}, 0, 0, 0, 0, 0, 0, 0, 0).building_blocks() == 2);
static_assert(mlx5::inline_write_ds(12) == 3 && mlx5::inline_write_ds(13) == 4 && mlx5::inline_write_ds(28) == 4 &&
              mlx5::inline_write_ds(0) == 3);
static_assert(mlx5::max_inline_bytes(1) == 28 && mlx5::max_inline_bytes(2) == 92);
static_assert(MLX5_SEND_WQE_BB == mlx5::building_block_bytes);
static_assert(mlx5::fm_ce_se::cq_update == MLX5_WQE_CTRL_CQ_UPDATE && mlx5::fm_ce_se::fence == MLX5_WQE_CTRL_FENCE &&
              mlx5::fm_ce_se::initiator_small_fence == MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE &&
              mlx5::fm_ce_se::solicited == MLX5_WQE_CTRL_SOLICITED);
static_assert(mlx5::opcode::rdma_write == MLX5_OPCODE_RDMA_WRITE && mlx5::opcode::rdma_read == MLX5_OPCODE_RDMA_READ &&
              mlx5::opcode::atomic_cs == MLX5_OPCODE_ATOMIC_CS && mlx5::opcode::atomic_fa == MLX5_OPCODE_ATOMIC_FA &&
              mlx5::opcode::atomic_masked_cs == MLX5_OPCODE_ATOMIC_MASKED_CS &&
              mlx5::opcode::atomic_masked_fa == MLX5_OPCODE_ATOMIC_MASKED_FA && mlx5::opcode::nop == MLX5_OPCODE_NOP);
static_assert(mlx5::cqe_opcode::requester_error == MLX5_CQE_REQ_ERR && mlx5::cqe_opcode::invalid == MLX5_CQE_INVALID);
static_assert(offsetof(mlx5_cqe64, wqe_counter) == mlx5::cqe_field::wqe_counter &&
              offsetof(mlx5_cqe64, op_own) == mlx5::cqe_field::op_own &&
              offsetof(mlx5_cqe64, sop_drop_qpn) == mlx5::cqe_field::wqe_opcode_qpn &&
              offsetof(mlx5_cqe64, byte_cnt) == mlx5::cqe_field::byte_count &&
              offsetof(mlx5_err_cqe, syndrome) == mlx5::cqe_field::syndrome &&
              offsetof(mlx5_err_cqe, vendor_err_synd) == mlx5::cqe_field::vendor_syndrome &&
              offsetof(mlx5_err_cqe, s_wqe_opcode_qpn) == mlx5::cqe_field::wqe_opcode_qpn &&
              sizeof(mlx5_cqe64) == mlx5::cqe_bytes);

TEST_CASE("control segment equals mlx5dv_set_ctrl_seg over the edge table") {
    int checked = 0;
    for (auto index : indices)
        for (auto op : opcodes)
            for (std::uint8_t opmod : {std::uint8_t(0), mlx5::extended_atomic_opmod(4), mlx5::extended_atomic_opmod(8)})
                for (auto qpn : qpns)
                    for (std::uint8_t ds : {1, 3, 4, 5, 63})
                        for (auto flags : flag_values)
                            for (std::uint8_t signature : {0, 0xff})
                                for (std::uint32_t imm : {0u, 0xdeadbeefu}) {
                                    CAPTURE(index); CAPTURE(int(op)); CAPTURE(qpn); CAPTURE(int(ds));
                                    check_same(mlx5::control(index, op, opmod, qpn, ds, flags, signature, imm),
                                               reference_control(index, op, opmod, qpn, flags, ds, signature, imm));
                                    ++checked;
                                }
    CHECK(checked == 8 * 7 * 3 * 8 * 5 * 6 * 2 * 2);
}

TEST_CASE("QP numbers are 24 bits: bits above never leak into ds") {
    const auto seg = mlx5::control(1, mlx5::opcode::rdma_write, 0, 0xff123456u, 3, 0);
    check_same(seg, reference_control(1, mlx5::opcode::rdma_write, 0, 0x123456, 0, 3, 0, 0));
}

TEST_CASE("data segment equals mlx5dv_set_data_seg, raddr and atomic segments equal rdma-core's structs") {
    for (auto bytes : lengths)
        for (auto key : keys)
            for (auto address : addresses) {
                check_same(mlx5::data(bytes, key, address), reference_data(bytes, key, address));
                check_same(mlx5::remote_address(address, key), reference_raddr(address, key));
            }
    for (auto a : operands)
        for (auto b : operands) {
            check_same(mlx5::atomic(a, b), reference_atomic(a, b));
            check_same(mlx5::masked_fa64(a, b), reference_atomic(a, b));
            masked_cs32_layout cs{htobe32(std::uint32_t(a)), htobe32(std::uint32_t(b)), htobe32(std::uint32_t(a >> 32)),
                                  htobe32(std::uint32_t(b >> 32))};
            check_same(mlx5::masked_cs32(std::uint32_t(a), std::uint32_t(b), std::uint32_t(a >> 32), std::uint32_t(b >> 32)),
                       cs);
            masked_fa32_layout fa{htobe32(std::uint32_t(a)), htobe32(std::uint32_t(b)), {}};
            check_same(mlx5::masked_fa32(std::uint32_t(a), std::uint32_t(b)), fa);
        }
}

TEST_CASE("inline segment header equals mlx5_wqe_inl_data_seg with MLX5_INLINE_SEG") {
    for (auto bytes : lengths) {
        mlx5_wqe_inl_data_seg seg;
        seg.byte_count = htobe32(bytes | MLX5_INLINE_SEG);
        CHECK(mlx5::inline_header(bytes) == seg.byte_count);
    }
}

TEST_CASE("whole WQEs equal the same WQEs assembled with rdma-core's helpers") {
    for (auto index : indices)
        for (auto qpn : qpns)
            for (auto flags : flag_values) {
                const mlx5::wqe_header h{index, qpn, flags};
                const std::uint64_t raddr = 0x7f0000001000ull + index, laddr = 0x200000000ull + qpn;
                const std::uint32_t rkey = 0x1234567u ^ qpn, lkey = 0x89abcdefu ^ index;
                CAPTURE(index); CAPTURE(qpn); CAPTURE(int(flags));
                for (auto bytes : lengths) {
                    check_same(mlx5::rdma_write(h, raddr, rkey, laddr, lkey, bytes),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_RDMA_WRITE, 0, qpn, flags, 3, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(reference_data(bytes, lkey, laddr)));
                    check_same(mlx5::rdma_read(h, raddr, rkey, laddr, lkey, bytes),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_RDMA_READ, 0, qpn, flags, 3, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(reference_data(bytes, lkey, laddr)));
                }
                for (std::uint32_t bytes : {0u, 1u, 4u, 8u, 12u, 13u, 28u, 29u, 92u}) {
                    std::uint8_t payload[92];
                    for (std::uint32_t i = 0; i < bytes; ++i) payload[i] = std::uint8_t(0xa0 + i + index);
                    mlx5_wqe_inl_data_seg inl;
                    inl.byte_count = htobe32(bytes | MLX5_INLINE_SEG);
                    const auto ds = std::uint8_t(2 + (4 + bytes + 15) / 16);
                    reference_wqe ref;
                    ref.add(reference_control(index, MLX5_OPCODE_RDMA_WRITE, 0, qpn, flags, ds, 0, 0))
                        .add(reference_raddr(raddr, rkey))
                        .add(inl);
                    std::memcpy(ref.bytes + ref.at, payload, bytes);
                    ref.at += bytes;
                    check_same(mlx5::rdma_write_inline(h, raddr, rkey, payload, bytes), ref);
                }
                for (auto a : operands) {
                    check_same(mlx5::atomic_fetch_add(h, raddr, rkey, laddr, lkey, a),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_ATOMIC_FA, 0, qpn, flags, 4, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(reference_atomic(a, 0))
                                   .add(reference_data(8, lkey, laddr)));
                    check_same(mlx5::atomic_compare_swap(h, raddr, rkey, laddr, lkey, a, ~a),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_ATOMIC_CS, 0, qpn, flags, 4, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(reference_atomic(a, ~a))
                                   .add(reference_data(8, lkey, laddr)));
                    check_same(mlx5::masked_compare_swap64(h, raddr, rkey, laddr, lkey, a, ~a, a >> 1, a << 1),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_ATOMIC_MASKED_CS, 0x09, qpn, flags, 5, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(reference_atomic(a, ~a))
                                   .add(reference_atomic(a >> 1, a << 1))
                                   .add(reference_data(8, lkey, laddr)));
                    check_same(mlx5::masked_fetch_add32(h, raddr, rkey, laddr, lkey, std::uint32_t(a), ~0u),
                               reference_wqe{}
                                   .add(reference_control(index, MLX5_OPCODE_ATOMIC_MASKED_FA, 0x08, qpn, flags, 4, 0, 0))
                                   .add(reference_raddr(raddr, rkey))
                                   .add(masked_fa32_layout{htobe32(std::uint32_t(a)), htobe32(~0u), {}})
                                   .add(reference_data(4, lkey, laddr)));
                }
                check_same(mlx5::nop(h), reference_wqe{}.add(reference_control(index, MLX5_OPCODE_NOP, 0, qpn, flags, 1, 0, 0)));
            }
}

// Stored vectors: if the encoder and the header ever drift together (both
// edited), these still fail. Generated once, checked by hand against the PRM
// field positions (opcode byte 3, WQE index bytes 1-2, qpn bytes 4-6, ds byte 7,
// fm_ce_se byte 11; raddr, rkey; atomic operands; byte count, lkey, address).
TEST_CASE("stored hex vectors of every WQE shape") {
    const mlx5::wqe_header h{0xfffe, 0xabcdef, mlx5::fm_ce_se::cq_update};
    const std::uint8_t payload[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    struct vector {
        const char* name;
        mlx5::wqe wqe;
        const char* bytes;
    } vectors[] = {
        {"nop", mlx5::nop(h), "00fffe00abcdef0100000008" "00000000"},
        {"write", mlx5::rdma_write(h, 0x0000123456789abcull, 0x11223344, 0x7f0011223344ull, 0x55667788, 0x80000000u),
         "00fffe08abcdef030000000800000000" "0000123456789abc1122334400000000" "8000000055667788" "00007f0011223344"},
        {"write inline 12 B", mlx5::rdma_write_inline(h, 0x1000, 0x42, payload, 12),
         "00fffe08abcdef030000000800000000" "00000000000010000000004200000000" "8000000c0102030405060708090a0b0c"},
        {"read", mlx5::rdma_read(h, 0xffffffffffffffffull, 0xffffffffu, 0, 0, 1),
         "00fffe10abcdef030000000800000000" "ffffffffffffffffffffffff00000000" "00000001000000000000000000000000"},
        {"fetch-add", mlx5::atomic_fetch_add(h, 0x2000, 7, 0x3000, 9, 0x0102030405060708ull),
         "00fffe12abcdef040000000800000000" "00000000000020000000000700000000" "01020304050607080000000000000000"
         "00000008000000090000000000003000"},
        {"compare-swap", mlx5::atomic_compare_swap(h, 0x2000, 7, 0x3000, 9, 1, 2),
         "00fffe11abcdef040000000800000000" "00000000000020000000000700000000" "00000000000000010000000000000002"
         "00000008000000090000000000003000"},
        {"masked fetch-add 32", mlx5::masked_fetch_add32(h, 0x2000, 7, 0x3000, 9, 0x11223344u, 0xffffffffu),
         "08fffe15abcdef040000000800000000" "00000000000020000000000700000000" "11223344ffffffff0000000000000000"
         "00000004000000090000000000003000"},
        {"masked compare-swap 32", mlx5::masked_compare_swap32(h, 0x2000, 7, 0x3000, 9, 1, 2, 3, 4),
         "08fffe14abcdef040000000800000000" "00000000000020000000000700000000" "00000001000000020000000300000004"
         "00000004000000090000000000003000"},
        {"masked fetch-add 64", mlx5::masked_fetch_add64(h, 0x2000, 7, 0x3000, 9, 5, ~0ull),
         "09fffe15abcdef040000000800000000" "00000000000020000000000700000000" "0000000000000005ffffffffffffffff"
         "00000008000000090000000000003000"},
        {"masked compare-swap 64", mlx5::masked_compare_swap64(h, 0x2000, 7, 0x3000, 9, 1, 2, 3, 4),
         "09fffe14abcdef050000000800000000" "00000000000020000000000700000000" "00000000000000010000000000000002"
         "00000000000000030000000000000004" "00000008000000090000000000003000"},
    };
    for (const auto& v : vectors) {
        CAPTURE(v.name);
        CHECK(hex(v.wqe) == v.bytes);
    }
}

TEST_CASE("CQE tail decodes the fields of rdma-core's mlx5_cqe64 and mlx5_err_cqe") {
    for (auto qpn : qpns)
        for (auto index : indices)
            for (std::uint8_t op : {std::uint8_t(MLX5_CQE_REQ), std::uint8_t(MLX5_CQE_REQ_ERR)})
                for (bool owner : {false, true}) {
                    mlx5_cqe64 cqe;
                    std::memset(&cqe, 0, sizeof cqe);
                    cqe.sop_drop_qpn = htobe32((std::uint32_t(MLX5_OPCODE_RDMA_READ) << 24) | qpn);
                    cqe.wqe_counter = htobe16(index);
                    cqe.op_own = std::uint8_t((op << 4) | (owner ? 1 : 0));
                    std::uint64_t tail;
                    std::memcpy(&tail, reinterpret_cast<const unsigned char*>(&cqe) + 56, 8);
                    const mlx5::cqe_tail t{tail};
                    CHECK(t.qpn() == qpn);
                    CHECK(t.wqe_counter() == index);
                    CHECK(t.wqe_opcode() == MLX5_OPCODE_RDMA_READ);
                    CHECK(t.opcode() == mlx5dv_get_cqe_opcode(&cqe));
                    CHECK(t.owner() == (mlx5dv_get_cqe_owner(&cqe) != 0));
                    CHECK(t.is_error() == (op == MLX5_CQE_REQ_ERR));
                    CHECK(mlx5::cqe_tail::make(op, owner, index, MLX5_OPCODE_RDMA_READ, qpn).raw == tail);
                }
    CHECK(std::string(mlx5::syndrome_name(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR)) == "remote access error");
    CHECK(std::string(mlx5::opcode_name(MLX5_OPCODE_ATOMIC_MASKED_FA)) == "masked ATOMIC fetch-add");
}
