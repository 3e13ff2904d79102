// Rank 0's side of the TCP bootstrap's init: it listens at the rendezvous and admits the ranks whose hello
// carries this launch's token and world size, turning strangers away without being held up by them.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/bootstrap/tcp_endpoints.hpp>
#include <pgas/host/bootstrap/tcp_wire.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Listens from construction (errc::bootstrap when it cannot) until it is destroyed; peers[r] receives rank r's
// connection once its hello is accepted.
class tcp_admission {
public:
    tcp_admission(const launch_info& launch, std::vector<tcp::unique_fd>& peers)
        : size_(launch.size),
          token_(launch.token),
          root_(launch.root_path.empty() ? launch.root_host + ":" + std::to_string(launch.root_port)
                                         : launch.root_path),
          root_path_(launch.root_path),
          peers_(peers) {
        listen_on(launch);
    }

    // Where the root listens, for messages (host:port or the socket path).
    const std::string& where() const { return root_; }

    // How admission ended: ranks that joined, and a rank that joined and then hung up (-1: none).
    struct outcome {
        int joined = 0;
        int left = -1;
    };

    // Accepts connections and reads their hellos concurrently (a silent, dripping or garbage-sending stranger holds
    // up nobody) until every rank joined, one that joined hung up, or the deadline passed.
    outcome admit_all(tcp::clock::time_point deadline) {
        std::vector<pending_hello> pending;
        outcome out;
        int& joined = out.joined;
        auto checked = tcp::clock::now();
        while (joined < size_ - 1) {
            const auto now = tcp::clock::now();
            if (now >= deadline) break;
            if (now - checked >= std::chrono::milliseconds(stopped_check_ms)) {
                if ((out.left = admitted_left()) > 0) return out;
                checked = now;
            }
            auto wake = std::min(deadline, checked + std::chrono::milliseconds(stopped_check_ms));
            for (auto& p : pending) wake = std::min(wake, p.deadline);
            std::vector<pollfd> polls{{listener_.get(), POLLIN, 0}};
            for (auto& p : pending) polls.push_back({p.fd.get(), POLLIN, 0});
            const int n = ::poll(polls.data(), polls.size(), std::max(1, tcp::remaining_ms(wake)));
            if (n < 0 && errno != EINTR) break;
            std::vector<pending_hello> still;
            for (std::size_t i = 0; i < pending.size(); ++i) {
                auto& p = pending[i];
                int rank = -1;
                const bool done = polls[i + 1].revents != 0 ? read_hello(p, rank) : false;
                if (rank > 0) {
                    peers_[std::size_t(rank)] = std::move(p.fd);
                    ++joined;
                } else if (!done && tcp::clock::now() >= p.deadline) {
                    remember_rejected(p.from + ": no hello within " + std::to_string(hello_limit.count()) + " ms");
                } else if (!done) {
                    still.push_back(std::move(p));
                }
            }
            pending = std::move(still);
            for (int accepted = 0; accepted < 8 && (polls[0].revents & POLLIN); ++accepted) {
                sockaddr_storage address{};
                socklen_t length = sizeof address;
                tcp::unique_fd connection(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length,
                                                    SOCK_CLOEXEC | SOCK_NONBLOCK));
                if (!connection) break;
                if (address.ss_family != AF_UNIX) tcp::no_delay(connection.get());
                std::string from =
                    address.ss_family == AF_UNIX ? std::string("a local process") : tcp::peer_name(address);
                if (pending.size() >= max_pending) {
                    remember_rejected(pending.front().from + ": dropped, more than " + std::to_string(max_pending) +
                                      " connections in handshake");
                    pending.erase(pending.begin());
                }
                pending.push_back(
                    {std::move(connection), std::move(from), std::min(deadline, tcp::clock::now() + hello_limit), {}});
            }
        }
        return out;
    }

    // The connections turned away, for the timeout message ("" when none).
    std::string rejected() const {
        if (rejected_.empty()) return {};
        return "; rejected connections: " + rejected_ +
               (rejected_more_ ? " and " + std::to_string(rejected_more_) + " more" : "");
    }

private:
    static constexpr int rank_ = 0;  // the root
    // How often admission asks whether an admitted rank hung up.
    static constexpr int stopped_check_ms = 50;

    void listen_on(const launch_info& launch) {
        std::vector<tcp::endpoint> found;
        if (!root_path_.empty()) {
            root_ = tcp::private_socket(root_path_).for_root(socket_file_.dir, rank_);
            remove_stale(root_, launch.source);
            found.push_back(tcp::unix_endpoint(root_, rank_));
        } else {
            found = tcp::endpoints(launch, true, rank_);
        }
        int last_error = 0;
        for (const auto& e : found) {
            tcp::unique_fd s(::socket(e.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));  // accept never blocks
            if (!s) continue;
            int one = 1;
            if (e.family != AF_UNIX) ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            const bool bound = ::bind(s.get(), reinterpret_cast<const sockaddr*>(&e.address), e.length) == 0;
            if (bound && e.family == AF_UNIX) socket_file_.claim(root_);
            if (bound && ::listen(s.get(), 128) == 0) {
                listener_ = std::move(s);
                return;
            }
            last_error = errno;
        }
        throw_error(errc::bootstrap, rank_, "bootstrap init",
                    "the root cannot listen on " + root_ + ": " + tcp::errno_text(last_error) + " (" + launch.source +
                        "; set PGAS_ROOT to a free host:port of rank 0's node)");
    }

    // A socket file that a dead root of this user left goes; one that a live root listens on stays, and this
    // root fails instead (a second job with the same job id that unlinked it had the first job's late ranks join it).
    void remove_stale(const std::string& path, const std::string& source) {
        if (!tcp::is_socket(path)) {
            ::unlink(path.c_str());  // not a socket (in this user's private directory): nobody listens there
            return;
        }
        const auto e = tcp::unix_endpoint(path, rank_);
        tcp::unique_fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (probe && ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&e.address), e.length) != 0 &&
            (errno == ECONNREFUSED || errno == ENOENT)) {
            ::unlink(path.c_str());
            return;
        }
        throw_error(errc::bootstrap, rank_, "bootstrap init",
                    "the rendezvous socket " + path +
                        " is in use by a live root: another job of this user with the same job id (" + source +
                        ") is in its rendezvous; give the jobs different ids, or each its own PGAS_ROOT and "
                        "PGAS_TOKEN");
    }

    // A connection whose hello is still arriving.
    struct pending_hello {
        tcp::unique_fd fd;
        std::string from;
        tcp::clock::time_point deadline;
        std::vector<unsigned char> bytes;  // header, then the hello (at most max_hello_bytes)
    };
    // Strangers held at once; past it the oldest is dropped. With the 4 KiB
    // hello bound the root holds at most ~280 KiB for connections in handshake.
    static constexpr std::size_t max_pending = 64;
    // A connection must deliver its hello within this (or the init deadline).
    static constexpr std::chrono::milliseconds hello_limit{5000};

    // During admission a rank that joined waits for the welcome and sends nothing: a hang-up is its death, named
    // at once instead of at the welcome, after the last rank joined or the timeout. Checked every
    // stopped_check_ms, not on every wake-up: a poll of every admitted rank per connection accepted would cost
    // O(size^2) at the largest worlds. Returns that rank, or -1.
    int admitted_left() const {
        std::vector<pollfd> polls;
        std::vector<int> ranks;
        for (int r = 1; r < size_; ++r)
            if (peers_[std::size_t(r)]) {
                polls.push_back({peers_[std::size_t(r)].get(), POLLRDHUP, 0});
                ranks.push_back(r);
            }
        if (polls.empty() || ::poll(polls.data(), polls.size(), 0) <= 0) return -1;
        for (std::size_t i = 0; i < polls.size(); ++i)
            if (polls[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) return ranks[i];
        return -1;
    }

    // Reads what has arrived of p's hello. Returns true when p is finished
    // with (rank set when it was admitted, else it was rejected or closed).
    bool read_hello(pending_hello& p, int& rank) {
        const std::size_t want = p.bytes.size() < tcp::header_bytes
                                     ? tcp::header_bytes
                                     : tcp::header_bytes + std::size_t(tcp::get(p.bytes.data() + 8, 8));
        unsigned char chunk[512];
        const std::size_t room = std::min(want - p.bytes.size(), sizeof chunk);
        const ssize_t n = ::recv(p.fd.get(), chunk, room, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            remember_rejected(p.from + (p.bytes.empty() ? ": closed without a hello" : ": hello cut short"));
            return true;
        }
        if (n < 0) return false;
        p.bytes.insert(p.bytes.end(), chunk, chunk + n);
        if (p.bytes.size() == tcp::header_bytes) {
            // Before the token is checked nothing longer than max_hello_bytes is read.
            auto head = tcp::decode_header(p.bytes.data(), tcp::header_bytes, tcp::max_hello_bytes);
            if (!head) return reject(p, head.problem);
            if (head->type != tcp::kind::hello) return reject(p, "expected a hello frame first");
        }
        if (p.bytes.size() < tcp::header_bytes || p.bytes.size() < tcp::header_bytes + tcp::get(p.bytes.data() + 8, 8))
            return false;
        rank = admit(p);
        return true;
    }

    bool reject(pending_hello& p, const std::string& reason) {
        (void)tcp::send_frame(p.fd.get(), tcp::kind::reject, reason.data(), reason.size(),
                              tcp::clock::now() + std::chrono::milliseconds(100));
        remember_rejected(p.from + ": " + reason);
        return true;
    }

    // Checks a complete hello; returns its rank, or -1 after rejecting it
    // (with the reason sent back and remembered).
    int admit(pending_hello& p) {
        if (!root_path_.empty()) {
            const long uid = tcp::peer_uid(p.fd.get());
            if (uid != long(::getuid()))
                return reject(p, "a process of uid " + std::to_string(uid) + " may not join a job of uid " +
                                     std::to_string(::getuid())),
                       -1;
        }
        auto hello = tcp::decode_hello(p.bytes.data() + tcp::header_bytes, p.bytes.size() - tcp::header_bytes);
        if (!hello) return reject(p, hello.problem), -1;
        if (hello->token != token_)
            return reject(p, "wrong token: this process belongs to another launch that uses the same root " + root_),
                   -1;
        if (hello->size != size_)
            return reject(p, "world size " + std::to_string(hello->size) + " differs from the root's " +
                                 std::to_string(size_)),
                   -1;
        if (hello->rank == 0) return reject(p, "rank 0 is the root itself"), -1;
        if (peers_[std::size_t(hello->rank)])
            return reject(p, "rank " + std::to_string(hello->rank) + " has already joined"), -1;
        return hello->rank;
    }

    // The reasons for the timeout message, bounded whatever strangers send.
    void remember_rejected(const std::string& reason) {
        if (rejected_.size() > 2048) {
            ++rejected_more_;
            return;
        }
        rejected_ += (rejected_.empty() ? "" : "; ") + reason.substr(0, 256);
    }

    int size_;
    std::string token_;
    std::string root_;
    std::string root_path_;
    std::vector<tcp::unique_fd>& peers_;
    // The socket file (and the directory made for it, if any), removed once everyone joined or init failed; the
    // file only while it is the one this root bound (never another root's).
    struct socket_file {
        std::string path, dir;
        ino_t inode = 0;
        void claim(const std::string& bound) {
            struct stat info {};
            if (::lstat(bound.c_str(), &info) != 0) return;
            path = bound;
            inode = info.st_ino;
        }
        void remove() {
            struct stat info {};
            if (!path.empty() && ::lstat(path.c_str(), &info) == 0 && info.st_ino == inode) ::unlink(path.c_str());
            if (!dir.empty()) ::rmdir(dir.c_str());
            path.clear();
            dir.clear();
        }
        ~socket_file() { remove(); }
    } socket_file_;
    tcp::unique_fd listener_;
    std::string rejected_;   // connections turned away, for the timeout message
    int rejected_more_ = 0;  // ... and how many more
};

}  // namespace detail
PGAS_NAMESPACE_END
