// Aligned alloc, team destruction, the node team, the *_vector waits, strided iput/iget, alltoallv and
// collective_launch on a GPU over the NVLink transport, PEs sharing GPU 0 (init_local({0, 0})). The host-transport
// twins are in tests/host/ by subject: world_test, team_test, wait_test, rma_test, collective_launch_test.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>
#include <pgas/host/stream/collectives.cuh>

#include "support.cuh"
#include "../common/support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace gpu_support;

// Launches kernel(ctx_i, args...) on every local PE (each on its own stream), then waits for all.
template <class T>
std::vector<T> read_back(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count, int local) {
    std::vector<T> out(count);
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
}

template <class T>
void upload(pgas::world& w, pgas::symmetric_ptr<T> p, const std::vector<T>& host, int local) {
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(w.device_address(p, local), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// A managed error counter the kernels add to; read after launch_all.
struct error_count {
    unsigned long long* value = nullptr;
    error_count() {
        CHECK_CUDA(cudaMallocManaged(&value, sizeof(*value)));
        *value = 0;
    }
    ~error_count() { cudaFree(value); }
    error_count(const error_count&) = delete;
    error_count& operator=(const error_count&) = delete;
};

// ---- 1. alloc(count, alignment) ----

// Every peer's copy is aligned and zero; then each PE writes its copy with 16-byte vector stores.
__global__ void aligned_block(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<double> p, std::uint64_t alignment,
                              int count, unsigned long long* errors) {
    for (int q = 0; q < ctx.n_pes(); ++q) {
        const double* peer = ctx.peer(p, q);
        if (reinterpret_cast<std::uintptr_t>(peer) % alignment != 0) atomicAdd(errors, 1ull);
        for (int i = int(threadIdx.x); i < count; i += int(blockDim.x))
            if (peer[i] != 0.0) atomicAdd(errors, 1ull);
    }
    pgas::barrier_all<pgas::block>(ctx);  // every PE has read every copy before any PE writes its own
    auto* mine = reinterpret_cast<double2*>(ctx.local(p));
    for (int i = int(threadIdx.x); i < count / 2; i += int(blockDim.x)) mine[i] = double2{double(ctx.my_pe()), 1.0};
}

void check_aligned_alloc(int n) {
    auto w = make_world(n);
    auto pad = w.alloc<char>(3);
    for (std::uint64_t alignment : {std::uint64_t{16}, std::uint64_t{4096}, std::uint64_t{2} << 20}) {
        CAPTURE(alignment);
        auto p = w.alloc<double>(1000, alignment);
        CHECK(p.offset() % alignment == 0);
        for (int i = 0; i < w.n_local_pes(); ++i)
            CHECK(reinterpret_cast<std::uintptr_t>(w.device_address(p, i)) % alignment == 0);
        error_count errors;
        launch_all(w, 1, 256, aligned_block, p, alignment, 1000, errors.value);
        CHECK(*errors.value == 0);
        for (int i = 0; i < w.n_local_pes(); ++i) CHECK(read_back(w, p, 2, i)[0] == double(w.local_pe(i)));
        w.free(p);
    }
    CHECK_THROWS_AS((void)w.alloc<double>(4, 12), pgas::error);
    w.free(pad);
}


// ---- 2. destroy_team, 3. team_node ----

// Barriers on the team (members only), then a sum allreduce of one word per member: `rounds` differs per team so
// that a reused slot would carry stale epochs if destroy_team did not clear it.
__global__ void team_rounds(const __grid_constant__ ctx_t ctx, pgas::team t, int rounds, pgas::symmetric_ptr<long long> word,
                            unsigned long long* errors) {
    t = t.bound_to(ctx.my_pe());
    if (!t.is_member()) return;
    for (int i = 0; i < rounds; ++i) pgas::barrier<pgas::block>(ctx, t);
    if (threadIdx.x == 0) *ctx.local(word) = ctx.my_pe() + 1;
    __syncthreads();
    pgas::allreduce<pgas::block>(ctx, t, word, word, 1, pgas::op::sum);
    __syncthreads();
    long long want = 0;
    for (int i = 0; i < t.n_pes(); ++i) want += t.world_pe(i) + 1;
    if (threadIdx.x == 0 && *ctx.local(word) != want) atomicAdd(errors, 1ull);
}

void check_destroy_team(int n) {
    auto w = make_world(n);
    auto word = w.alloc<long long>(1);
    error_count errors;
    for (int i = 0; i < 100; ++i) {  // more teams than slots: only destroy_team makes this possible
        auto t = w.split_strided(w.team_world(), i % n, 1, n - i % n);
        launch_all(w, 1, 64, team_rounds, t, 1 + i % 3, word, errors.value);
        w.destroy_team(t);
    }
    CHECK(*errors.value == 0);
    auto t = w.split_strided(w.team_world(), 0, 1, n);
    auto copy = t;
    w.destroy_team(t);
    CHECK_THROWS_AS(w.destroy_team(copy), pgas::error);
}

// Every member of the node team is load/store reachable (ctx.peer is not null).
__global__ void node_reachable(const __grid_constant__ ctx_t ctx, pgas::team node, unsigned long long* errors) {
    node = node.bound_to(ctx.my_pe());
    for (int i = 0; i < node.n_pes(); ++i)
        if (ctx.peer(pgas::symmetric_ptr<long long>(pgas::detail::offset_tag{}, pgas::detail::heap_layout::user_offset),
                     node.world_pe(i)) == nullptr)
            atomicAdd(errors, 1ull);
}

void check_team_node(int n) {
    auto w = make_world(n);
    auto word = w.alloc<long long>(1);
    const auto node = w.team_node();
    CHECK(node.n_pes() == n);  // PEs sharing one GPU of one process: all load/store reachable
    CHECK(node.start() == 0);
    error_count errors;
    launch_all(w, 1, 64, team_rounds, node, 3, word, errors.value);
    CHECK(*errors.value == 0);
    launch_all(w, 1, 32, node_reachable, node, errors.value);
    CHECK(*errors.value == 0);
}

// ---- 4. the *_vector waits ----

// Thread 0 of each PE: the right neighbour's words get value i + 1 + round, word 2 masked off; the PE waits on its
// own with each form (any/some after the first word lands, all after every word).
__global__ void vector_waits(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<long long> words,
                             pgas::symmetric_ptr<long long> flag, unsigned long long* errors) {
    if (threadIdx.x != 0) return;
    constexpr std::size_t count = 5;
    const int me = ctx.my_pe(), n = ctx.n_pes(), right = (me + 1) % n;
    const auto mine = words + std::ptrdiff_t(count * std::size_t(me));
    const auto theirs = words + std::ptrdiff_t(count * std::size_t(right));
    const long long want[count] = {1, 2, 3, 4, 5};
    const int status[count] = {0, 0, 1, 0, 0};
    std::size_t indices[count];
    if (pgas::test_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) != count) atomicAdd(errors, 1ull);
    pgas::barrier_all(ctx);
    pgas::p(ctx, theirs + 4, 5ll, right);
    pgas::quiet(ctx);
    if (pgas::wait_until_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) != 4) atomicAdd(errors, 1ull);
    if (pgas::wait_until_some_vector(ctx, mine, count, indices, status, pgas::cmp::ge, want) != 1 || indices[0] != 4)
        atomicAdd(errors, 1ull);
    pgas::barrier_all(ctx);
    for (std::size_t i = 0; i < count; ++i) pgas::p(ctx, theirs + std::ptrdiff_t(i), status[i] ? 0ll : want[i], right);
    pgas::quiet(ctx);
    pgas::wait_until_all_vector(ctx, mine, count, status, pgas::cmp::eq, want);
    if (!pgas::test_all_vector(ctx, mine, count, status, pgas::cmp::eq, want)) atomicAdd(errors, 1ull);
    if (pgas::test_all_vector(ctx, mine, count, nullptr, pgas::cmp::eq, want)) atomicAdd(errors, 1ull);
    if (pgas::test_some_vector(ctx, mine, count, indices, nullptr, pgas::cmp::eq, want) != 4) atomicAdd(errors, 1ull);
    pgas::barrier_all(ctx);
    (void)flag;
}

void check_vector_waits(int n) {
    auto w = make_world(n);
    auto words = w.alloc<long long>(5 * std::size_t(n));
    auto flag = w.alloc<long long>(1);
    error_count errors;
    launch_all(w, 1, 32, vector_waits, words, flag, errors.value);
    CHECK(*errors.value == 0);
}

// ---- 5. strided iput / iget ----

// Block-wide: src (stride 2, in device memory of this PE's heap) to the right neighbour's dst (stride 3); then a
// strided iget of the left neighbour's dst back with the strides swapped.
__global__ void strided_rma(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> dst,
                            pgas::symmetric_ptr<unsigned long long> src, pgas::symmetric_ptr<unsigned long long> back,
                            int count, unsigned long long* errors) {
    const int me = ctx.my_pe(), n = ctx.n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = int(threadIdx.x); i < 2 * count; i += int(blockDim.x)) ctx.local(src)[i] = 1000ull * me + i;
    __syncthreads();
    pgas::iput<pgas::block>(ctx, dst, ctx.local(src), 3, 2, std::size_t(count), right);
    pgas::barrier_all<pgas::block>(ctx);
    for (int i = int(threadIdx.x); i < 3 * count; i += int(blockDim.x))
        if (ctx.local(dst)[i] != (i % 3 ? 0ull : 1000ull * left + i / 3 * 2)) atomicAdd(errors, 1ull);
    pgas::iget<pgas::warp>(ctx, ctx.local(back), dst, 2, 3, std::size_t(count), left);  // every warp, same copy
    __syncthreads();
    for (int i = int(threadIdx.x); i < 2 * count; i += int(blockDim.x)) {
        const int writer = (left + n - 1) % n;  // who put into left's dst
        if (ctx.local(back)[i] != (i % 2 ? 0ull : 1000ull * writer + i / 2 * 2)) atomicAdd(errors, 1ull);
    }
    pgas::barrier_all<pgas::block>(ctx);
}

void check_strided(int n) {
    auto w = make_world(n);
    constexpr int count = 1001;
    auto dst = w.alloc<unsigned long long>(3 * count);
    auto src = w.alloc<unsigned long long>(2 * count);
    auto back = w.alloc<unsigned long long>(2 * count);
    error_count errors;
    launch_all(w, 1, 256, strided_rma, dst, src, back, count, errors.value);
    CHECK(*errors.value == 0);
}

// ---- 6. alltoallv, on a stream and inside a kernel ----

// Member i sends (i + 2 * j) % 5 * scale elements to member j, packed in member order; member j receives them in
// sender order, `gap` elements apart.
struct v_plan {
    std::size_t scale, gap = 3;
    std::size_t count(int from, int to) const { return std::size_t((from + 2 * to) % 5) * scale; }
    std::size_t src_displ(int from, int to) const {
        std::size_t at = 0;
        for (int j = 0; j < to; ++j) at += count(from, j);
        return at;
    }
    std::size_t dst_displ(int from, int to) const {
        std::size_t at = 0;
        for (int i = 0; i < from; ++i) at += count(i, to) + gap;
        return at;
    }
};

__host__ __device__ unsigned long long v_value(int pe, std::size_t i, int round) {
    return (static_cast<unsigned long long>(pe) << 40) + (static_cast<unsigned long long>(round) << 32) + i;
}

struct v_arrays {
    std::size_t dst_displs[8], src_counts[8], src_displs[8];
};

__global__ void alltoallv_in_kernel(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<unsigned long long> dst,
                                    pgas::symmetric_ptr<unsigned long long> src, const __grid_constant__ v_arrays a) {
    pgas::alltoallv<pgas::block>(ctx, ctx.world_team(), dst, a.dst_displs, src, a.src_counts, a.src_displs);
}

void check_alltoallv(int n) {
    auto w = make_world(n);
    const std::size_t capacity = 8 * 5 * 3000 + 64;
    auto src = w.alloc<unsigned long long>(capacity);
    auto dst = w.alloc<unsigned long long>(capacity);
    int round = 0;
    for (std::size_t scale : {std::size_t{1}, std::size_t{3000}}) {
        for (bool on_stream : {true, false}) {
            CAPTURE(scale);
            CAPTURE(on_stream);
            ++round;
            const v_plan p{scale};
            std::vector<v_arrays> arrays(std::size_t(w.n_local_pes()));
            for (int i = 0; i < w.n_local_pes(); ++i) {
                const int me = w.local_pe(i);
                std::vector<unsigned long long> in(capacity);
                for (std::size_t k = 0; k < capacity; ++k) in[k] = v_value(me, k, round);
                upload(w, src, in, i);
                upload(w, dst, std::vector<unsigned long long>(capacity, ~0ull), i);
                for (int j = 0; j < n; ++j) {
                    arrays[std::size_t(i)].src_counts[j] = p.count(me, j);
                    arrays[std::size_t(i)].src_displs[j] = p.src_displ(me, j);
                    arrays[std::size_t(i)].dst_displs[j] = p.dst_displ(me, j);
                }
            }
            for (int i = 0; i < w.n_local_pes(); ++i) CHECK_CUDA(cudaDeviceSynchronize());
            w.barrier();
            for (int i = 0; i < w.n_local_pes(); ++i) {
                CHECK_CUDA(cudaSetDevice(w.device_of(i)));
                const auto& a = arrays[std::size_t(i)];
                if (on_stream)
                    pgas::alltoallv_on_stream(w.context<pgas::nvlink>(i), w.team_world(i), dst, a.dst_displs, src,
                                              a.src_counts, a.src_displs, pe_stream(w, i));
                else
                    alltoallv_in_kernel<<<1, 256, 0, pe_stream(w, i)>>>(w.context<pgas::nvlink>(i), dst, src, a);
                CHECK_CUDA(cudaGetLastError());
            }
            for (int i = 0; i < w.n_local_pes(); ++i) {
                CHECK_CUDA(cudaSetDevice(w.device_of(i)));
                CHECK_CUDA(cudaDeviceSynchronize());
            }
            w.barrier();
            for (int i = 0; i < w.n_local_pes(); ++i) {
                const int me = w.local_pe(i);
                std::vector<unsigned long long> want(capacity, ~0ull);
                for (int from = 0; from < n; ++from)
                    for (std::size_t k = 0; k < p.count(from, me); ++k)
                        want[p.dst_displ(from, me) + k] = v_value(from, p.src_displ(from, me) + k, round);
                const auto got = read_back(w, dst, capacity, i);
                std::size_t wrong = 0;
                for (std::size_t k = 0; k < capacity; ++k) wrong += got[k] != want[k];
                CHECK(wrong == 0);
            }
        }
    }
    // A block past the heap is refused on the host before the launch, naming the member.
    const std::size_t counts[8] = {1, 1}, displs[8] = {0, std::size_t(1) << 40};
    CHECK_THROWS_WITH_AS(pgas::alltoallv_on_stream(w.context<pgas::nvlink>(0), w.team_world(0), dst, displs, src, counts,
                                                   counts, pe_stream(w, 0)),
                         doctest::Contains("dst block for team member 1"), pgas::error);
}

// ---- 7. collective_launch ----

// Every block arrives at a grid-wide barrier of its own: without all blocks resident at once this never ends.
__global__ void grid_barrier(ctx_t ctx, unsigned* arrived, unsigned long long* errors) {
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(arrived, 1u);
        while (atomicAdd(arrived, 0u) < gridDim.x) {
        }
    }
    __syncthreads();
    if (blockIdx.x == 0) {
        pgas::barrier_all<pgas::block>(ctx);
        if (threadIdx.x == 0 && atomicAdd(arrived, 0u) != gridDim.x) atomicAdd(errors, 1ull);
    }
}

void check_collective_launch() {
    auto w = make_world(1);
    CHECK_CUDA(cudaSetDevice(w.device_of(0)));
    int per_sm = 0, sms = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(&grid_barrier), 256, 0));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, w.device_of(0)));
    const unsigned most = unsigned(per_sm * sms);
    REQUIRE(most > 0);
    unsigned* arrived = nullptr;
    CHECK_CUDA(cudaMalloc(&arrived, sizeof(unsigned)));
    error_count errors;
    for (unsigned blocks : {1u, most / 2 + 1, most}) {
        CAPTURE(blocks);
        CHECK_CUDA(cudaMemset(arrived, 0, sizeof(unsigned)));
        pgas::collective_launch(grid_barrier, dim3(blocks), dim3(256), 0, pe_stream(w, 0), w.context<pgas::nvlink>(0),
                                arrived, errors.value);
        CHECK_CUDA(cudaStreamSynchronize(pe_stream(w, 0)));
    }
    CHECK(*errors.value == 0);
    const std::string text = test::error_of([&] {
        pgas::collective_launch(grid_barrier, dim3(most + 1), dim3(256), 0, pe_stream(w, 0), w.context<pgas::nvlink>(0),
                                arrived, errors.value);
    }, pgas::errc::invalid_argument);
    CHECK_MESSAGE(test::contains(text, "collective_launch on PE 0"), text);
    CHECK_MESSAGE(test::contains(text, std::to_string(most + 1) + "x1x1"), text);
    CHECK_MESSAGE(test::contains(text, "at most " + std::to_string(most) + " blocks"), text);
    CHECK_CUDA(cudaFree(arrived));
}

}  // namespace

TEST_SUITE("one_gpu") {
    TEST_CASE("collective_launch: a grid-wide barrier at the co-resident maximum finishes; one block more is refused") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        check_collective_launch();
    }
}

TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("alloc(count, alignment): offsets and every PE's address aligned, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_aligned_alloc(2);
    }
    TEST_CASE("destroy_team: 100 teams made, used in kernels (barriers, allreduce) and destroyed, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_destroy_team(2);
    }
    TEST_CASE("team_node: both PEs sharing the GPU, barriers and allreduce on it, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_team_node(2);
    }
    TEST_CASE("wait_until_{all,any,some}_vector and test_*_vector with a status mask, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_vector_waits(2);
    }
    TEST_CASE("iput and iget, strided, block- and warp-wide, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_strided(2);
    }
    TEST_CASE("alltoallv on a stream and inside a kernel, small and large blocks, two PEs sharing one GPU") {
        REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a GPU");
        share_gpu0 sharing;
        check_alltoallv(2);
    }
}
