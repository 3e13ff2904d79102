// pgasrun: starts N processes of one pgas program on this node, forwards their output with a rank prefix, and stops
// them all when one fails.
//
//   pgasrun -n N [--timeout S] [--grace S] [--] program [args...]
//
// Each process gets PGAS_RANK, PGAS_WORLD_SIZE, PGAS_LOCAL_RANK,
// PGAS_LOCAL_SIZE, PGAS_ROOT (a free port on 127.0.0.1) and PGAS_TOKEN (random)
// for world::init(). Their stdout and stderr lines reach pgasrun's stdout and
// stderr as "[rank] line". When a process exits non-zero or is killed by a
// signal, pgasrun says which rank and how (the one that failed first: a death
// by signal within 250 ms of the first failure wins over exits, which are
// mostly peers reporting the loss), gives the others --grace S (3) to
// report the loss themselves, then stops them (SIGTERM, SIGKILL 3 s later) and exits with that process's status (128+signal for
// a signal). --timeout S stops everything after S seconds with status 124.
// SIGINT/SIGTERM/SIGHUP to pgasrun are passed on to every process. Each rank
// runs in its own process group (stopping a rank stops what it started) with
// stdin from /dev/null: a background group reading the terminal would stop.
// Every rank gets SIGKILL when pgasrun dies, whatever ended it (SIGKILL, the
// OOM killer): the kernel's parent-death signal, which a kill of pgasrun's
// process group would not reach otherwise. Each rank also gets a
// pipe, PGAS_STATUS_FD, on which its world says that it joined and that it was
// finalized: a rank that exits 0 in between failed (status 1), since its peers
// lost what they sent it.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <pgas/host/bootstrap/launchers.hpp>  // the variables it sets
#include <pgas/host/bootstrap/tcp_endpoints.hpp>  // free_port, random_token
#include <pgas/host/env.hpp>                   // max_world_size

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using clock_type = std::chrono::steady_clock;

volatile std::sig_atomic_t received_signal = 0;
void on_signal(int signal) { received_signal = signal; }

// After a rank fails, pgasrun waits this long for others to end before it
// says which failed first: a rank killed by a signal (kill -9, a crash) is
// reported, not its peers that exit non-zero because of it. A killed process
// of several threads ends only once its last thread has unmapped its memory,
// which can be after its peers, told by its closed sockets, have exited (the
// test "pgasrun: names the rank killed first" shows it whenever pgasrun runs
// late; without the window the peer was named in 9 of 46 kill -9 runs).
constexpr auto window_after_failure = std::chrono::milliseconds(250);

// SIGCHLD wakes the event loop at once and writes the pid it reports. A
// SIGCHLD that arrives while one is pending is merged into it, and the
// pending one keeps its own siginfo: so the pids written are in the order the
// ranks ended, each the first of those that ended since the last one. That
// order, not waitpid's (fork order: rank 0 first), decides between failures of
// one kind (two exits) that have both ended by the time pgasrun runs.
int child_pipe[2] = {-1, -1};
void on_child(int, siginfo_t* info, void*) {
    const int saved = errno;
    const pid_t pid = info->si_pid;
    (void)!::write(child_pipe[1], &pid, sizeof pid);
    errno = saved;
}

[[noreturn]] void usage(const char* problem) {
    if (problem) std::fprintf(stderr, "pgasrun: %s\n", problem);
    std::fprintf(stderr,
                 "usage: pgasrun -n N [--timeout SECONDS] [--grace SECONDS] [--] program [args...]\n"
                 "  starts N local processes of program with PGAS_RANK, PGAS_WORLD_SIZE, PGAS_LOCAL_RANK,\n"
                 "  PGAS_LOCAL_SIZE, PGAS_ROOT and PGAS_TOKEN set; when one fails (a death by signal wins over\n"
                 "  exits within 250 ms) pgasrun names it and exits with its status (128+signal); the others get --grace\n"
                 "  seconds (default 3) to report it, then SIGTERM, then SIGKILL 3 s later; every process\n"
                 "  gets SIGKILL when pgasrun dies, whatever signal ends it; a rank that exits 0 without\n"
                 "  finalizing the pgas world it joined failed (status 1)\n");
    std::exit(2);
}

// A positive integer up to `limit` (`unit` says of what), or the usage with what is wrong.
int positive(const char* option, const char* text, long limit, const char* unit) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0 || (errno != 0 && value != LONG_MAX))
        usage((std::string(option) + " needs a positive integer, got '" + text + "'").c_str());
    if (errno != 0 || value > limit)
        usage((std::string(option) + " " + text + " is larger than the limit of " + std::to_string(limit) + unit)
                  .c_str());
    return int(value);
}

// One stream (stdout or stderr) of one rank: bytes read so far, emitted a line at a time.
struct stream {
    int fd = -1;
    int to = 1;
    std::string pending;
};

struct rank_process {
    pid_t pid = -1;
    bool running = false;
    stream out, err;
    int status_fd = -1;   // the read end of its PGAS_STATUS_FD pipe
    bool joined = false;  // its world said 'i' (joined) and not yet 'f' (finalized)
};

// Reads what the rank's world said on its status pipe ('i' joined, 'f' finalized); closes it at end of file.
void read_status(rank_process& r) {
    char said[256];
    for (ssize_t n; r.status_fd >= 0 && (n = ::read(r.status_fd, said, sizeof said)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return;
            n = 0;
        }
        for (ssize_t i = 0; i < n; ++i)
            if (said[i] == 'i' || said[i] == 'f') r.joined = said[i] == 'i';
        if (n == 0) break;
    }
    ::close(r.status_fd);
    r.status_fd = -1;
}

void write_all(int fd, const std::string& text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        left -= std::size_t(n);
    }
}

void emit_lines(stream& s, int rank, bool flush_partial) {
    std::string prefix = "[";
    prefix += std::to_string(rank);
    prefix += "] ";
    std::size_t start = 0;
    std::string block;
    for (std::size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1)
        block += prefix + s.pending.substr(start, nl + 1 - start);
    s.pending.erase(0, start);
    if (flush_partial && !s.pending.empty()) {
        block += prefix + s.pending + "\n";
        s.pending.clear();
    }
    if (!block.empty()) write_all(s.to, block);
}

// Reads what is there; closes the stream at end of file.
void drain(stream& s, int rank) {
    char buffer[65536];
    const ssize_t n = ::read(s.fd, buffer, sizeof buffer);
    if (n > 0) {
        s.pending.append(buffer, std::size_t(n));
        emit_lines(s, rank, s.pending.size() > (1u << 20));  // no unbounded line
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        emit_lines(s, rank, true);
        ::close(s.fd);
        s.fd = -1;
    }
}

std::string describe(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    return "stopped";
}

pid_t start(int rank, int size, const std::string& root, const std::string& token, char** argv, stream& out,
            stream& err, int& status_fd) {
    int out_pipe[2], err_pipe[2], status_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(status_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        std::fprintf(stderr, "pgasrun: pipe: %s\n", std::strerror(errno));
        return -1;
    }
    const pid_t launcher = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Dies with pgasrun. Set after the fork, so pgasrun may already be gone: then the rank is not started.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != launcher) ::_exit(128 + SIGKILL);
        ::setpgid(0, 0);  // its own group: stopping it stops what it started
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        const int null = ::open("/dev/null", O_RDONLY);
        if (null >= 0) ::dup2(null, 0);
        // The names the world reads them by (host/bootstrap/launchers.hpp): one node, so local = world.
        namespace launch = pgas::detail;
        ::setenv(launch::pgas_launcher.rank, std::to_string(rank).c_str(), 1);
        ::setenv(launch::pgas_launcher.size[0], std::to_string(size).c_str(), 1);
        ::setenv(launch::pgas_launcher.local_rank, std::to_string(rank).c_str(), 1);
        ::setenv(launch::pgas_launcher.local_size, std::to_string(size).c_str(), 1);
        ::setenv(launch::root_var, root.c_str(), 1);
        ::setenv(launch::token_var, token.c_str(), 1);
        const int status = ::fcntl(status_pipe[1], F_DUPFD, 3);  // inherited: the world writes 'i' and 'f' to it
        if (status >= 0) ::setenv(launch::status_fd_var, std::to_string(status).c_str(), 1);
        std::signal(SIGPIPE, SIG_DFL);
        ::execvp(argv[0], argv);
        std::fprintf(stderr, "pgasrun: cannot run '%s': %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    if (pid > 0) ::setpgid(pid, pid);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(status_pipe[1]);
    status_fd = status_pipe[0];
    out = {out_pipe[0], 1, {}};
    err = {err_pipe[0], 2, {}};
    if (pid < 0) std::fprintf(stderr, "pgasrun: fork: %s\n", std::strerror(errno));
    return pid;
}

}  // namespace

int main(int argc, char** argv) {
    int n = 0, timeout_s = 0, grace_s = 3, first = argc;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "-n" || arg == "--np") && i + 1 < argc) {
            n = positive("-n", argv[++i], pgas::detail::max_world_size, " PEs of one world");
        } else if (arg == "--timeout" && i + 1 < argc) {
            timeout_s = positive("--timeout", argv[++i], 100000, " seconds");
        } else if (arg == "--grace" && i + 1 < argc) {
            grace_s = std::string(argv[i + 1]) == "0" ? (++i, 0) : positive("--grace", argv[++i], 100000, " seconds");
        } else if (arg == "-h" || arg == "--help") {
            usage(nullptr);
        } else if (arg == "--") {
            first = i + 1;
            break;
        } else if (!arg.empty() && arg[0] == '-') {
            usage(("unknown option " + arg).c_str());
        } else {
            first = i;
            break;
        }
    }
    if (n == 0) usage("-n N is required");
    if (first >= argc) usage("no program given");

    struct sigaction action {};
    action.sa_handler = on_signal;
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
    if (::pipe2(child_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        std::fprintf(stderr, "pgasrun: pipe: %s\n", std::strerror(errno));
        return 1;
    }
    struct sigaction child_action {};
    child_action.sa_sigaction = on_child;
    child_action.sa_flags = SA_RESTART | SA_NOCLDSTOP | SA_SIGINFO;
    ::sigaction(SIGCHLD, &child_action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    std::string root, token;
    try {
        root = "127.0.0.1:" + std::to_string(pgas::detail::tcp::free_port("pgasrun", INADDR_LOOPBACK));
        token = pgas::detail::tcp::random_token("pgasrun");
    } catch (const pgas::error& e) {
        std::fprintf(stderr, "pgasrun: %s\n", e.what());
        return 1;
    }
    std::vector<rank_process> ranks(static_cast<std::size_t>(n));
    int failed_status = 0;  // pgasrun's exit status once something went wrong
    auto stop_all = [&](int signal) {
        for (auto& r : ranks)
            if (r.running) {
                ::kill(-r.pid, signal);
                if (signal != SIGKILL) ::kill(-r.pid, SIGCONT);  // a stopped rank handles it now
            }
    };
    // After a rank fails the others get grace_s to report it themselves (pgas
    // names the lost PE within its bounds), then SIGTERM, then SIGKILL 3 s later.
    clock_type::time_point term_at{}, kill_at{};
    bool stopping = false, termed = false;
    auto begin_stop = [&](int status, int grace) {
        if (stopping) return;
        stopping = true;
        failed_status = status;
        term_at = clock_type::now() + std::chrono::seconds(grace);
        kill_at = term_at + std::chrono::seconds(3);
    };

    for (int r = 0; r < n && !stopping; ++r) {
        auto& p = ranks[std::size_t(r)];
        p.pid = start(r, n, root, token, argv + first, p.out, p.err, p.status_fd);
        if (p.pid < 0) begin_stop(1, 0);
        p.running = p.pid > 0;
    }

    const auto began = clock_type::now();
    clock_type::time_point all_exited{};
    std::unordered_map<pid_t, std::size_t> ended_as;  // pid -> its place in the order of SIGCHLD reports
    auto read_ended = [&] {
        pid_t pids[256];
        for (ssize_t got; (got = ::read(child_pipe[0], pids, sizeof pids)) > 0;)
            for (ssize_t i = 0; i < got / ssize_t(sizeof(pid_t)); ++i) ended_as.emplace(pids[i], ended_as.size());
    };
    std::unordered_map<pid_t, int> rank_of;
    for (int r = 0; r < n; ++r) rank_of[ranks[std::size_t(r)].pid] = r;
    // The failures of the first window_after_failure after the first one; one of them is reported.
    // status: the wait status; unfinalized: it exited 0 with its world joined and not finalized (the data
    // its peers sent it is lost, though every process may exit 0), which pgasrun reports as exit status 1.
    struct failure {
        int rank, status;
        bool unfinalized = false;
    };
    std::vector<failure> failures;
    clock_type::time_point decide_at{};
    auto reap = [&] {
        int status = 0;
        for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
            const auto found = rank_of.find(pid);
            if (found == rank_of.end()) continue;
            auto& ended = ranks[std::size_t(found->second)];
            ended.running = false;
            read_status(ended);  // what it said before it ended is in the pipe still
            const bool unfinalized = ended.joined && WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !unfinalized) continue;
            if (failures.empty()) decide_at = clock_type::now() + window_after_failure;
            failures.push_back({found->second, status, unfinalized});
        }
        const bool none_running = std::none_of(ranks.begin(), ranks.end(), [](auto& r) { return r.running; });
        if (none_running && all_exited == clock_type::time_point{}) all_exited = clock_type::now();
        if (failures.empty() || stopping || (!none_running && clock_type::now() < decide_at)) return;
        // A death by signal first (the peers of a killed rank exit because of it); then the first to end: the
        // SIGCHLD of every rank reaped so far has been handled (signals are delivered on return from waitpid),
        // and one never reported ended after one that was (its SIGCHLD was merged); then the lower rank.
        read_ended();
        auto key = [&](const failure& f) {
            const auto at = ended_as.find(ranks[std::size_t(f.rank)].pid);
            return std::tuple(!WIFSIGNALED(f.status), at == ended_as.end() ? ended_as.size() : at->second, f.rank);
        };
        const failure first = *std::min_element(failures.begin(), failures.end(),
                                                [&](const failure& a, const failure& b) { return key(a) < key(b); });
        const std::string how = describe(first.status) + (first.unfinalized
                                                               ? " without finalizing its pgas world (it had "
                                                                 "joined: what its peers sent it since is lost)"
                                                               : "");
        std::fprintf(stderr, "pgasrun: rank %d (pid %d) %s; stopping the other ranks in %d s unless they exit\n",
                     first.rank, int(ranks[std::size_t(first.rank)].pid), how.c_str(), grace_s);
        begin_stop(first.unfinalized          ? 1
                   : WIFEXITED(first.status) ? WEXITSTATUS(first.status)
                                             : 128 + WTERMSIG(first.status),
                   grace_s);
    };
    for (;;) {
        std::vector<pollfd> polls{{child_pipe[0], POLLIN, 0}};
        std::vector<stream*> streams{nullptr};
        std::vector<int> owners{-1};
        for (int r = 0; r < n; ++r)
            for (stream* s : {&ranks[std::size_t(r)].out, &ranks[std::size_t(r)].err})
                if (s->fd >= 0) {
                    polls.push_back({s->fd, POLLIN, 0});
                    streams.push_back(s);
                    owners.push_back(r);
                }
        const bool any_running = std::any_of(ranks.begin(), ranks.end(), [](auto& r) { return r.running; });
        // Output of descendants that outlive their rank is drained for one second at most.
        if (!any_running && (polls.size() == 1 || clock_type::now() - all_exited > std::chrono::seconds(1))) break;
        const int wait_ms = failures.empty() || stopping ? 100 : 10;  // a failure's window ends on time
        if (::poll(polls.data(), polls.size(), wait_ms) > 0) {
            read_ended();
            // Reap first: output that arrives with the exit is drained below
            // and at the end, and the exit order decides who is reported.
            reap();
            for (std::size_t i = 1; i < polls.size(); ++i)
                if (polls[i].revents) drain(*streams[i], owners[i]);
        }
        reap();
        if (received_signal && !stopping) {
            std::fprintf(stderr, "pgasrun: received signal %d; passing it to every rank\n", int(received_signal));
            stop_all(received_signal);
            stopping = termed = true;
            failed_status = 128 + received_signal;
            kill_at = clock_type::now() + std::chrono::seconds(3);
        }
        if (timeout_s > 0 && !stopping && clock_type::now() - began > std::chrono::seconds(timeout_s)) {
            std::string left;
            for (int r = 0; r < n; ++r)
                if (ranks[std::size_t(r)].running) left += (left.empty() ? "" : ", ") + std::to_string(r);
            std::fprintf(stderr, "pgasrun: time limit of %d s reached; stopping rank(s) %s\n", timeout_s, left.c_str());
            begin_stop(124, 0);
        }
        if (stopping && !termed && clock_type::now() >= term_at) {
            stop_all(SIGTERM);
            termed = true;
        }
        if (stopping && clock_type::now() > kill_at) stop_all(SIGKILL);
    }
    return failed_status;
}
