// The one answer to "which PEs share my node": this process's node key, the grouping of bootstrap ranks by it,
// the node's world PEs, and PGAS_NODE_SIZE's virtual nodes.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// "Same node" is "same kernel boot and same network namespace": exactly the processes that can reach each
// other's abstract Unix sockets and share memory. The host name alone is not: two containers may share it.
struct node_key {
    std::array<char, 72> host{};   // for messages
    std::array<char, 40> boot{};   // /proc/sys/kernel/random/boot_id
    std::array<char, 40> netns{};  // the target of /proc/self/ns/net

    friend bool operator==(const node_key&, const node_key&) = default;

    // This process's key.
    static node_key mine() {
        node_key key;
        ::gethostname(key.host.data(), key.host.size() - 1);
        if (const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC); fd >= 0) {
            const ssize_t n = ::read(fd, key.boot.data(), key.boot.size() - 1);
            ::close(fd);
            key.boot[std::size_t(n > 0 ? n : 0)] = '\0';
            key.boot[std::strcspn(key.boot.data(), " \n")] = '\0';  // the id without its newline
        }
        const ssize_t n = ::readlink("/proc/self/ns/net", key.netns.data(), key.netns.size() - 1);
        if (n < 0) key.netns[0] = '\0';
        return key;
    }
};

// The processes of a bootstrap that share this node: their bootstrap ranks in
// ascending order and this process's index among them.
struct node_group {
    std::vector<int> ranks;
    int my_index = 0;
    int size() const { return int(ranks.size()); }
};

// The ranks whose key is keys[rank]'s.
inline node_group group_by_node(const std::vector<node_key>& keys, int rank) {
    node_group group;
    for (int r = 0; r < int(keys.size()); ++r)
        if (keys[std::size_t(r)] == keys[std::size_t(rank)]) {
            if (r == rank) group.my_index = group.size();
            group.ranks.push_back(r);
        }
    return group;
}

// Collective over the bootstrap: which ranks share this node.
inline node_group discover_node(bootstrap& channel) {
    return group_by_node(channel.allgather_value(node_key::mine()), channel.rank());
}

// What each process says of itself to find its node's PEs: its key and its consecutive world PEs.
struct node_card {
    node_key key;
    int first = 0;
    int count = 0;
};

// The world PEs [first, first + count) of the processes whose key is `mine`'s; they must be consecutive
// (call, pe and hint name the caller in the error).
inline std::pair<int, int> node_pe_range(const std::vector<node_card>& cards, const node_card& mine, const char* call,
                                         int pe, const std::string& hint = {}) {
    int low = -1, high = -1, on_node = 0;
    for (const auto& other : cards) {
        if (!(other.key == mine.key)) continue;
        low = low < 0 || other.first < low ? other.first : low;
        high = other.first + other.count - 1 > high ? other.first + other.count - 1 : high;
        on_node += other.count;
    }
    if (on_node != high - low + 1)
        throw_error(errc::invalid_argument, pe, call,
                    std::string("the PEs on host ") + mine.key.host.data() + " are not consecutive world PEs" + hint);
    return {low, on_node};
}

// PGAS_NODE_SIZE=k: the virtual node of `pe` (k consecutive world PEs, the last node maybe smaller); nullopt when
// unset. A malformed value throws naming error_pe.
inline std::optional<std::pair<int, int>> virtual_node(int pe, int n_pes, int error_pe) {
    const char* text = std::getenv("PGAS_NODE_SIZE");
    if (text == nullptr || *text == '\0') return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long size = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || !std::isdigit(static_cast<unsigned char>(*text)) || size < 1 || size > n_pes)
        throw_error(errc::invalid_argument, error_pe, "PGAS_NODE_SIZE",
                    std::string("expected PEs per node in [1, ") + std::to_string(n_pes) + "], got '" + text + "'");
    const int first = pe / int(size) * int(size);
    return std::pair<int, int>{first, n_pes - first < int(size) ? n_pes - first : int(size)};
}

// Collective over `channel` (one participant per process or SPMD thread, holding the world PEs `local_pes`, which
// must be consecutive): the world PEs [first, first + count) of this participant's node, PGAS_NODE_SIZE's virtual
// node when that is set. `call` and `hint` go into the errors.
inline std::pair<int, int> node_pes(bootstrap& channel, const std::vector<int>& local_pes, int n_pes, const char* call,
                                    const std::string& hint = {}) {
    const int pe = local_pes.size() == 1 ? local_pes[0] : -1;
    if (const auto node = virtual_node(local_pes[0], n_pes, pe)) {
        for (int q : local_pes)
            if (q < node->first || q >= node->first + node->second)
                throw_error(errc::invalid_argument, pe, call,
                            "PGAS_NODE_SIZE splits this process's PEs over two nodes");
        return *node;
    }
    for (std::size_t i = 1; i < local_pes.size(); ++i)
        if (local_pes[i] != local_pes[0] + int(i))
            throw_error(errc::invalid_argument, -1, call, "this process's PEs are not consecutive" + hint);
    const node_card mine{node_key::mine(), local_pes[0], int(local_pes.size())};
    if (channel.size() == 1) return {mine.first, mine.count};
    return node_pe_range(channel.allgather_value(mine), mine, call, pe, hint);
}

}  // namespace detail
PGAS_NAMESPACE_END
