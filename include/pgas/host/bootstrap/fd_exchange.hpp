// Passing file descriptors between the processes of one node: an allgather over Unix domain sockets (SCM_RIGHTS),
// with the socket names agreed through the bootstrap.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/bootstrap/node.hpp>
#include <pgas/host/bootstrap/tcp_store.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

namespace fd_detail {

// What a sender puts next to its descriptor: the session and its rank.
struct note {
    std::array<unsigned char, 16> session{};
    std::int32_t rank = -1;
};

[[noreturn]] inline void fail(int rank, const std::string& detail, int code = 0) {
    throw_error(errc::system, rank, "fd exchange",
                detail + (code ? ": " + std::string(std::strerror(code)) : std::string()));
}

// Abstract socket names ("\0pgas-fd-<session>-<rank>") vanish with the
// socket, so nothing is left in the file system when a process dies.
inline socklen_t socket_address(sockaddr_un& address, const std::array<unsigned char, 16>& session, int rank) {
    address = sockaddr_un{};
    address.sun_family = AF_UNIX;
    std::string name = "pgas-fd-";
    static const char hex[] = "0123456789abcdef";
    for (unsigned char b : session) {
        name += hex[b >> 4];
        name += hex[b & 15];
    }
    name += '-';
    name += std::to_string(rank);
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

// A note and room for one descriptor, as sendmsg and recvmsg take them.
struct fd_message {
    note what;
    iovec data{&what, sizeof what};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{};

    explicit fd_message(const note& n = {}) : what(n) {
        header.msg_iov = &data;
        header.msg_iovlen = 1;
        header.msg_control = control;
        header.msg_controllen = sizeof control;
    }
    fd_message(const fd_message&) = delete;
    fd_message& operator=(const fd_message&) = delete;
};

// Sends fd and its note to the peer listening at `address`; 0, or the errno of a connect or send that failed
// (the peer died: the caller waits for the bootstrap to name it).
inline int send_fd(int rank, int fd, const note& what, const sockaddr_un& address, socklen_t length,
                   tcp::clock::time_point deadline) {
    tcp::unique_fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s) fail(rank, "socket(AF_UNIX)", errno);
    timeval limit{};
    const int ms = std::max(1, tcp::remaining_ms(deadline));
    limit.tv_sec = ms / 1000;
    limit.tv_usec = (ms % 1000) * 1000;
    ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) return errno;
    fd_message message(what);
    cmsghdr* c = CMSG_FIRSTHDR(&message.header);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (::sendmsg(s.get(), &message.header, MSG_NOSIGNAL) != ssize_t(sizeof what)) return errno ? errno : EPIPE;
    return 0;
}

// Receives one descriptor and its note from a connection that is readable; returns the descriptor (owned by the
// caller), or none when the message is malformed (a sender that died or stopped midway, or not a pgas process).
inline tcp::unique_fd receive_fd(int connection, note& what) {
    fd_message message;
    const ssize_t n = ::recvmsg(connection, &message.header, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    tcp::unique_fd received;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message.header); c; c = CMSG_NXTHDR(&message.header, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
            received.reset(fd);
        }
    if (n != ssize_t(sizeof what) || (message.header.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) received.reset();
    what = message.what;
    return received;
}

// A random session that rank 0 draws and every rank learns (collective).
inline std::array<unsigned char, 16> agree_on_session(bootstrap& channel) {
    std::array<unsigned char, 16> session{};
    if (channel.rank() == 0) {
        if (::getrandom(session.data(), session.size(), 0) != ssize_t(session.size()))
            fail(channel.rank(), "cannot draw a random session (getrandom)", errno);
    }
    return channel.allgather_value(session)[0];
}

// This rank's listener at its abstract name, room for every node peer.
inline tcp::unique_fd listen_for_fds(const std::array<unsigned char, 16>& session, int rank, int peers) {
    tcp::unique_fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address;
    const socklen_t length = socket_address(address, session, rank);
    if (!listener || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener.get(), peers) != 0)
        fail(rank, "cannot listen on an abstract Unix socket", errno);
    return listener;
}

// One node member's part of the exchange: it sends its descriptor to every node peer and takes theirs, asking the
// bootstrap about the peers while it waits.
class node_exchange {
public:
    node_exchange(bootstrap& channel, const node_group& node, const std::array<unsigned char, 16>& session,
                  std::chrono::milliseconds timeout)
        : channel_(channel),
          node_(node),
          session_(session),
          timeout_(timeout),
          rank_(channel.rank()),
          deadline_(tcp::clock::now() + timeout),
          received_(node.ranks.size()) {}

    // The descriptors of the node's processes, indexed like node.ranks (this one's a duplicate of my_fd).
    std::vector<tcp::unique_fd> run(int my_fd, int listener) {
        received_[std::size_t(node_.my_index)].reset(::fcntl(my_fd, F_DUPFD_CLOEXEC, 0));
        if (!received_[std::size_t(node_.my_index)]) fail(rank_, "cannot duplicate the descriptor", errno);
        const note mine{session_, rank_};
        for (int peer : node_.ranks) {
            if (peer == rank_) continue;
            sockaddr_un address;
            const socklen_t length = socket_address(address, session_, peer);
            if (const int code = send_fd(rank_, my_fd, mine, address, length, deadline_); code != 0)
                unreachable(peer, code);
        }
        for (int got = 1; got < node_.size();) got += take_one(listener);
        return std::move(received_);
    }

private:
    // The node peers whose descriptor has not come.
    std::vector<int> awaited() const {
        std::vector<int> out;
        for (std::size_t i = 0; i < node_.ranks.size(); ++i)
            if (!received_[i]) out.push_back(node_.ranks[i]);
        return out;
    }

    // Waits until fd is readable or the deadline passes, asking the bootstrap about the peers meanwhile.
    bool ready(int fd) {
        for (;;) {
            const auto until = std::min(deadline_, tcp::clock::now() + std::chrono::milliseconds(50));
            if (tcp::wait_ready(fd, POLLIN, until) != tcp::io::timeout) return true;
            if (tcp::clock::now() >= deadline_) return false;
            channel_.check_peers("fd exchange", awaited());
        }
    }

    // A peer that cannot be reached died: the bootstrap names it (or the deadline comes).
    [[noreturn]] void unreachable(int peer, int code) {
        const std::vector<int> them{peer};
        while (tcp::clock::now() < deadline_) {
            channel_.check_peers("fd exchange", them);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        throw_error(errc::peer_failed, rank_, "fd exchange",
                    "cannot reach PE " + std::to_string(peer) + "'s socket: " + std::strerror(code) +
                        " (it died or left the exchange)");
    }

    // Accepts one connection; 1 when it brought an awaited descriptor, 0 when it is passed over (a stranger, or a
    // message cut short: its sender died or stopped midway and the bootstrap names it).
    int take_one(int listener) {
        if (!ready(listener))
            throw_error(errc::timeout, rank_, "fd exchange",
                        "PE(s) " + pe_list(awaited()) + " did not send their descriptor within " +
                            std::to_string(timeout_.count()) +
                            " ms (they stalled or died in the exchange; PGAS_BOOTSTRAP_TIMEOUT_MS bounds it)" +
                            (malformed_ ? "; " + std::to_string(malformed_) +
                                              " node-local connection(s) sent a message cut short"
                                        : std::string()));
        tcp::unique_fd connection(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
        if (!connection) fail(rank_, "accept on the Unix socket", errno);
        ucred credentials{};
        socklen_t length = sizeof credentials;
        if (::getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 ||
            credentials.uid != ::getuid())
            return 0;  // a stranger: not counted, not trusted
        note theirs;
        tcp::unique_fd fd;
        if (ready(connection.get())) fd = receive_fd(connection.get(), theirs);
        if (!fd) return ++malformed_, 0;
        const auto at = std::find(node_.ranks.begin(), node_.ranks.end(), theirs.rank);
        if (theirs.session != session_ || at == node_.ranks.end() || *at == rank_ ||
            received_[std::size_t(at - node_.ranks.begin())])
            fail(rank_, "a descriptor arrived from rank " + std::to_string(theirs.rank) +
                            " which is not an expected node-local peer of this exchange");
        received_[std::size_t(at - node_.ranks.begin())] = std::move(fd);
        return 1;
    }

    bootstrap& channel_;
    const node_group& node_;
    std::array<unsigned char, 16> session_;
    std::chrono::milliseconds timeout_;
    int rank_;
    tcp::clock::time_point deadline_;
    std::vector<tcp::unique_fd> received_;
    int malformed_ = 0;
};

}  // namespace fd_detail

// Collective over every rank of `channel` (the session and two barriers go
// through it), each passing its own node's group from discover_node: each
// process contributes `my_fd` and receives the descriptors of the processes
// of its node, indexed like node.ranks (empty when node omits the caller). The caller owns all returned descriptors
// (its own entry is a duplicate of my_fd; all are close-on-exec). Connections are checked to come from this user and
// this exchange's random session; the exchange is bounded by `timeout` (default: the bootstrap's,
// PGAS_BOOTSTRAP_TIMEOUT_MS). While it waits it asks the bootstrap every 50 ms whether a peer failed
// (bootstrap::check_peers), so a peer that dies or stops in the exchange, or
// a root that exits, is named on every PE as the bootstrap's own calls name
// it, at once (its heartbeat's bound for a stop), not after the timeout nor
// as this PE's own system error. my_fd may be any
// descriptor that SCM_RIGHTS carries: a memfd, a CUDA VMM handle exported as
// a POSIX descriptor, an eventfd.
inline std::vector<int> allgather_fds(bootstrap& channel, int my_fd, const node_group& node,
                                      std::optional<std::chrono::milliseconds> bound = std::nullopt) {
    const int rank = channel.rank();
    const auto session = fd_detail::agree_on_session(channel);
    const bool on_node = std::find(node.ranks.begin(), node.ranks.end(), rank) != node.ranks.end();
    tcp::unique_fd listener;
    if (on_node && node.size() > 1) listener = fd_detail::listen_for_fds(session, rank, node.size());
    channel.barrier();  // every listener exists before anyone connects
    std::vector<tcp::unique_fd> received;
    if (on_node)
        received = fd_detail::node_exchange(channel, node, session, bound.value_or(channel.timeout()))
                       .run(my_fd, listener.get());
    channel.barrier();  // no listener closes while a peer might still connect
    std::vector<int> out;
    for (auto& fd : received) out.push_back(fd.release());
    return out;
}

}  // namespace detail
PGAS_NAMESPACE_END
