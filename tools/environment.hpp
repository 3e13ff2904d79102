// The one table of every environment variable pgas reads: pgas-info prints it, docs/environment.md is generated
// from it (pgas-info --env-markdown), and tests/tools/environment_test.cpp checks it against the sources. The
// launchers' rows come from the library's own launcher table (host/bootstrap/launchers.hpp).
#pragma once

#include <pgas/host/bootstrap/launchers.hpp>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace pgas_tools {

// Who reads a variable, as sections of the table.
enum class env_group { library, launcher, tools };

struct env_var {
    std::string name;
    env_group group;
    std::string default_value;  // what applies when it is unset ("" : no default, the variable is optional)
    std::string range;          // accepted values
    std::string reader;         // the code that reads it
    std::string meaning;
};

// Adding a getenv (or detail::env, env_size, launch_env_reader::get, ...) in include/, src/, tools/, bench/ or a
// `$PGAS_*` in scripts/ without a row here fails the "tools: environment table" test; so does a row nobody reads.
inline const env_var library_vars[] = {
    {"PGAS_HEAP_SIZE", env_group::library, "1G (GPU worlds), 64M (host transport)",
     "bytes, or a number with K/M/G/T (binary); > 0 and at most 1T (1T itself included)",
     "host/world.hpp (world::init*)", "symmetric heap per PE; world_options::heap_bytes overrides it"},
    {"NVSHMEM_SYMMETRIC_SIZE", env_group::library, "unset (PGAS_HEAP_SIZE's default)",
     "bytes, or a number with K/M/G/T (binary), as PGAS_HEAP_SIZE", "src/compat/nvshmem/runtime.cpp (nvshmem_init)",
     "at least what an NVSHMEM program may allocate per PE on pgas::nvshmem (rounded up to 2 MiB, plus 2 MiB; pgas's reserved area on top); wins over PGAS_HEAP_SIZE there"},
    {"PGAS_UNIQUEID_HOST", env_group::library, "this machine's host name", "a host name or IPv4 address",
     "src/compat/nvshmem/runtime.cpp (nvshmemx_get_uniqueid)",
     "where the other ranks reach rank 0 for a unique id's rendezvous (NVSHMEMX_INIT_WITH_UNIQUEID)"},
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
    {"PGAS_NODE_SIZE", env_group::library, "the PEs of each node (same boot and network namespace)", "1 .. world size",
     "host/bootstrap/node.hpp (team_node, route_node_pes)",
     "team_node and route's near range as virtual nodes of this many consecutive PEs, so one machine can stand for "
     "several"},
    {"PGAS_IB_HCA", env_group::library, "first mlx5 device", "an RDMA device name (ibv_devices)", "host/ibgda/verbs.hpp",
     "RDMA device of pgas::ibgda"},
    {"PGAS_IB_PORT", env_group::library, "1", "port number of that device", "host/ibgda/verbs.hpp", "RDMA port of pgas::ibgda"},
    {"PGAS_IB_GID_INDEX", env_group::library, "3 on RoCE, 0 on InfiniBand", "GID table index", "host/ibgda/verbs.hpp",
     "GID index of pgas::ibgda (RoCE v2 is commonly 3)"},

};

// The launch environment's variables that belong to no one launcher (PGAS_ROOT and PGAS_TOKEN override every one's).
inline const env_var launch_vars[] = {
    {pgas::detail::root_var, env_group::launcher, "from the launcher (launch-and-bootstrap.md)", "host:port or [ipv6]:port",
     "host/bootstrap/launch_env.hpp; set by pgasrun", "rendezvous store of rank 0; overrides every launcher's"},
    {pgas::detail::token_var, env_group::launcher, "one node: derived from the job's identity; TCP (PGAS_* set by hand, torchrun/MPI/Slurm): required", "any string; a fresh one per launch", "host/bootstrap/launch_env.hpp; set by pgasrun (random)",
     "shared secret every connection to the rendezvous must present"},
    {pgas::detail::status_fd_var, env_group::launcher, "", "a descriptor number (a pipe)", "host/bootstrap/launch_env.hpp; set by pgasrun",
     "where a rank's world tells pgasrun that it joined and that it was finalized: a rank that exits 0 in between "
     "is reported as failed"},
};

inline const env_var tool_vars[] = {
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
    {"PGAS_COMPARE_BUILD_DIR", env_group::tools, "build-compare", "a directory",
     "scripts/bench-compare, scripts/bench-before-after", "build directory (bench-before-after: this tree's)"},
    {"PGAS_COMPARE_JOBS", env_group::tools, "every core", "integer >= 1",
     "scripts/bench-compare, scripts/bench-before-after", "build parallelism"},
    {"PGAS_BEFORE_LABEL", env_group::tools, "the folder's name or the commit", "any text", "scripts/bench-before-after",
     "what the report calls the tree before"},
    {"PGAS_AFTER_LABEL", env_group::tools, "this tree's commit", "any text", "scripts/bench-before-after",
     "what the report calls this tree"},
    {"PGAS_BEFORE_AFTER_RUN_S", env_group::tools, "150", "seconds", "scripts/bench-before-after",
     "time limit of one run of pgas_compare"},
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

namespace detail {

// A launcher's variable in one role: the row's texts but for its name and reader.
struct launcher_role {
    const char* default_value;
    const char* range;
    const char* meaning;
};

// Adds `name`'s row, or where a launcher before named it too, adds this launcher to its reader and the meaning
// when it is another.
inline void add_launcher_var(std::vector<env_var>& rows, const char* name, const char* launcher,
                             const launcher_role& role, std::string default_value = {}, std::string meaning = {}) {
    if (name == nullptr) return;
    if (meaning.empty()) meaning = role.meaning;
    if (default_value.empty()) default_value = role.default_value;
    for (auto& row : rows)
        if (row.name == name) {
            if (row.reader.find(launcher) == std::string::npos)
                row.reader.insert(row.reader.size() - 1, std::string(", ") + launcher);
            if (row.meaning.find(meaning) == std::string::npos) row.meaning += "; " + meaning;
            return;
        }
    rows.push_back({name, env_group::launcher, default_value, role.range,
                    std::string("host/bootstrap/launchers.hpp (") + launcher + ")", meaning});
}

// A pair of alternatives (the first that is set): the first's default names the second, the second says when.
template <std::size_t N>
inline void add_alternatives(std::vector<env_var>& rows, const std::array<const char*, N>& names,
                             const char* launcher, const launcher_role& role) {
    add_launcher_var(rows, names[0], launcher, role, names[1] ? names[1] : "");
    for (std::size_t i = 1; i < N && names[i]; ++i)
        add_launcher_var(rows, names[i], launcher, role, "",
                         std::string(role.meaning) + " (read when " + names[i - 1] + " is unset)");
}

inline void add_launcher_rows(std::vector<env_var>& rows, const pgas::detail::launcher_vars& l) {
    using pgas::detail::rendezvous_rule;
    add_launcher_var(rows, l.rank, l.source, {"", "0 .. size-1", "this process's PE"});
    add_alternatives(rows, l.size, l.source, {"", "integer >= 1", "number of PEs"});
    add_launcher_var(rows, l.local_rank, l.source,
                     {"found by the bootstrap", "0 .. local size-1", "index among the processes of this node"});
    add_launcher_var(rows, l.local_size, l.source, {"found by the bootstrap", "1 .. size", "processes on this node"});
    add_alternatives(rows, l.nodes, l.source, {"", "integer >= 1", "nodes of the job: 1 means every PE is local"});
    if (l.rendezvous != rendezvous_rule::pgas_root) {
        add_launcher_var(rows, pgas::detail::master_addr, l.source,
                         {"", "host name or address", "rendezvous host across nodes when PGAS_ROOT is unset"});
        add_launcher_var(rows, pgas::detail::master_port, l.source,
                         {"", "1 .. 65534", "across nodes pgas's store listens on MASTER_PORT+1 (torchrun's own "
                                            "store holds MASTER_PORT)"});
    }
    const launcher_role job{"", "any", "job identity: names the one-node socket and its token"};
    if (l.job_join == '\0')
        add_alternatives(rows, l.job, l.source, job);
    else
        for (const char* name : l.job) add_launcher_var(rows, name, l.source, job);
    add_alternatives(rows, l.node_list, l.source,
                     {"", "a host list (Slurm's syntax)",
                      "its first host is the rendezvous host across nodes without PGAS_ROOT or MASTER_ADDR"});
}

}  // namespace detail

// Every row: the library's, the launch environment's (then each launcher's, from its table), the tools'.
inline const std::vector<env_var>& env_vars() {
    static const std::vector<env_var> rows = [] {
        std::vector<env_var> all(std::begin(library_vars), std::end(library_vars));
        all.insert(all.end(), std::begin(launch_vars), std::end(launch_vars));
        for (const auto& launcher : pgas::detail::launchers) detail::add_launcher_rows(all, launcher);
        all.insert(all.end(), std::begin(tool_vars), std::end(tool_vars));
        return all;
    }();
    return rows;
}

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
    const auto cell = [](const std::string& text) { return text.empty() ? std::string_view("—") : std::string_view(text); };
    for (env_group g : {env_group::library, env_group::launcher, env_group::tools}) {
        out << "\n### " << to_string(g) << "\n\n"
            << "| variable | meaning | default | values | read by |\n|---|---|---|---|---|\n";
        for (const env_var& v : env_vars())
            if (v.group == g)
                out << "| `" << v.name << "` | " << v.meaning << " | " << cell(v.default_value) << " | " << v.range << " | "
                    << v.reader << " |\n";
    }
}

}  // namespace pgas_tools
