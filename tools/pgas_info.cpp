// pgas-info: what this pgas installation was built with and what it sees here (version, transports, environment,
// GPUs and their peer access, RDMA devices, libfabric providers), and with --check N whether a world of N PEs starts.
#include "environment.hpp"

#include <pgas/pgas.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#if PGAS_INFO_HAVE_LIBFABRIC
#include <rdma/fabric.h>
#endif
#if PGAS_INFO_HAVE_RDMA_CORE
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#endif

#define PGAS_INFO_STRING2(x) #x
#define PGAS_INFO_STRING(x) PGAS_INFO_STRING2(x)

namespace {

constexpr const char* usage =
    "usage: pgas-info [--check N] [--env-markdown] [--help]\n"
    "  (no option)     version, transports of this build, PGAS_* variables, GPUs and peer access,\n"
    "                  RDMA devices, libfabric providers\n"
    "  --check N       also start a world of N PEs here (host transport, and on the GPUs when there are any);\n"
    "                  exit status 0 when every world that applies started\n"
    "  --env-markdown  print the environment-variable table (docs/environment.md's body) and exit\n";

void section(const char* name) { std::printf("\n%s\n", name); }

void print_build() {
    std::printf("pgas %s (ABI %s)\n", PGAS_INFO_VERSION, PGAS_INFO_STRING(PGAS_ABI_TAG));
    std::printf("built with CUDA runtime headers %d.%d", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) std::printf(", runtime %d.%d", runtime / 1000, runtime % 1000 / 10);
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
        std::printf(", driver supports %d.%d", driver / 1000, driver % 1000 / 10);
    else
        std::printf(", no CUDA driver");
    std::printf("\n");

    section("transports in this build");
    std::printf("  nvlink     yes (needs GPUs at run time)\n");
    std::printf("  host       yes\n");
    std::printf("  route      yes (composes the others)\n");
    std::printf("  libfabric  %s\n", PGAS_INFO_HAVE_LIBFABRIC ? "yes (pgas::libfabric)" : "no (libfabric not found when built)");
    std::printf("  ibgda      %s\n", PGAS_INFO_HAVE_RDMA_CORE ? "yes (pgas::ibgda)" : "no (rdma-core not found when built)");
}

// One PGAS_* variable: its effective value and where it came from; malformed values say so, as world::init would.
void print_variable(const pgas_tools::env_var& v) {
    const std::string name(v.name);
    const auto set = pgas::detail::env(name.c_str());
    std::string value = set ? *set : std::string(v.default_value.empty() ? "(unset)" : v.default_value);
    std::string note;
    try {
        if (set && name == "PGAS_HEAP_SIZE") note = " = " + std::to_string(pgas::detail::parse_size(name.c_str(), *set)) + " bytes";
        if (set && (name == "PGAS_TIMEOUT_MS" || name == "PGAS_BOOTSTRAP_TIMEOUT_MS"))
            pgas::detail::env_milliseconds(name.c_str(), 0);
    } catch (const std::exception& e) {
        note = "  INVALID: " + std::string(e.what());
    }
    const char* source = set ? "(environment)" : v.default_value.empty() ? "" : "(default)";
    std::printf("  %-26s %-40s %s%s\n", name.c_str(), value.c_str(), source, note.c_str());
}

void print_environment() {
    section("environment (PGAS_*; docs/environment.md has every variable)");
    for (const auto& v : pgas_tools::env_vars())
        if (v.group != pgas_tools::env_group::tools && v.name.starts_with("PGAS_")) print_variable(v);
    try {
        const pgas::launch_info launch = pgas::read_launch_env();
        std::printf("  launch: %s, rank %d of %d", launch.source.c_str(), launch.rank, launch.size);
        if (launch.local_size > 0) std::printf(", local %d of %d", launch.local_rank, launch.local_size);
        if (!launch.root_host.empty()) std::printf(", rendezvous %s:%d", launch.root_host.c_str(), launch.root_port);
        std::printf(", bootstrap timeout %lld ms\n", static_cast<long long>(launch.bootstrap_timeout.count()));
    } catch (const std::exception& e) {
        std::printf("  launch: INVALID: %s\n", e.what());
    }
}

int print_gpus() {
    section("GPUs");
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
        std::printf("  no GPU (%s)\n", e == cudaSuccess ? "cudaGetDeviceCount: 0" : cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
        std::printf("  GPU %d: %s, sm_%d%d, %.1f GiB, PCI %04x:%02x:%02x\n", d, p.name, p.major, p.minor,
                    double(p.totalGlobalMem) / double(1ull << 30), p.pciDomainID, p.pciBusID, p.pciDeviceID);
    }
    if (count > 1) {
        std::printf("  peer access (P: load/store, A: also native atomics, -: none; the nvlink transport needs A):\n      ");
        for (int j = 0; j < count; ++j) std::printf(" %3d", j);
        std::printf("\n");
        for (int i = 0; i < count; ++i) {
            std::printf("  %3d ", i);
            for (int j = 0; j < count; ++j) {
                int access = 0, atomics = 0;
                if (i != j) {
                    cudaDeviceCanAccessPeer(&access, i, j);
                    cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, i, j);
                }
                std::printf(" %3s", i == j ? "x" : !access ? "-" : atomics ? "A" : "P");
            }
            std::printf("\n");
        }
    }
    return count;
}

void print_rdma() {
    section("RDMA devices (ibgda)");
#if PGAS_INFO_HAVE_RDMA_CORE
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list || n == 0) std::printf("  none found\n");
    for (int i = 0; list && i < n; ++i) {
        std::printf("  %s: %s", ibv_get_device_name(list[i]), mlx5dv_is_supported(list[i]) ? "mlx5" : "not mlx5 (ibgda needs mlx5)");
        if (ibv_context* c = ibv_open_device(list[i])) {
            ibv_port_attr port{};
            if (ibv_query_port(c, 1, &port) == 0)
                std::printf(", port 1 %s, %s", port.state == IBV_PORT_ACTIVE ? "active" : "not active",
                            port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
            ibv_close_device(c);
        }
        std::printf("\n");
    }
    if (list) ibv_free_device_list(list);
#else
    std::printf("  not built with rdma-core\n");
#endif
}

void print_libfabric() {
    section("libfabric providers (RDM endpoints with RMA and atomics)");
#if PGAS_INFO_HAVE_LIBFABRIC
    std::printf("  libfabric %u.%u\n", FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    const auto providers = [](std::uint64_t caps) {
        std::set<std::string> names;
        fi_info* hints = fi_allocinfo();
        hints->caps = caps;
        hints->ep_attr->type = FI_EP_RDM;
        fi_info* found = nullptr;
        if (fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &found) == 0)
            for (fi_info* i = found; i; i = i->next) names.insert(i->fabric_attr->prov_name);
        if (found) fi_freeinfo(found);
        fi_freeinfo(hints);
        return names;
    };
    const auto all = providers(FI_RMA | FI_ATOMIC);
    const auto hmem = providers(FI_RMA | FI_ATOMIC | FI_HMEM);
    if (all.empty()) std::printf("  none found\n");
    for (const auto& name : all)
        std::printf("  %-16s FI_HMEM %s\n", name.c_str(),
                    hmem.count(name) ? "yes: a GPU heap is registered with it, the proxy reaches GPU memory directly"
                                     : "no: staged (kernels over a host heap, GPU buffers copied through pinned "
                                       "memory); a GPU heap is refused");
#else
    std::printf("  not built with libfabric\n");
#endif
}

// Starts a world of n PEs the ways this machine allows; true when every one that applies started.
bool check(int n, int gpus) {
    section(("check: a world of " + std::to_string(n) + " PEs").c_str());
    bool ok = true;
    try {
        auto w = pgas::world::init_local(n);
        auto p = w.alloc<int>(1);
        w.launch_host([&](const pgas::device::context<pgas::host>& ctx) {
            pgas::p(ctx, p, ctx.my_pe(), (ctx.my_pe() + 1) % ctx.n_pes());
            pgas::barrier_all(ctx);
        });
        w.free(p);
        std::printf("  host transport, %d threads: OK\n", n);
    } catch (const std::exception& e) {
        std::printf("  host transport, %d threads: FAILED: %s\n", n, e.what());
        ok = false;
    }
    if (gpus == 0) {
        std::printf("  nvlink: no GPU here, not checked\n");
        return ok;
    }
    std::vector<int> devices;
    for (int i = 0; i < n; ++i) devices.push_back(i % gpus);
    const std::string shared = n > gpus ? " (PEs share GPUs: their kernels must run concurrently)" : "";
    try {
        auto w = pgas::world::init_local(devices);
        auto p = w.alloc<int>(1);
        w.free(p);
        std::printf("  nvlink, one process on %d GPU%s%s: OK (heap mapped on every GPU)\n", std::min(n, gpus),
                    std::min(n, gpus) > 1 ? "s" : "", shared.c_str());
    } catch (const std::exception& e) {
        std::printf("  nvlink, one process on %d GPUs%s: FAILED: %s\n", std::min(n, gpus), shared.c_str(), e.what());
        ok = false;
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int check_pes = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage, stdout);
            return 0;
        } else if (arg == "--env-markdown") {
            pgas_tools::write_env_markdown(std::cout);
            return 0;
        } else if (arg == "--check" && i + 1 < argc) {
            check_pes = std::atoi(argv[++i]);
            if (check_pes < 1) {
                std::fprintf(stderr, "pgas-info: --check wants a PE count >= 1, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            std::fprintf(stderr, "pgas-info: unknown argument '%s'\n%s", arg.c_str(), usage);
            return 2;
        }
    }
    print_build();
    print_environment();
    const int gpus = print_gpus();
    print_rdma();
    print_libfabric();
    if (check_pes > 0) {
        const bool ok = check(check_pes, gpus);
        std::printf("\n%s\n", ok ? "check: OK" : "check: FAILED");
        return ok ? 0 : 1;
    }
    return 0;
}
