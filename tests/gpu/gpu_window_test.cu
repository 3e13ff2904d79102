// Registered windows on GPUs over the NVLink transport: buffers each PE allocated itself (cudaMalloc, or cuMemCreate
// and mapped), reached by put, get, p, g, put_signal and atomics from kernels; PEs sharing GPU 0 in one process
// (direct pointers), one process driving N GPUs (direct pointers: peer access, cuMemSetAccess) and N processes, one
// per GPU or sharing one under MPS (CUDA IPC, VMM handles as descriptors). The host-transport twin is
// tests/host/window_test.cpp; what a process driving several GPUs must get right (each PE's driver calls run with
// its GPU current) has no counterpart there, since the host transport has no current device.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <pgas/pgas.hpp>

#include "support.cuh"
#include "../common/support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace gpu_support;

constexpr int count = 4096;

// How a test allocates each PE's buffer.
enum class memory {
    cuda_malloc,
    vmm,          // cuMemCreate'd, exportable as a POSIX descriptor, mapped at an offset into a larger reservation
    vmm_private,  // cuMemCreate'd without a shareable handle type: one process only
    mixed,        // even PEs cudaMalloc, odd PEs vmm: both ways of sharing in one window
};

// A cuMemCreate'd buffer as a framework would make one: one allocation of whole granules mapped at the start of a
// reservation twice its size (so register_window must share the mapping, not the reservation), the buffer 4 KiB
// into the mapping (so the offset travels too).
struct vmm_buffer {
    CUdeviceptr reserved = 0;
    std::size_t mapped = 0;
    CUmemGenericAllocationHandle handle{};
    static constexpr std::size_t offset = 4096;

    vmm_buffer(int device, std::size_t bytes, bool exportable) {
        const auto& cu = pgas::detail::driver();
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        prop.requestedHandleTypes = exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
        std::size_t granule = 0;
        REQUIRE(cu.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS);
        mapped = (bytes + offset + granule - 1) / granule * granule;
        REQUIRE(cu.cuMemCreate(&handle, mapped, &prop, 0) == CUDA_SUCCESS);
        REQUIRE(cu.cuMemAddressReserve(&reserved, 2 * mapped, 0, 0, 0) == CUDA_SUCCESS);
        REQUIRE(cu.cuMemMap(reserved, mapped, 0, handle, 0) == CUDA_SUCCESS);
        CUmemAccessDesc access{};
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        REQUIRE(cu.cuMemSetAccess(reserved, mapped, &access, 1) == CUDA_SUCCESS);
    }
    ~vmm_buffer() {
        const auto& cu = pgas::detail::driver();
        cu.cuMemUnmap(reserved, mapped);
        cu.cuMemAddressFree(reserved, 2 * mapped);
        cu.cuMemRelease(handle);
    }
    vmm_buffer(const vmm_buffer&) = delete;
    vmm_buffer& operator=(const vmm_buffer&) = delete;
    long long* pointer() const { return reinterpret_cast<long long*>(reserved + offset); }
};

// One buffer per local PE, on its GPU, zeroed; freed after the window is released.
struct device_buffers {
    std::vector<int> devices;
    std::vector<long long*> pointers;
    std::vector<std::unique_ptr<vmm_buffer>> vmm;  // the cuMemCreate'd ones (the others are cudaMalloc'd)
    explicit device_buffers(pgas::world& w, std::size_t elements, memory kind = memory::cuda_malloc) {
        for (int i = 0; i < w.n_local_pes(); ++i) {
            devices.push_back(w.device_of(i));
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            const bool odd = w.local_pe(i) % 2 == 1;
            long long* p = nullptr;
            if (kind == memory::cuda_malloc || (kind == memory::mixed && !odd)) {
                CHECK_CUDA(cudaMalloc(&p, elements * sizeof(long long)));
            } else {
                vmm.push_back(std::make_unique<vmm_buffer>(w.device_of(i), elements * sizeof(long long),
                                                           kind != memory::vmm_private));
                p = vmm.back()->pointer();
            }
            CHECK_CUDA(cudaMemset(p, 0, elements * sizeof(long long)));
            pointers.push_back(p);
        }
    }
    ~device_buffers() {
        for (std::size_t i = 0; i < pointers.size(); ++i) {
            cudaSetDevice(devices[i]);
            if (std::none_of(vmm.begin(), vmm.end(), [&](const auto& v) { return v->pointer() == pointers[i]; }))
                cudaFree(pointers[i]);
        }
    }
    device_buffers(const device_buffers&) = delete;
    device_buffers& operator=(const device_buffers&) = delete;
};

pgas::window<long long> register_all(pgas::world& w, const device_buffers& b, int elements) {
    if (w.n_local_pes() == 1) return w.register_window(b.pointers[0], elements);
    return w.register_window(b.pointers, elements);
}

// Every op on a window, one block per PE: a block-wide put to the next PE's buffer (the first half) and put_nbi
// (the second), quiet + barrier; a get of the previous PE's buffer into the heap; p/g; fetch-adds from every PE
// into PE 0's word 0; put_signal of 16 elements with the flag in the heap. Errors are counted (system-scope atomics:
// the PEs may be on several GPUs), not trapped. Up to 15 PEs (p writes words 1..n, put_signal 16..31).
__global__ void window_ops(const __grid_constant__ ctx_t ctx, pgas::window<long long> win,
                           pgas::symmetric_ptr<long long> got, pgas::symmetric_ptr<std::uint64_t> flag,
                           unsigned long long* errors) {
    const int me = ctx.my_pe(), n = ctx.n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    __shared__ long long src[count];
    for (int i = int(threadIdx.x); i < count; i += int(blockDim.x)) src[i] = 1000000LL * me + i;
    __syncthreads();
    pgas::put<pgas::block>(ctx, win + 32, src + 32, count / 2 - 32, next);  // the first 32: atomics and signals below
    pgas::put_nbi<pgas::block>(ctx, win + count / 2, src + count / 2, count / 2, next);
    pgas::quiet<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx);
    const long long* mine = pgas::window_local(ctx, win);
    for (int i = 32 + int(threadIdx.x); i < count; i += int(blockDim.x))
        if (mine[i] != 1000000LL * prev + i) atomicAdd_system(errors, 1ull);
    pgas::get<pgas::block>(ctx, ctx.local(got), win + 32, count - 32, prev);
    const int prev2 = (prev + n - 1) % n;
    for (int i = int(threadIdx.x); i < count - 32; i += int(blockDim.x))
        if (ctx.local(got)[i] != 1000000LL * prev2 + i + 32) atomicAdd_system(errors, 1ull);
    if (threadIdx.x == 0) {
        pgas::p(ctx, win + 1 + me, 7LL + me, next);
        for (int i = 0; i < 10; ++i) pgas::atomic_add(ctx, win, 1LL, 0);
    }
    pgas::barrier_all<pgas::block>(ctx);
    if (threadIdx.x == 0) {
        if (pgas::g(ctx, win + 1 + prev, me) != 7LL + prev) atomicAdd_system(errors, 1ull);
        if (pgas::atomic_fetch(ctx, win, 0) != 10LL * n) atomicAdd_system(errors, 1ull);
        if (pgas::window_peer(ctx, win + 3, next) == nullptr) atomicAdd_system(errors, 1ull);
    }
    pgas::put_signal<pgas::block>(ctx, win + 16, src, 16, flag, 1, pgas::signal_op::add, next);
    pgas::signal_wait_until(ctx, flag, pgas::cmp::eq, 1);
    for (int i = int(threadIdx.x); i < 16; i += int(blockDim.x))
        if (mine[16 + i] != 1000000LL * prev + i) atomicAdd_system(errors, 1ull);
    pgas::barrier_all<pgas::block>(ctx);
}

int current_device() {
    int device = -1;
    CHECK_CUDA(cudaGetDevice(&device));
    return device;
}

void check_window_ops(int n, memory kind = memory::cuda_malloc) {
    auto w = make_world(n);
    device_buffers buffers(w, count, kind);
    // The caller's current device stays (with several GPUs, local PE 0's is not the last buffer's, where
    // device_buffers left it, nor the one register_window last worked on).
    CHECK_CUDA(cudaSetDevice(w.device_of(0)));
    const auto win = register_all(w, buffers, count);
    CHECK(current_device() == w.device_of(0));
    CHECK(win.size() == std::uint64_t(count));
    auto got = w.alloc<long long>(count);
    auto flag = w.alloc<std::uint64_t>(1);
    unsigned long long* errors = nullptr;
    CHECK_CUDA(cudaMallocManaged(&errors, sizeof(*errors)));
    *errors = 0;
    launch_all(w, 1, 256, window_ops, win, got, flag, errors);
    CHECK(*errors == 0);
    // The buffers themselves, read on the host: the framework's memory holds the data, nothing was copied.
    std::vector<long long> host(count);
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaMemcpy(host.data(), buffers.pointers[std::size_t(i)], sizeof(long long) * count,
                              cudaMemcpyDeviceToHost));
        const int prev = (w.local_pe(i) + n - 1) % n;
        CHECK(host[count - 1] == 1000000LL * prev + count - 1);
    }
    CHECK_CUDA(cudaSetDevice(w.device_of(0)));
    w.release_window(win);
    CHECK(current_device() == w.device_of(0));
    CHECK(w.live_windows() == 0);
    const auto again = register_all(w, buffers, count);  // the same buffers again, after release
    w.release_window(again);
    cudaFree(errors);
    w.free(flag);
    w.free(got);
}

std::string error_of(pgas::world& w, const std::vector<long long*>& pointers, int elements) {
    return test::error_of([&] {
        if (pointers.size() == 1)
            (void)w.register_window(pointers[0], elements);
        else
            (void)w.register_window(pointers, elements);
    }, pgas::errc::invalid_argument);
}

// Local PE 0 passes a good buffer, the last local PE a bad one: the error names that PE and the value.
void check_bad_input(int n) {
    auto w = make_world(n);
    device_buffers buffers(w, 256);
    const int last = w.n_local_pes() - 1;
    const std::string on = "pgas: register_window on PE " + std::to_string(w.local_pe(last)) + ": ";
    std::vector<long long*> pointers = buffers.pointers;
    std::vector<long long> host(256);
    pointers[std::size_t(last)] = host.data();
    CHECK(error_of(w, pointers, 256) == on + "pointer " + pgas::detail::address_text(host.data()) +
                                            " is plain host memory (not from CUDA), not GPU memory: register memory "
                                            "from cudaMalloc (or cuMemCreate)");
    pointers[std::size_t(last)] = buffers.pointers[std::size_t(last)] + 128;  // 128 elements left in the allocation
    CHECK(error_of(w, pointers, 256).rfind(on + "range [" + pgas::detail::address_text(pointers[std::size_t(last)]) +
                                               ", +2048 bytes) straddles allocations: the allocation holding ",
                                           0) == 0);
    pointers[std::size_t(last)] = nullptr;
    CHECK(error_of(w, pointers, 256) == on + "null pointer (2048 bytes)");
    CHECK(w.live_windows() == 0);
    const auto ok = register_all(w, buffers, 256);  // nothing half-registered
    w.release_window(ok);
}

// Processes, each with a cuMemCreate'd buffer that has no shareable handle type: each PE's error says how to create
// it, and nothing is registered.
void check_private_vmm(int n) {
    auto w = make_world(n);
    device_buffers buffers(w, 256, memory::vmm_private);
    const std::string what = error_of(w, buffers.pointers, 256);
    const std::string address = pgas::detail::address_text(reinterpret_cast<void*>(buffers.vmm[0]->reserved));
    CHECK(what.rfind("pgas: register_window on PE " + std::to_string(w.my_pe()) + ": the cuMemCreate allocation at " +
                         address + " cannot be shared with other processes (cuMemExportToShareableHandle: ",
                     0) == 0);
    const std::string advice = "): create it with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in "
                               "CUmemAllocationProp::requestedHandleTypes";
    CHECK(what.size() > advice.size());
    CHECK(what.compare(what.size() - advice.size(), advice.size(), advice) == 0);
    CHECK(w.live_windows() == 0);
}

// Processes: PE 1 registers twice as many elements; every PE reports it (PE 1 naming PE 0, the others PE 1).
void check_size_mismatch(int n) {
    auto w = make_world(n);
    device_buffers buffers(w, 512);
    const int elements = w.my_pe() == 1 ? 512 : 256;
    const std::string text = test::error_of([&] { (void)w.register_window(buffers.pointers[0], elements); },
                                            pgas::errc::collective_mismatch);
    const std::string on = "pgas: register_window on PE " + std::to_string(w.my_pe()) + ": ";
    CHECK(text == (w.my_pe() == 1 ? on + "bytes = 4096 here but 2048 on PE 0"
                                  : on + "bytes = 2048 here but 4096 on PE 1"));
}

// Heap ops on memory register_symmetric mapped into the heap, one block per PE: a block-wide put to the next PE's
// buffer (all but the first 32 elements), fetch-adds from every PE into PE 0's word 0, and an allreduce over the
// registered elements into a heap block (collectives take registered memory as heap memory).
__global__ void symmetric_ops(const __grid_constant__ ctx_t ctx, pgas::symmetric_ptr<long long> reg,
                              pgas::symmetric_ptr<long long> sum, unsigned long long* errors) {
    const int me = ctx.my_pe(), n = ctx.n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    __shared__ long long src[count];
    for (int i = int(threadIdx.x); i < count; i += int(blockDim.x)) src[i] = 1000000LL * me + i;
    __syncthreads();
    pgas::put<pgas::block>(ctx, reg + 32, src + 32, count - 32, next);
    pgas::quiet<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx);
    const long long* mine = ctx.local(reg);
    for (int i = 32 + int(threadIdx.x); i < count; i += int(blockDim.x))
        if (mine[i] != 1000000LL * prev + i) atomicAdd_system(errors, 1ull);
    if (threadIdx.x == 0)
        for (int i = 0; i < 10; ++i) pgas::atomic_add(ctx, reg, 1LL, 0);
    pgas::barrier_all<pgas::block>(ctx);
    if (threadIdx.x == 0 && pgas::atomic_fetch(ctx, reg, 0) != 10LL * n) atomicAdd_system(errors, 1ull);
    pgas::allreduce<pgas::block>(ctx, pgas::team::world_team(me, n), sum, reg + 32, count - 32, pgas::op::sum);
    for (int i = int(threadIdx.x); i < count - 32; i += int(blockDim.x))
        if (ctx.local(sum)[i] != 1000000LL * n * (n - 1) / 2 + (i + 32LL) * n) atomicAdd_system(errors, 1ull);
    pgas::barrier_all<pgas::block>(ctx);
}

// Each local PE's buffer as register_symmetric takes it: the start of a cuMemCreate mapping, exportable, zeroed.
struct symmetric_buffers {
    std::vector<std::unique_ptr<vmm_buffer>> vmm;
    std::vector<long long*> starts;
    explicit symmetric_buffers(pgas::world& w, std::size_t elements) {
        for (int i = 0; i < w.n_local_pes(); ++i) {
            CHECK_CUDA(cudaSetDevice(w.device_of(i)));
            vmm.push_back(std::make_unique<vmm_buffer>(w.device_of(i), elements * sizeof(long long), true));
            starts.push_back(reinterpret_cast<long long*>(vmm.back()->reserved));
            CHECK_CUDA(cudaMemset(starts.back(), 0, elements * sizeof(long long)));
        }
        CHECK_CUDA(cudaSetDevice(w.device_of(0)));
    }
};

// register_symmetric: the buffers become heap memory at one offset (every op and a collective reach them), the
// data lands in the owners' own memory, and unregister_symmetric frees the slot for the next registration.
void check_register_symmetric(int n) {
    auto w = make_world(n);
    symmetric_buffers buffers(w, count);
    const auto reg = w.register_symmetric(buffers.starts, count);
    CHECK(reg.offset() >= w.heap_bytes());  // after the heap, not inside it
    auto sum = w.alloc<long long>(count);
    unsigned long long* errors = nullptr;
    CHECK_CUDA(cudaMallocManaged(&errors, sizeof(*errors)));
    *errors = 0;
    launch_all(w, 1, 256, symmetric_ops, reg, sum, errors);
    CHECK(*errors == 0);
    std::vector<long long> host(count);
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaMemcpy(host.data(), buffers.starts[std::size_t(i)], sizeof(long long) * count,
                              cudaMemcpyDeviceToHost));
        const int prev = (w.local_pe(i) + n - 1) % n;
        CHECK(host[count - 1] == 1000000LL * prev + count - 1);
        if (w.local_pe(i) == 0) CHECK(host[0] == 10LL * n);
        // The heap's address of the registration is a second mapping of the same memory, not a copy.
        std::vector<long long> through_heap(count);
        CHECK_CUDA(cudaMemcpy(through_heap.data(), w.device_address(reg, i), sizeof(long long) * count,
                              cudaMemcpyDeviceToHost));
        CHECK(through_heap == host);
    }
    w.unregister_symmetric(reg);
    const std::string on = w.n_local_pes() == 1 ? " on PE " + std::to_string(w.my_pe()) : std::string();
    CHECK(test::error_of([&] { w.unregister_symmetric(reg); }, pgas::errc::invalid_argument) ==
          "pgas: unregister_symmetric" + on + ": heap offset " + std::to_string(reg.offset()) +
              " is no live register_symmetric buffer");
    const auto again = w.register_symmetric(buffers.starts, count);  // the slot is free again
    CHECK(again.offset() == reg.offset());
    w.unregister_symmetric(again);
    cudaFree(errors);
    w.free(sum);
}

// register_symmetric refuses, on every PE, naming it: cudaMalloc memory, and a pointer into a mapping.
void check_register_symmetric_bad_input(int n) {
    auto w = make_world(n);
    device_buffers malloced(w, 256);
    device_buffers offset(w, 256, memory::vmm);  // 4 KiB into its mapping
    const int last = w.n_local_pes() - 1;
    const std::string on = "pgas: register_symmetric on PE " + std::to_string(w.local_pe(last)) + ": pointer ";
    const auto refusal = [&](const std::vector<long long*>& pointers) {
        return test::error_of([&] { (void)w.register_symmetric(pointers, 256); }, pgas::errc::invalid_argument);
    };
    symmetric_buffers good(w, 256);
    std::vector<long long*> pointers = good.starts;  // only the last local PE's buffer is bad
    pointers[std::size_t(last)] = malloced.pointers[std::size_t(last)];
    CHECK(refusal(pointers) == on + pgas::detail::address_text(pointers[std::size_t(last)]) +
                                   " is not cuMemCreate memory (cudaMalloc memory cannot be mapped into the symmetric "
                                   "heap: allocate the buffer with cuMemCreate/cuMemMap, or share it with "
                                   "register_window)");
    pointers[std::size_t(last)] = offset.pointers[std::size_t(last)];
    CHECK(refusal(pointers).rfind(on + pgas::detail::address_text(pointers[std::size_t(last)]) +
                                      " is 4096 bytes into the allocation at ",
                                  0) == 0);
    const auto reg = w.register_symmetric(good.starts, 256);
    CHECK(reg.offset() >= w.heap_bytes());
    w.unregister_symmetric(reg);
}

}  // namespace

TEST_SUITE("two_pes_one_gpu") {
    TEST_CASE("register_symmetric: cuMemCreate'd buffers as heap memory (put, atomics, allreduce), two PEs sharing one GPU") {
        share_gpu0 shared;
        check_register_symmetric(2);
    }
    TEST_CASE("bad input: register_symmetric with cudaMalloc memory and a pointer into a mapping") {
        share_gpu0 shared;
        check_register_symmetric_bad_input(2);
    }
    TEST_CASE("register_window: cudaMalloc'd buffers reached by put/get/p/g/atomics/put_signal, two PEs sharing one GPU") {
        share_gpu0 shared;
        check_window_ops(2);
    }
    TEST_CASE("register_window: four PEs sharing one GPU") {
        share_gpu0 shared;
        check_window_ops(4);
    }
    TEST_CASE("bad input: register_window with host memory, a range straddling allocations, a null pointer") {
        share_gpu0 shared;
        check_bad_input(2);
    }
    TEST_CASE("register_window: cuMemCreate'd buffers (at an offset in their mapping), two PEs sharing one GPU") {
        share_gpu0 shared;
        check_window_ops(2, memory::vmm_private);
    }
}

// One process drives PGAS_TEST_GPUS GPUs (default 2), one PE each: direct pointers, reachable through peer access
// (cudaMalloc) or cuMemSetAccess (cuMemCreate). Without the PE's GPU current for its driver calls, register_window
// would fail here on PE 0 ("cuMemGetAddressRange finds no allocation holding it").
TEST_SUITE("gpus") {
    TEST_CASE("register_symmetric: cuMemCreate'd buffers as heap memory, GPUs driven by one process") {
        check_register_symmetric(gpus_suite_pes());
    }
    TEST_CASE("register_window: cudaMalloc'd buffers reached by put/get/p/g/atomics/put_signal, GPUs driven by one process") {
        check_window_ops(gpus_suite_pes());
    }
    TEST_CASE("register_window: cuMemCreate'd buffers without a shareable handle, GPUs driven by one process") {
        check_window_ops(gpus_suite_pes(), memory::vmm_private);
    }
    TEST_CASE("register_window: cudaMalloc'd and cuMemCreate'd buffers in one window, GPUs driven by one process") {
        check_window_ops(gpus_suite_pes(), memory::mixed);
    }
    TEST_CASE("bad input: register_window with host memory, a range straddling allocations, a null pointer, GPUs driven by one process") {
        check_bad_input(gpus_suite_pes());
    }
}

// One process per PE under a launcher (pgasrun -n N): one GPU each, or sharing one under MPS.
TEST_SUITE("processes") {
    TEST_CASE("register_symmetric between processes (VMM handles as descriptors): heap memory at one offset") {
        check_register_symmetric(processes_suite_pes());
    }
    TEST_CASE("bad input: register_symmetric between processes, cudaMalloc memory and a pointer into a mapping") {
        check_register_symmetric_bad_input(processes_suite_pes());
    }
    TEST_CASE("register_window between processes (CUDA IPC): put/get/p/g/atomics/put_signal") {
        check_window_ops(processes_suite_pes());
    }
    TEST_CASE("register_window between processes (cuMemCreate'd, VMM handles as descriptors)") {
        check_window_ops(processes_suite_pes(), memory::vmm);
    }
    TEST_CASE("register_window between processes: cudaMalloc'd and cuMemCreate'd buffers in one window") {
        check_window_ops(processes_suite_pes(), memory::mixed);
    }
    TEST_CASE("bad input: a cuMemCreate'd buffer without a shareable handle type, between processes") {
        check_private_vmm(processes_suite_pes());
    }
    TEST_CASE("bad input: register_window between processes, host memory and a straddling range") {
        check_bad_input(processes_suite_pes());
    }
    TEST_CASE("bad input: different sizes across processes are reported by every PE") {
        check_size_mismatch(processes_suite_pes());
    }
}
