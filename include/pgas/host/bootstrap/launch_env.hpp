// The launch environment of a multi-process world: rank, size, node-local rank and rendezvous address, read from
// pgasrun's, torchrun's, Open MPI's or Slurm's variables.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/launchers.hpp>
#include <pgas/host/env.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN

/// Where this process sits in a multi-process world and how it finds the
/// others. world::init() reads it from the environment (read_launch_env);
/// programs with their own launcher may fill it in and pass it explicitly.
struct launch_info {
    int rank = 0;         ///< this process's PE, 0 .. size-1
    int size = 1;         ///< processes (= PEs) in the world
    int local_rank = -1;  ///< index among the processes of this node; -1: unknown (found through the bootstrap)
    int local_size = -1;  ///< processes on this node; -1: unknown
    /// The rendezvous store: rank 0 listens here, the others connect. Empty
    /// only for a world of one process, or when root_path is set.
    std::string root_host;
    /// The rendezvous store's TCP port (with root_host).
    int root_port = 0;
    /// Instead of host:port, a Unix-domain socket in a directory only this
    /// user can enter (torchrun, MPI and Slurm jobs on one node without
    /// PGAS_ROOT); the root and the ranks also check each other's uid
    /// (SO_PEERCRED).
    std::string root_path;
    /// Shared by every process of one launch; a connection presenting another
    /// token (a stray process of another job on the same port) is rejected.
    std::string token;
    /// Bound on every bootstrap step (connect, each collective).
    std::chrono::milliseconds bootstrap_timeout{30000};
    /// Which launcher's variables these came from, for messages ("pgasrun", "torchrun", ...).
    std::string source = "explicit";
};

namespace detail {

using env_lookup = std::function<std::optional<std::string>(const char*)>;

// A token must fit the root's bounded hello.
inline constexpr std::size_t max_token_bytes = 1024;

[[noreturn]] inline void launch_error(const std::string& detail) {
    throw_error(errc::bootstrap, -1, "world::init (launch environment)", detail);
}

// FNV-1a: a stable hash for deriving ports and tokens from what every rank knows.
inline std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

class launch_env_reader {
public:
    explicit launch_env_reader(env_lookup lookup) : lookup_(std::move(lookup)) {}

    std::optional<std::string> get(const char* name) const {
        auto value = lookup_(name);
        if (value && value->empty()) return std::nullopt;
        return value;
    }
    bool has(const char* name) const { return get(name).has_value(); }

    std::string require(const char* name, const char* why) const {
        auto value = get(name);
        if (!value) launch_error(std::string(name) + " is not set (" + why + ")");
        return *value;
    }

    static std::int64_t parse_int(const char* name, const std::string& text) {
        std::size_t used = 0;
        long long value = 0;
        try {
            value = std::stoll(text, &used);
        } catch (...) {
            used = 0;
        }
        if (used == 0 || used != text.size()) launch_error(std::string(name) + "='" + text + "' is not an integer");
        return value;
    }

    std::optional<std::int64_t> integer(const char* name) const {
        auto text = get(name);
        if (!text) return std::nullopt;
        return parse_int(name, *text);
    }

    std::int64_t require_int(const char* name, const char* why) const { return parse_int(name, require(name, why)); }

private:
    env_lookup lookup_;
};

// "host:port" or "[v6addr]:port".
inline void parse_root(const std::string& name, const std::string& text, launch_info& out) {
    std::string host, port;
    if (!text.empty() && text[0] == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
            launch_error(name + "='" + text + "' is not host:port or [ipv6]:port");
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0 || text.find(':') != colon)
            launch_error(name + "='" + text + "' is not host:port (e.g. 127.0.0.1:29400)");
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    const auto number = launch_env_reader::parse_int(name.c_str(), port);
    if (number < 1 || number > 65535) launch_error(name + "='" + text + "': port " + port + " is outside 1..65535");
    out.root_host = host;
    out.root_port = int(number);
}

// torchrun's agent already serves its own store on MASTER_PORT, so pgas's
// store takes the next port.
inline void root_from_master(const launch_env_reader& env, launch_info& out) {
    out.root_host = env.require("MASTER_ADDR", "the rendezvous host");
    const auto port = env.require_int("MASTER_PORT", "the rendezvous port");
    if (port < 1 || port > 65534)
        launch_error("MASTER_PORT=" + std::to_string(port) + " is outside 1..65534 (pgas listens on MASTER_PORT+1)");
    out.root_port = int(port + 1);
}

// First host of a Slurm node list: "gpu[07-09,12],cpu1" -> "gpu07".
inline std::string first_slurm_host(const std::string& list) {
    std::string host;
    bool in_bracket = false, took_number = false;
    for (char c : list) {
        if (c == '[') {
            in_bracket = true;
        } else if (c == ']') {
            in_bracket = false;
        } else if (in_bracket) {
            if (c == '-' || c == ',') took_number = true;
            if (!took_number) host += c;
        } else if (c == ',') {
            break;
        } else {
            host += c;
        }
    }
    return host;
}

// A port both sides compute alike: 10000..29999, below Linux's ephemeral range.
inline int derived_port(const std::string& seed) { return 10000 + int(fnv1a(seed) % 20000); }

// This user's rendezvous directory, ${TMPDIR:-/tmp}/pgas-<uid> (the bootstrap
// creates it 0700 and refuses one that another user owns or can enter).
inline std::string private_rendezvous_dir(const launch_env_reader& env) {
    std::string base = env.get("TMPDIR").value_or("/tmp");
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    return base + "/pgas-" + std::to_string(::getuid());
}

inline void check_ranks(launch_info& info, const char* rank_name, const char* size_name, const char* local_rank_name,
                        const char* local_size_name) {
    if (info.size < 1) launch_error(std::string(size_name) + "=" + std::to_string(info.size) + " must be at least 1");
    if (info.size > max_world_size)
        launch_error(std::string(size_name) + "=" + std::to_string(info.size) + " is larger than the limit of " +
                     std::to_string(max_world_size) + " PEs");
    if (info.rank < 0 || info.rank >= info.size)
        launch_error(std::string(rank_name) + "=" + std::to_string(info.rank) + " is outside [0, " + size_name + "=" +
                     std::to_string(info.size) + ")");
    if (info.local_size == -1) return;  // unknown: found through the bootstrap
    if (info.local_size < 1 || info.local_size > info.size)
        launch_error(std::string(local_size_name) + "=" + std::to_string(info.local_size) + " is outside [1, " +
                     size_name + "=" + std::to_string(info.size) + "]");
    if (info.local_rank < 0 || info.local_rank >= info.local_size)
        launch_error(std::string(local_rank_name) + "=" + std::to_string(info.local_rank) + " is outside [0, " +
                     local_size_name + "=" + std::to_string(info.local_size) + ")");
}

// Launch values beyond any real world size stay out of range without
// overflowing int (check_ranks reports them; messages show the clamped value
// only past +-2^30).
inline int to_int(std::int64_t v) { return v < -(1 << 30) ? -(1 << 30) : v > (1 << 30) ? (1 << 30) : int(v); }

// A world size read from `name`, refused at once past max_world_size (before
// anything is sized by it); below 1 is check_ranks's to report.
inline int world_size_from(const launch_env_reader& env, const char* name, const char* why) {
    const auto size = env.require_int(name, why);
    if (size > max_world_size)
        launch_error(std::string(name) + "=" + std::to_string(size) + " is larger than the limit of " +
                     std::to_string(max_world_size) + " PEs");
    return to_int(size);
}

// The launcher whose variables are set, first match in the table; nullptr: none.
inline const launcher_vars* find_launcher(const launch_env_reader& env) {
    for (const auto& launcher : launchers)
        if (env.has(launcher.rank) || (launcher.size_selects && env.has(launcher.size[0]))) return &launcher;
    return nullptr;
}

// The first of `names` that is set, else the last one named (whose absence the caller reports).
template <std::size_t N>
const char* first_set(const launch_env_reader& env, const std::array<const char*, N>& names) {
    const char* last = nullptr;
    for (const char* name : names)
        if (name != nullptr) {
            if (env.has(name)) return name;
            last = name;
        }
    return last;
}

// The variables this launch's ranks came from, for the messages.
struct rank_names {
    const char *rank, *size, *local_rank, *local_size;
};

// Rank and size; the rendezvous address too where it is required before anything else.
inline rank_names read_world(const launch_env_reader& env, const launcher_vars& launcher, launch_info& info) {
    const char* size = first_set(env, launcher.size);
    const std::string rank_why = launcher.required_because ? launcher.required_because : std::string(size) + " is set";
    const std::string size_why =
        launcher.required_because ? launcher.required_because : std::string(launcher.rank) + " is set";
    info.rank = to_int(env.require_int(launcher.rank, rank_why.c_str()));
    info.size = world_size_from(env, size, size_why.c_str());
    if (info.size > 1 && launcher.rendezvous == rendezvous_rule::pgas_root)
        parse_root(root_var, env.require(root_var, "the rendezvous host:port"), info);
    if (info.size > 1 && launcher.rendezvous == rendezvous_rule::master_port_next && !env.has(root_var))
        root_from_master(env, info);
    return {launcher.rank, size, launcher.local_rank, launcher.local_size ? launcher.local_size : size};
}

// Node-local rank and size: both or neither, or (no local size variable) the size when the job has one node.
inline void read_node_local(const launch_env_reader& env, const launcher_vars& launcher, const rank_names& names,
                            launch_info& info) {
    if (launcher.local_size == nullptr) {
        if (auto local = env.integer(names.local_rank)) info.local_rank = to_int(*local);
        const auto nodes = env.integer(first_set(env, launcher.nodes));
        if (nodes && *nodes == 1) info.local_size = info.size;
        if (info.local_size < 0) info.local_rank = -1;  // found through the bootstrap
        return;
    }
    auto local_rank = env.integer(names.local_rank);
    auto local_size = env.integer(names.local_size);
    if (local_rank.has_value() != local_size.has_value())
        launch_error(std::string(local_rank.has_value() ? names.local_size : names.local_rank) + " is not set but " +
                     (local_rank.has_value() ? names.local_rank : names.local_size) + " is");
    if (!local_rank) return;
    info.local_rank = to_int(*local_rank);
    info.local_size = to_int(*local_size);
    if (*local_size < 1)  // an explicit -1 is out of range, not "unknown"
        launch_error(std::string(names.local_size) + "=" + std::to_string(*local_size) + " must be at least 1");
}

// What every rank of the job knows that names it (public: it names the job, it is no secret); "" when nothing does.
inline std::string job_identity(const launch_env_reader& env, const launcher_vars& launcher, const launch_info& info) {
    std::string job;
    bool named = false;
    for (std::size_t i = 0; i < launcher.job.size() && launcher.job[i]; ++i) {
        const auto value = env.get(launcher.job[i]);
        if (launcher.job_join == '\0' && value) return *value;
        if (launcher.job_join != '\0')
            job += (i ? std::string(1, launcher.job_join) : std::string()) + value.value_or("");
        named = named || value.has_value();
    }
    if (named) return job;
    // On one node every rank of an MPI launch is a child of the same launcher daemon.
    if (launcher.parent_names_job && info.local_size == info.size) return "launcher-pid-" + std::to_string(::getppid());
    return {};
}

// "a torchrun job", "an Open MPI job" (initialisms read with a vowel: "an MPICH").
inline std::string a_job_of(const std::string& source) {
    return (std::string("AEIOUM").find(source[0]) != std::string::npos ? "an " : "a ") + source + " job";
}

// Rendezvous for torchrun, MPI and Slurm (pgasrun always names one): PGAS_ROOT when set; else on one node a
// Unix-domain socket only this user can reach, named by the job's identity; else MASTER_ADDR:MASTER_PORT+1, and
// under Slurm the step's first node at a port derived from the job id. Across nodes under MPI, PGAS_ROOT is
// required.
inline void choose_rendezvous(const launch_env_reader& env, const launcher_vars& launcher, const std::string& job,
                              launch_info& info) {
    const bool outside_launcher = launcher.rendezvous != rendezvous_rule::pgas_root;
    const auto no_job_id = [&] {
        launch_error(info.source + " gives no job id to derive a rendezvous port from: set PGAS_ROOT=host:port");
    };
    if (auto root = env.get(root_var)) return parse_root(root_var, *root, info);
    if (outside_launcher && info.size > 1 && info.local_size == info.size) {
        if (job.empty()) no_job_id();
        // One node: a socket only this user can reach; its name may be public.
        char name[32];
        std::snprintf(name, sizeof name, "/%016llx.sock",
                      static_cast<unsigned long long>(fnv1a(info.source + "|" + job)));
        info.root_path = private_rendezvous_dir(env) + name;
        info.root_host.clear();
        info.root_port = 0;
        return;
    }
    if (!info.root_host.empty() || info.size <= 1) return;
    if (env.has(master_addr) && env.has(master_port)) return root_from_master(env, info);
    if (job.empty()) no_job_id();
    if (launcher.node_list[0] == nullptr)
        launch_error(a_job_of(info.source) +
                     " across nodes needs PGAS_ROOT=host:port (or MASTER_ADDR and MASTER_PORT) naming rank 0's node");
    info.root_host = first_slurm_host(env.get(first_set(env, launcher.node_list)).value_or(""));
    if (info.root_host.empty())
        launch_error(std::string(launcher.node_list[0]) +
                     " is not set and the job spans nodes: set PGAS_ROOT=host:port");
    info.root_port = derived_port(job);
}

// PGAS_TOKEN comes from pgasrun (random). torchrun, MPI and Slurm have no pgas-specific secret to hand out: on one
// node the private socket keeps other users out and a token derived from the job's identity only separates this
// user's jobs; over TCP a derived token would be public (anyone could compute it and join, or bind the port first
// and collect the hellos), so there PGAS_TOKEN is required. So it is for PGAS_* variables set by hand: two jobs
// that share a root would take each other's ranks with a token derived from it.
inline void choose_token(const launch_env_reader& env, const launcher_vars& launcher, const std::string& job,
                         launch_info& info) {
    const bool outside_launcher = launcher.rendezvous != rendezvous_rule::pgas_root;
    if (!outside_launcher && info.size > 1 && !env.has(token_var))
        launch_error(
            "PGAS_RANK/PGAS_WORLD_SIZE/PGAS_ROOT set by hand need PGAS_TOKEN: a secret shared by the "
            "ranks of this launch and no other (without one, two jobs that use the same PGAS_ROOT would "
            "take each other's ranks). Export a fresh one for every launch, e.g. "
            "PGAS_TOKEN=$(openssl rand -hex 16), or start the job with pgasrun, which does");
    if (outside_launcher && info.size > 1 && info.root_path.empty() && !env.has(token_var))
        launch_error(a_job_of(info.source) + " with a TCP rendezvous (" +
                     (env.has(root_var) ? std::string("PGAS_ROOT is set") : std::string("it spans nodes")) +
                     ") needs PGAS_TOKEN: a token derived from the job's public ids would let any user of these "
                     "nodes join it. Export a secret shared by every rank, e.g. PGAS_TOKEN=$(openssl rand -hex 16), " +
                     (launcher.rendezvous == rendezvous_rule::master_port_next
                          ? "before starting " + info.source +
                                " on every node (pgas listens on "
                                "MASTER_ADDR:MASTER_PORT+1, or at PGAS_ROOT=host:port of rank 0's node)"
                          : std::string("and PGAS_ROOT=host:port of rank 0's node, before starting the job")));
    if (auto token = env.get(token_var)) {
        if (token->size() > max_token_bytes)
            launch_error("PGAS_TOKEN is " + std::to_string(token->size()) + " bytes long; at most " +
                         std::to_string(max_token_bytes) + " are allowed");
        info.token = *token;
        return;
    }
    info.token = "derived-" + std::to_string(fnv1a(info.source + "|" + job + "|" + std::to_string(info.size) + "|" +
                                                   info.root_host + ":" + std::to_string(info.root_port)));
}

inline std::chrono::milliseconds bootstrap_timeout(const launch_env_reader& env) {
    const auto timeout = env.integer("PGAS_BOOTSTRAP_TIMEOUT_MS").value_or(std::int64_t(default_bootstrap_timeout_ms));
    if (timeout <= 0)
        launch_error("PGAS_BOOTSTRAP_TIMEOUT_MS=" + std::to_string(timeout) +
                     " must be positive (bootstrap steps are always bounded)");
    if (std::uint64_t(timeout) > max_timeout_ms)
        launch_error("PGAS_BOOTSTRAP_TIMEOUT_MS=" + std::to_string(timeout) + " is larger than the limit of " +
                     std::to_string(max_timeout_ms) + " ms (one day)");
    return std::chrono::milliseconds(timeout);
}

// The launch environment through `lookup`: the first launcher of the table whose variables are set, read row by
// row; none set: a world of this one process (like an MPI singleton).
inline launch_info parse_launch_env(const env_lookup& lookup) {
    launch_env_reader env(lookup);
    launch_info info;
    const launcher_vars* launcher = find_launcher(env);
    if (launcher == nullptr) {
        info.source = "no launcher (one process)";
        info.local_rank = 0;
        info.local_size = 1;
        return info;
    }
    info.source = launcher->source;
    const rank_names names = read_world(env, *launcher, info);
    read_node_local(env, *launcher, names, info);
    check_ranks(info, names.rank, names.size, names.local_rank, names.local_size);
    const std::string job = job_identity(env, *launcher, info);
    choose_rendezvous(env, *launcher, job, info);
    choose_token(env, *launcher, job, info);
    info.bootstrap_timeout = bootstrap_timeout(env);
    return info;
}

// pgasrun's status pipe (PGAS_STATUS_FD): a world of several processes says on it that it joined ('i') and that it
// was finalized ('f'), and pgasrun reports a rank that exits 0 in between as failed (a PE that
// exited 0 without finalizing lost what its peers sent it, and every process exited 0). Looked up once per
// process and made close-on-exec, so a program the rank starts cannot write to it; a descriptor that is not a
// pipe is not written to.
class launcher_status {
public:
    static void say(char what) {
        static const int fd = open_status_fd();
        if (fd >= 0) (void)!::write(fd, &what, 1);  // non-blocking: a full pipe loses the byte, never blocks
    }

private:
    static int open_status_fd() {
        const auto text = env(status_fd_var);
        if (!text || text->find_first_not_of("0123456789") != std::string::npos || text->size() > 9) return -1;
        const int fd = std::stoi(*text);
        struct stat info {};
        if (fd < 3 || ::fstat(fd, &info) != 0 || !S_ISFIFO(info.st_mode)) return -1;
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
    }
};

}  // namespace detail

/// The launch environment of this process, from (first match wins)
/// PGAS_RANK/PGAS_WORLD_SIZE/PGAS_ROOT[/PGAS_LOCAL_RANK/PGAS_LOCAL_SIZE]
/// (pgasrun), torchrun's RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE,
/// Open MPI's OMPI_COMM_WORLD_*, MPICH's (Hydra)
/// PMI_RANK/PMI_SIZE/MPI_LOCALRANKID/MPI_LOCALNRANKS, Slurm's
/// SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID. Under torchrun, MPI and Slurm a
/// job on one node meets at a Unix-domain socket only this user can reach;
/// across nodes (torchrun: at MASTER_ADDR:MASTER_PORT+1) it needs
/// PGAS_TOKEN. PGAS_ROOT and PGAS_TOKEN override any launcher's; PGAS_BOOTSTRAP_TIMEOUT_MS bounds each bootstrap step
/// (default 30000). With none of these set: a world of one process. Missing or
/// inconsistent values throw pgas::error(errc::bootstrap) naming the variable.
inline launch_info read_launch_env() {
    return detail::parse_launch_env([](const char* name) { return detail::env(name); });
}

PGAS_NAMESPACE_END
