// The one table of every environment variable pgas reads: pgas-info prints it, docs/environment.md is generated
// from it (pgas-info --env-markdown), and tests/tools/environment_test.cpp checks it against the sources.
#pragma once

#include <ostream>
#include <string_view>

namespace pgas_tools {

// Who reads a variable, as sections of the table.
enum class env_group { library, launcher, tools };

struct env_var {
    std::string_view name;
    env_group group;
    std::string_view default_value;  // what applies when it is unset ("" : no default, the variable is optional)
    std::string_view range;          // accepted values
    std::string_view reader;         // the code that reads it
    std::string_view meaning;
};

// Adding a getenv (or detail::env, env_size, launch_env_reader::get, ...) in include/, tools/, bench/ or a
// `$PGAS_*` in scripts/ without a row here fails the "tools: environment table" test; so does a row nobody reads.
inline constexpr env_var env_vars[] = {
    // --- the library: world, heap, waits, transports -----------------------------------------------------------
    {"PGAS_HEAP_SIZE", env_group::library, "1G (GPU worlds), 64M (host transport)",
     "bytes, or a number with K/M/G/T (binary); > 0 and at most 1T (1T itself included)",
     "host/world.hpp (world::init*)", "symmetric heap per PE; world_options::heap_bytes overrides it"},
    {"PGAS_TIMEOUT_MS", env_group::library, "60000 (PGAS_DEFAULT_TIMEOUT_MS)", "integer >= 0; 0 = wait forever",
     "host/world.hpp (world::init*)", "how long every device-side wait spins before it traps with a diagnostic"},
    {"CUDA_DEVICE_MAX_CONNECTIONS", env_group::library, "8 (CUDA); init_local sets 32 when PEs share a GPU and it is unset",
     "integer in [1, 32] (CUDA)", "host/heap/gpu.hpp (world::init_local)",
     "hardware work queues per context: PEs sharing a GPU in one process need one each (troubleshooting.md)"},
    {"PGAS_CHANNELS", env_group::library, "1", "integer in [1, 32] (pgas::max_channels)",
     "host/env.hpp (world::init*, ibgda_domain, libfabric_domain)",
     "channels per peer (ibgda: RC QPs per peer, libfabric: proxy rings per PE; nvlink/host accept any and change "
     "nothing); world_options::channels and the domains' options override it"},
    {"PGAS_BOOTSTRAP_TIMEOUT_MS", env_group::library, "30000", "integer > 0", "host/bootstrap/launch_env.hpp",
     "bound on each bootstrap step (connect to the root, each bootstrap collective)"},
    {"PGAS_FI_PROVIDER", env_group::library, "the best that passes (transports-and-setup.md)",
     "a libfabric provider name as fi_info prints it", "host/libfabric/provider.hpp",
     "libfabric provider of pgas::libfabric; libfabric_options::provider overrides it"},
    {"PGAS_FI_IFACE", env_group::library, "any", "a libfabric domain name (e.g. eth0, mlx5_0)", "host/libfabric/provider.hpp",
     "libfabric domain (interface) to use; ignored by shm; libfabric_options::iface overrides it"},
    {"PGAS_FI_PUT_DELIVERY", env_group::library, "flush on shm when it can, else complete", "complete or flush",
     "host/libfabric/provider.hpp",
     "how quiet learns that puts landed: per-put completions, or one ordered flush read (needs RMA RAW/WAW order)"},
    {"PGAS_NODE_SIZE", env_group::library, "the PEs of each host", "1 .. world size",
     "host/route/context.hpp (route_node_pes)",
     "route's near range as virtual nodes of this many consecutive PEs, so one machine can stand for several"},
    {"PGAS_IB_HCA", env_group::library, "first mlx5 device", "an RDMA device name (ibv_devices)", "host/ibgda/verbs.hpp",
     "RDMA device of pgas::ibgda"},
    {"PGAS_IB_PORT", env_group::library, "1", "port number of that device", "host/ibgda/verbs.hpp", "RDMA port of pgas::ibgda"},
    {"PGAS_IB_GID_INDEX", env_group::library, "3 on RoCE, 0 on InfiniBand", "GID table index", "host/ibgda/verbs.hpp",
     "GID index of pgas::ibgda (RoCE v2 is commonly 3)"},

    // --- the launch environment: world::init() takes the first launcher whose variables are set -------------------
    {"PGAS_RANK", env_group::launcher, "", "0 .. PGAS_WORLD_SIZE-1", "host/bootstrap/launch_env.hpp; set by pgasrun",
     "this process's PE"},
    {"PGAS_WORLD_SIZE", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp; set by pgasrun", "number of PEs"},
    {"PGAS_LOCAL_RANK", env_group::launcher, "found by the bootstrap", "0 .. PGAS_LOCAL_SIZE-1; set with PGAS_LOCAL_SIZE",
     "host/bootstrap/launch_env.hpp; set by pgasrun", "index of this process among those of its node"},
    {"PGAS_LOCAL_SIZE", env_group::launcher, "found by the bootstrap", "1 .. PGAS_WORLD_SIZE", "host/bootstrap/launch_env.hpp; set by pgasrun",
     "processes on this node"},
    {"PGAS_ROOT", env_group::launcher, "from the launcher (launch-and-bootstrap.md)", "host:port or [ipv6]:port",
     "host/bootstrap/launch_env.hpp; set by pgasrun", "rendezvous store of rank 0; overrides every launcher's"},
    {"PGAS_TOKEN", env_group::launcher, "one node: derived from the job's identity; TCP (PGAS_* set by hand, torchrun/MPI/Slurm): required", "any string; a fresh one per launch", "host/bootstrap/launch_env.hpp; set by pgasrun (random)",
     "shared secret every connection to the rendezvous must present"},
    {"PGAS_STATUS_FD", env_group::launcher, "", "a descriptor number (a pipe)", "host/bootstrap/launch_env.hpp; set by pgasrun",
     "where a rank's world tells pgasrun that it joined and that it was finalized: a rank that exits 0 in between "
     "is reported as failed"},
    {"RANK", env_group::launcher, "", "0 .. WORLD_SIZE-1", "host/bootstrap/launch_env.hpp (torchrun)", "this process's PE"},
    {"WORLD_SIZE", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp (torchrun)", "number of PEs"},
    {"LOCAL_RANK", env_group::launcher, "found by the bootstrap", "0 .. LOCAL_WORLD_SIZE-1", "host/bootstrap/launch_env.hpp (torchrun)",
     "index among the processes of this node"},
    {"LOCAL_WORLD_SIZE", env_group::launcher, "found by the bootstrap", "1 .. WORLD_SIZE", "host/bootstrap/launch_env.hpp (torchrun)",
     "processes on this node"},
    {"MASTER_ADDR", env_group::launcher, "", "host name or address", "host/bootstrap/launch_env.hpp (torchrun; any launcher)",
     "rendezvous host of a job across nodes when PGAS_ROOT is unset"},
    {"MASTER_PORT", env_group::launcher, "", "1 .. 65534", "host/bootstrap/launch_env.hpp (torchrun; any launcher)",
     "across nodes pgas's store listens on MASTER_PORT+1 (torchrun's own store holds MASTER_PORT); on one node part of the job's identity"},
    {"TORCHELASTIC_RUN_ID", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (torchrun)", "job identity: names the one-node socket and its token"},
    {"TORCHELASTIC_RESTART_COUNT", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (torchrun)",
     "job identity: names the one-node socket and its token (a restarted job gets new ones)"},
    {"OMPI_COMM_WORLD_RANK", env_group::launcher, "", "0 .. size-1", "host/bootstrap/launch_env.hpp (Open MPI)", "this process's PE"},
    {"OMPI_COMM_WORLD_SIZE", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp (Open MPI)", "number of PEs"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", env_group::launcher, "found by the bootstrap", "0 .. local size-1", "host/bootstrap/launch_env.hpp (Open MPI)",
     "index among the processes of this node"},
    {"OMPI_COMM_WORLD_LOCAL_SIZE", env_group::launcher, "found by the bootstrap", "1 .. size", "host/bootstrap/launch_env.hpp (Open MPI)",
     "processes on this node"},
    {"PMIX_NAMESPACE", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (Open MPI 4/5)", "job identity: names the one-node socket and its token"},
    {"OMPI_MCA_ess_base_jobid", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (older Open MPI)",
     "job identity when PMIX_NAMESPACE is unset"},
    {"PMI_RANK", env_group::launcher, "", "0 .. PMI_SIZE-1", "host/bootstrap/launch_env.hpp (MPICH Hydra, Intel MPI)", "this process's PE"},
    {"PMI_SIZE", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp (MPICH Hydra, Intel MPI)", "number of PEs"},
    {"MPI_LOCALRANKID", env_group::launcher, "found by the bootstrap", "0 .. MPI_LOCALNRANKS-1", "host/bootstrap/launch_env.hpp (MPICH Hydra)",
     "index among the processes of this node"},
    {"MPI_LOCALNRANKS", env_group::launcher, "found by the bootstrap", "1 .. PMI_SIZE", "host/bootstrap/launch_env.hpp (MPICH Hydra)",
     "processes on this node"},
    {"PMI_KVSNAME", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (MPICH Hydra)", "job identity: names the one-node socket and its token"},
    {"SLURM_PROCID", env_group::launcher, "", "0 .. size-1", "host/bootstrap/launch_env.hpp (Slurm srun)", "this process's PE"},
    {"SLURM_STEP_NUM_TASKS", env_group::launcher, "SLURM_NTASKS", "integer >= 1", "host/bootstrap/launch_env.hpp (Slurm srun)", "number of PEs"},
    {"SLURM_NTASKS", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp (Slurm)",
     "number of PEs when SLURM_STEP_NUM_TASKS is unset"},
    {"SLURM_LOCALID", env_group::launcher, "", "0 .. tasks on the node-1", "host/bootstrap/launch_env.hpp (Slurm)",
     "index among the processes of this node"},
    {"SLURM_STEP_NUM_NODES", env_group::launcher, "SLURM_NNODES", "integer >= 1", "host/bootstrap/launch_env.hpp (Slurm)",
     "nodes of the step: 1 means every PE is local"},
    {"SLURM_NNODES", env_group::launcher, "", "integer >= 1", "host/bootstrap/launch_env.hpp (Slurm)", "nodes of the allocation"},
    {"SLURM_JOB_ID", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (Slurm)", "job identity: names the one-node socket and its token, the port across nodes"},
    {"SLURM_STEP_ID", env_group::launcher, "", "any", "host/bootstrap/launch_env.hpp (Slurm)", "job identity: names the one-node socket and its token, the port across nodes"},
    {"SLURM_STEP_NODELIST", env_group::launcher, "SLURM_JOB_NODELIST", "Slurm host list", "host/bootstrap/launch_env.hpp (Slurm)",
     "its first host is the rendezvous host of a multi-node step without PGAS_ROOT"},
    {"SLURM_JOB_NODELIST", env_group::launcher, "", "Slurm host list", "host/bootstrap/launch_env.hpp (Slurm)",
     "used when SLURM_STEP_NODELIST is unset"},

    // --- scripts and benchmarks of this repository (not read by the library) -----------------------------------------
    {"PGAS_BUILD_DIR", env_group::tools, "build", "a directory", "scripts/test, scripts/gpu-test, scripts/run-example",
     "build directory"},
    {"PGAS_LIBFABRIC_ROOT", env_group::tools, ".deps/libfabric-cuda when it exists", "an install prefix holding lib/pkgconfig/libfabric.pc",
     "scripts/env.sh, cmake/pgasLibfabric.cmake", "libfabric to build and run against before any other (scripts/build-libfabric-cuda)"},
    {"PGAS_MPS_ACTIVE", env_group::tools, "0", "0 or 1", "scripts/env.sh (set by pgas_mps_start)",
     "1 while scripts/gpu-test's CUDA MPS daemon runs: the tests of processes sharing one GPU (label mps) run"},
    {"PGAS_CI", env_group::tools, "0", "0 or 1", "scripts/env.sh (set by .ci/run)",
     "1: build the GPU-only tests and benchmarks even without a GPU (PGAS_BUILD_GPU_CODE=ON), and the sanitizer lanes"},
    {"PGAS_SANITIZERS", env_group::tools, "0", "0 or 1", "scripts/env.sh",
     "1: also build and test the sanitizer lanes (ASan+UBSan, TSan: tests/sanitizers; always on with PGAS_CI=1)"},
    {"PGAS_COMPARE_BUILD_DIR", env_group::tools, "build-compare", "a directory", "scripts/bench-compare", "build directory"},
    {"PGAS_COMPARE_JOBS", env_group::tools, "every core", "integer >= 1", "scripts/bench-compare", "build parallelism"},
    {"PGAS_COMPARE_NO_BUILD", env_group::tools, "", "any non-empty value", "scripts/bench-compare",
     "run what the build directory holds (a rerun)"},
    {"PGAS_COMPARE_ARCHIVE", env_group::tools, "", "a .tar.gz path", "scripts/bench-compare", "also pack the results into one file"},
    {"PGAS_COMPARE_SOURCE", env_group::tools, "", "a commit", "scripts/bench-compare", "the commit measured, for machine.txt"},
    {"PGAS_COMPARE_IDLE_S", env_group::tools, "30", "seconds", "scripts/bench-compare", "a run silent this long is hung"},
    {"PGAS_COMPARE_PROGRAM_S", env_group::tools, "150", "seconds", "scripts/bench-compare", "one program's share of the time"},
    {"PGAS_COMPARE_DEADLINE_S", env_group::tools, "360", "seconds", "scripts/bench-compare", "no run goes on past this"},
    {"PGAS_COMPARE_ONLY", env_group::tools, "every benchmark", "comma list of benchmarks",
     "scripts/bench-compare, bench/compare/common.hpp", "benchmarks to run"},
    {"PGAS_COMPARE_COLL_POLICY", env_group::tools, "auto", "auto, ll or direct", "bench/compare/pgas_compare.cu",
     "force one collective algorithm at every size (tuning runs; records' impl pgas-ll or pgas-direct)"},
    {"PGAS_COMPARE_SKIP", env_group::tools, "", "benchmark@bytes,...", "bench/compare/common.hpp", "sizes to leave out"},
    {"PGAS_COMPARE_PROGRESS", env_group::tools, "", "a file", "bench/compare/common.hpp",
     "where a program notes the benchmark and size it is in"},
    {"PGAS_COMPARE_MAX_BYTES", env_group::tools, "268435456", "bytes", "bench/compare/common.hpp", "largest size of the sweep"},
    {"PGAS_COMPARE_ITER_DIVISOR", env_group::tools, "1", "integer >= 1", "bench/compare/common.hpp", "divides the iteration counts"},
    {"PGAS_COMPARE_BUDGET_MS", env_group::tools, "1000", "ms", "bench/compare/common.hpp", "GPU time per size"},
    {"PGAS_COMPARE_RANKS", env_group::tools, "2", "2 to 64", "bench/compare/common.hpp (set by scripts/bench-compare --ranks)",
     "ranks each comparison program forks, one per GPU (rank r on GPU r % GPUs)"},
    {"PGAS_TUNE_GPUS", env_group::tools, "every GPU", "2 to the GPU count", "bench/nvlink/coll_tune_bench.cu",
     "GPUs of bench_coll_tune's collectives (one PE each, one process)"},
    {"PGAS_COMPARE_BARRIER_TIMEOUT_S", env_group::tools, "120", "seconds", "bench/compare/common.hpp",
     "bound on the harness's host barrier"},
    {"PGAS_COMPARE_MACHINE", env_group::tools, "GPU count and name", "any", "bench/compare/common.hpp", "machine label in the results"},
};

inline const char* to_string(env_group g) {
    switch (g) {
        case env_group::library: return "library";
        case env_group::launcher: return "launch environment";
        case env_group::tools: return "scripts and benchmarks";
    }
    return "?";
}

// The table as Markdown: the body of docs/environment.md between its markers.
inline void write_env_markdown(std::ostream& out) {
    const auto cell = [](std::string_view text) { return text.empty() ? std::string_view("—") : text; };
    for (env_group g : {env_group::library, env_group::launcher, env_group::tools}) {
        out << "\n### " << to_string(g) << "\n\n"
            << "| variable | meaning | default | values | read by |\n|---|---|---|---|---|\n";
        for (const env_var& v : env_vars)
            if (v.group == g)
                out << "| `" << v.name << "` | " << v.meaning << " | " << cell(v.default_value) << " | " << v.range << " | "
                    << v.reader << " |\n";
    }
}

}  // namespace pgas_tools
