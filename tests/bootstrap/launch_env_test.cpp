// Reading the launch environment: pgasrun's, torchrun's, Open MPI's and Slurm's variables, and every bad value.
#include "support.hpp"

using doctest::Contains;

namespace {

using test::parse;

std::string error_of(const test::environment& env) {
    return test::error_of([&] { (void)parse(env); }, pgas::errc::bootstrap);
}

}  // namespace

TEST_CASE("launch env: pgasrun's variables") {
    auto info = parse({{"PGAS_RANK", "2"}, {"PGAS_WORLD_SIZE", "4"}, {"PGAS_LOCAL_RANK", "2"}, {"PGAS_LOCAL_SIZE", "4"},
                       {"PGAS_ROOT", "127.0.0.1:29400"}, {"PGAS_TOKEN", "abc"}, {"PGAS_BOOTSTRAP_TIMEOUT_MS", "1234"}});
    CHECK(info.rank == 2);
    CHECK(info.size == 4);
    CHECK(info.local_rank == 2);
    CHECK(info.local_size == 4);
    CHECK(info.root_host == "127.0.0.1");
    CHECK(info.root_port == 29400);
    CHECK(info.token == "abc");
    CHECK(info.bootstrap_timeout.count() == 1234);
    CHECK(parse({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "[::1]:80"}, {"PGAS_TOKEN", "t"}})
              .root_host == "::1");
    auto defaults = parse({{"PGAS_RANK", "1"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "node7:5000"}, {"PGAS_TOKEN", "t"}});
    CHECK(defaults.local_rank == -1);  // unknown: found through the bootstrap
    CHECK(defaults.bootstrap_timeout.count() == 30000);
}

TEST_CASE("launch env: PGAS_* variables set by hand need PGAS_TOKEN (two jobs sharing a root merged without one)") {
    // A token derived from PGAS_ROOT would be the same for two hand-launched jobs with the same root, and they would
    // take each other's ranks.
    const std::string refused = error_of({{"PGAS_RANK", "1"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "node7:5000"}});
    CHECK_MESSAGE(test::contains(refused, "PGAS_RANK/PGAS_WORLD_SIZE/PGAS_ROOT set by hand need PGAS_TOKEN"), refused);
    CHECK_MESSAGE(test::contains(refused, "a fresh one for every launch, e.g. PGAS_TOKEN=$(openssl rand -hex 16)"),
                  refused);
    CHECK(parse({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "1"}}).size == 1);  // one process meets nobody: no token
}

TEST_CASE("launch env: nothing set is a world of one process") {
    auto info = parse({});
    CHECK(info.rank == 0);
    CHECK(info.size == 1);
    CHECK(info.root_host.empty());
}

TEST_CASE("launch env: bad pgasrun values name the variable and value") {
    CHECK(test::contains(error_of({{"PGAS_RANK", "1"}}), "PGAS_WORLD_SIZE is not set"));
    CHECK(test::contains(error_of({{"PGAS_WORLD_SIZE", "2"}}), "PGAS_RANK is not set"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "x1"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"}}),
                         "PGAS_RANK='x1' is not an integer"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "4"}, {"PGAS_WORLD_SIZE", "4"}, {"PGAS_ROOT", "h:1"}}),
                         "PGAS_RANK=4 is outside [0, PGAS_WORLD_SIZE=4)"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "-1"}, {"PGAS_WORLD_SIZE", "4"}, {"PGAS_ROOT", "h:1"}}),
                         "PGAS_RANK=-1 is outside"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "0"}}), "PGAS_WORLD_SIZE=0 must be at least 1"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}}), "PGAS_ROOT is not set"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "localhost"}}),
                         "PGAS_ROOT='localhost' is not host:port"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:70000"}}),
                         "port 70000 is outside 1..65535"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_LOCAL_RANK", "0"}}),
                         "PGAS_LOCAL_SIZE is not set but PGAS_LOCAL_RANK is"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_LOCAL_RANK", "0"}, {"PGAS_LOCAL_SIZE", "3"}}),
                         "PGAS_LOCAL_SIZE=3 is outside [1, PGAS_WORLD_SIZE=2]"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_LOCAL_RANK", "2"}, {"PGAS_LOCAL_SIZE", "2"}}),
                         "PGAS_LOCAL_RANK=2 is outside [0, PGAS_LOCAL_SIZE=2)"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_LOCAL_RANK", "0"}, {"PGAS_LOCAL_SIZE", "-1"}}),
                         "PGAS_LOCAL_SIZE=-1 must be at least 1"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_BOOTSTRAP_TIMEOUT_MS", "0"}, {"PGAS_TOKEN", "t"}}),
                         "PGAS_BOOTSTRAP_TIMEOUT_MS=0 must be positive"));
    CHECK(test::contains(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                                   {"PGAS_BOOTSTRAP_TIMEOUT_MS", "10s"}, {"PGAS_TOKEN", "t"}}),
                         "PGAS_BOOTSTRAP_TIMEOUT_MS='10s' is not an integer"));
}

TEST_CASE("launch env: torchrun's variables - across nodes pgas listens on MASTER_PORT+1 and needs PGAS_TOKEN") {
    const test::environment torchrun{{"RANK", "3"},           {"WORLD_SIZE", "8"},         {"LOCAL_RANK", "1"},
                                     {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"},
                                     {"TORCHELASTIC_RUN_ID", "none"}, {"PGAS_TOKEN", "secret"}};
    auto info = parse(torchrun);
    CHECK(info.source == "torchrun");
    CHECK(info.rank == 3);
    CHECK(info.size == 8);
    CHECK(info.local_rank == 1);
    CHECK(info.local_size == 2);
    CHECK(info.root_host == "10.0.0.1");
    CHECK(info.root_port == 29501);
    CHECK(info.root_path.empty());
    CHECK(info.token == "secret");
    // A token derived from the run id, MASTER_ADDR, MASTER_PORT and the restart count is public: anyone
    // could compute it and join (or hijack) MASTER_PORT+1. Across nodes pgas refuses to derive one.
    auto no_token = torchrun;
    no_token.erase("PGAS_TOKEN");
    CHECK(error_of(no_token) ==
          "pgas: world::init (launch environment): a torchrun job with a TCP rendezvous (it spans nodes) needs "
          "PGAS_TOKEN: a token derived from the job's public ids would let any user of these nodes join it. Export a "
          "secret shared by every rank, e.g. PGAS_TOKEN=$(openssl rand -hex 16), before starting torchrun on every "
          "node (pgas listens on MASTER_ADDR:MASTER_PORT+1, or at PGAS_ROOT=host:port of rank 0's node)");
    auto overridden = torchrun;
    overridden["PGAS_ROOT"] = "10.0.0.2:4000";
    overridden["PGAS_TOKEN"] = "t";
    CHECK(parse(overridden).root_host == "10.0.0.2");
    CHECK(parse(overridden).root_port == 4000);
    CHECK(parse(overridden).token == "t");
    auto missing = torchrun;
    missing.erase("MASTER_ADDR");
    CHECK(test::contains(error_of(missing), "MASTER_ADDR is not set"));
    auto bad = torchrun;
    bad["LOCAL_RANK"] = "2";
    CHECK(test::contains(error_of(bad), "LOCAL_RANK=2 is outside [0, LOCAL_WORLD_SIZE=2)"));
    bad = torchrun;
    bad["WORLD_SIZE"] = "eight";
    CHECK(test::contains(error_of(bad), "WORLD_SIZE='eight' is not an integer"));
    // PGAS_* wins over torchrun's when both are set.
    auto both = torchrun;
    both["PGAS_RANK"] = "1";
    both["PGAS_WORLD_SIZE"] = "2";
    both["PGAS_ROOT"] = "127.0.0.1:7";
    CHECK(parse(both).size == 2);
}

TEST_CASE("launch env: torchrun on one node meets at a private Unix-domain socket, not MASTER_PORT+1") {
    const test::environment torchrun{{"RANK", "1"},           {"WORLD_SIZE", "4"},          {"LOCAL_RANK", "1"},
                                     {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"},
                                     {"TORCHELASTIC_RUN_ID", "none"}, {"TORCHELASTIC_RESTART_COUNT", "0"}};
    auto info = parse(torchrun);
    CHECK(info.source == "torchrun");
    CHECK(info.local_size == 4);
    // No TCP port another local user could connect to or bind first; the socket's directory is this
    // user's (0700) and the root checks every peer's uid (SO_PEERCRED).
    CHECK(info.root_host.empty());
    CHECK(info.root_port == 0);
    CHECK(test::contains(info.root_path, "/tmp/pgas-" + std::to_string(::getuid()) + "/"));
    auto rank0 = torchrun;
    rank0["RANK"] = "0";
    rank0["LOCAL_RANK"] = "0";
    CHECK(parse(rank0).root_path == info.root_path);
    CHECK(parse(rank0).token == info.token);
    // Concurrent jobs (another agent port) and a restarted one get a socket of their own.
    auto other_job = torchrun;
    other_job["MASTER_PORT"] = "29600";
    CHECK(parse(other_job).root_path != info.root_path);
    auto restarted = torchrun;
    restarted["TORCHELASTIC_RESTART_COUNT"] = "1";
    CHECK(parse(restarted).root_path != info.root_path);
    auto elsewhere = torchrun;
    elsewhere["TMPDIR"] = "/scratch/me/";
    CHECK(test::contains(parse(elsewhere).root_path, "/scratch/me/pgas-" + std::to_string(::getuid()) + "/"));
    // PGAS_ROOT asks for TCP: then the token must be a secret too.
    auto tcp_root = torchrun;
    tcp_root["PGAS_ROOT"] = "127.0.0.1:4000";
    CHECK(error_of(tcp_root) ==
          "pgas: world::init (launch environment): a torchrun job with a TCP rendezvous (PGAS_ROOT is set) needs "
          "PGAS_TOKEN: a token derived from the job's public ids would let any user of these nodes join it. Export a "
          "secret shared by every rank, e.g. PGAS_TOKEN=$(openssl rand -hex 16), before starting torchrun on every "
          "node (pgas listens on MASTER_ADDR:MASTER_PORT+1, or at PGAS_ROOT=host:port of rank 0's node)");
    tcp_root["PGAS_TOKEN"] = "secret";
    CHECK(parse(tcp_root).root_path.empty());
    CHECK(parse(tcp_root).root_port == 4000);
    // A one-process world needs no rendezvous at all.
    CHECK(parse({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"}}).root_path.empty());
}

TEST_CASE("launch env: an MPI job on one node takes the private socket even when MASTER_ADDR/MASTER_PORT are set") {
    const test::environment ompi{{"OMPI_COMM_WORLD_RANK", "0"},       {"OMPI_COMM_WORLD_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                 {"PMIX_NAMESPACE", "prterun-host-4242@1"}, {"MASTER_ADDR", "127.0.0.1"},
                                 {"MASTER_PORT", "29500"}};
    auto info = parse(ompi);
    CHECK(info.root_host.empty());
    CHECK(!info.root_path.empty());
}

TEST_CASE("launch env: Open MPI's variables - one node needs no root address") {
    const test::environment ompi{{"OMPI_COMM_WORLD_RANK", "1"},       {"OMPI_COMM_WORLD_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                 {"PMIX_NAMESPACE", "prterun-host-4242@1"}};
    auto info = parse(ompi);
    CHECK(info.source == "Open MPI");
    CHECK(info.rank == 1);
    CHECK(info.local_rank == 1);
    // One node: a Unix-domain socket in this user's private directory, no TCP port.
    CHECK(info.root_host.empty());
    CHECK(test::contains(info.root_path, "/tmp/pgas-" + std::to_string(::getuid()) + "/"));
    auto rank0 = ompi;
    rank0["OMPI_COMM_WORLD_RANK"] = "0";
    rank0["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
    CHECK(parse(rank0).root_path == info.root_path);
    CHECK(parse(rank0).token == info.token);
    auto nodes = ompi;
    nodes["OMPI_COMM_WORLD_SIZE"] = "4";
    CHECK(test::contains(error_of(nodes), "needs PGAS_ROOT=host:port"));
    nodes["MASTER_ADDR"] = "n1";
    nodes["MASTER_PORT"] = "100";
    // Across nodes a token derived from public ids is refused: the user must give one.
    CHECK(error_of(nodes) ==
          "pgas: world::init (launch environment): an Open MPI job with a TCP rendezvous (it spans nodes) needs "
          "PGAS_TOKEN: a token derived from the job's public ids would let any user of these nodes join it. Export a "
          "secret shared by every rank, e.g. PGAS_TOKEN=$(openssl rand -hex 16), and PGAS_ROOT=host:port of rank 0's "
          "node, before starting the job");
    nodes["PGAS_TOKEN"] = "secret";
    CHECK(parse(nodes).root_host == "n1");
    CHECK(parse(nodes).root_port == 101);
    auto bad = ompi;
    bad["OMPI_COMM_WORLD_LOCAL_SIZE"] = "0";
    CHECK(test::contains(error_of(bad), "OMPI_COMM_WORLD_LOCAL_SIZE=0 must be at least 1"));
    // Without a job id the ranks of one node share their parent, the launcher's daemon.
    auto no_job = ompi;
    no_job.erase("PMIX_NAMESPACE");
    CHECK(parse(no_job).root_path != info.root_path);
    CHECK(parse(no_job).token != info.token);
}

TEST_CASE("launch env: MPICH's (Hydra) variables") {
    const test::environment hydra{{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"},
                                  {"MPI_LOCALNRANKS", "2"}, {"PMI_KVSNAME", "kvs_123_0"}};
    auto multi = hydra;
    CHECK(test::contains(error_of(multi), "an MPICH (Hydra) job across nodes needs PGAS_ROOT=host:port"));
    multi["PGAS_ROOT"] = "10.1.1.1:999";
    CHECK(test::contains(error_of(multi), "an MPICH (Hydra) job with a TCP rendezvous (PGAS_ROOT is set) needs PGAS_TOKEN"));
    multi["PGAS_TOKEN"] = "secret";
    auto info = parse(multi);
    CHECK(info.source == "MPICH (Hydra)");
    CHECK(info.rank == 2);
    CHECK(info.size == 4);
    CHECK(info.local_rank == 0);
    CHECK(info.local_size == 2);
    CHECK(info.root_port == 999);
    auto one_node = hydra;
    one_node["MPI_LOCALRANKID"] = "2";
    one_node["MPI_LOCALNRANKS"] = "4";
    CHECK(!parse(one_node).root_path.empty());
    auto bad = hydra;
    bad["PMI_SIZE"] = "-4";
    CHECK(test::contains(error_of(bad), "PMI_SIZE=-4 must be at least 1"));
}

TEST_CASE("launch env: Slurm's variables - the root is the step's first node") {
    const test::environment slurm{{"SLURM_PROCID", "5"},          {"SLURM_NTASKS", "8"},
                                  {"SLURM_LOCALID", "1"},         {"SLURM_NNODES", "4"},
                                  {"SLURM_JOB_ID", "777"},        {"SLURM_STEP_ID", "0"},
                                  {"SLURM_STEP_NODELIST", "gpu[07-09,12]"}, {"PGAS_TOKEN", "secret"}};
    auto info = parse(slurm);
    CHECK(info.source == "Slurm");
    CHECK(info.rank == 5);
    CHECK(info.size == 8);
    CHECK(info.local_rank == -1);  // several nodes: the bootstrap finds the node-local ranks
    CHECK(info.root_host == "gpu07");
    auto no_token = slurm;
    no_token.erase("PGAS_TOKEN");
    CHECK(test::contains(error_of(no_token), "a Slurm job with a TCP rendezvous (it spans nodes) needs PGAS_TOKEN"));
    auto one_node = slurm;
    one_node["SLURM_NNODES"] = "1";
    one_node["SLURM_LOCALID"] = "5";
    CHECK(!parse(one_node).root_path.empty());
    CHECK(parse(one_node).local_rank == 5);
    CHECK(parse(one_node).local_size == 8);
    auto bad = slurm;
    bad["SLURM_PROCID"] = "8";
    CHECK(test::contains(error_of(bad), "SLURM_PROCID=8 is outside [0, SLURM_NTASKS=8)"));
    bad = slurm;
    bad["SLURM_STEP_NUM_TASKS"] = "4";
    CHECK(test::contains(error_of(bad), "SLURM_PROCID=5 is outside [0, SLURM_STEP_NUM_TASKS=4)"));
    bad = one_node;
    bad["SLURM_LOCALID"] = "8";
    CHECK(test::contains(error_of(bad), "SLURM_LOCALID=8 is outside [0, SLURM_NTASKS=8)"));
    CHECK(pgas::detail::first_slurm_host("a1,b2") == "a1");
    CHECK(pgas::detail::first_slurm_host("node[001-004]") == "node001");
    CHECK(pgas::detail::first_slurm_host("x[3,5]-ib") == "x3-ib");
}

TEST_CASE("launch env: sizes, timeouts and tokens past their limits fail at once with a short message") {
    const auto start = test::clock_type::now();
    CHECK(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "100000000"}, {"PGAS_ROOT", "127.0.0.1:1"}}) ==
          "pgas: world::init (launch environment): PGAS_WORLD_SIZE=100000000 is larger than the limit of 65536 PEs");
    CHECK(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "100000000"}}) ==
          "pgas: world::init (launch environment): PGAS_WORLD_SIZE=100000000 is larger than the limit of 65536 PEs");
    CHECK(error_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "99999999999"}}) ==
          "pgas: world::init (launch environment): OMPI_COMM_WORLD_SIZE=99999999999 is larger than the limit of "
          "65536 PEs");
    CHECK(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                    {"PGAS_BOOTSTRAP_TIMEOUT_MS", "99999999999"}, {"PGAS_TOKEN", "t"}}) ==
          "pgas: world::init (launch environment): PGAS_BOOTSTRAP_TIMEOUT_MS=99999999999 is larger than the limit of "
          "86400000 ms (one day)");
    CHECK(error_of({{"PGAS_RANK", "0"}, {"PGAS_WORLD_SIZE", "2"}, {"PGAS_ROOT", "h:1"},
                    {"PGAS_TOKEN", std::string(2000, 'x')}}) ==
          "pgas: world::init (launch environment): PGAS_TOKEN is 2000 bytes long; at most 1024 are allowed");
    CHECK(test::seconds_since(start) < 1);
}

TEST_CASE("environment: heap sizes up to and including the limit (1T) are accepted, in any unit") {
    // The limit message says "(1T)", so 1T itself must not be refused as malformed.
    using pgas::detail::parse_size;
    constexpr std::uint64_t limit = std::uint64_t{1} << 40;
    for (const char* text : {"1T", "1t", "1024G", "1048576M", "1099511627776"}) {
        CAPTURE(text);
        CHECK(parse_size("PGAS_HEAP_SIZE", text) == limit);
    }
    CHECK(parse_size("PGAS_HEAP_SIZE", "64K") == (64u << 10));
    for (const char* text : {"2T", "1025G", "1099511627777"}) {
        CAPTURE(text);
        CHECK_THROWS_WITH_AS(parse_size("PGAS_HEAP_SIZE", text),
                             ("pgas: PGAS_HEAP_SIZE: '" + std::string(text) +
                              "' is larger than the limit of 1099511627776 bytes (1T)")
                                 .c_str(),
                             pgas::error);
    }
}

TEST_CASE("environment: heap sizes and timeouts past their limits are refused naming the variable and value") {
    auto error_of_init = [](const char* name, const char* value) {
        ::setenv(name, value, 1);
        const std::string text = test::error_of([] { (void)pgas::world::init_local(1); }, pgas::errc::invalid_argument);
        ::unsetenv(name);
        return text;
    };
    CHECK(error_of_init("PGAS_HEAP_SIZE", "99999999999G") ==
          "pgas: PGAS_HEAP_SIZE: '99999999999G' is larger than the limit of 1099511627776 bytes (1T)");
    CHECK(error_of_init("PGAS_HEAP_SIZE", "18446744073709551615") ==
          "pgas: PGAS_HEAP_SIZE: '18446744073709551615' is larger than the limit of 1099511627776 bytes (1T)");
    CHECK(error_of_init("PGAS_HEAP_SIZE", " 5M") ==
          "pgas: PGAS_HEAP_SIZE: expected a positive size such as 268435456, 256M or 1G, got ' 5M'");
    CHECK(error_of_init("PGAS_TIMEOUT_MS", "18446744073709551615") ==
          "pgas: PGAS_TIMEOUT_MS: '18446744073709551615' is larger than the limit of 86400000 ms (one day)");
    CHECK(error_of_init("PGAS_TIMEOUT_MS", "+5") ==
          "pgas: PGAS_TIMEOUT_MS: expected milliseconds as a non-negative integer (0 disables), got '+5'");
    CHECK(test::error_of([] { pgas::world::run_threads(100000000, [](pgas::world&) {}); }) ==
          "pgas: world::run_threads: PE count 100000000 is larger than the limit of 65536");
    ::setenv("PGAS_BOOTSTRAP_TIMEOUT_MS", "0", 1);
    const std::string text = test::error_of([] { pgas::world::run_threads(2, [](pgas::world&) {}); });
    ::unsetenv("PGAS_BOOTSTRAP_TIMEOUT_MS");
    CHECK(text == "pgas: PGAS_BOOTSTRAP_TIMEOUT_MS: must be positive: bootstrap steps are always bounded");
}
