// GPU suite (label gpu): kernels drive the libfabric proxy. Two PEs (SPMD threads, PE i on GPU i % count; or,
// under pgasrun -n 2, one process each) over shm and tcp;ofi_rxm on loopback, with host heaps that the domain
// registers for the kernels (libfabric_options::gpu_producers): every command a GPU thread pushes crosses PCIe
// into the mapped ring, the proxy thread turns it into libfabric RMA, and completions and replies come back
// through mapped memory. Results are checked byte for byte.
//
// The "FI_HMEM" cases run the same checks with GPU heaps (world::init_gpu, two processes under pgasrun):
// the heap is registered with FI_HMEM_CUDA and the provider reads and writes the peer's GPU heap itself
// (libfabric_heap_path::hmem, asserted). Where no provider has FI_HMEM (a libfabric built without CUDA,
// as Debian's) they print why and the program exits 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include "support.hpp"

#include <pgas/device/window.hpp>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace gpu_proxy_test {

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        const cudaError_t cuda_ok_rc = (call);                                                      \
        REQUIRE_MESSAGE(cuda_ok_rc == cudaSuccess, #call, ": ", cudaGetErrorString(cuda_ok_rc));    \
    } while (0)

using ctx_t = pgas::device::context<pgas::libfabric>;

__host__ __device__ inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
__host__ __device__ inline std::uint8_t byte_of(int pe, std::size_t i, int tag) {
    return std::uint8_t(mix(std::uint64_t(pe), i, std::uint64_t(tag)));
}

int gpu_count() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
bool under_pgasrun() { return std::getenv("PGAS_RANK") != nullptr; }

// Where the symmetric heap lives: host memory the domain registers for the
// kernels (the staged path), or GPU memory registered with FI_HMEM.
enum class heap_kind { host, gpu };

// Non-empty once an FI_HMEM case skipped: main then exits 77 (CTest's SKIP_RETURN_CODE).
std::string& skip_reason() {
    static std::string reason;
    return reason;
}

// Copies of a symmetric object on this PE, whatever memory the heap is (host or GPU).
template <class T>
std::vector<T> heap_read(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count) {
    std::vector<T> out(count);
    CUDA_OK(cudaMemcpy(out.data(), w.device_address(p), count * sizeof(T), cudaMemcpyDefault));
    return out;
}
template <class T>
T heap_value(pgas::world& w, pgas::symmetric_ptr<T> p) {
    return heap_read(w, p, 1)[0];
}
template <class T>
void heap_write(pgas::world& w, pgas::symmetric_ptr<T> p, const std::vector<T>& values) {
    CUDA_OK(cudaMemcpy(w.device_address(p), values.data(), values.size() * sizeof(T), cudaMemcpyDefault));
}

// A device buffer freed at scope exit.
template <class T>
struct device_buffer {
    T* data = nullptr;
    std::size_t count = 0;
    explicit device_buffer(std::size_t n) : count(n) {
        CUDA_OK(cudaMalloc(&data, n * sizeof(T)));
        CUDA_OK(cudaMemset(data, 0, n * sizeof(T)));
    }
    device_buffer(const device_buffer&) = delete;
    ~device_buffer() { cudaFree(data); }
    std::vector<T> read() const {
        std::vector<T> out(count);
        CUDA_OK(cudaMemcpy(out.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
        return out;
    }
    void write(const std::vector<T>& in) {
        CUDA_OK(cudaMemcpy(data, in.data(), std::min(in.size(), count) * sizeof(T), cudaMemcpyHostToDevice));
    }
};

// Two PEs, each with a libfabric domain whose producers are kernels on its
// own GPU, running body(world, domain, stream). Threads of this process
// (PE i on GPU i % count), or under pgasrun -n 2 one process each.
// GPU heaps: two processes under pgasrun (world::init_gpu), each PE's heap
// on GPU local rank % count, registered with FI_HMEM by the domain.
// Under pgasrun, the one world of this process (a host or a GPU heap), created by the first case and kept for
// the others; main finalizes it after the last case, since pgasrun reports a rank that exits without finalizing
// its world as failed (what its peers sent it would be lost). Each case frees what it allocated.
struct process_world_slot {
    pgas::world* world = nullptr;
    heap_kind heap = heap_kind::host;
};
inline process_world_slot& process_world() {
    static process_world_slot slot;
    return slot;
}

template <class Body>
void run_gpu(const std::string& provider, const std::string& delivery, Body body, std::uint32_t ring = 1024,
             heap_kind heap = heap_kind::host) {
    REQUIRE_MESSAGE(gpu_count() >= 1, "this suite needs a CUDA GPU (label gpu)");
    int host_pointers = 0;
    CUDA_OK(cudaDeviceGetAttribute(&host_pointers, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
    REQUIRE_MESSAGE(host_pointers, "the checks read the registered host heap through its host addresses");
    CAPTURE(provider);
    CAPTURE(delivery);
    // Twice test::options()'s heap: its first 4 MiB are pgas's
    // (detail::heap_layout::user_offset), and check_direct allocates three buffers of 4 MiB + 3.
    pgas::world_options wo = test::options();
    wo.heap_bytes = std::uint64_t{32} << 20;
    auto per_pe = [&](pgas::world& w) {
        if (heap == heap_kind::host) CUDA_OK(cudaSetDevice(w.my_pe() % gpu_count()));
        auto o = test::fabric(provider, ring);
        o.put_delivery = delivery;
        o.gpu_producers = heap == heap_kind::host;
        pgas::libfabric_domain fabric(w, o);
        REQUIRE(fabric.gpu_producers());
        // The path this suite is about, asked of the domain (not read from its log line).
        const auto want = heap == heap_kind::gpu ? pgas::libfabric_heap_path::hmem : pgas::libfabric_heap_path::staged;
        REQUIRE_MESSAGE(fabric.heap_path() == want, fabric.describe_heap_path());
        cudaStream_t stream = nullptr;
        CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        body(w, fabric, stream);
        CUDA_OK(cudaStreamDestroy(stream));
    };
    if (heap == heap_kind::gpu || under_pgasrun()) {
        REQUIRE_MESSAGE(under_pgasrun(), "GPU heaps run as two processes: pgasrun -n 2");
        auto& mine = process_world();
        if (!mine.world) {
            mine.heap = heap;
            mine.world = new pgas::world(heap == heap_kind::gpu ? pgas::world::init_gpu(wo) : pgas::world::init(wo));
        }
        REQUIRE_MESSAGE(mine.heap == heap, "one run of this program takes host-heap or GPU-heap cases, not both");
        REQUIRE(mine.world->n_pes() == 2);
        per_pe(*mine.world);
    } else {
        pgas::world::run_threads(2, per_pe, wo);
    }
}

// Every provider this libfabric has, under both put deliveries.
template <class Body>
void for_each_setup(Body&& body) {
    for (const auto& provider : test::providers())
        for (const char* delivery : {"complete", "flush"}) body(provider, std::string(delivery));
}

// The providers that can register a GPU heap (FI_HMEM), with their default
// put delivery ("complete": shm with FI_HMEM injects nothing, so no "flush").
// None: records why (main exits 77) and returns false.
bool for_each_hmem_setup(const std::function<void(const std::string&, const std::string&)>& body) {
    std::vector<std::string> found;
    std::string without;
    for (const char* p : {"shm", "tcp;ofi_rxm"}) {
        pgas::libfabric_options o = test::fabric(p);
        try {
            (void)pgas::ofi::select_provider(o, true, true, 0);
            found.emplace_back(p);
        } catch (const pgas::error& e) {
            // std::string: doctest prints a bare const char* as its address.
            MESSAGE("libfabric provider " << std::string(p) << " is not part of the GPU-heap checks: " << e.what());
            without += without.empty() ? p : std::string(", ") + p;
        }
    }
    if (found.empty()) {
        skip_reason() = "no libfabric provider here has FI_HMEM (" + without + ": this libfabric " +
                        std::to_string(FI_MAJOR(fi_version())) + "." + std::to_string(FI_MINOR(fi_version())) +
                        " was built without CUDA; scripts/build-libfabric-cuda builds one that has it)";
        MESSAGE("skipped: " << skip_reason());
        return false;
    }
    for (const auto& p : found) body(p, "");
    return true;
}

// Waits for this PE's kernel, then for the other PE's (its writes to us are done).
void finish(pgas::world& w, cudaStream_t stream) {
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaGetLastError());
    w.barrier();
}

// --- put/get/p/g and their _nbi forms -----------------------------------------

// Around the inline limit (48 B), odd, and one that spans bounce chunks.
constexpr int n_sizes = 6;
__host__ __device__ constexpr std::size_t size_at(int k) {
    constexpr std::size_t sizes[n_sizes] = {1, 8, 48, 49, 4127, (std::size_t{1} << 20) + 3};
    return sizes[k];
}
constexpr int rma_threads = 128;

struct rma_args {
    pgas::symmetric_ptr<std::uint8_t> inbox;   // put from device memory lands here (per size, at offset[k])
    pgas::symmetric_ptr<std::uint8_t> inbox2;  // put_nbi from the sender's own heap
    pgas::symmetric_ptr<std::uint8_t> stage;   // the sender's heap source of inbox2
    pgas::symmetric_ptr<std::uint8_t> outbox;  // filled by the host: what gets read
    pgas::symmetric_ptr<std::uint8_t> fetched; // get_nbi into the own heap
    pgas::symmetric_ptr<std::uint64_t> slots;  // p targets, one per thread
    pgas::symmetric_ptr<std::uint64_t> words;  // g sources, one per thread (filled by the host)
    const std::uint8_t* source;                // device memory: pattern(me, i, k) at offset[k]
    std::uint8_t* landed;                      // device memory: get destination
    std::uint64_t* read;                       // device memory: g results
    std::size_t offset[n_sizes];
    int left, right;
};

PGAS_KERNEL void rma_kernel(__grid_constant__ const ctx_t ctx, const rma_args a) {
    const int me = ctx.my_pe();
    for (int k = 0; k < n_sizes; ++k) {
        const std::size_t bytes = size_at(k), at = a.offset[k];
        // blocking put from device memory (inline, or staged by the proxy's copy engine)
        pgas::put<pgas::block>(ctx, a.inbox + std::ptrdiff_t(at), a.source + at, bytes, a.right);
        // put_nbi from this PE's own (registered host) heap: zero copy at the proxy
        std::uint8_t* stage = ctx.local(a.stage) + at;
        for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x) stage[i] = byte_of(me, i, 100 + k);
        __threadfence_system();
        __syncthreads();
        pgas::put_nbi<pgas::block>(ctx, a.inbox2 + std::ptrdiff_t(at), stage, bytes, a.right);
        // blocking get into device memory (reply payload, or staged back by the copy engine)
        pgas::get<pgas::block>(ctx, a.landed + at, a.outbox + std::ptrdiff_t(at), bytes, a.left);
        // get_nbi into the own heap, complete at quiet
        pgas::get_nbi<pgas::block>(ctx, ctx.local(a.fetched) + at, a.outbox + std::ptrdiff_t(at), bytes, a.right);
    }
    // every thread on its own: warp-aggregated reservations, inline payloads and replies
    pgas::p(ctx, a.slots + threadIdx.x, mix(std::uint64_t(me), threadIdx.x, 7), a.right);
    a.read[threadIdx.x] = pgas::g(ctx, a.words + threadIdx.x, a.left);
    pgas::quiet<pgas::block>(ctx);
    pgas::barrier_all<pgas::block>(ctx);
}

void check_rma(const std::string& provider, const std::string& delivery, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        rma_args a{};
        std::size_t total = 0;
        for (int k = 0; k < n_sizes; ++k) {
            a.offset[k] = total;
            total += (size_at(k) + 63) / 64 * 64;
        }
        a.inbox = w.alloc<std::uint8_t>(total);
        a.inbox2 = w.alloc<std::uint8_t>(total);
        a.stage = w.alloc<std::uint8_t>(total);
        a.outbox = w.alloc<std::uint8_t>(total);
        a.fetched = w.alloc<std::uint8_t>(total);
        a.slots = w.alloc<std::uint64_t>(rma_threads);
        a.words = w.alloc<std::uint64_t>(rma_threads);
        const int me = w.my_pe();
        a.left = (me + 1) % 2;
        a.right = a.left;  // two PEs: both neighbours are the other one
        const int other = a.left;

        std::vector<std::uint8_t> source(total), outbox(total);
        for (int k = 0; k < n_sizes; ++k)
            for (std::size_t i = 0; i < size_at(k); ++i) {
                source[a.offset[k] + i] = byte_of(me, i, k);
                outbox[a.offset[k] + i] = byte_of(me, i, 200 + k);
            }
        std::vector<std::uint64_t> words(rma_threads);
        for (int t = 0; t < rma_threads; ++t) words[std::size_t(t)] = mix(std::uint64_t(me), std::uint64_t(t), 9);
        heap_write(w, a.outbox, outbox);
        heap_write(w, a.words, words);
        device_buffer<std::uint8_t> src(total), landed(total);
        device_buffer<std::uint64_t> read(rma_threads);
        src.write(source);
        a.source = src.data;
        a.landed = landed.data;
        a.read = read.data;
        w.barrier();  // every outbox is filled before anyone reads it

        rma_kernel<<<1, rma_threads, 0, stream>>>(fabric.context(), a);
        finish(w, stream);

        const auto got = landed.read();
        const auto read_words = read.read();
        const auto inbox = heap_read(w, a.inbox, total), inbox2 = heap_read(w, a.inbox2, total);
        const auto fetched = heap_read(w, a.fetched, total);
        const auto slots = heap_read(w, a.slots, rma_threads);
        for (int k = 0; k < n_sizes; ++k) {
            const std::size_t bytes = size_at(k), at = a.offset[k];
            CAPTURE(bytes);
            for (std::size_t i = 0; i < bytes; ++i) {
                REQUIRE(inbox[at + i] == byte_of(other, i, k));
                REQUIRE(inbox2[at + i] == byte_of(other, i, 100 + k));
                REQUIRE(got[at + i] == byte_of(other, i, 200 + k));
                REQUIRE(fetched[at + i] == byte_of(other, i, 200 + k));
            }
        }
        for (int t = 0; t < rma_threads; ++t) {
            REQUIRE(slots[std::size_t(t)] == mix(std::uint64_t(other), std::uint64_t(t), 7));
            REQUIRE(read_words[std::size_t(t)] == mix(std::uint64_t(other), std::uint64_t(t), 9));
        }
        w.barrier();
        w.free(a.words);
        w.free(a.slots);
        w.free(a.fetched);
        w.free(a.outbox);
        w.free(a.stage);
        w.free(a.inbox2);
        w.free(a.inbox);
    }, 1024, heap);
}

// --- atomics ------------------------------------------------------------------

constexpr int atomic_blocks = 4, atomic_threads = 128, atomic_rounds = 8;
constexpr int atomic_n = atomic_blocks * atomic_threads;

struct atomic_args {
    pgas::symmetric_ptr<std::uint64_t> counter;  // fetch_add
    pgas::symmetric_ptr<std::uint32_t> incs;     // atomic_inc
    pgas::symmetric_ptr<std::int64_t> signed_sum;
    pgas::symmetric_ptr<std::uint32_t> bits;     // fetch_or, then fetch_and / xor
    pgas::symmetric_ptr<std::uint32_t> xors;
    pgas::symmetric_ptr<std::int32_t> cas;       // compare_swap increments
    pgas::symmetric_ptr<double> dsum;            // floating add
    pgas::symmetric_ptr<std::uint64_t> swapped;  // swap / set / fetch
    std::uint64_t* fetched;                      // device: every fetch_add's old value
    std::uint64_t* swaps;                        // device: what swap returned, per thread
    int other;
};

PGAS_KERNEL void atomic_kernel(__grid_constant__ const ctx_t ctx, const atomic_args a) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < atomic_rounds; ++r) {
        a.fetched[id * atomic_rounds + unsigned(r)] = pgas::atomic_fetch_add(ctx, a.counter, std::uint64_t(1), a.other);
        pgas::atomic_inc(ctx, a.incs, a.other);
        pgas::atomic_add(ctx, a.signed_sum, std::int64_t(r % 2 ? -3 : 5), a.other);
    }
    (void)pgas::atomic_fetch_or(ctx, a.bits, 1u << (id % 32), a.other);
    pgas::atomic_xor(ctx, a.xors, 1u << (id % 32), a.other);
    // compare_swap: retry until this thread's increment lands
    std::int32_t seen = pgas::atomic_fetch(ctx, a.cas, a.other);
    for (;;) {
        const std::int32_t old = pgas::atomic_compare_swap(ctx, a.cas, seen, seen + 1, a.other);
        if (old == seen) break;
        seen = old;
    }
    pgas::atomic_add(ctx, a.dsum, 0.5, a.other);
    a.swaps[id] = pgas::atomic_swap(ctx, a.swapped, std::uint64_t(id + 1), a.other);
    pgas::quiet<pgas::block>(ctx);
}

// Once both PEs' atomic_kernel are done (a host barrier): fetch what the
// swaps left, and, set, fetch again.
PGAS_KERNEL void atomic_tail_kernel(__grid_constant__ const ctx_t ctx, const atomic_args a) {
    a.swaps[atomic_n] = pgas::atomic_fetch(ctx, a.swapped, a.other);
    (void)pgas::atomic_fetch_and(ctx, a.bits, 0x0000ffffu, a.other);
    pgas::atomic_set(ctx, a.swapped, std::uint64_t(0xfeedull), a.other);
    a.swaps[atomic_n + 1] = pgas::atomic_fetch(ctx, a.swapped, a.other);
    pgas::quiet(ctx);
}

void check_atomics(const std::string& provider, const std::string& delivery, std::uint32_t ring, heap_kind heap) {
    CAPTURE(ring);
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        atomic_args a{w.alloc<std::uint64_t>(1), w.alloc<std::uint32_t>(1), w.alloc<std::int64_t>(1),
                      w.alloc<std::uint32_t>(1), w.alloc<std::uint32_t>(1), w.alloc<std::int32_t>(1),
                      w.alloc<double>(1),        w.alloc<std::uint64_t>(1), nullptr, nullptr, 1 - w.my_pe()};
        device_buffer<std::uint64_t> fetched(std::size_t(atomic_n) * atomic_rounds), swaps(atomic_n + 2);
        a.fetched = fetched.data;
        a.swaps = swaps.data;
        w.barrier();
        atomic_kernel<<<atomic_blocks, atomic_threads, 0, stream>>>(fabric.context(), a);
        finish(w, stream);
        atomic_tail_kernel<<<1, 1, 0, stream>>>(fabric.context(), a);
        finish(w, stream);

        const std::uint64_t updates = std::uint64_t(atomic_n) * atomic_rounds;
        CHECK(heap_value(w, a.counter) == updates);
        CHECK(heap_value(w, a.incs) == updates);
        CHECK(heap_value(w, a.signed_sum) == std::int64_t(atomic_n) * (atomic_rounds / 2) * (5 - 3));
        CHECK(heap_value(w, a.bits) == 0x0000ffffu);
        CHECK(heap_value(w, a.xors) == 0u);  // every bit flipped atomic_n / 32 (an even number of) times
        CHECK(heap_value(w, a.cas) == atomic_n);
        CHECK(heap_value(w, a.dsum) == 0.5 * atomic_n);
        // every old value of the counter seen exactly once (only the other PE adds to ours)
        auto olds = fetched.read();
        std::sort(olds.begin(), olds.end());
        for (std::uint64_t i = 0; i < updates; ++i) REQUIRE(olds[i] == i);
        // this PE's swaps on the other's word form one chain: the values they
        // returned plus the one left there are exactly 0 .. atomic_n
        auto chain = swaps.read();
        std::vector<std::uint64_t> returned(chain.begin(), chain.begin() + atomic_n + 1);
        std::sort(returned.begin(), returned.end());
        for (std::size_t i = 0; i < returned.size(); ++i) REQUIRE(returned[i] == i);
        CHECK(chain[atomic_n + 1] == 0xfeedull);  // what this PE's set left on the other, fetched back
        CHECK(heap_value(w, a.swapped) == 0xfeedull);
        w.barrier();
        w.free(a.swapped);
        w.free(a.dsum);
        w.free(a.cas);
        w.free(a.xors);
        w.free(a.bits);
        w.free(a.signed_sum);
        w.free(a.incs);
        w.free(a.counter);
    }, ring, heap);
}

// --- put_signal + signal_wait_until: data visible before its signal ----------

constexpr int pong_rounds = 300;
__host__ __device__ constexpr std::size_t pong_size(int r) {
    constexpr std::size_t sizes[4] = {8, 48, 4096, 100000};
    return sizes[r % 4];
}
constexpr std::size_t pong_max = 100000;

struct pong_args {
    pgas::symmetric_ptr<std::uint8_t> data;
    pgas::symmetric_ptr<std::uint64_t> sig;
    std::uint8_t* source;  // device memory, rewritten every round
    unsigned* errors;      // device: [0] mismatches, [1] first bad round
};

// PE 0 and PE 1 take turns: wait for the other's signal (round r), check every
// byte it put with it, answer with this PE's data and signal r + 1.
PGAS_KERNEL void pong_kernel(__grid_constant__ const ctx_t ctx, const pong_args a) {
    const int me = ctx.my_pe(), other = 1 - me;
    __shared__ std::uint64_t seen;
    for (int r = 0; r < pong_rounds; ++r) {
        const std::size_t bytes = pong_size(r);
        if ((r % 2) != me) {  // receiver this round
            if (threadIdx.x == 0) seen = pgas::signal_wait_until(ctx, a.sig, pgas::cmp::ge, std::uint64_t(r + 1));
            __syncthreads();
            const std::uint8_t* data = ctx.local(a.data);
            for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x)
                if (data[i] != byte_of(other, i, r) && atomicAdd(a.errors, 1u) == 0) a.errors[1] = unsigned(r);
            if (threadIdx.x == 0 && seen != std::uint64_t(r + 1)) atomicAdd(a.errors, 1u);
            __syncthreads();
        } else {  // sender: fresh source bytes, then data + signal in one call
            for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x) a.source[i] = byte_of(me, i, r);
            __threadfence_system();  // the proxy's copy engine reads the source
            __syncthreads();
            // After the other's send of round r - 2 the signal word holds r - 1: set r + 1, or add 2.
            if (r % 3 == 0)
                pgas::put_signal<pgas::block>(ctx, a.data, a.source, bytes, a.sig, std::uint64_t(r + 1),
                                              pgas::signal_op::set, other);
            else
                pgas::put_signal_nbi<pgas::block>(ctx, a.data, a.source, bytes, a.sig, 2, pgas::signal_op::add, other);
            pgas::quiet<pgas::block>(ctx);  // the source is rewritten next round (nbi) / orders rounds
        }
    }
}

void check_put_signal(const std::string& provider, const std::string& delivery, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        pong_args a{w.alloc<std::uint8_t>(pong_max), w.alloc<std::uint64_t>(1), nullptr, nullptr};
        device_buffer<std::uint8_t> source(pong_max);
        device_buffer<unsigned> errors(2);
        a.source = source.data;
        a.errors = errors.data;
        w.barrier();
        pong_kernel<<<1, 256, 0, stream>>>(fabric.context(), a);
        finish(w, stream);
        const auto e = errors.read();
        CHECK_MESSAGE(e[0] == 0u, "mismatches from round ", e[1]);
        // the last signal this PE received: the other's last send
        const int last_received = (pong_rounds - 1) % 2 == w.my_pe() ? pong_rounds - 1 : pong_rounds;
        CHECK(heap_value(w, a.sig) == std::uint64_t(last_received));
        w.barrier();
        w.free(a.sig);
        w.free(a.data);
    }, 1024, heap);
}

// --- fence ordering and barriers ----------------------------------------------

struct order_args {
    pgas::symmetric_ptr<std::uint64_t> value, flag, seen;
    unsigned* errors;
};

PGAS_KERNEL void order_kernel(__grid_constant__ const ctx_t ctx, const order_args a) {
    const int other = 1 - ctx.my_pe();
    for (int r = 1; r <= 200; ++r) {
        // value, fence, flag: whoever sees the flag sees the value
        pgas::p(ctx, a.value, std::uint64_t(r), other);
        pgas::fence(ctx);
        pgas::p(ctx, a.flag, std::uint64_t(r), other);
        const std::uint64_t flag = pgas::wait_until(ctx, a.flag, pgas::cmp::ge, std::uint64_t(r));
        const std::uint64_t value = cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>(*ctx.local(a.value))
                                        .load(cuda::memory_order_acquire);
        if (value < flag) atomicAdd(a.errors, 1u);
        // barrier: the other's round-r writes are all visible after it
        pgas::barrier_all(ctx);
        pgas::p(ctx, a.seen, std::uint64_t(r), other);
        pgas::barrier_all(ctx);
        if (*ctx.local(a.seen) != std::uint64_t(r)) atomicAdd(a.errors + 1, 1u);
    }
}

void check_ordering(const std::string& provider, const std::string& delivery, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        order_args a{w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1), nullptr};
        device_buffer<unsigned> errors(2);
        a.errors = errors.data;
        w.barrier();
        order_kernel<<<1, 1, 0, stream>>>(fabric.context(), a);
        finish(w, stream);
        const auto e = errors.read();
        CHECK_MESSAGE(e[0] == 0u, "flag seen before its fenced value");
        CHECK_MESSAGE(e[1] == 0u, "a put before barrier_all not visible after it");
        w.barrier();
        w.free(a.seen);
        w.free(a.flag);
        w.free(a.value);
    }, 1024, heap);
}

// --- many warps through a small ring ------------------------------------------

constexpr int flood_blocks = 16, flood_threads = 256, flood_rounds = 24;

PGAS_KERNEL void flood_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint64_t> slots,
                              pgas::symmetric_ptr<std::uint64_t> counter) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    const int other = 1 - ctx.my_pe();
    for (int r = 0; r < flood_rounds; ++r) {
        // consecutive threads write consecutive words: the proxy merges a warp's puts
        pgas::p(ctx, slots + std::ptrdiff_t(std::size_t(r) * flood_blocks * flood_threads + id),
                mix(std::uint64_t(ctx.my_pe()), id, std::uint64_t(r)), other);
        if (r % 8 == 0) pgas::atomic_add(ctx, counter, std::uint64_t(1), other);
    }
    pgas::quiet<pgas::block>(ctx);
}

void check_flood(const std::string& provider, const std::string& delivery, std::uint32_t ring, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        constexpr std::size_t n = std::size_t(flood_blocks) * flood_threads * flood_rounds;
        auto slots = w.alloc<std::uint64_t>(n);
        auto counter = w.alloc<std::uint64_t>(1);
        w.barrier();
        flood_kernel<<<flood_blocks, flood_threads, 0, stream>>>(fabric.context(), slots, counter);
        finish(w, stream);
        const int other = 1 - w.my_pe();
        const auto got = heap_read(w, slots, n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t r = i / (flood_blocks * flood_threads), id = i % (flood_blocks * flood_threads);
            REQUIRE(got[i] == mix(std::uint64_t(other), id, r));
        }
        CHECK(heap_value(w, counter) == std::uint64_t(flood_blocks) * flood_threads * ((flood_rounds + 7) / 8));
        w.barrier();
        w.free(counter);
        w.free(slots);
    }, ring, heap);
}

// --- heap to heap: no staging copy on either path -------------------------------

constexpr std::size_t direct_bytes = (std::size_t{4} << 20) + 3;

PGAS_KERNEL void direct_kernel(__grid_constant__ const ctx_t ctx, pgas::symmetric_ptr<std::uint8_t> src,
                               pgas::symmetric_ptr<std::uint8_t> inbox, pgas::symmetric_ptr<std::uint8_t> fetched,
                               int other) {
    pgas::put_nbi<pgas::block>(ctx, inbox, ctx.local(src), direct_bytes, other);
    pgas::get_nbi<pgas::block>(ctx, ctx.local(fetched), src, direct_bytes, other);
    pgas::quiet<pgas::block>(ctx);
}

// A put and a get between the two heaps (host heaps: zero copy; GPU heaps:
// the provider reaches GPU memory through FI_HMEM): the proxy copies nothing.
void check_direct(const std::string& provider, const std::string& delivery, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        auto src = w.alloc<std::uint8_t>(direct_bytes);
        auto inbox = w.alloc<std::uint8_t>(direct_bytes);
        auto fetched = w.alloc<std::uint8_t>(direct_bytes);
        const int me = w.my_pe(), other = 1 - me;
        std::vector<std::uint8_t> mine(direct_bytes);
        for (std::size_t i = 0; i < direct_bytes; ++i) mine[i] = byte_of(me, i, 300);
        heap_write(w, src, mine);
        w.barrier();  // both sources are written before either PE reads the other's
        const std::uint64_t staged_before = fabric.staged_gpu_bytes();
        direct_kernel<<<1, 256, 0, stream>>>(fabric.context(), src, inbox, fetched, other);
        finish(w, stream);
        CHECK_MESSAGE(fabric.staged_gpu_bytes() == staged_before, "the proxy staged GPU bytes between two heaps (",
                      fabric.describe_heap_path(), ")");
        const auto in = heap_read(w, inbox, direct_bytes), back = heap_read(w, fetched, direct_bytes);
        for (std::size_t i = 0; i < direct_bytes; ++i) {
            REQUIRE(in[i] == byte_of(other, i, 300));
            REQUIRE(back[i] == byte_of(other, i, 300));
        }
        w.barrier();
        w.free(fetched);
        w.free(inbox);
        w.free(src);
    }, 1024, heap);
}

}  // namespace gpu_proxy_test

using namespace gpu_proxy_test;

TEST_CASE("GPU kernels through the proxy: put/get/p/g and _nbi, inline, staged and zero-copy, byte for byte") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_rma(provider, delivery, heap_kind::host);
    });
}

// 512 threads of fetching atomics (and a compare_swap retry loop) against a
// 64-slot ring too: a full ring must never wait on a producer reading its reply.
TEST_CASE("GPU kernels through the proxy: every atomic, fetched values each seen once, 64- and 1024-slot rings") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_atomics(provider, delivery, 64, heap_kind::host);
        check_atomics(provider, delivery, 1024, heap_kind::host);
    });
}

TEST_CASE("GPU kernels through the proxy: put_signal ping-pong - every byte visible once its signal is") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_put_signal(provider, delivery, heap_kind::host);
    });
}

TEST_CASE("GPU kernels through the proxy: fence orders puts, barrier_all completes them") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_ordering(provider, delivery, heap_kind::host);
    });
}

TEST_CASE("GPU kernels through the proxy: 98304 puts from 128 warps wrap a 64-slot and a 1024-slot ring") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_flood(provider, delivery, 64, heap_kind::host);
        check_flood(provider, delivery, 1024, heap_kind::host);
    });
}

TEST_CASE("GPU kernels through the proxy: heap to heap, no staging copy") {
    for_each_setup([](const std::string& provider, const std::string& delivery) {
        check_direct(provider, delivery, heap_kind::host);
    });
}

// --- GPU heaps registered with FI_HMEM (two processes: pgasrun -n 2 ... -tc='*FI_HMEM*') -----

TEST_CASE("FI_HMEM: GPU heaps, the proxy writes and reads the peer's GPU heap directly (no staging copy)") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_direct(provider, delivery, heap_kind::gpu);
    });
}

TEST_CASE("FI_HMEM: GPU heaps, put/get/p/g and _nbi, byte for byte") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_rma(provider, delivery, heap_kind::gpu);
    });
}

TEST_CASE("FI_HMEM: GPU heaps, every atomic, 64- and 1024-slot rings") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_atomics(provider, delivery, 64, heap_kind::gpu);
        check_atomics(provider, delivery, 1024, heap_kind::gpu);
    });
}

TEST_CASE("FI_HMEM: GPU heaps, put_signal ping-pong - every byte visible once its signal is") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_put_signal(provider, delivery, heap_kind::gpu);
    });
}

TEST_CASE("FI_HMEM: GPU heaps, fence orders puts, barrier_all completes them") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_ordering(provider, delivery, heap_kind::gpu);
    });
}

TEST_CASE("FI_HMEM: GPU heaps, 98304 puts from 128 warps through a 64-slot ring") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_flood(provider, delivery, 64, heap_kind::gpu);
    });
}

// --- registered windows of cudaMalloc'd memory ---------------------------------------------------------------

constexpr std::size_t window_elements = 4096;

struct window_args {
    pgas::window<std::uint64_t> win;          // every PE's cudaMalloc'd buffer
    pgas::symmetric_ptr<std::uint64_t> sig;   // put_signal's flag, in the heap
    std::uint64_t* source;                    // device memory: what this PE puts
    std::uint64_t* fetched;                   // device memory: get destination
    int me, other;
};

// One block: warp 0 puts 1000 elements at element 100 (chunked through the proxy), thread 32 p's element 3,
// warp 2 put_signals 6 elements at element 2000 with the flag in the heap; every thread adds 1 to element 4095
// of PE 0's buffer. Then, once the peer's signal arrived, warp 0 gets the peer's elements 100.. back.
PGAS_KERNEL void window_kernel(__grid_constant__ const ctx_t ctx, const window_args a) {
    const int warp = int(threadIdx.x) / 32;
    if (warp == 0) pgas::put_nbi<pgas::warp>(ctx, a.win + 100, a.source, 1000, a.other);
    if (threadIdx.x == 32) pgas::p(ctx, a.win + 3, std::uint64_t(0xabc0 + a.me), a.other);
    if (warp == 2)
        pgas::put_signal<pgas::warp>(ctx, a.win + 2000, a.source + 1000, 6, a.sig, 1, pgas::signal_op::add, a.other);
    pgas::atomic_add(ctx, a.win + (window_elements - 1), std::uint64_t{1}, 0);
    pgas::quiet<pgas::block>(ctx);
    if (threadIdx.x == 0) pgas::signal_wait_until(ctx, a.sig, pgas::cmp::ge, std::uint64_t{1});
    __syncthreads();
    if (warp == 0) pgas::get<pgas::warp>(ctx, a.fetched, a.win + 100, 1000, a.other);
}

void check_windows(const std::string& provider, const std::string& delivery, heap_kind heap) {
    run_gpu(provider, delivery, [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t stream) {
        const int me = w.my_pe(), other = 1 - me;
        device_buffer<std::uint64_t> mine(window_elements), source(1006), fetched(1000);
        std::vector<std::uint64_t> values(1006);
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = mix(std::uint64_t(me), i, 77);
        source.write(values);
        auto win = w.register_window(mine.data, window_elements);
        CHECK(fabric.live_windows() == 1);
        auto sig = w.alloc<std::uint64_t>(1);
        heap_write(w, sig, std::vector<std::uint64_t>{0});
        w.barrier();
        window_args a{win, sig, source.data, fetched.data, me, other};
        window_kernel<<<1, 128, 0, stream>>>(fabric.context(), a);
        finish(w, stream);
        const auto got = mine.read();
        CHECK(got[3] == 0xabc0 + std::uint64_t(other));
        for (std::size_t i = 0; i < 1000; ++i) REQUIRE(got[100 + i] == mix(std::uint64_t(other), i, 77));
        for (std::size_t i = 0; i < 6; ++i) REQUIRE(got[2000 + i] == mix(std::uint64_t(other), 1000 + i, 77));
        CHECK(got[99] == 0);
        CHECK(got[1100] == 0);
        if (me == 0) CHECK(got[window_elements - 1] == 2 * 128);
        const auto back = fetched.read();
        for (std::size_t i = 0; i < 1000; ++i) REQUIRE(back[i] == mix(std::uint64_t(me), i, 77));
        w.barrier();
        w.release_window(win);
        CHECK(fabric.live_windows() == 0);
        w.free(sig);
    }, 1024, heap);
}

TEST_CASE("FI_HMEM windows: cudaMalloc'd buffers registered with FI_HMEM - put/p/put_signal/get/atomics from kernels") {
    for_each_hmem_setup([](const std::string& provider, const std::string& delivery) {
        check_windows(provider, delivery, heap_kind::gpu);
    });
}

// A provider opened without FI_HMEM (kernels over a host heap: the staged path) cannot register GPU memory: the
// window is refused on every PE, naming the call, the PE and FI_HMEM, and nothing is registered.
TEST_CASE("libfabric windows: GPU memory on an endpoint without FI_HMEM is refused naming register_window and FI_HMEM") {
    for (const auto& provider : test::providers()) {
        run_gpu(provider, "", [&](pgas::world& w, pgas::libfabric_domain& fabric, cudaStream_t) {
            device_buffer<std::uint64_t> mine(64);
            const std::string text =
                test::error_of([&] { (void)w.register_window(mine.data, 64); }, pgas::errc::transport_unavailable);
            const std::string own = "pgas: register_window on PE " + std::to_string(w.my_pe()) +
                                    ": the buffer (512 bytes) is GPU memory, and libfabric provider " +
                                    fabric.provider() + " was opened without FI_HMEM";
            const std::string others = "could not register its buffer with libfabric provider";
            CHECK_MESSAGE((text.rfind(own, 0) == 0 || test::contains(text, others)), text);
            if (text.rfind(own, 0) == 0)
                CHECK_MESSAGE(test::contains(text, "a window of GPU memory over the libfabric proxy needs FI_HMEM"),
                              text);
            CHECK(w.live_windows() == 0);
            CHECK(fabric.live_windows() == 0);
        });
    }
}

// doctest's main; exit status 77 (CTest: skipped) when the FI_HMEM cases
// found no provider with FI_HMEM and nothing failed.
int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int rc = context.run();
    // Both processes ran the same cases, so both finalize here together (a failed case exits unfinalized,
    // which pgasrun reports beside the case's own failure).
    if (rc == 0) delete gpu_proxy_test::process_world().world;
    if (context.shouldExit() || rc != 0) return rc;
    if (!skip_reason().empty()) {
        std::printf("SKIPPED: %s\n", skip_reason().c_str());
        return 77;
    }
    return 0;
}
