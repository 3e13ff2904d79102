// A 1-D heat-equation stencil split over PEs: each step every PE sends its edge cells to its neighbours' ghost
// cells with put_signal, waits for its own ghosts, and updates its cells; checked against a serial computation.
//
//   halo_exchange [--host] [n_pes] [cells_per_pe] [steps]
//       with GPUs: n_pes PEs (default: one per GPU), PE i on GPU i % n_gpus (NVLink transport), so
//                  `halo_exchange 2` on a one-GPU machine runs two PEs sharing it;
//       without (or --host): n_pes PEs as threads on the host transport (default 4).
//
// The ring of cells is periodic: cell g's neighbours are g - 1 and g + 1 modulo all cells. PE p owns cells
// [p * n, (p + 1) * n) and keeps a left and a right ghost cell holding its neighbours' edge values.
//
// Why two sets of ghosts: a neighbour that has what it needs for step s + 1 sends its step-(s + 1) edge at once,
// possibly before this PE has read its step-s ghost. Ghosts of even steps and of odd steps live apart, so that
// send lands in the other set. It cannot run two steps ahead: step s + 2 needs this PE's step-(s + 1) edge,
// which this PE sends only after it finished step s (and so read the step-s ghosts).
#include <pgas/pgas.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Everything one PE's stencil touches. Symmetric pointers name the same object on every PE.
struct halo_buffers {
    pgas::symmetric_ptr<double> cells;           // 2 * n: the cells at even steps, then at odd steps
    pgas::symmetric_ptr<double> ghost;           // [step parity][side]: side 0 left ghost, side 1 right ghost
    pgas::symmetric_ptr<std::uint64_t> arrived;  // [step parity][side]: s + 1 once that ghost holds step s's value
    int n;                                       // cells per PE
    int steps;
};

constexpr double diffusion = 0.25;  // stable for the explicit scheme (below 0.5)

// Initial temperature of global cell g: varied, so that a wrong or stale ghost shows in the result.
PGAS_HD inline double initial(long g) { return double((g * 37) % 101) / 101.0; }

// The whole computation of one PE, run by every thread of group G: one thread block on a GPU, the PE's single
// thread on the host transport (where pgas::block is that one thread). It only talks to the context it is given.
template <class G, class Transport>
PGAS_HD void heat_steps(const pgas::device::context<Transport>& ctx, const halo_buffers& b) {
    const int me = ctx.my_pe(), n_pes = ctx.n_pes(), n = b.n;
    const int left = (me + n_pes - 1) % n_pes, right = (me + 1) % n_pes;
    for (int step = 0; step < b.steps; ++step) {
        const int parity = step % 2;
        const double* now = ctx.local(b.cells) + parity * n;
        double* next = ctx.local(b.cells) + (1 - parity) * n;
        const std::uint64_t tag = std::uint64_t(step) + 1;
        // My first cell is my left neighbour's right ghost, my last cell my right neighbour's left ghost. The
        // signal is set only after the value has landed: whoever sees `tag` reads the right value.
        pgas::put_signal<G>(ctx, b.ghost + (2 * parity + 1), now, 1, b.arrived + (2 * parity + 1), tag,
                            pgas::signal_op::set, left);
        pgas::put_signal<G>(ctx, b.ghost + (2 * parity + 0), now + (n - 1), 1, b.arrived + (2 * parity + 0), tag,
                            pgas::signal_op::set, right);
        // Wait for my own two ghosts of this step (any number of threads may wait; each returns on its own).
        pgas::signal_wait_until(ctx, b.arrived + (2 * parity + 0), pgas::cmp::ge, tag);
        pgas::signal_wait_until(ctx, b.arrived + (2 * parity + 1), pgas::cmp::ge, tag);
        const double* ghost = ctx.local(b.ghost) + 2 * parity;
        for (int i = int(G::rank()); i < n; i += int(G::size())) {
            const double l = i == 0 ? ghost[0] : now[i - 1];
            const double r = i == n - 1 ? ghost[1] : now[i + 1];
            next[i] = now[i] + diffusion * (l - 2.0 * now[i] + r);
        }
        G::sync();  // `next` is complete before the next step sends its edges from it
    }
}

// The same steps on one array, for the check.
static std::vector<double> serial(int total, int steps) {
    std::vector<double> now(total), next(total);
    for (int g = 0; g < total; ++g) now[g] = initial(g);
    for (int step = 0; step < steps; ++step) {
        for (int g = 0; g < total; ++g) {
            const double l = now[(g + total - 1) % total], r = now[(g + 1) % total];
            next[g] = now[g] + diffusion * (l - 2.0 * now[g] + r);
        }
        now.swap(next);
    }
    return now;
}

// Compares PE pe's cells with the serial result (the GPU may contract a * b + c into one FMA: not bit-identical).
static int count_wrong(const std::vector<double>& got, const std::vector<double>& want, int pe, int n) {
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        const double w = want[pe * n + i];
        if (std::fabs(got[i] - w) > 1e-12) {
            if (wrong++ < 3) std::fprintf(stderr, "PE %d cell %d: got %.17g, expected %.17g\n", pe, i, got[i], w);
        }
    }
    return wrong;
}

static halo_buffers make_buffers(pgas::world& world, int n, int steps) {
    halo_buffers b;
    b.cells = world.alloc<double>(2 * n);  // collective: the same symmetric_ptr on every PE, zero-filled
    b.ghost = world.alloc<double>(4);
    b.arrived = world.alloc<std::uint64_t>(4);
    b.n = n;
    b.steps = steps;
    return b;
}

static int report(const std::vector<std::vector<double>>& results, int n, int steps) {
    const int n_pes = int(results.size());
    const auto want = serial(n_pes * n, steps);
    int wrong = 0;
    double heat = 0;
    for (int pe = 0; pe < n_pes; ++pe) {
        wrong += count_wrong(results[pe], want, pe, n);
        for (double v : results[pe]) heat += v;
    }
    std::printf("%d PEs x %d cells, %d steps: total heat %.6f, %s\n", n_pes, n, steps, heat,
                wrong == 0 ? "matches the serial computation" : "WRONG");
    return wrong == 0 ? 0 : 1;
}

// --- GPUs: one thread block per PE ------------------------------------------------------------------------------

__global__ void heat_kernel(const __grid_constant__ pgas::device::context<pgas::nvlink> ctx, halo_buffers b) {
    heat_steps<pgas::block>(ctx, b);
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static int on_gpus(int n_gpus, int n_pes, int n, int steps) {
    std::vector<int> devices;
    for (int pe = 0; pe < n_pes; ++pe) devices.push_back(pe % n_gpus);
    auto world = pgas::world::init_local(devices);
    std::printf("%d GPU(s): %d PEs on the NVLink transport\n", n_gpus, world.n_pes());
    const halo_buffers b = make_buffers(world, n, steps);
    std::vector<cudaStream_t> streams(n_pes);
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        std::vector<double> start(n);
        for (int i = 0; i < n; ++i) start[i] = initial(long(pe) * n + i);
        check(cudaMemcpy(world.device_address(b.cells, pe), start.data(), n * sizeof(double), cudaMemcpyHostToDevice),
              "copy in");
        // A non-blocking stream per PE: PEs sharing a GPU must run side by side (each waits for the other).
        check(cudaStreamCreateWithFlags(&streams[pe], cudaStreamNonBlocking), "stream");
    }
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        heat_kernel<<<1, 256, 0, streams[pe]>>>(world.context<pgas::nvlink>(pe), b);
        check(cudaGetLastError(), "launch");
    }
    std::vector<std::vector<double>> results(n_pes, std::vector<double>(n));
    for (int pe = 0; pe < n_pes; ++pe) {
        check(cudaSetDevice(world.device_of(pe)), "cudaSetDevice");
        check(cudaStreamSynchronize(streams[pe]), "heat kernel");
        check(cudaMemcpy(results[pe].data(), world.device_address(b.cells, pe) + (steps % 2) * n,
                         n * sizeof(double), cudaMemcpyDeviceToHost),
              "copy out");
        check(cudaStreamDestroy(streams[pe]), "stream");
    }
    return report(results, n, steps);
}

// --- no GPU: PEs as threads on the host transport, the same heat_steps compiled as host code ---------------------

static int on_host(int n_pes, int n, int steps) {
    auto world = pgas::world::init_local(n_pes);
    std::printf("host transport: %d PEs as threads\n", world.n_pes());
    const halo_buffers b = make_buffers(world, n, steps);
    for (int pe = 0; pe < n_pes; ++pe)
        for (int i = 0; i < n; ++i) world.local(b.cells, pe)[i] = initial(long(pe) * n + i);
    world.launch_host([&](const pgas::device::context<pgas::host>& ctx) { heat_steps<pgas::block>(ctx, b); });
    std::vector<std::vector<double>> results;
    for (int pe = 0; pe < n_pes; ++pe) {
        const double* cells = world.local(b.cells, pe) + (steps % 2) * n;
        results.emplace_back(cells, cells + n);
    }
    return report(results, n, steps);
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
    const int n = numbers.size() > 1 ? numbers[1] : 1000;
    const int steps = numbers.size() > 2 ? numbers[2] : 200;
    if (n_pes < 1 || n < 1 || steps < 0) {
        std::fprintf(stderr, "usage: halo_exchange [--host] [n_pes] [cells_per_pe] [steps]\n");
        return 2;
    }
    try {
        return n_gpus > 0 ? on_gpus(n_gpus, n_pes, n, steps) : on_host(n_pes, n, steps);
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
