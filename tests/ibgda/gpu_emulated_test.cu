// GPU suite (label gpu): the encoders on the device, and kernels producing into host-mapped queues that the emulated NIC consumes
// (into the heap, and into registered windows of cudaMalloc'd memory).
#include "support.hpp"

#include <pgas/device/window.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace ibgda_gpu_test {

#define CUDA_OK(call) REQUIRE_MESSAGE((call) == cudaSuccess, #call, ": ", cudaGetErrorString(cudaGetLastError()))

constexpr int n_shapes = 10;

// The same WQE shapes as the golden test's stored vectors, indexed by shape.
PGAS_HD inline pgas::mlx5::wqe shape(int i, std::uint16_t index) {
    namespace mlx5 = pgas::mlx5;
    const mlx5::wqe_header h{index, 0xabcdef, mlx5::fm_ce_se::cq_update};
    const std::uint8_t payload[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    switch (i) {
        case 0: return mlx5::nop(h);
        case 1: return mlx5::rdma_write(h, 0x0000123456789abcull, 0x11223344, 0x7f0011223344ull, 0x55667788, 0x80000000u);
        case 2: return mlx5::rdma_write_inline(h, 0x1000, 0x42, payload, 12);
        case 3: return mlx5::rdma_read(h, 0xffffffffffffffffull, 0xffffffffu, 0, 0, 1);
        case 4: return mlx5::atomic_fetch_add(h, 0x2000, 7, 0x3000, 9, 0x0102030405060708ull);
        case 5: return mlx5::atomic_compare_swap(h, 0x2000, 7, 0x3000, 9, 1, 2);
        case 6: return mlx5::masked_fetch_add32(h, 0x2000, 7, 0x3000, 9, 0x11223344u, 0xffffffffu);
        case 7: return mlx5::masked_compare_swap32(h, 0x2000, 7, 0x3000, 9, 1, 2, 3, 4);
        case 8: return mlx5::masked_fetch_add64(h, 0x2000, 7, 0x3000, 9, 5, ~0ull);
        default: return mlx5::masked_compare_swap64(h, 0x2000, 7, 0x3000, 9, 1, 2, 3, 4);
    }
}

PGAS_KERNEL void encode_on_device(pgas::mlx5::wqe* out) {
    const int i = int(threadIdx.x);
    if (i < n_shapes) out[i] = shape(i, std::uint16_t(0xfffe + i));
}

struct targets {
    pgas::symmetric_ptr<std::uint64_t> slots;    // one per thread
    pgas::symmetric_ptr<std::uint64_t> counter;
    pgas::symmetric_ptr<std::uint32_t> bits;
    pgas::symmetric_ptr<std::uint64_t> fetched;  // per thread: what its fetch-add returned
    pgas::symmetric_ptr<std::uint64_t> signal;
    pgas::symmetric_ptr<std::uint64_t> rows;     // per warp: 32 words put by the warp (RDMA WRITE from the heap)
    pgas::symmetric_ptr<std::uint64_t> echoed;   // per thread: what g() read back
    int pe;
    int rounds;
};

// Every thread posts on its own (warp-aggregated reservations), many rounds:
// inline puts, atomics with replies, then one quiet per block.
PGAS_KERNEL void produce(__grid_constant__ const test::ib_ctx ctx, const targets t) {
    const unsigned id = threadIdx.x + blockIdx.x * blockDim.x;
    for (int r = 0; r < t.rounds; ++r) {
        pgas::p(ctx, t.slots + id, std::uint64_t(r) * 100000 + id, t.pe);
        pgas::atomic_add(ctx, t.counter, std::uint64_t(1), t.pe);
    }
    ctx.local(t.fetched)[id] = pgas::atomic_fetch_add(ctx, t.counter, std::uint64_t(0), t.pe);
    (void)pgas::atomic_fetch_or(ctx, t.bits, 1u << (id % 32), t.pe);
    // A warp-wide put from registered memory (the local heap): RDMA WRITE with the heap's lkey.
    const unsigned warp_id = id / 32;
    ctx.local(t.rows)[id] = 0xabc0000000000000ull + id;
    __syncwarp();
    pgas::put<pgas::warp>(ctx, t.rows + warp_id * 32, ctx.local(t.rows) + warp_id * 32, 32, t.pe);
    // g into a register: an RDMA READ through the slot's scratch.
    ctx.local(t.echoed)[id] = pgas::g(ctx, t.rows + id, t.pe);
    pgas::quiet<pgas::block>(ctx);
    if (threadIdx.x == 0) pgas::signal(ctx, t.signal, 1, pgas::signal_op::add, t.pe);
    // The host compares completed with reserved WQEs after the kernel: the
    // signal's completion must be reaped too (on 2xH200 the count was 7 short
    // of 8 blocks' unquieted signals without this).
    pgas::quiet<pgas::block>(ctx);
}

bool have_gpu() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace ibgda_gpu_test

using namespace ibgda_gpu_test;

// Each warp puts 8-byte words on its channel (warp % channels) to PE 1, completes that channel towards PE 1 with
// quiet(ctx, pe), and the block then completes every channel (quiet_all).
PGAS_KERNEL void produce_on_channels(__grid_constant__ const test::ib_ctx ctx, pgas::symmetric_ptr<std::uint64_t> rows,
                                     int rounds) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    const auto on_c = ctx.on_channel(int(id / 32) % ctx.n_channels());
    for (int r = 0; r < rounds; ++r) {
        const std::uint64_t v = std::uint64_t(r) << 32 | id;
        pgas::put_nbi(on_c, rows + id, &v, 1, 1);
        if (r % 8 == 7) pgas::quiet<pgas::warp>(on_c, 1);
    }
    pgas::quiet_all<pgas::block>(ctx);
}

TEST_CASE("the WQE encoders give the same bytes on the GPU as on the host") {
    REQUIRE_MESSAGE(have_gpu(), "this suite needs a CUDA GPU (label gpu)");
    pgas::mlx5::wqe* out = nullptr;
    CUDA_OK(cudaMalloc(&out, sizeof(pgas::mlx5::wqe) * n_shapes));
    encode_on_device<<<1, 32>>>(out);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<pgas::mlx5::wqe> device(n_shapes);
    CUDA_OK(cudaMemcpy(device.data(), out, sizeof(pgas::mlx5::wqe) * n_shapes, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaFree(out));
    for (int i = 0; i < n_shapes; ++i) {
        CAPTURE(i);
        const auto host = shape(i, std::uint16_t(0xfffe + i));
        CHECK(device[i].ds == host.ds);
        CHECK(std::memcmp(device[i].word, host.word, host.ds * 16u) == 0);
    }
}

TEST_CASE("GPU threads produce into host-mapped queues and the emulated NIC executes every WQE") {
    REQUIRE_MESSAGE(have_gpu(), "this suite needs a CUDA GPU (label gpu)");
    int can_use_host_pointer = 0;
    CUDA_OK(cudaDeviceGetAttribute(&can_use_host_pointer, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
    REQUIRE_MESSAGE(can_use_host_pointer, "this test gives kernels host heap pointers (registered host memory)");

    auto w = pgas::world::init_local(2, test::options(60000));
    for (int pe = 0; pe < 2; ++pe)
        CUDA_OK(cudaHostRegister(w.heap_memory().local_base(pe), w.heap_bytes(), cudaHostRegisterMapped | cudaHostRegisterPortable));
    constexpr int blocks = 8, threads = 128, rounds = 40;
    constexpr unsigned n_threads = blocks * threads;
    targets t{w.alloc<std::uint64_t>(n_threads), w.alloc<std::uint64_t>(1), w.alloc<std::uint32_t>(1),
              w.alloc<std::uint64_t>(n_threads), w.alloc<std::uint64_t>(1),   w.alloc<std::uint64_t>(n_threads),
              w.alloc<std::uint64_t>(n_threads), 1, rounds};

    int* abort_flag = nullptr;  // a peer-failure flag the kernel can read
    CUDA_OK(cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped));
    *abort_flag = 0;
    pgas::ibgda_options o = test::emulated(256);
    o.allocate = [](std::size_t bytes) -> void* {
        void* p = nullptr;
        if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
        std::memset(p, 0, bytes);
        return p;
    };
    o.deallocate = [](void* p) { cudaFreeHost(p); };
    o.runtime = pgas::runtime_state{std::uint64_t(30) * 1000000000ull, abort_flag};
    {
        pgas::ibgda_domain ib(w, o);
        produce<<<blocks, threads>>>(ib.context(0), t);
        CUDA_OK(cudaDeviceSynchronize());
        const auto stats = ib.emulated_nic().stats();
        CHECK(ib.emulated_nic().first_violation() == "");
        CHECK(stats.wqes >= std::uint64_t(n_threads) * (2 * rounds + 2));
        auto& qp = ib.context(0).transport.queue_pair(1);
        CHECK(qp.reserved.value > 65536);  // the 16-bit WQE counter wrapped
        CHECK(qp.completed.value == qp.reserved.value);
        // Warp aggregation: far fewer doorbells than WQEs.
        CAPTURE(stats.doorbells);
        CHECK(stats.doorbells < stats.wqes);
    }
    const std::uint64_t total = std::uint64_t(n_threads) * rounds;
    CHECK(*w.local(t.counter, 1) == total);
    CHECK(*w.local(t.bits, 1) == 0xffffffffu);
    CHECK(*w.local(t.signal, 1) == blocks);
    for (unsigned id = 0; id < n_threads; ++id) {
        REQUIRE(w.local(t.slots, 1)[id] == std::uint64_t(rounds - 1) * 100000 + id);
        REQUIRE(w.local(t.fetched, 0)[id] <= total);
        REQUIRE(w.local(t.rows, 1)[id] == 0xabc0000000000000ull + id);
        REQUIRE(w.local(t.echoed, 0)[id] == 0xabc0000000000000ull + id);
    }
    for (int pe = 0; pe < 2; ++pe) CUDA_OK(cudaHostUnregister(w.heap_memory().local_base(pe)));
    CUDA_OK(cudaFreeHost(abort_flag));
}

TEST_CASE("GPU warps on 4 channels: each channel's QP carries its warps' WQEs, and quiet_all completes them all") {
    REQUIRE_MESSAGE(have_gpu(), "this suite needs a CUDA GPU (label gpu)");
    auto w = pgas::world::init_local(2, test::options(60000));
    for (int pe = 0; pe < 2; ++pe)
        CUDA_OK(cudaHostRegister(w.heap_memory().local_base(pe), w.heap_bytes(), cudaHostRegisterMapped | cudaHostRegisterPortable));
    constexpr int blocks = 4, threads = 256, rounds = 24, channels = 4;
    auto rows = w.alloc<std::uint64_t>(blocks * threads);
    int* abort_flag = nullptr;
    CUDA_OK(cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped));
    *abort_flag = 0;
    pgas::ibgda_options o = test::emulated(256);
    o.channels = channels;
    o.allocate = [](std::size_t bytes) -> void* {
        void* p = nullptr;
        if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
        std::memset(p, 0, bytes);
        return p;
    };
    o.deallocate = [](void* p) { cudaFreeHost(p); };
    o.runtime = pgas::runtime_state{std::uint64_t(30) * 1000000000ull, abort_flag};
    {
        pgas::ibgda_domain ib(w, o);
        produce_on_channels<<<blocks, threads>>>(ib.context(0), rows, rounds);
        CUDA_OK(cudaDeviceSynchronize());
        CHECK(ib.emulated_nic().first_violation() == "");
        for (int c = 0; c < channels; ++c) {
            CAPTURE(c);
            // 8 warps per channel, rounds puts of 32 lanes each (plus quiet NOPs)
            CHECK(ib.emulated_nic().executed(0, 1, c) >= std::uint64_t(blocks * threads / 32 / channels) * 32 * rounds);
            auto& qp = ib.context(0).transport.queue_pair(1, c);
            CHECK(qp.completed.value == qp.reserved.value);
        }
    }
    for (unsigned id = 0; id < unsigned(blocks * threads); ++id)
        REQUIRE(w.local(rows, 1)[id] == (std::uint64_t(rounds - 1) << 32 | id));
    for (int pe = 0; pe < 2; ++pe) CUDA_OK(cudaHostUnregister(w.heap_memory().local_base(pe)));
    CUDA_OK(cudaFreeHost(abort_flag));
}

// Registered windows from a kernel: PE 0's threads write PE 1's cudaMalloc'd window buffer (p, warp put_nbi from the
// heap, block put_signal with the flag in the heap, atomic_add) and read it back (g).
struct window_targets {
    pgas::window<std::uint64_t> win;            // per PE: [0, T) p, [T, 2T) put_nbi, [2T, 3T) put_signal, 3T counter
    pgas::symmetric_ptr<std::uint64_t> staged;  // per thread: the sources (registered heap memory: RDMA WRITEs)
    pgas::symmetric_ptr<std::uint64_t> echoed;  // per thread: what g read back
    pgas::symmetric_ptr<std::uint64_t> signal;
    unsigned threads;                           // T
};

PGAS_KERNEL void produce_into_window(__grid_constant__ const test::ib_ctx ctx, const window_targets t) {
    const unsigned id = threadIdx.x + blockIdx.x * blockDim.x, n = t.threads;
    pgas::p(ctx, t.win + std::ptrdiff_t(id), 0x1000000000ull + id, 1);
    ctx.local(t.staged)[id] = 0x2000000000ull + id;
    __syncwarp();
    const unsigned lane0 = id / 32 * 32;
    pgas::put_nbi<pgas::warp>(ctx, t.win + std::ptrdiff_t(n + lane0), ctx.local(t.staged) + lane0, 32, 1);
    pgas::atomic_add(ctx, t.win + std::ptrdiff_t(3 * n), std::uint64_t{1}, 1);
    pgas::quiet<pgas::block>(ctx);
    ctx.local(t.echoed)[id] = pgas::g(ctx, t.win + std::ptrdiff_t(n + id), 1);
    const unsigned first = blockIdx.x * blockDim.x;
    pgas::put_signal<pgas::block>(ctx, t.win + std::ptrdiff_t(2 * n + first), ctx.local(t.staged) + first, blockDim.x,
                                  t.signal, 1, pgas::signal_op::add, 1);
    pgas::quiet<pgas::block>(ctx);
}

TEST_CASE("GPU kernels reach a cudaMalloc'd window through the emulated NIC, at element offsets of the target's buffer only") {
    REQUIRE_MESSAGE(have_gpu(), "this suite needs a CUDA GPU (label gpu)");
    int can_use_host_pointer = 0;
    CUDA_OK(cudaDeviceGetAttribute(&can_use_host_pointer, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
    REQUIRE_MESSAGE(can_use_host_pointer, "this test gives kernels host heap pointers (registered host memory)");
    auto w = pgas::world::init_local(2, test::options(60000));
    for (int pe = 0; pe < 2; ++pe)
        CUDA_OK(cudaHostRegister(w.heap_memory().local_base(pe), w.heap_bytes(), cudaHostRegisterMapped | cudaHostRegisterPortable));
    constexpr int blocks = 2, threads = 64;
    constexpr unsigned n = blocks * threads;
    constexpr std::size_t count = 3 * n + 1 + 16;  // 16 guard elements past the counter
    constexpr std::uint64_t guard = 0x5555555555555555ull;
    std::uint64_t* buffers[2] = {};
    for (auto*& b : buffers) {
        CUDA_OK(cudaMalloc(&b, count * sizeof(std::uint64_t)));
        CUDA_OK(cudaMemset(b, 0x55, count * sizeof(std::uint64_t)));
    }
    int* abort_flag = nullptr;
    CUDA_OK(cudaHostAlloc(&abort_flag, sizeof(int), cudaHostAllocMapped));
    *abort_flag = 0;
    pgas::ibgda_options o = test::emulated(256);
    o.allocate = [](std::size_t bytes) -> void* {
        void* p = nullptr;
        if (cudaHostAlloc(&p, bytes, cudaHostAllocMapped) != cudaSuccess) return nullptr;
        std::memset(p, 0, bytes);
        return p;
    };
    o.deallocate = [](void* p) { cudaFreeHost(p); };
    o.runtime = pgas::runtime_state{std::uint64_t(30) * 1000000000ull, abort_flag};
    window_targets t{{}, w.alloc<std::uint64_t>(n), w.alloc<std::uint64_t>(n), w.alloc<std::uint64_t>(1), n};
    *w.local(t.signal, 1) = 0;
    {
        pgas::ibgda_domain ib(w, o);
        t.win = w.register_window(std::vector<std::uint64_t*>{buffers[0], buffers[1]}, count);
        CHECK(ib.live_windows() == 1);
        produce_into_window<<<blocks, threads>>>(ib.context(0), t);
        CUDA_OK(cudaDeviceSynchronize());
        CHECK(ib.emulated_nic().first_violation() == "");
        w.release_window(t.win);
        CHECK(ib.live_windows() == 0);
    }
    std::vector<std::uint64_t> got[2];
    for (int pe = 0; pe < 2; ++pe) {
        got[pe].resize(count);
        CUDA_OK(cudaMemcpy(got[pe].data(), buffers[pe], count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    }
    for (unsigned id = 0; id < n; ++id) {
        CAPTURE(id);
        REQUIRE(got[1][id] == 0x1000000000ull + id);
        REQUIRE(got[1][n + id] == 0x2000000000ull + id);
        REQUIRE(got[1][2 * n + id] == 0x2000000000ull + id);
        REQUIRE(w.local(t.echoed, 0)[id] == 0x2000000000ull + id);
    }
    CHECK(got[1][3 * n] == guard + n);  // n atomic adds onto the guard pattern the buffer started with
    for (std::size_t i = 3 * n + 1; i < count; ++i) REQUIRE(got[1][i] == guard);
    for (std::size_t i = 0; i < count; ++i) REQUIRE(got[0][i] == guard);  // PE 0's own buffer: nothing landed
    CHECK(*w.local(t.signal, 1) == blocks);
    for (auto* b : buffers) CUDA_OK(cudaFree(b));
    for (int pe = 0; pe < 2; ++pe) CUDA_OK(cudaHostUnregister(w.heap_memory().local_base(pe)));
    CUDA_OK(cudaFreeHost(abort_flag));
}
