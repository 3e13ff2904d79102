// Descriptor passing between node-local participants and the shared-memory heap built on it (threads as processes).
#include "support.hpp"

#include <cstdint>

#include <array>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>

namespace {

using namespace std::chrono_literals;

std::shared_ptr<pgas::detail::thread_bootstrap::shared> rendezvous(int n) {
    return std::make_shared<pgas::detail::thread_bootstrap::shared>(n, std::chrono::milliseconds(10000));
}

}  // namespace

TEST_CASE("fd exchange: every participant receives every other's descriptor, indexed by node rank") {
    for (int n : {1, 2, 4}) {
        CAPTURE(n);
        auto shared = rendezvous(n);
        auto endings = test::run_peers(n, [&](int rank) {
            pgas::detail::thread_bootstrap b(shared, rank);
            auto node = pgas::detail::discover_node(b);
            REQUIRE(node.size() == n);
            REQUIRE(node.ranks[std::size_t(node.my_index)] == rank);
            pgas::detail::tcp::unique_fd mine(::memfd_create("fd-exchange-test", MFD_CLOEXEC));
            const std::int64_t tag = 1000 + rank;
            REQUIRE(::pwrite(mine.get(), &tag, sizeof tag, 0) == sizeof tag);
            auto fds = pgas::detail::allgather_fds(b, mine.get(), node, 5000ms);
            REQUIRE(fds.size() == std::size_t(n));
            for (int i = 0; i < n; ++i) {
                pgas::detail::tcp::unique_fd fd(fds[std::size_t(i)]);
                std::int64_t seen = 0;
                REQUIRE(::pread(fd.get(), &seen, sizeof seen, 0) == sizeof seen);
                CHECK(seen == 1000 + node.ranks[std::size_t(i)]);
                CHECK((::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
                if (i == node.my_index) CHECK(fd.get() != mine.get());  // a duplicate the caller owns
            }
        });
        for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    }
}

TEST_CASE("shm heap: each PE's heap is visible to the others through the host transport") {
    constexpr int n = 3;
    auto shared = rendezvous(n);
    auto endings = test::run_peers(n, [&](int pe) {
        pgas::world_options options;
        options.heap_bytes = std::uint64_t{32} << 20;
        options.timeout_ms = 10000;
        pgas::world w(std::make_shared<pgas::detail::thread_bootstrap>(shared, pe), {pe}, n, options,
                      &pgas::detail::make_shm_heap);
        auto ctx = w.context<pgas::host>();
        auto box = w.alloc<std::uint64_t>(1024);
        const int right = (pe + 1) % n, left = (pe + n - 1) % n;
        for (int i = 0; i < 1024; ++i) pgas::p(ctx, box + i, std::uint64_t(pe * 100000 + i), right);
        pgas::barrier_all(ctx);
        for (int i = 0; i < 1024; ++i) REQUIRE(ctx.local(box)[i] == std::uint64_t(left * 100000 + i));
        // Each mapping of a heap is distinct memory-wise only by address.
        CHECK(ctx.peer(box, right) != ctx.local(box));
        w.free(box);
    });
    for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
}

TEST_CASE("shm heap: heap sizes that differ between processes are reported naming the PE") {
    constexpr int n = 2;
    auto shared = rendezvous(n);
    auto endings = test::run_peers(n, [&](int pe) {
        pgas::world_options options;
        options.heap_bytes = pe == 1 ? std::uint64_t{48} << 20 : std::uint64_t{32} << 20;
        pgas::world w(std::make_shared<pgas::detail::thread_bootstrap>(shared, pe), {pe}, n, options,
                      &pgas::detail::make_shm_heap);
    });
    CHECK(endings[0].code == pgas::errc::collective_mismatch);
    CHECK_MESSAGE(test::contains(endings[0].what, "PE 1's heap is 50331648 bytes but 33554432 here"), endings[0].what);
    CHECK_MESSAGE(test::contains(endings[1].what, "PE 0's heap is 33554432 bytes but 50331648 here"), endings[1].what);
}

TEST_CASE("fd exchange: a PE that never reaches the exchange is named by the others") {
    auto shared = std::make_shared<pgas::detail::thread_bootstrap::shared>(3, std::chrono::milliseconds(1000));
    auto endings = test::run_peers(3, [&](int rank) {
        pgas::detail::thread_bootstrap b(shared, rank);
        auto node = pgas::detail::discover_node(b);
        if (rank == 2) node = pgas::detail::node_group{};  // PE 2 takes part in the bootstrap steps only
        pgas::detail::tcp::unique_fd mine(::memfd_create("fd-exchange-test", MFD_CLOEXEC));
        (void)pgas::detail::allgather_fds(b, mine.get(), node, 1000ms);
    });
    // Each waits for the bootstrap to name PE 2 (threads' bootstraps know of no death), then names it itself.
    for (int rank : {0, 1})
        CHECK_MESSAGE(test::contains(endings[std::size_t(rank)].what, "fd exchange on PE " + std::to_string(rank) +
                                                                          ": cannot reach PE 2's socket: "),
                      endings[std::size_t(rank)].what);
}

TEST_CASE("fd exchange: a PE that stalls in it is named within the bootstrap's timeout, not a fixed 30 s") {
    // The GPU heap's and the windows' exchanges honour PGAS_BOOTSTRAP_TIMEOUT_MS, not a fixed 30 s of their own.
    // PE 2 listens and takes part in the bootstrap steps, but sends nothing.
    auto shared = std::make_shared<pgas::detail::thread_bootstrap::shared>(3, std::chrono::milliseconds(1000));
    auto endings = test::run_peers(3, [&](int rank) {
        pgas::detail::thread_bootstrap b(shared, rank);
        auto node = pgas::detail::discover_node(b);
        pgas::detail::tcp::unique_fd mine(::memfd_create("fd-exchange-test", MFD_CLOEXEC));
        if (rank != 2) {
            (void)pgas::detail::allgather_fds(b, mine.get(), node);  // the bootstrap's bound
            return;
        }
        const auto session = b.allgather_value(std::array<unsigned char, 16>{})[0];
        pgas::detail::tcp::unique_fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un address;
        const socklen_t length = pgas::detail::fd_detail::socket_address(address, session, 2);
        REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) == 0);
        REQUIRE(::listen(listener.get(), 4) == 0);
        b.barrier();
        std::this_thread::sleep_for(3000ms);
    });
    for (int rank : {0, 1}) {
        CAPTURE(rank);
        CHECK_MESSAGE(test::contains(endings[std::size_t(rank)].what,
                                     "PE(s) 2 did not send their descriptor within 1000 ms"),
                      endings[std::size_t(rank)].what);
        CHECK(endings[std::size_t(rank)].seconds < 2.5);
    }
}

TEST_CASE("fd exchange: PE threads stop at once when one of them fails in it, naming it") {
    // The exchange asks the bootstrap about its peers while it waits; between threads that is
    // the shared abort flag, which a PE that throws raises.
    auto shared = std::make_shared<pgas::detail::thread_bootstrap::shared>(3, std::chrono::milliseconds(5000));
    auto endings = test::run_peers(3, [&](int rank) {
        pgas::detail::thread_bootstrap b(shared, rank);
        auto node = pgas::detail::discover_node(b);
        pgas::detail::tcp::unique_fd mine(::memfd_create("fd-exchange-test", MFD_CLOEXEC));
        if (rank != 2) {
            (void)pgas::detail::allgather_fds(b, mine.get(), node);
            return;
        }
        (void)b.allgather_value(std::array<unsigned char, 16>{});
        b.barrier();
        shared->fail(2);  // as world::run_threads does for a PE that throws
    });
    for (int rank : {0, 1}) {
        CAPTURE(rank);
        CHECK_MESSAGE(test::contains(endings[std::size_t(rank)].what, "fd exchange on PE " + std::to_string(rank) +
                                                                          ": PE 2 failed"),
                      endings[std::size_t(rank)].what);
        CHECK(endings[std::size_t(rank)].seconds < 1.5);
    }
}
