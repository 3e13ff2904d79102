// Helpers of the bootstrap tests: free ports, threads as bootstrap peers, and child processes with a time bound.
#pragma once

#include "../common/support.hpp"

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace test {

using clock_type = std::chrono::steady_clock;
using environment = std::map<std::string, std::string>;

// The launch as parse_launch_env reads it from `env` alone (no process environment).
inline pgas::launch_info parse(const environment& env) {
    return pgas::detail::parse_launch_env([&](const char* name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
    });
}

inline double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// A port of 127.0.0.1 that is free now.
inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::getsockname(s, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    ::close(s);
    return ntohs(address.sin_port);
}

inline pgas::launch_info launch(int rank, int size, int port, std::chrono::milliseconds timeout,
                                std::string token = "test-token") {
    pgas::launch_info info;
    info.rank = rank;
    info.size = size;
    info.root_host = "127.0.0.1";
    info.root_port = port;
    info.token = std::move(token);
    info.bootstrap_timeout = timeout;
    info.source = "test";
    return info;
}

// What one peer thread ended with: empty text when it returned normally.
struct ending {
    std::string what;
    std::optional<pgas::errc> code;
    double seconds = 0;
};

// Runs body(i) for i in [0, n) on n threads and reports how each ended.
inline std::vector<ending> run_peers(int n, const std::function<void(int)>& body) {
    std::vector<ending> endings(static_cast<std::size_t>(n));
    std::vector<std::thread> threads;
    const auto start = clock_type::now();
    for (int i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            auto& e = endings[std::size_t(i)];
            try {
                body(i);
            } catch (const pgas::error& error) {
                e.what = error.what();
                e.code = error.code();
            } catch (const std::exception& error) {
                e.what = std::string("non-pgas exception: ") + error.what();
            }
            e.seconds = seconds_since(start);
        });
    for (auto& t : threads) t.join();
    return endings;
}

// How a child process ended: raw wait status, merged stdout+stderr, seconds it ran.
struct process_result {
    int status = -1;
    std::string output;
    double seconds = 0;
    bool exited(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
};

// Starts every command (argv, extra environment) at once, collects their
// output, and kills what still runs after `limit`.
inline std::vector<process_result> run_processes(const std::vector<std::pair<std::vector<std::string>, environment>>& commands,
                                                 std::chrono::seconds limit) {
    struct child {
        pid_t pid = -1;
        int fd = -1;
        bool running = true;
    };
    std::vector<child> children(commands.size());
    std::vector<process_result> results(commands.size());
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < commands.size(); ++i) {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::setpgid(0, 0);
            ::dup2(fds[1], 1);
            ::dup2(fds[1], 2);
            for (auto& [name, value] : commands[i].second) ::setenv(name.c_str(), value.c_str(), 1);
            std::vector<char*> argv;
            for (auto& a : commands[i].first) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
            ::_exit(127);
        }
        ::close(fds[1]);
        children[i] = {pid, fds[0], true};
    }
    for (;;) {
        bool any = false;
        std::vector<pollfd> polls;
        std::vector<std::size_t> owner;
        for (std::size_t i = 0; i < children.size(); ++i) {
            if (children[i].fd >= 0) {
                polls.push_back({children[i].fd, POLLIN, 0});
                owner.push_back(i);
            }
            any = any || children[i].running || children[i].fd >= 0;
        }
        if (!any) break;
        if (!polls.empty() && ::poll(polls.data(), polls.size(), 20) > 0) {
            for (std::size_t k = 0; k < polls.size(); ++k) {
                if (!polls[k].revents) continue;
                char buffer[4096];
                auto& c = children[owner[k]];
                const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
                if (n > 0)
                    results[owner[k]].output.append(buffer, std::size_t(n));
                else {
                    ::close(c.fd);
                    c.fd = -1;
                }
            }
        } else if (polls.empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        for (std::size_t i = 0; i < children.size(); ++i) {
            if (!children[i].running) continue;
            int status = 0;
            if (::waitpid(children[i].pid, &status, WNOHANG) == children[i].pid) {
                children[i].running = false;
                results[i].status = status;
                results[i].seconds = seconds_since(start);
            }
        }
        if (clock_type::now() - start > limit)
            for (auto& c : children)
                if (c.running) ::kill(-c.pid, SIGKILL);
    }
    return results;
}

// Starts n worker processes as one world (what pgasrun does, without its
// stop-the-rest rule, so the survivors' own errors can be checked).
inline std::vector<process_result> run_world(int n, const std::vector<std::string>& args, environment extra,
                                             std::chrono::seconds limit) {
    const std::string root = "127.0.0.1:" + std::to_string(free_port());
    std::vector<std::pair<std::vector<std::string>, environment>> commands;
    for (int r = 0; r < n; ++r) {
        environment env = extra;
        env["PGAS_RANK"] = std::to_string(r);
        env["PGAS_WORLD_SIZE"] = std::to_string(n);
        env["PGAS_LOCAL_RANK"] = std::to_string(r);
        env["PGAS_LOCAL_SIZE"] = std::to_string(n);
        env["PGAS_ROOT"] = root;
        env["PGAS_TOKEN"] = "token-" + root;
        std::vector<std::string> argv{PGAS_TEST_WORKER};
        argv.insert(argv.end(), args.begin(), args.end());
        commands.emplace_back(argv, env);
    }
    return run_processes(commands, limit);
}

}  // namespace test
