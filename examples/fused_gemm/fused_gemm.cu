// Compute and communication fused in one kernel: C = A * B with K split over the PEs (each PE multiplies its slice of
// A's columns and B's rows, as a row-parallel linear layer does), and C's tiles reduced onto their owner PEs
// (a reduce-scatter). Each finished partial tile is pushed to its owner with put_signal while the rest is still
// being computed; each owner waits on a per-tile signal for every PE's part, adds them up, and the result is
// checked against a serial product.
//
//   fused_gemm [--host] [n_pes] [size]
//       C is size x size (a multiple of 32, default 128), K = 64 per PE.
//       with GPUs: n_pes PEs (default: one per GPU), PE i on GPU i % n_gpus (NVLink transport), each running
//                  4 thread blocks; `fused_gemm 2` on a one-GPU machine runs two PEs sharing it;
//       without (or --host): n_pes PEs as threads on the host transport (default 4), one worker each.
//
// The partial tiles land in a buffer the program allocated itself (cudaMalloc on GPUs, plain memory on the host
// transport), as a framework's workspace would be: registered once as a window (world::register_window), every PE
// puts straight into it, and nothing is copied into or out of the symmetric heap; only the counters live there.
//
// Tile t of C (row-major over the tile grid) is owned by PE t % n_pes. PE p computes tiles starting with those of
// PE p + 1, so the pushes to the others leave first and its own partial tiles come last, when the other PEs'
// parts of them have had the longest time to arrive.
#include <pgas/pgas.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int tile = 32;              // C is computed and sent in tile x tile blocks
constexpr int tile_elems = tile * tile;
constexpr int k_per_pe = 64;          // columns of A / rows of B each PE holds

// Small integers: every product and sum is exact in float, so the check can ask for equality.
PGAS_HD inline float a_value(int i, int k) { return float((i * 3 + k * 5) % 7 - 3); }
PGAS_HD inline float b_value(int k, int j) { return float((k * 2 + j * 7) % 5 - 2); }

// One PE's operands and the symmetric buffers of the reduce-scatter.
struct gemm_args {
    pgas::symmetric_ptr<float> a;               // size x k_per_pe, row-major: this PE's columns of A
    pgas::symmetric_ptr<float> b;               // k_per_pe x size, row-major: this PE's rows of B
    pgas::symmetric_ptr<float> outbox;          // n_tiles partial tiles, one slot each (never reused: no wait)
    pgas::window<float> inbox;                  // [owned tile][from PE]: the partial tiles pushed to this PE, in
                                                // each PE's own registered buffer
    pgas::symmetric_ptr<std::uint64_t> ready;   // [owned tile]: how many PEs' parts have landed
    pgas::symmetric_ptr<float> c;               // [owned tile]: this PE's tiles of C
    int size;                                   // C is size x size
};

PGAS_HD inline int tiles_per_side(const gemm_args& g) { return g.size / tile; }
PGAS_HD inline int n_tiles(const gemm_args& g) { return tiles_per_side(g) * tiles_per_side(g); }
// Tiles PE pe owns: t = pe, pe + n_pes, ...
PGAS_HD inline int owned_tiles(int n_tiles, int pe, int n_pes) { return (n_tiles - pe + n_pes - 1) / n_pes; }

// One PE's part, run by every thread of group G in each of n_workers workers (a thread block each on a GPU; one
// worker of one thread on the host transport, where pgas::block is that thread). Only talks to its context.
template <class G, class Transport>
PGAS_HD void gemm_reduce_scatter(const pgas::device::context<Transport>& ctx, const gemm_args& g, int worker,
                                 int n_workers) {
    const int me = ctx.my_pe(), n_pes = ctx.n_pes(), tiles = n_tiles(g), side = tiles_per_side(g);
    const float* a = ctx.local(g.a);
    const float* b = ctx.local(g.b);
    // 1. My partial product of every tile, each pushed to its owner the moment it is done.
    for (int j = worker; j < tiles; j += n_workers) {
        const int t = (j + me + 1) % tiles, owner = t % n_pes, slot = t / n_pes;
        const int row0 = t / side * tile, col0 = t % side * tile;
        float* out = ctx.local(g.outbox) + t * tile_elems;
        for (int e = int(G::rank()); e < tile_elems; e += int(G::size())) {
            const int r = row0 + e / tile, c = col0 + e % tile;
            float sum = 0;
            for (int k = 0; k < k_per_pe; ++k) sum += a[r * k_per_pe + k] * b[k * g.size + c];
            out[e] = sum;
        }
        G::sync();  // the whole tile is written before the group's threads copy it out
        // Into the owner's inbox slot for (this tile, me); then +1 on the tile's counter there, visible only after
        // the data. _nbi: this worker goes on computing while the tile travels (its outbox slot is never reused).
        pgas::put_signal_nbi<G>(ctx, g.inbox + (slot * n_pes + me) * tile_elems, out, tile_elems, g.ready + slot, 1,
                                pgas::signal_op::add, owner);
    }
    // 2. My own tiles: once all n_pes parts are in, add them up (in PE order, the same on every run).
    for (int slot = worker; slot < owned_tiles(tiles, me, n_pes); slot += n_workers) {
        pgas::signal_wait_until(ctx, g.ready + slot, pgas::cmp::eq, std::uint64_t(n_pes));
        const float* parts = pgas::window_local(ctx, g.inbox) + slot * n_pes * tile_elems;
        float* c = ctx.local(g.c) + slot * tile_elems;
        for (int e = int(G::rank()); e < tile_elems; e += int(G::size())) {
            float sum = 0;
            for (int p = 0; p < n_pes; ++p) sum += parts[p * tile_elems + e];
            c[e] = sum;
        }
    }
    pgas::quiet<G>(ctx);  // every push complete: the outbox could be reused from here on
}

// --- set-up and check, the same for both transports ---------------------------------------------------------------

// Elements of each PE's inbox buffer.
static int inbox_elems(int size, int n_pes) {
    gemm_args g;
    g.size = size;
    return owned_tiles(n_tiles(g), 0, n_pes) * n_pes * tile_elems;
}

// `inboxes`: one buffer of inbox_elems per local PE, allocated by the caller; registered here as the inbox window.
static gemm_args make_args(pgas::world& world, int size, const std::vector<float*>& inboxes) {
    gemm_args g;
    g.size = size;
    const int n_pes = world.n_pes(), owned_max = owned_tiles(n_tiles(g), 0, n_pes);
    g.a = world.alloc<float>(size * k_per_pe);  // collective: the same symmetric_ptr on every PE, zero-filled
    g.b = world.alloc<float>(k_per_pe * size);
    g.outbox = world.alloc<float>(n_tiles(g) * tile_elems);
    g.inbox = world.register_window(inboxes, inbox_elems(size, n_pes));  // collective: the same handle on every PE
    g.ready = world.alloc<std::uint64_t>(owned_max);
    g.c = world.alloc<float>(owned_max * tile_elems);
    return g;
}

// PE pe's slices of A and B.
static void operands(int pe, int size, std::vector<float>& a, std::vector<float>& b) {
    a.resize(std::size_t(size) * k_per_pe);
    b.resize(std::size_t(size) * k_per_pe);
    for (int i = 0; i < size; ++i)
        for (int k = 0; k < k_per_pe; ++k) a[i * k_per_pe + k] = a_value(i, pe * k_per_pe + k);
    for (int k = 0; k < k_per_pe; ++k)
        for (int j = 0; j < size; ++j) b[k * size + j] = b_value(pe * k_per_pe + k, j);
}

// Checks PE pe's owned tiles (in slot order) against the serial product.
static int count_wrong(const gemm_args& g, int pe, int n_pes, const float* c) {
    const int side = tiles_per_side(g), k_total = k_per_pe * n_pes;
    int wrong = 0;
    for (int slot = 0; slot < owned_tiles(n_tiles(g), pe, n_pes); ++slot) {
        const int t = slot * n_pes + pe;
        for (int e = 0; e < tile_elems; ++e) {
            const int r = t / side * tile + e / tile, col = t % side * tile + e % tile;
            float want = 0;
            for (int k = 0; k < k_total; ++k) want += a_value(r, k) * b_value(k, col);
            const float got = c[slot * tile_elems + e];
            if (got != want && wrong++ < 3)
                std::fprintf(stderr, "PE %d: C[%d][%d] = %g, expected %g\n", pe, r, col, got, want);
        }
    }
    return wrong;
}

static int report(int wrong, int n_pes, int size) {
    std::printf("C = A * B, %d x %d, K = %d over %d PEs, tiles of %d x %d reduced onto their owners: %s\n", size, size,
                k_per_pe * n_pes, n_pes, tile, tile, wrong == 0 ? "matches the serial product" : "WRONG");
    return wrong == 0 ? 0 : 1;
}

// --- GPUs: workers are the thread blocks of one kernel per PE ------------------------------------------------------

__global__ void gemm_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx, gemm_args g) {
    gemm_reduce_scatter<pgas::block>(ctx, g, int(blockIdx.x), int(gridDim.x));
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static int on_gpus(int n_gpus, int n_pes, int size) {
    std::vector<int> devices;
    for (int pe = 0; pe < n_pes; ++pe) devices.push_back(pe % n_gpus);
    auto world = pgas::world::init_local(devices);
    std::printf("%d GPU(s): %d PEs on the NVLink transport\n", n_gpus, world.n_pes());
    std::vector<float*> inboxes(n_pes);  // the program's own memory, not the symmetric heap
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaMalloc(&inboxes[pe], std::size_t(inbox_elems(size, n_pes)) * sizeof(float)), "cudaMalloc inbox");
    }
    const gemm_args g = make_args(world, size, inboxes);
    std::vector<cudaStream_t> streams(n_pes);
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        std::vector<float> a, b;
        operands(pe, size, a, b);
        check(cudaMemcpy(world.device_address(g.a, pe), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice), "copy A");
        check(cudaMemcpy(world.device_address(g.b, pe), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice), "copy B");
        // A non-blocking stream per PE: PEs sharing a GPU must run side by side (each waits for the others).
        check(cudaStreamCreateWithFlags(&streams[pe], cudaStreamNonBlocking), "stream");
    }
    // Every worker of every PE must be resident at once (owners wait inside the kernel): a handful of blocks.
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        gemm_kernel<<<4, 256, 0, streams[pe]>>>(world.context<pgas::nvlink>(pe), g);
        check(cudaGetLastError(), "launch");
    }
    int wrong = 0;
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaStreamSynchronize(streams[pe]), "gemm kernel");
        std::vector<float> c(std::size_t(owned_tiles(n_tiles(g), 0, n_pes)) * tile_elems);
        check(cudaMemcpy(c.data(), world.device_address(g.c, pe), c.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy C");
        check(cudaStreamDestroy(streams[pe]), "stream");
        wrong += count_wrong(g, pe, n_pes, c.data());
    }
    world.release_window(g.inbox);  // collective; then the buffers are the program's to free
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaFree(inboxes[pe]), "cudaFree inbox");
    }
    return report(wrong, n_pes, size);
}

// --- no GPU: PEs as threads on the host transport, the same gemm_reduce_scatter compiled as host code -------------

static int on_host(int n_pes, int size) {
    auto world = pgas::world::init_local(n_pes);
    std::printf("host transport: %d PEs as threads\n", world.n_pes());
    std::vector<std::vector<float>> memory(n_pes, std::vector<float>(std::size_t(inbox_elems(size, n_pes))));
    std::vector<float*> inboxes;
    for (auto& m : memory) inboxes.push_back(m.data());
    const gemm_args g = make_args(world, size, inboxes);
    for (int pe = 0; pe < n_pes; ++pe) {
        std::vector<float> a, b;
        operands(pe, size, a, b);
        std::memcpy(world.local(g.a, pe), a.data(), a.size() * sizeof(float));
        std::memcpy(world.local(g.b, pe), b.data(), b.size() * sizeof(float));
    }
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) { gemm_reduce_scatter<pgas::block>(ctx, g, 0, 1); });
    int wrong = 0;
    for (int pe = 0; pe < n_pes; ++pe) wrong += count_wrong(g, pe, n_pes, world.local(g.c, pe));
    world.release_window(g.inbox);
    return report(wrong, n_pes, size);
}

int main(int argc, char** argv) {
    // PEs sharing a GPU wait for each other inside running kernels: load every kernel up front, since a lazily
    // loaded kernel's first launch waits for the GPU to go idle (set before the first CUDA call).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    bool host = false;
    std::vector<int> numbers;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--host") == 0)
            host = true;
        else
            numbers.push_back(std::atoi(argv[i]));
    }
    int n_gpus = 0;
    if (host || cudaGetDeviceCount(&n_gpus) != cudaSuccess) n_gpus = 0;
    const int n_pes = numbers.size() > 0 ? numbers[0] : (n_gpus > 0 ? n_gpus : 4);
    const int size = numbers.size() > 1 ? numbers[1] : 128;
    if (n_pes < 1 || size < tile || size % tile != 0) {
        std::fprintf(stderr, "usage: fused_gemm [--host] [n_pes] [size, a multiple of %d]\n", tile);
        return 2;
    }
    try {
        return n_gpus > 0 ? on_gpus(n_gpus, n_pes, size) : on_host(n_pes, size);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
