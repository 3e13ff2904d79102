// The TCP bootstrap with threads as peers: collectives, late roots, rejected strangers, mismatches, dead peers.
#include "support.hpp"

#include <atomic>
#include <barrier>
#include <cstdio>

#include <sys/stat.h>
#include <dirent.h>
#include <algorithm>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <vector>
#include <cstdint>

namespace {

using namespace std::chrono_literals;
using pgas::detail::tcp_bootstrap;
namespace tcp = pgas::detail::tcp;

// A raw client of the root, for peers that do not follow the protocol.
tcp::unique_fd connect_raw(int port) {
    const auto deadline = tcp::clock::now() + 5s;
    for (;;) {
        tcp::unique_fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(std::uint16_t(port));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(s.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return s;
        REQUIRE(tcp::clock::now() < deadline);
        std::this_thread::sleep_for(20ms);
    }
}

// The root's answer to a raw client: the frame kind and its text.
std::pair<tcp::kind, std::string> answer(int fd) {
    tcp::header head;
    const auto deadline = tcp::clock::now() + 5s;
    if (tcp::recv_header(fd, head, deadline) != tcp::io::ok) return {tcp::kind{}, "closed"};
    return {head.type, tcp::text_payload(fd, head.length, deadline)};
}

}  // namespace

TEST_CASE("tcp bootstrap: threads form a world - allgather and barrier agree, many times") {
    for (int n : {1, 2, 5}) {
        CAPTURE(n);
        const int port = test::free_port();
        auto endings = test::run_peers(n, [&](int rank) {
            tcp_bootstrap b(test::launch(rank, n, port, 10s));
            REQUIRE(b.rank() == rank);
            REQUIRE(b.size() == n);
            for (int round = 0; round < 50; ++round) {
                auto all = b.allgather_value(std::uint64_t(rank * 1000 + round));
                for (int r = 0; r < n; ++r) REQUIRE(all[std::size_t(r)] == std::uint64_t(r * 1000 + round));
                b.barrier();
            }
            std::vector<unsigned char> big(100000, static_cast<unsigned char>(rank));  // many TCP segments
            std::vector<unsigned char> all(big.size() * std::size_t(n));
            b.allgather(big.data(), all.data(), big.size());
            for (int r = 0; r < n; ++r) REQUIRE(all[std::size_t(r) * big.size() + 777] == r);
        });
        for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    }
}

TEST_CASE("tcp bootstrap: the others retry until the root listens") {
    const int port = test::free_port();
    auto endings = test::run_peers(3, [&](int rank) {
        if (rank == 0) std::this_thread::sleep_for(700ms);
        tcp_bootstrap b(test::launch(rank, 3, port, 10s));
        b.barrier();
    });
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
}

TEST_CASE("tcp bootstrap: a peer with the wrong token is rejected with a clear error - the launch goes on") {
    const int port = test::free_port();
    auto endings = test::run_peers(3, [&](int who) {
        if (who == 2) {  // a stray process of another launch on the same port
            tcp_bootstrap stray(test::launch(1, 2, port, 5s, "another-launch"));
            return;
        }
        if (who == 1) std::this_thread::sleep_for(500ms);  // the stray comes first
        tcp_bootstrap b(test::launch(who, 2, port, 10s));
        b.barrier();
    });
    CHECK_MESSAGE(endings[0].what.empty(), endings[0].what);
    CHECK_MESSAGE(endings[1].what.empty(), endings[1].what);
    CHECK(endings[2].code == pgas::errc::bootstrap);
    CHECK_MESSAGE(test::contains(endings[2].what, "rejected this process: wrong token"), endings[2].what);
}

TEST_CASE("tcp bootstrap: oversize, foreign and malformed hellos are rejected before anything is allocated") {
    const int port = test::free_port();
    auto endings = test::run_peers(2, [&](int who) {
        if (who == 0) {
            tcp_bootstrap b(test::launch(0, 2, port, 10s));
            b.barrier();
            return;
        }
        {  // a 1 GiB hello
            auto s = connect_raw(port);
            auto head = tcp::encode_header(tcp::kind::hello, std::uint64_t{1} << 30);
            REQUIRE(tcp::send_all(s.get(), head.data(), head.size(), tcp::clock::now() + 5s) == tcp::io::ok);
            auto [type, text] = answer(s.get());
            CHECK(type == tcp::kind::reject);
            CHECK_MESSAGE(test::contains(text, "frame of 1073741824 bytes (limit 4096)"), text);
        }
        {  // not pgas at all
            auto s = connect_raw(port);
            const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
            REQUIRE(tcp::send_all(s.get(), http.data(), http.size(), tcp::clock::now() + 5s) == tcp::io::ok);
            auto [type, text] = answer(s.get());
            CHECK_MESSAGE(test::contains(text, "not a pgas bootstrap frame"), text);
        }
        {  // a rank outside the world, and a world size that differs
            for (auto [rank, size, expect] : {std::tuple{7, 2, "rank 7 is outside a world of 2"},
                                              std::tuple{1, 3, "world size 3 differs from the root's 2"}}) {
                auto s = connect_raw(port);
                auto hello = tcp::encode_hello(rank, size, "test-token");
                REQUIRE(tcp::send_frame(s.get(), tcp::kind::hello, hello.data(), hello.size(),
                                        tcp::clock::now() + 5s) == tcp::io::ok);
                auto [type, text] = answer(s.get());
                CHECK_MESSAGE(test::contains(text, expect), text);
            }
        }
        tcp_bootstrap b(test::launch(1, 2, port, 10s));  // the real rank 1 still gets in
        b.barrier();
    });
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
}

TEST_CASE("tcp bootstrap: blocks of different sizes or calls out of order fail on every PE") {
    const int port = test::free_port();
    auto endings = test::run_peers(3, [&](int rank) {
        tcp_bootstrap b(test::launch(rank, 3, port, 10s));
        if (rank == 2)
            (void)b.allgather_value(std::uint64_t(1));
        else
            (void)b.allgather_value(std::uint32_t(1));
    });
    for (auto& e : endings) {
        CHECK(e.code == pgas::errc::collective_mismatch);
        CHECK_MESSAGE(test::contains(e.what, "PE 2 called allgather #0 of 8 bytes while PE 0 called allgather #0 of 4 bytes"), e.what);
    }
    const int port2 = test::free_port();
    endings = test::run_peers(2, [&](int rank) {
        tcp_bootstrap b(test::launch(rank, 2, port2, 10s));
        b.barrier();
        if (rank == 1) {
            b.barrier();
        } else {
            char c = 0, all[2];
            b.allgather(&c, all, 1);
        }
    });
    for (auto& e : endings) CHECK_MESSAGE(test::contains(e.what, "PE 1 called barrier #1 while PE 0 called allgather #1 of 1 bytes"), e.what);
}

TEST_CASE("tcp bootstrap: a peer that never comes is an error on every PE within the timeout") {
    const int port = test::free_port();
    auto endings = test::run_peers(2, [&](int rank) { tcp_bootstrap b(test::launch(rank, 3, port, 800ms)); });
    for (auto& e : endings) {
        CHECK(e.code == pgas::errc::timeout);
        CHECK_MESSAGE(test::contains(e.what, "PE(s) 2 did not connect to the root at 127.0.0.1:"), e.what);
        CHECK(e.seconds < 5);
    }
    CHECK(test::contains(endings[1].what, "the root (PE 0) aborted"));
}

TEST_CASE("tcp bootstrap: a timeout names at most 8 missing PEs and counts the rest") {
    // A message listing every missing PE would be 448 KB on one line at 65,536 PEs.
    const std::string what =
        test::error_of([] { tcp_bootstrap root(test::launch(0, 65536, test::free_port(), 300ms)); });
    CHECK_MESSAGE(test::contains(what, "PE(s) 1, 2, 3, 4, 5, 6, 7, 8 and 65527 more (65535 in all) did not connect"),
                  what);
    CHECK(what.size() < 1000);
    CHECK(pgas::detail::pe_list({3}) == "3");
    CHECK(pgas::detail::pe_list({}) == "?");
}

TEST_CASE("tcp bootstrap: no root is a bounded connect error") {
    const int port = test::free_port();
    const auto start = test::clock_type::now();
    const std::string text =
        test::error_of([&] { tcp_bootstrap b(test::launch(1, 2, port, 500ms)); }, pgas::errc::timeout);
    CHECK_MESSAGE(test::contains(text, "cannot reach the root (PE 0) at 127.0.0.1:" + std::to_string(port) +
                                           " within 500 ms: Connection refused"),
                  text);
    CHECK(test::seconds_since(start) < 3);
}

TEST_CASE("tcp bootstrap: a root address in use is a clear error") {
    const int port = test::free_port();
    tcp::unique_fd squatter(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(std::uint16_t(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(squatter.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(squatter.get(), 1) == 0);
    const std::string text =
        test::error_of([&] { tcp_bootstrap b(test::launch(0, 2, port, 500ms)); }, pgas::errc::bootstrap);
    CHECK_MESSAGE(test::contains(text, "the root cannot listen on 127.0.0.1:" + std::to_string(port) +
                                           ": Address already in use"),
                  text);
}

TEST_CASE("tcp bootstrap: a peer that has left is an error on every other PE at once, and stays one") {
    for (int victim : {0, 2}) {
        CAPTURE(victim);
        const int port = test::free_port();
        std::atomic<int> reported{0};
        int reported_after_bye = -1;
        // The survivors read `reported` together, before either calls again: the first one's failing barrier
        // aborts the job, and the other's watcher, between collectives, rightly reports that abort (under TSan a
        // survivor lagged the other by more than the watcher's 50 ms and the check below saw it).
        std::barrier survivors(2);
        auto endings = test::run_peers(3, [&](int rank) {
            auto b = std::make_unique<tcp_bootstrap>(test::launch(rank, 3, port, 20s));
            b->watch([&](int) { ++reported; });
            b->barrier();
            if (rank == victim) {
                b.reset();  // says bye and closes its sockets
                return;
            }
            std::this_thread::sleep_for(300ms);  // the watchers see the bye first
            survivors.arrive_and_wait();
            if (rank == (victim == 0 ? 1 : 0)) reported_after_bye = reported;
            survivors.arrive_and_wait();
            try {
                b->barrier();
            } catch (const pgas::error&) {
                CHECK_THROWS_WITH_AS(b->barrier(), doctest::Contains("the bootstrap failed earlier"), pgas::error);
                throw;
            }
        });
        CHECK(reported_after_bye == 0);  // leaving in good order is no failure
        for (int rank = 0; rank < 3; ++rank) {
            auto& e = endings[std::size_t(rank)];
            CAPTURE(rank);
            if (rank == victim) {
                CHECK(e.what.empty());
                continue;
            }
            CHECK(e.code == pgas::errc::peer_failed);
            CHECK(e.seconds < 10);  // found by the closed connection, not the 20 s timeout
            if (victim == 0)
                CHECK_MESSAGE(test::contains(e.what, "the root (PE 0) has left"), e.what);
            else
                CHECK_MESSAGE(test::contains(e.what, "PE 2 has left: it destroyed its world"), e.what);
        }
    }
}

TEST_CASE("tcp bootstrap: a hung peer is a timeout on every other PE") {
    const int port = test::free_port();
    auto endings = test::run_peers(3, [&](int rank) {
        tcp_bootstrap b(test::launch(rank, 3, port, 700ms));
        if (rank == 1) {
            std::this_thread::sleep_for(3000ms);  // never reaches the barrier in time
            return;
        }
        b.barrier();
    });
    for (int rank : {0, 2}) {
        auto& e = endings[std::size_t(rank)];
        CHECK(e.code == pgas::errc::timeout);
        CHECK_MESSAGE(test::contains(e.what, "PE(s) 1 did not reach it within 700 ms"), e.what);
        CHECK(e.seconds < 2.8);
    }
}

// --- hostile frames: every decoder checks what it reads --------------------------------------------------

namespace {
// A fake root on `port`: accepts one connection, reads its hello, answers with `frame` (header + payload).
std::thread fake_root(int port, std::vector<unsigned char> frame) {
    tcp::unique_fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(std::uint16_t(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener.get(), 4) == 0);
    return std::thread([listener = std::move(listener), frame = std::move(frame)]() mutable {
        tcp::unique_fd peer(::accept(listener.get(), nullptr, nullptr));
        if (!peer) return;
        const auto deadline = tcp::clock::now() + 5s;
        unsigned char hello[tcp::header_bytes];
        (void)tcp::recv_all(peer.get(), hello, sizeof hello, deadline);
        std::vector<unsigned char> body(tcp::get(hello + 8, 8) < 4096 ? tcp::get(hello + 8, 8) : 0);
        (void)tcp::recv_all(peer.get(), body.data(), body.size(), deadline);
        (void)tcp::send_all(peer.get(), frame.data(), frame.size(), deadline);
        tcp::drain(peer.get(), tcp::clock::now() + 2s);
    });
}

std::vector<unsigned char> frame(tcp::kind type, const std::vector<unsigned char>& payload) {
    auto out = tcp::encode_header(type, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

std::string join_error(int port) {
    return test::error_of([&] { tcp_bootstrap b(test::launch(1, 2, port, 3s)); });
}
}  // namespace

TEST_CASE("tcp bootstrap: an abort frame naming PE INT_MIN is refused by its decoder, not overflowed") {
    std::vector<unsigned char> raw;
    tcp::put(raw, std::uint32_t(pgas::errc::peer_failed), 4);
    tcp::put(raw, 0x80000000u, 4);  // failed PE + 1 = INT_MIN as a 32-bit int
    const auto decoded = tcp::decode_abort(raw.data(), raw.size(), 4);
    CHECK_FALSE(decoded);
    CHECK(decoded.problem == "abort names PE 2147483647, outside a world of 4");
    const int port = test::free_port();
    auto root = fake_root(port, frame(tcp::kind::abort, raw));
    CHECK(join_error(port) == "pgas: bootstrap init on PE 1: malformed abort from the root: abort names PE "
                              "2147483647, outside a world of 2");
    root.join();
}

TEST_CASE("tcp bootstrap: the frame decoders check kinds, versions, codes, calls and lengths") {
    CHECK(tcp::decode_header(tcp::encode_header(tcp::kind(77), 0).data(), 16, 10).problem == "unknown frame kind 77");
    CHECK(tcp::decode_header(tcp::encode_header(tcp::kind::data, 11).data(), 16, 10).problem ==
          "frame of 11 bytes (limit 10)");
    auto old = tcp::encode_header(tcp::kind::data, 0);
    old[4] = 1;
    CHECK(tcp::decode_header(old.data(), 16, 10).problem ==
          "protocol version 1 where 2 was expected (pgas versions differ)");
    std::vector<unsigned char> abort_frame;
    tcp::put(abort_frame, 0xffffffffu, 4);
    tcp::put(abort_frame, 0, 4);
    CHECK(tcp::decode_abort(abort_frame.data(), 8, 2).problem == "abort with unknown error code 4294967295");
    CHECK(tcp::decode_abort(abort_frame.data(), 7, 2).problem == "abort of 7 bytes is cut short");
    auto prefix = tcp::encode_prefix({pgas::detail::host_call::alloc, pgas::detail::exchange_op::allgather, 3, 8});
    CHECK(tcp::decode_prefix(prefix.data(), prefix.size(), 8)->call == pgas::detail::host_call::alloc);
    prefix[0] = 200;
    CHECK(tcp::decode_prefix(prefix.data(), prefix.size(), 8).problem == "unknown host call 200");
    std::vector<unsigned char> hello;
    tcp::put(hello, 0x80000000u, 4);
    tcp::put(hello, 0x80000001u, 4);
    tcp::put(hello, 0, 4);
    CHECK(tcp::decode_hello(hello.data(), hello.size()).problem == "world size 2147483649 is outside [1, 65536]");
    // A root that answers the hello with a frame of another protocol is named, not trusted.
    const int port = test::free_port();
    auto root = fake_root(port, frame(tcp::kind(42), {}));
    CHECK(join_error(port) == "pgas: bootstrap init on PE 1: 127.0.0.1:" + std::to_string(port) +
                                  " is not a pgas bootstrap root: unknown frame kind 42");
    root.join();
}

// --- the single-node rendezvous: a Unix-domain socket only this user can reach --------------------------

namespace {
pgas::launch_info unix_launch(int rank, int size, const std::string& path) {
    auto info = test::launch(rank, size, 0, 5s);
    info.root_host.clear();
    info.root_port = 0;
    info.root_path = path;
    return info;
}

// A fresh directory name under /tmp (not created).
std::string scratch_dir(const char* what) {
    return "/tmp/pgas-test-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(test::free_port());
}
}  // namespace

TEST_CASE("unix rendezvous: a world forms over a private socket, which is gone after init") {
    const std::string dir = scratch_dir("ok"), path = dir + "/job.sock";
    std::atomic<int> sum{0};
    auto endings = test::run_peers(3, [&](int rank) {
        tcp_bootstrap b(unix_launch(rank, 3, path));
        for (int v : b.allgather_value(rank + 1)) sum += v;
    });
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    CHECK(sum == 3 * 6);
    struct stat info {};
    REQUIRE(::stat(dir.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);
    CHECK(::access(path.c_str(), F_OK) != 0);  // no socket file left behind
    ::rmdir(dir.c_str());
}

// The directories beside `dir` that a root made when `dir` was squatted (dir-XXXXXX).
std::vector<std::string> made_beside(const std::string& dir) {
    std::vector<std::string> out;
    const std::string parent = dir.substr(0, dir.rfind('/')), prefix = dir.substr(dir.rfind('/') + 1) + "-";
    if (DIR* d = ::opendir(parent.c_str())) {
        while (auto* e = ::readdir(d))
            if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(parent + "/" + e->d_name);
        ::closedir(d);
    }
    return out;
}

TEST_CASE("unix rendezvous: a directory another user owns, can enter or links is passed over, not a dead end") {
    // Another local user who makes /tmp/pgas-<uid> first must not block every one-node job of this user (who cannot
    // remove it in a sticky /tmp). The root makes a private directory beside it (dir-XXXXXX), the ranks find it
    // there, and it is gone after init.
    for (const char* squat : {"open", "link", "owner"}) {
        CAPTURE(squat);
        if (std::string(squat) == "owner" && ::geteuid() != 0) continue;  // needs to give the directory away
        const std::string dir = scratch_dir(squat), target = dir + "-target";
        if (std::string(squat) == "open") REQUIRE((::mkdir(dir.c_str(), 0700) == 0 && ::chmod(dir.c_str(), 0755) == 0));
        if (std::string(squat) == "link") {
            REQUIRE(::mkdir(target.c_str(), 0700) == 0);
            REQUIRE(::symlink(target.c_str(), dir.c_str()) == 0);
        }
        if (std::string(squat) == "owner") REQUIRE((::mkdir(dir.c_str(), 0700) == 0 && ::chown(dir.c_str(), 65534, 65534) == 0));
        std::atomic<int> sum{0};
        auto endings = test::run_peers(3, [&](int rank) {
            tcp_bootstrap b(unix_launch(rank, 3, dir + "/job.sock"));
            for (int v : b.allgather_value(rank + 1)) sum += v;
        });
        for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
        CHECK(sum == 3 * 6);
        CHECK(::access((dir + "/job.sock").c_str(), F_OK) != 0);  // nothing was put in the squatted directory
        const auto left = made_beside(dir);
        CHECK_MESSAGE(std::none_of(left.begin(), left.end(), [&](const std::string& d) { return d != target; }),
                      "left behind: " << (left.empty() ? "" : left.front()));
        ::unlink(dir.c_str());
        ::rmdir(dir.c_str());
        ::rmdir(target.c_str());
    }
}

TEST_CASE("unix rendezvous: a live root's socket is never unlinked - a second root on it fails, the first job completes") {
    // A second job of this user with the same job id must not unlink the first one's socket and take its late
    // ranks. A socket that a live root listens on stays; one nobody listens on (a dead job's) is replaced.
    const std::string dir = scratch_dir("live"), path = dir + "/job.sock";
    std::string first_error = "none";
    std::thread first([&] {
        try {
            tcp_bootstrap b(unix_launch(0, 2, path));
            b.barrier();
        } catch (const pgas::error& e) {
            first_error = e.what();
        }
    });
    for (int i = 0; i < 250 && !tcp::is_socket(path); ++i) std::this_thread::sleep_for(20ms);
    REQUIRE(tcp::is_socket(path));
    struct stat before {};
    REQUIRE(::lstat(path.c_str(), &before) == 0);
    const std::string text =
        test::error_of([&] { tcp_bootstrap second(unix_launch(0, 2, path)); }, pgas::errc::bootstrap);
    CHECK_MESSAGE(test::contains(text, "the rendezvous socket " + path + " is in use by a live root"), text);
    struct stat after {};
    CHECK((::lstat(path.c_str(), &after) == 0 && after.st_ino == before.st_ino));
    {
        tcp_bootstrap late(unix_launch(1, 2, path));  // the first job's late rank still finds its own root
        late.barrier();
    }
    first.join();
    CHECK_MESSAGE(first_error == "none", first_error);
    // A socket file nobody listens on (a dead root's) is replaced.
    {
        tcp::unique_fd dead(::socket(AF_UNIX, SOCK_STREAM, 0));
        const auto e = tcp::unix_endpoint(path, 0);
        REQUIRE(::bind(dead.get(), reinterpret_cast<const sockaddr*>(&e.address), e.length) == 0);
    }
    REQUIRE(tcp::is_socket(path));
    auto endings = test::run_peers(2, [&](int rank) { tcp_bootstrap(unix_launch(rank, 2, path)).barrier(); });
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    ::rmdir(dir.c_str());
}

TEST_CASE("unix rendezvous: a process of another user cannot reach the root") {
    if (::geteuid() != 0) return;  // needs to become another user (CI runs as root)
    const std::string dir = scratch_dir("uid"), path = dir + "/job.sock";
    std::thread root([&] {
        try {
            tcp_bootstrap b(unix_launch(0, 2, path));
        } catch (const pgas::error&) {
        }
    });
    // Wait until the root listens, then try to connect as uid 65534 from a child process.
    for (int i = 0; i < 100 && ::access(path.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(20ms);
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
        tcp::unique_fd s(::socket(AF_UNIX, SOCK_STREAM, 0));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
        const int rc = ::connect(s.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::_exit(rc == 0 ? 1 : errno == EACCES ? 0 : 3);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // EACCES: the directory keeps other users out
    tcp_bootstrap peer(unix_launch(1, 2, path));  // the job's own rank still joins
    root.join();
    ::rmdir(dir.c_str());
}

// --- hostile clients: strangers hold up nobody, and the root's memory stays bounded ----------------------

namespace {
long rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    if (f) std::fclose(f);
    return kib;
}
}  // namespace

TEST_CASE("hostile clients: idle, dripping, garbage, huge, truncated and wrong-token connections delay nobody") {
    const int port = test::free_port();
    const long rss_before = rss_kib();
    std::atomic<bool> stop{false}, ready{false};
    std::vector<tcp::unique_fd> idle;
    std::thread strangers([&] {
        // Many idle connections, more than the root holds at once.
        for (int i = 0; i < 100; ++i) idle.push_back(connect_raw(port));
        auto garbage = connect_raw(port);
        std::vector<unsigned char> noise(8192);
        for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<unsigned char>(i * 131 + 7);
        (void)tcp::send_all(garbage.get(), noise.data(), noise.size(), tcp::clock::now() + 1s);
        auto huge = connect_raw(port);
        auto head = tcp::encode_header(tcp::kind::hello, ~std::uint64_t{0});
        (void)tcp::send_all(huge.get(), head.data(), head.size(), tcp::clock::now() + 1s);
        auto truncated = connect_raw(port);
        auto hello = tcp::encode_hello(1, 2, "test-token");
        auto frame_bytes = tcp::encode_header(tcp::kind::hello, hello.size());
        frame_bytes.insert(frame_bytes.end(), hello.begin(), hello.end() - 3);
        (void)tcp::send_all(truncated.get(), frame_bytes.data(), frame_bytes.size(), tcp::clock::now() + 1s);
        truncated.reset();
        auto wrong = connect_raw(port);
        auto bad = tcp::encode_hello(1, 2, "not-the-token");
        (void)tcp::send_frame(wrong.get(), tcp::kind::hello, bad.data(), bad.size(), tcp::clock::now() + 1s);
        auto drip = connect_raw(port);  // a valid-looking header, one byte at a time
        ready = true;
        for (std::size_t i = 0; i < head.size() && !stop; ++i) {
            (void)tcp::send_all(drip.get(), &head[i], 1, tcp::clock::now() + 1s);
            std::this_thread::sleep_for(50ms);
        }
        while (!stop) std::this_thread::sleep_for(10ms);
    });
    double seconds = 0;
    auto endings = test::run_peers(2, [&](int rank) {
        if (rank == 1)  // the strangers come first
            while (!ready) std::this_thread::sleep_for(5ms);
        const auto start = test::clock_type::now();
        tcp_bootstrap b(test::launch(rank, 2, port, 3s));
        b.barrier();
        if (rank == 1) seconds = test::seconds_since(start);
    });
    stop = true;
    strangers.join();
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    CHECK(seconds < 1.5);  // not 5 s per silent stranger
    CHECK(rss_kib() - rss_before < 16 * 1024);  // nothing sized by what strangers claim
}

TEST_CASE("hostile clients: an impostor rank is refused clearly, a connection after init finds nobody") {
    const int port = test::free_port();
    // A stray process of the same launch (it has the token) claims rank 1 after the real one.
    auto endings = test::run_peers(4, [&](int who) {
        const int rank = who == 3 ? 1 : who;
        if (who == 3) std::this_thread::sleep_for(100ms);
        if (who == 2) std::this_thread::sleep_for(500ms);
        tcp_bootstrap b(test::launch(rank, 3, port, 3s));
        b.barrier();
    });
    for (int who : {0, 1, 2}) CHECK_MESSAGE(endings[std::size_t(who)].what.empty(), endings[std::size_t(who)].what);
    CHECK_MESSAGE(test::contains(endings[3].what, "rejected this process: rank 1 has already joined"), endings[3].what);
    // After init the listener is closed: a late connection is refused by the OS, not read by the root.
    tcp::unique_fd late(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(std::uint16_t(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(::connect(late.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0);
}
