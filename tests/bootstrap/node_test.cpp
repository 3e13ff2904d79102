// Node discovery (host/bootstrap/node.hpp): which ranks and PEs share a node, by boot and network namespace, and
// PGAS_NODE_SIZE's virtual nodes.
#include "support.hpp"

#include <pgas/host/bootstrap/node.hpp>

#include <cstdlib>
#include <cstring>

namespace {

using pgas::detail::node_card;
using pgas::detail::node_key;

node_key key(const char* host, const char* boot, const char* netns) {
    node_key k;
    std::strncpy(k.host.data(), host, k.host.size() - 1);
    std::strncpy(k.boot.data(), boot, k.boot.size() - 1);
    std::strncpy(k.netns.data(), netns, k.netns.size() - 1);
    return k;
}

}  // namespace

TEST_CASE("node: keys that share a host name but not the boot or the network namespace are different nodes") {
    const std::vector<node_key> keys{key("gpu7", "boot-a", "net:[1]"), key("gpu7", "boot-a", "net:[2]"),
                                     key("gpu7", "boot-a", "net:[1]"), key("gpu7", "boot-b", "net:[1]")};
    const auto first = pgas::detail::group_by_node(keys, 2);
    CHECK(first.ranks == std::vector<int>{0, 2});
    CHECK(first.my_index == 1);
    CHECK(pgas::detail::group_by_node(keys, 1).ranks == std::vector<int>{1});  // another network namespace
    CHECK(pgas::detail::group_by_node(keys, 3).ranks == std::vector<int>{3});  // another boot (or machine)
}

TEST_CASE("node: the PEs of two containers that share a host name are two nodes") {
    // Processes of 2 PEs each: world PEs 0-3 in one network namespace, 4-7 in another, on a host of one name.
    const auto a = key("gpu7", "boot-a", "net:[1]"), b = key("gpu7", "boot-a", "net:[2]");
    const std::vector<node_card> cards{{a, 0, 2}, {a, 2, 2}, {b, 4, 2}, {b, 6, 2}};
    CHECK(pgas::detail::node_pe_range(cards, cards[1], "team_node", 2) == std::pair<int, int>{0, 4});
    CHECK(pgas::detail::node_pe_range(cards, cards[2], "team_node", 4) == std::pair<int, int>{4, 4});
    // Interleaved namespaces make no consecutive node: refused, naming the caller and the host.
    const std::vector<node_card> mixed{{a, 0, 2}, {b, 2, 2}, {a, 4, 2}, {b, 6, 2}};
    CHECK(test::error_of([&] { (void)pgas::detail::node_pe_range(mixed, mixed[0], "route_node_pes", 0, ": pass one"); }) ==
          "pgas: route_node_pes on PE 0: the PEs on host gpu7 are not consecutive world PEs: pass one");
}

TEST_CASE("node: threads of one process are one node, or PGAS_NODE_SIZE's virtual nodes") {
    constexpr int n = 5;
    for (const char* size : {"", "2"}) {
        CAPTURE(size);
        ::setenv("PGAS_NODE_SIZE", size, 1);
        auto shared = std::make_shared<pgas::detail::thread_bootstrap::shared>(n, std::chrono::milliseconds(10000));
        auto endings = test::run_peers(n, [&](int pe) {
            pgas::detail::thread_bootstrap b(shared, pe);
            const auto [first, count] = pgas::detail::node_pes(b, {pe}, n, "team_node");
            if (*size == '\0') {
                CHECK(first == 0);
                CHECK(count == n);
            } else {
                CHECK(first == pe / 2 * 2);
                CHECK(count == (pe == 4 ? 1 : 2));
            }
        });
        for (auto& e : endings) CHECK_MESSAGE(e.what.empty(), e.what);
    }
    ::setenv("PGAS_NODE_SIZE", "+2", 1);
    auto shared = std::make_shared<pgas::detail::thread_bootstrap::shared>(1, std::chrono::milliseconds(10000));
    pgas::detail::thread_bootstrap alone(shared, 0);
    CHECK(test::error_of([&] { (void)pgas::detail::node_pes(alone, {0, 1}, 2, "team_node"); }) ==
          "pgas: PGAS_NODE_SIZE: expected PEs per node in [1, 2], got '+2'");
    ::setenv("PGAS_NODE_SIZE", "1", 1);
    CHECK(test::error_of([&] { (void)pgas::detail::node_pes(alone, {0, 1}, 2, "team_node"); }) ==
          "pgas: team_node: PGAS_NODE_SIZE splits this process's PEs over two nodes");
    ::unsetenv("PGAS_NODE_SIZE");
    CHECK(test::error_of([&] { (void)pgas::detail::node_pes(alone, {0, 2}, 3, "team_node"); }) ==
          "pgas: team_node: this process's PEs are not consecutive");
}
