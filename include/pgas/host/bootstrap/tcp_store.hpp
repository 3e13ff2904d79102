// The multi-process bootstrap: a small TCP store on rank 0 that every other process connects to (token-checked,
// length-checked frames, every step bounded by a timeout).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/env.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>

#include <chrono>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <dirent.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {
namespace tcp {

using clock = std::chrono::steady_clock;

// An owned file descriptor (socket, memfd, ...), closed on destruction.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : fd_(fd) {}
    unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    ~unique_fd() { reset(); }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

inline int remaining_ms(clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return left <= 0 ? 0 : left > 1000000 ? 1000000 : int(left);
}

inline std::string errno_text(int code) { return std::string(std::strerror(code)); }

enum class io { ok, closed, timeout };

// Waits until fd is ready for `events` or the deadline passes.
inline io wait_ready(int fd, short events, clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, remaining_ms(deadline));
        if (n > 0) return (p.revents & (events | POLLHUP | POLLERR)) ? io::ok : io::closed;
        if (n == 0) return io::timeout;
        if (errno != EINTR) return io::closed;
    }
}

inline io send_all(int fd, const void* data, std::size_t bytes, clock::time_point deadline) {
    auto* p = static_cast<const unsigned char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            bytes -= std::size_t(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (auto r = wait_ready(fd, POLLOUT, deadline); r != io::ok) return r;
        } else {
            return io::closed;
        }
    }
    return io::ok;
}

inline io recv_all(int fd, void* data, std::size_t bytes, clock::time_point deadline) {
    auto* p = static_cast<unsigned char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::recv(fd, p, bytes, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            bytes -= std::size_t(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (auto r = wait_ready(fd, POLLIN, deadline); r == io::timeout) return r;
        } else {
            return io::closed;  // orderly close (0) or reset
        }
    }
    return io::ok;
}

// --- frames: a 16-byte header (magic, version, kind, payload length), then the payload.
// Integers travel little-endian whatever the hosts are.

inline constexpr std::uint32_t magic = 0x53414750;  // "PGAS"
// 2: the data prefix names the host call (see exchange_id).
inline constexpr std::uint16_t version = 2;
inline constexpr std::size_t header_bytes = 16;
// Before a peer has shown the token nothing bigger than this is read.
inline constexpr std::uint64_t max_hello_bytes = 4096;
inline constexpr std::uint64_t max_abort_bytes = 65536;

// bye: the sender destroys its bootstrap in good order (its EOF that follows is no failure).
enum class kind : std::uint16_t { hello = 1, welcome = 2, reject = 3, data = 4, abort = 5, bye = 6 };
inline constexpr std::uint16_t max_kind = 6;

inline void put(std::vector<unsigned char>& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}
inline std::uint64_t get(const unsigned char* in, int bytes) {
    std::uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | in[i];
    return value;
}

struct header {
    std::uint32_t magic = 0;
    std::uint16_t version = 0;
    kind type{};
    std::uint64_t length = 0;
};

inline std::vector<unsigned char> encode_header(kind type, std::uint64_t length) {
    std::vector<unsigned char> out;
    out.reserve(header_bytes);
    put(out, magic, 4);
    put(out, version, 2);
    put(out, std::uint16_t(type), 2);
    put(out, length, 8);
    return out;
}

inline io send_frame(int fd, kind type, const void* payload, std::size_t bytes, clock::time_point deadline,
                     const void* prefix = nullptr, std::size_t prefix_bytes = 0) {
    auto head = encode_header(type, prefix_bytes + bytes);
    if (auto r = send_all(fd, head.data(), head.size(), deadline); r != io::ok) return r;
    if (prefix_bytes)
        if (auto r = send_all(fd, prefix, prefix_bytes, deadline); r != io::ok) return r;
    return send_all(fd, payload, bytes, deadline);
}

// --- decoders: every byte that comes from a socket goes through one of
// these. Each checks what it reads (magic, version, kind, lengths, counts,
// ranks, enum values) and returns the value or why it is not one; none
// allocates more than its input, none has undefined behaviour on any input
// (fuzzed: tests/fuzz).

template <class T>
struct decoded {
    std::optional<T> value;
    std::string problem;  // set when value is empty
    explicit operator bool() const { return value.has_value(); }
    const T& operator*() const { return *value; }
    const T* operator->() const { return &*value; }
};
template <class T>
decoded<T> invalid(std::string why) {
    return {std::nullopt, std::move(why)};
}

// The fixed header; `max_length` bounds the payload the reader will accept.
inline decoded<header> decode_header(const unsigned char* raw, std::size_t n, std::uint64_t max_length) {
    if (n != header_bytes) return invalid<header>("frame header of " + std::to_string(n) + " bytes");
    header out;
    out.magic = std::uint32_t(get(raw, 4));
    out.version = std::uint16_t(get(raw + 4, 2));
    const auto type = std::uint16_t(get(raw + 6, 2));
    out.length = get(raw + 8, 8);
    if (out.magic != magic) return invalid<header>("not a pgas bootstrap frame");
    if (out.version != version)
        return invalid<header>("protocol version " + std::to_string(out.version) + " where " +
                               std::to_string(version) + " was expected (pgas versions differ)");
    if (type < 1 || type > max_kind) return invalid<header>("unknown frame kind " + std::to_string(type));
    out.type = kind(type);
    if (out.length > max_length)
        return invalid<header>("frame of " + std::to_string(out.length) + " bytes (limit " +
                               std::to_string(max_length) + ")");
    return {out, {}};
}

// A joining process's hello: rank, world size and the launch token.
struct hello_frame {
    int rank = 0;
    int size = 0;
    std::string token;
};
inline constexpr std::size_t hello_fixed_bytes = 12;

inline decoded<hello_frame> decode_hello(const unsigned char* data, std::size_t n) {
    if (n < hello_fixed_bytes) return invalid<hello_frame>("hello of " + std::to_string(n) + " bytes is cut short");
    const std::uint64_t rank = get(data, 4), size = get(data + 4, 4), token_bytes = get(data + 8, 4);
    if (token_bytes != n - hello_fixed_bytes)
        return invalid<hello_frame>("malformed hello: token of " + std::to_string(token_bytes) + " bytes in " +
                                    std::to_string(n - hello_fixed_bytes));
    if (size < 1 || size > std::uint64_t(max_world_size))
        return invalid<hello_frame>("world size " + std::to_string(size) + " is outside [1, " +
                                    std::to_string(max_world_size) + "]");
    if (rank >= size)
        return invalid<hello_frame>("rank " + std::to_string(rank) + " is outside a world of " + std::to_string(size));
    return {hello_frame{int(rank), int(size), std::string(data + hello_fixed_bytes, data + n)}, {}};
}

// The 16 bytes that open every data frame: host call, step, (reserved, 0) and
// the exchange's sequence number. `block_bytes`: the payload after it.
inline constexpr std::size_t prefix_bytes = 16;

inline decoded<exchange_id> decode_prefix(const unsigned char* data, std::size_t n, std::uint64_t block_bytes) {
    if (n != prefix_bytes) return invalid<exchange_id>("data prefix of " + std::to_string(n) + " bytes");
    const auto call = std::uint16_t(get(data, 2)), op = std::uint16_t(get(data + 2, 2));
    if (call >= std::uint16_t(host_call::count_))
        return invalid<exchange_id>("unknown host call " + std::to_string(call));
    if (op < 1 || op >= std::uint16_t(exchange_op::count_))
        return invalid<exchange_id>("unknown exchange step " + std::to_string(op));
    if (get(data + 4, 4) != 0) return invalid<exchange_id>("reserved bytes are not zero");
    return {exchange_id{host_call(call), exchange_op(op), get(data + 8, 8), block_bytes}, {}};
}

inline std::vector<unsigned char> encode_prefix(const exchange_id& id) {
    std::vector<unsigned char> out;
    put(out, std::uint16_t(id.call), 2);
    put(out, std::uint16_t(id.op), 2);
    put(out, 0, 4);
    put(out, id.sequence, 8);
    return out;
}

// The root's abort: error code, the failed PE (+1, 0 when none is at fault)
// and the text. world_size bounds the PE.
struct abort_frame {
    errc code = errc::peer_failed;
    int failed_pe = -1;
    std::string text;
};
inline constexpr std::size_t abort_fixed_bytes = 8;

inline decoded<abort_frame> decode_abort(const unsigned char* data, std::size_t n, int world_size) {
    if (n < abort_fixed_bytes) return invalid<abort_frame>("abort of " + std::to_string(n) + " bytes is cut short");
    const std::uint64_t code = get(data, 4), failed = get(data + 4, 4);
    if (code < std::uint64_t(errc::invalid_argument) || code > std::uint64_t(errc::system))
        return invalid<abort_frame>("abort with unknown error code " + std::to_string(code));
    if (failed > std::uint64_t(world_size))
        return invalid<abort_frame>("abort names PE " + std::to_string(failed - 1) + ", outside a world of " +
                                    std::to_string(world_size));
    return {abort_frame{errc(code), int(failed) - 1, std::string(data + abort_fixed_bytes, data + n)}, {}};
}

inline std::vector<unsigned char> encode_abort(errc code, int failed_pe, const std::string& text) {
    std::vector<unsigned char> out;
    put(out, std::uint32_t(code), 4);
    put(out, std::uint32_t(failed_pe < 0 ? 0 : failed_pe + 1), 4);
    out.insert(out.end(), text.begin(), text.end());
    return out;
}

// Reads a header; a header that does not decode is io::closed with `problem` set.
inline io recv_header(int fd, header& out, clock::time_point deadline, std::string* problem = nullptr,
                      std::uint64_t max_length = ~std::uint64_t{0}) {
    unsigned char raw[header_bytes];
    if (auto r = recv_all(fd, raw, sizeof raw, deadline); r != io::ok) return r;
    auto head = decode_header(raw, sizeof raw, max_length);
    if (!head) {
        if (problem) *problem = head.problem;
        return io::closed;
    }
    out = *head;
    return io::ok;
}

// Reads and discards until the peer closes or the deadline passes.
inline void drain(int fd, clock::time_point deadline) {
    char sink[4096];
    for (;;) {
        const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n > 0) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) &&
            wait_ready(fd, POLLIN, deadline) == io::ok)
            continue;
        return;
    }
}

inline std::string text_payload(int fd, std::uint64_t length, clock::time_point deadline) {
    if (length > max_abort_bytes) return "(message of " + std::to_string(length) + " bytes not read)";
    std::string text(length, '\0');
    if (recv_all(fd, text.data(), text.size(), deadline) != io::ok) return "(message lost)";
    return text;
}

inline std::vector<unsigned char> encode_hello(int rank, int size, const std::string& token) {
    std::vector<unsigned char> out;
    put(out, std::uint32_t(rank), 4);
    put(out, std::uint32_t(size), 4);
    put(out, token.size(), 4);
    out.insert(out.end(), token.begin(), token.end());
    return out;
}

inline std::string peer_name(const sockaddr_storage& address) {
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    ::getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof address, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV);
    return std::string(host) + ":" + port;
}

struct addresses {
    addrinfo* list = nullptr;
    addresses() = default;
    addresses(const addresses&) = delete;
    addresses& operator=(const addresses&) = delete;
    ~addresses() {
        if (list) ::freeaddrinfo(list);
    }
};

inline void resolve(addresses& out, const std::string& host, int port, bool passive, int rank) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &out.list);
    if (rc != 0)
        throw_error(errc::bootstrap, rank, "bootstrap", "cannot resolve the root address " + host + ":" +
                                                             std::to_string(port) + ": " + ::gai_strerror(rc));
}

// Where the root listens: the addresses of root_host:root_port, or the
// Unix-domain socket root_path.
struct endpoint {
    sockaddr_storage address{};
    socklen_t length = 0;
    int family = AF_UNSPEC;
};

// The Unix-domain socket at `path`.
inline endpoint unix_endpoint(const std::string& path, int rank) {
    endpoint e;
    auto* un = reinterpret_cast<sockaddr_un*>(&e.address);
    if (path.size() >= sizeof un->sun_path)
        throw_error(errc::bootstrap, rank, "bootstrap init",
                    "the rendezvous socket path " + path + " is longer than " +
                        std::to_string(sizeof un->sun_path - 1) + " bytes: set TMPDIR to a shorter directory");
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, path.c_str(), path.size() + 1);
    e.length = socklen_t(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    e.family = AF_UNIX;
    return e;
}

// The addresses of root_host:root_port (a Unix-domain rendezvous has its own: see private_socket).
inline std::vector<endpoint> endpoints(const launch_info& launch, bool passive, int rank) {
    std::vector<endpoint> out;
    addresses found;
    resolve(found, launch.root_host, launch.root_port, passive, rank);
    for (addrinfo* a = found.list; a; a = a->ai_next) {
        endpoint e;
        std::memcpy(&e.address, a->ai_addr, a->ai_addrlen);
        e.length = a->ai_addrlen;
        e.family = a->ai_family;
        out.push_back(e);
    }
    return out;
}

// Whether `dir` is a directory (not a link) of this user that no one else may enter.
inline bool private_dir(const std::string& dir) {
    struct stat info {};
    return ::lstat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::getuid() &&
           (info.st_mode & 077) == 0;
}

// Whether `path` is a Unix-domain socket file.
inline bool is_socket(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode);
}

// A rendezvous socket path split into its directory and its name ("/x.sock").
struct private_socket {
    std::string dir, name;
    explicit private_socket(const std::string& path)
        : dir(path.substr(0, path.rfind('/'))), name(path.substr(path.rfind('/'))) {}

    // Where the root listens: in `dir` when it is private (made 0700 when missing); else, since another local
    // user can make a predictable name first in a sticky /tmp, where nobody but this user can remove it, in a
    // fresh private directory beside it, dir-XXXXXX (mkdtemp), whose name goes to `made` (issue 28, item 7).
    std::string for_root(std::string& made, int rank) const {
        if ((::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) && private_dir(dir)) return dir + name;
        std::string fresh = dir + "-XXXXXX";
        if (::mkdtemp(fresh.data()) == nullptr)
            throw_error(errc::bootstrap, rank, "bootstrap init",
                        "cannot create a private rendezvous directory " + fresh + " (" + dir +
                            " is not a directory of this user closed to others): " + errno_text(errno) +
                            "; set TMPDIR, or PGAS_ROOT and PGAS_TOKEN");
        made = fresh;
        return fresh + name;
    }

    // Where a rank looks: the socket in `dir` when dir is private, and in every private dir-XXXXXX (a root
    // whose dir was squatted made one); a directory of another user or open to others is never trusted.
    std::vector<std::string> for_ranks() const {
        std::vector<std::string> out;
        if (private_dir(dir) && is_socket(dir + name)) out.push_back(dir + name);
        const auto slash = dir.rfind('/');
        const std::string parent = slash == 0 ? "/" : dir.substr(0, slash), prefix = dir.substr(slash + 1) + "-";
        DIR* listing = ::opendir(parent.c_str());
        if (!listing) return out;
        while (const dirent* entry = ::readdir(listing)) {
            const std::string base = entry->d_name;
            if (base.size() != prefix.size() + 6 || base.compare(0, prefix.size(), prefix) != 0) continue;
            const std::string candidate = (slash == 0 ? "" : parent) + "/" + base;
            if (private_dir(candidate) && is_socket(candidate + name)) out.push_back(candidate + name);
        }
        ::closedir(listing);
        return out;
    }
};

// The uid of the process at the other end of a Unix-domain socket.
inline long peer_uid(int fd) {
    ucred credentials{};
    socklen_t length = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return long(credentials.uid);
}

inline void no_delay(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace tcp

// The bootstrap of one process per PE. Rank 0 listens on launch.root_host:
// root_port and every other rank connects to it (retrying until the timeout,
// since rank 0 may start last). A collective sends each rank's block to rank 0,
// which gathers all and sends the result back: O(size) frames per call, for
// the few small exchanges of init, alloc and barriers.
//
// Failure handling: every step is bounded by launch.bootstrap_timeout. When
// rank 0 sees a peer close its connection (the process died), send a frame of
// the wrong size or kind, or miss the deadline, it sends an abort frame naming
// that PE to every other rank and throws; the others throw the same text.
// When rank 0 dies, the others see the connection close. So a dead peer is an
// error on every PE within the timeout, never a hang. After a failure every
// later call throws at once. Between collectives, watch() notices a peer that
// dies (its connection closes without a bye frame) within ~50 ms and reports
// it, so that device waits can stop instead of timing out.
class tcp_bootstrap final : public bootstrap {
public:
    explicit tcp_bootstrap(const launch_info& launch)
        : rank_(launch.rank), size_(launch.size), timeout_(launch.bootstrap_timeout), token_(launch.token),
          root_(launch.root_path.empty() ? launch.root_host + ":" + std::to_string(launch.root_port)
                                         : launch.root_path),
          root_path_(launch.root_path) {
        if (size_ < 1 || rank_ < 0 || rank_ >= size_)
            throw_error(errc::invalid_argument, rank_, "bootstrap",
                        "rank " + std::to_string(rank_) + " outside a world of " + std::to_string(size_));
        if (size_ > max_world_size)
            throw_error(errc::invalid_argument, rank_, "bootstrap",
                        "world size " + std::to_string(size_) + " is larger than the limit of " +
                            std::to_string(max_world_size));
        if (timeout_.count() <= 0)
            throw_error(errc::invalid_argument, rank_, "bootstrap", "the bootstrap timeout must be positive");
        if (rank_ == 0)
            serve(launch);
        else
            join(launch);
    }

    tcp_bootstrap(const tcp_bootstrap&) = delete;
    tcp_bootstrap& operator=(const tcp_bootstrap&) = delete;

    // Says goodbye (so the others see a departure, not a death) unless this
    // bootstrap failed or an exception is unwinding through its owner.
    ~tcp_bootstrap() override {
        unwatch();
        if (!broken_.empty() || std::uncaught_exceptions() > 0) return;
        const auto deadline = tcp::clock::now() + std::chrono::milliseconds(200);
        for (auto& peer : peers_)
            if (peer) (void)tcp::send_frame(peer.get(), tcp::kind::bye, nullptr, 0, deadline);
        if (root_fd_) (void)tcp::send_frame(root_fd_.get(), tcp::kind::bye, nullptr, 0, deadline);
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::chrono::milliseconds timeout() const override { return timeout_; }

    // At finalize: the failure this bootstrap recorded, or can see now (a peer that died, the root's abort or its
    // lost connection), as its error text; "" when there is none (peers that left in good order are none).
    std::string failure_seen() {
        if (size_ == 1) return {};
        std::lock_guard io(io_);
        if (rank_ == 0 && broken_.empty()) (void)watch_peers();
        if (!broken_.empty() || rank_ == 0) return broken_;
        if (root_left_ || !root_fd_ || watch_root() < 0 || root_left_) return {};
        try {
            (void)root_header("world finalize", tcp::clock::now() + std::chrono::milliseconds(1000), 0);
        } catch (const error& e) {
            const std::string what = e.what(), prefix = "pgas: world finalize on PE " + std::to_string(rank_) + ": ";
            return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
        }
        return {};
    }

    void check_peers(const std::string& call, const std::vector<int>& awaited) override {
        if (size_ == 1) return;
        std::lock_guard io(io_);
        if (!broken_.empty()) throw_error(broken_code_, rank_, call, "the bootstrap failed earlier: " + broken_);
        if (rank_ == 0) {
            if (const int dead = watch_peers(); dead >= 0) throw_error(errc::peer_failed, rank_, call, broken_);
            fail_if_stopped(call, awaited);
            return;
        }
        if (root_left_) fail(errc::peer_failed, call, "the root (PE 0) has left: it destroyed its world", 0);
        // The root's connection closed, or its abort naming the failed PE waits: root_header throws either.
        if (watch_root() >= 0) (void)root_header(call, tcp::clock::now() + std::chrono::milliseconds(1000), 0);
        fail_if_stopped(call, {0});  // the root names the others
    }

    // Starts a thread that, while no collective runs, checks every ~50 ms
    // whether a peer died (rank 0: a peer's connection closed without a bye;
    // the others: rank 0's closed, or rank 0 sent an abort naming a PE) and
    // then calls on_failure(failed PE) once, from that thread. The world
    // raises its peer-failure flag with it. Later collectives throw.
    // on_tick runs on every wake-up (~50 ms), also during collectives and
    // after a failure: the world stamps its heartbeat with it.
    //
    // stopped_peer(&silent_ns), when given, names a peer whose heartbeat is
    // older than the bound (detail::stale_peer; -1: none): host collectives
    // ask it while they wait, so that a stopped PE is named after the
    // heartbeat bound there too, not after the whole bootstrap timeout.
    void watch(std::function<void(int failed_pe)> on_failure, std::function<void()> on_tick = {},
               std::function<int(std::uint64_t* silent_ns)> stopped_peer = {}) {
        if (size_ == 1 || watcher_.joinable()) return;
        on_failure_ = std::move(on_failure);
        on_tick_ = std::move(on_tick);
        stopped_peer_ = std::move(stopped_peer);
        watcher_ = std::thread([this] { watch_loop(); });
    }

    // Stops the watcher thread (idempotent); on return on_failure is not
    // running and will not run. Owners whose callback reaches state that dies
    // before the bootstrap call this first.
    void unwatch() {
        if (!watcher_.joinable()) return;
        {
            std::lock_guard lock(stop_mutex_);
            stopping_ = true;
        }
        stop_changed_.notify_all();
        watcher_.join();
    }

protected:
    void exchange(const exchange_id& id, const void* mine, void* all, std::size_t bytes) override {
        std::lock_guard io(io_);  // the watcher stays off the sockets meanwhile
        if (!broken_.empty())
            throw_error(broken_code_, rank_, what(id), "the bootstrap failed earlier: " + broken_);
        if (rank_ == 0)
            exchange_root(id, mine, all, bytes);
        else if (size_ > 1)
            exchange_peer(id, mine, all, bytes);
    }

private:
    static constexpr std::size_t prefix_bytes = tcp::prefix_bytes;
    // A non-root waits this much longer than the root, so the root's
    // explanation (which PE failed) arrives before its own timeout.
    static constexpr std::chrono::milliseconds answer_slack{1000};

    static std::string what(const exchange_id& id) { return describe(id); }

    // How often a waiting collective asks stopped_peer (the watcher's period).
    static constexpr int stopped_check_ms = 50;

    // A collective waiting on `pes` fails naming the first whose heartbeat stopped (issue 28, item 9: host
    // collectives named a stopped PE only at the bootstrap timeout, 30 s, while device waits did at the bound).
    void fail_if_stopped(const std::string& call, const std::vector<int>& pes) {
        if (!stopped_peer_) return;
        std::uint64_t silent_ns = 0;
        const int stopped = stopped_peer_(&silent_ns);
        if (stopped < 0 || std::find(pes.begin(), pes.end(), stopped) == pes.end()) return;
        fail(errc::peer_failed, call,
             (stopped == 0 ? std::string("the root (PE 0)") : "PE " + std::to_string(stopped)) +
                 " stopped responding: no heartbeat for " + std::to_string(silent_ns / 1000000) +
                 " ms (the process is stopped, or hangs with its watcher thread)",
             stopped);
    }

    // --- rank 0 ---------------------------------------------------------------

    void serve(const launch_info& launch) {
        peers_.resize(std::size_t(size_));
        left_.assign(std::size_t(size_), false);
        if (size_ == 1) return;
        listen_on(launch);
        const auto deadline = tcp::clock::now() + timeout_;
        const int joined = admit_all(deadline);
        if (joined < size_ - 1) {
            std::vector<int> missing;
            for (int r = 1; r < size_; ++r)
                if (!peers_[std::size_t(r)]) missing.push_back(r);
            fail(errc::timeout, "bootstrap init",
                 "PE(s) " + pe_list(missing) + " did not connect to the root at " + root_ + " within " +
                     std::to_string(timeout_.count()) +
                     " ms (they failed before init, or were started with another PGAS_ROOT or world size)" +
                     (rejected_.empty() ? std::string()
                                       : "; rejected connections: " + rejected_ +
                                             (rejected_more_ ? " and " + std::to_string(rejected_more_) + " more" : "")),
                 missing.front());
        }
        for (int r = 1; r < size_; ++r)
            if (tcp::send_frame(peers_[std::size_t(r)].get(), tcp::kind::welcome, nullptr, 0, deadline + answer_slack) !=
                tcp::io::ok)
                fail(errc::peer_failed, "bootstrap init", "PE " + std::to_string(r) + " closed its connection during init",
                     r);
        close_listener();
    }

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
    // root fails instead (issue 28, item 8: a second job with the same job id unlinked it, and the first job's
    // late ranks joined the second).
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

    // The socket file goes as soon as nobody needs to connect any more.
    void close_listener() {
        listener_.reset();
        socket_file_.remove();
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

    // Accepts connections and reads their hellos concurrently (a silent,
    // dripping or garbage-sending stranger holds up nobody) until every rank
    // joined or the deadline passed; returns how many joined.
    int admit_all(tcp::clock::time_point deadline) {
        std::vector<pending_hello> pending;
        int joined = 0;
        auto checked = tcp::clock::now();
        while (joined < size_ - 1) {
            const auto now = tcp::clock::now();
            if (now >= deadline) break;
            if (now - checked >= std::chrono::milliseconds(stopped_check_ms)) {
                fail_if_admitted_left();
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
                std::string from = address.ss_family == AF_UNIX ? std::string("a local process")
                                                                : tcp::peer_name(address);
                if (pending.size() >= max_pending) {
                    remember_rejected(pending.front().from + ": dropped, more than " + std::to_string(max_pending) +
                                      " connections in handshake");
                    pending.erase(pending.begin());
                }
                pending.push_back({std::move(connection), std::move(from),
                                   std::min(deadline, tcp::clock::now() + hello_limit), {}});
            }
        }
        return joined;
    }

    // During admission a rank that joined waits for the welcome and sends nothing: a hang-up is its death, named
    // at once instead of at the welcome, after the last rank joined or the timeout (issue 28, item 9). Checked
    // every stopped_check_ms, not on every wake-up: a poll of every admitted rank per connection accepted would
    // cost O(size^2) at the largest worlds.
    void fail_if_admitted_left() {
        std::vector<pollfd> polls;
        std::vector<int> ranks;
        for (int r = 1; r < size_; ++r)
            if (peers_[std::size_t(r)]) {
                polls.push_back({peers_[std::size_t(r)].get(), POLLRDHUP, 0});
                ranks.push_back(r);
            }
        if (polls.empty() || ::poll(polls.data(), polls.size(), 0) <= 0) return;
        for (std::size_t i = 0; i < polls.size(); ++i)
            if (polls[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
                fail(errc::peer_failed, "bootstrap init",
                     "PE " + std::to_string(ranks[i]) +
                         " joined, then exited or closed its connection before every PE had joined (the process died)",
                     ranks[i]);
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
        if (p.bytes.size() < tcp::header_bytes ||
            p.bytes.size() < tcp::header_bytes + tcp::get(p.bytes.data() + 8, 8))
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

    void exchange_root(const exchange_id& call, const void* mine, void* all, std::size_t bytes) {
        auto* out = static_cast<unsigned char*>(all);
        std::memcpy(out, mine, bytes);
        for (int r = 1; r < size_; ++r)
            if (left_[std::size_t(r)])
                fail(errc::peer_failed, what(call),
                     "PE " + std::to_string(r) + " has left: it destroyed its world before this collective call", r);
        const auto deadline = tcp::clock::now() + timeout_;
        std::vector<int> pending;
        for (int r = 1; r < size_; ++r) pending.push_back(r);
        while (!pending.empty()) {
            std::vector<pollfd> polls;
            for (int r : pending) polls.push_back({peers_[std::size_t(r)].get(), POLLIN, 0});
            const int n = ::poll(polls.data(), polls.size(), std::min(tcp::remaining_ms(deadline), stopped_check_ms));
            if (n < 0 && errno == EINTR) continue;
            if (n == 0 && tcp::clock::now() < deadline) {
                fail_if_stopped(what(call), pending);
                continue;
            }
            if (n <= 0) {
                fail(errc::timeout, what(call),
                     "PE(s) " + pe_list(pending) + " did not reach it within " + std::to_string(timeout_.count()) +
                         " ms (a PE hangs or skipped a collective call; PGAS_BOOTSTRAP_TIMEOUT_MS raises the limit)",
                     pending.front());
            }
            std::vector<int> still;
            for (std::size_t i = 0; i < polls.size(); ++i) {
                if (polls[i].revents == 0) {
                    still.push_back(pending[i]);
                    continue;
                }
                receive_block(pending[i], call, out + bytes * std::size_t(pending[i]), bytes, deadline);
            }
            pending = std::move(still);
        }
        const auto prefix = tcp::encode_prefix(call);
        for (int r = 1; r < size_; ++r)
            if (tcp::send_frame(peers_[std::size_t(r)].get(), tcp::kind::data, out, bytes * std::size_t(size_),
                                deadline + answer_slack, prefix.data(), prefix.size()) != tcp::io::ok)
                fail(errc::peer_failed, what(call), "PE " + std::to_string(r) + " exited or closed its connection", r);
    }

    void receive_block(int r, const exchange_id& call, unsigned char* into, std::size_t bytes,
                       tcp::clock::time_point deadline) {
        const int fd = peers_[std::size_t(r)].get();
        const std::string pe = "PE " + std::to_string(r);
        unsigned char raw[tcp::header_bytes];
        auto result = tcp::recv_all(fd, raw, sizeof raw, deadline);
        if (result == tcp::io::ok) {
            // Nothing longer than this exchange's block (plus prefix) is accepted.
            auto head = tcp::decode_header(raw, sizeof raw, prefix_bytes + bytes);
            if (!head && tcp::get(raw + 6, 2) == std::uint16_t(tcp::kind::data) && tcp::get(raw, 4) == tcp::magic)
                head = tcp::decode_header(raw, sizeof raw, ~std::uint64_t{0});  // a bigger block: named below
            if (!head) fail(errc::bootstrap, what(call), pe + " sent a malformed frame: " + head.problem, r);
            if (head->type == tcp::kind::bye)
                fail(errc::peer_failed, what(call), pe + " has left: it destroyed its world before this collective call",
                     r);
            if (head->type != tcp::kind::data || head->length < prefix_bytes)
                fail(errc::bootstrap, what(call), pe + " sent a malformed frame (not a data frame)", r);
            unsigned char prefix[prefix_bytes];
            result = tcp::recv_all(fd, prefix, prefix_bytes, deadline);
            if (result == tcp::io::ok) {
                auto theirs = tcp::decode_prefix(prefix, prefix_bytes, head->length - prefix_bytes);
                if (!theirs) fail(errc::bootstrap, what(call), pe + " sent a malformed frame: " + theirs.problem, r);
                if (!(*theirs == call))
                    fail(errc::collective_mismatch, what(call), mismatch_text(r, *theirs, 0, call));
                result = tcp::recv_all(fd, into, bytes, deadline);
            }
        }
        if (result == tcp::io::closed)
            fail(errc::peer_failed, what(call), pe + " exited or closed its connection (the process died or failed)", r);
        if (result == tcp::io::timeout) fail(errc::timeout, what(call), pe + " sent a partial frame and stalled", r);
    }

    // --- other ranks ------------------------------------------------------------

    void join(const launch_info& launch) {
        const auto deadline = tcp::clock::now() + timeout_;
        connect_root(launch, deadline);
        const auto connected_at = tcp::clock::now();
        const auto hello = tcp::encode_hello(rank_, size_, token_);
        if (tcp::send_frame(root_fd_.get(), tcp::kind::hello, hello.data(), hello.size(), deadline) != tcp::io::ok)
            fail(errc::bootstrap, "bootstrap init", "the root at " + root_ + " closed the connection during the handshake");
        // The root listened before it accepted this connection, and it sends its verdict (welcome, or an abort
        // naming the PEs that did not join) within the timeout of listening: past that, it is stopped or hangs.
        const auto verdict_by = connected_at + timeout_ + answer_slack;
        unsigned char raw[tcp::header_bytes];
        const auto result = tcp::recv_all(root_fd_.get(), raw, sizeof raw, verdict_by);
        if (result == tcp::io::timeout)
            fail(errc::timeout, "bootstrap init",
                 "the root (PE 0) at " + root_ + " accepted this process but sent no verdict within " +
                     std::to_string((timeout_ + answer_slack).count()) +
                     " ms: a root that waits for a PE names it before then, so the root is stopped or hangs",
                 0);
        if (result == tcp::io::closed)
            fail(errc::peer_failed, "bootstrap init",
                 "the root (PE 0) at " + root_ + " closed the connection during the handshake (it exited or failed)", 0);
        auto head = tcp::decode_header(raw, sizeof raw, tcp::max_abort_bytes);
        if (!head) fail(errc::bootstrap, "bootstrap init", root_ + " is not a pgas bootstrap root: " + head.problem);
        if (head->type == tcp::kind::reject)
            fail(errc::bootstrap, "bootstrap init",
                 "the root at " + root_ + " rejected this process: " +
                     tcp::text_payload(root_fd_.get(), head->length, deadline + answer_slack));
        if (head->type == tcp::kind::abort) {
            std::vector<unsigned char> payload(head->length);
            if (tcp::recv_all(root_fd_.get(), payload.data(), payload.size(), deadline + answer_slack) != tcp::io::ok)
                fail(errc::peer_failed, "bootstrap init", "the root (PE 0) aborted; its reason was lost", 0);
            auto reason = tcp::decode_abort(payload.data(), payload.size(), size_);
            if (!reason) fail(errc::bootstrap, "bootstrap init", "malformed abort from the root: " + reason.problem, 0);
            fail(reason->code, "bootstrap init", "the root (PE 0) aborted: " + reason->text, reason->failed_pe);
        }
        if (head->type != tcp::kind::welcome || head->length != 0)
            fail(errc::bootstrap, "bootstrap init", "unexpected frame from the root during the handshake");
    }

    void connect_root(const launch_info& launch, tcp::clock::time_point deadline) {
        const auto tcp_found = root_path_.empty() ? tcp::endpoints(launch, false, rank_) : std::vector<tcp::endpoint>{};
        int last_error = ETIMEDOUT;
        // Rank 0 may not listen yet: retry until the deadline.
        for (;;) {
            auto found = tcp_found;
            if (!root_path_.empty())
                for (const auto& path : tcp::private_socket(root_path_).for_ranks())
                    found.push_back(tcp::unix_endpoint(path, rank_));
            if (!root_path_.empty() && found.empty()) last_error = ENOENT;
            for (const auto& e : found) {
                tcp::unique_fd s(::socket(e.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
                if (!s) continue;
                int rc = ::connect(s.get(), reinterpret_cast<const sockaddr*>(&e.address), e.length);
                if (rc != 0 && (errno == EINPROGRESS || errno == EAGAIN)) {
                    if (tcp::wait_ready(s.get(), POLLOUT, deadline) == tcp::io::timeout) {
                        last_error = ETIMEDOUT;
                        continue;
                    }
                    int code = 0;
                    socklen_t length = sizeof code;
                    ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &code, &length);
                    rc = code == 0 ? 0 : -1;
                    errno = code;
                }
                if (rc == 0) {
                    if (e.family == AF_UNIX && tcp::peer_uid(s.get()) != long(::getuid()))
                        throw_error(errc::bootstrap, rank_, "bootstrap init",
                                    "the rendezvous socket " + root_ + " belongs to uid " +
                                        std::to_string(tcp::peer_uid(s.get())) + ", not this job's user");
                    if (e.family != AF_UNIX) tcp::no_delay(s.get());
                    root_fd_ = std::move(s);
                    return;
                }
                last_error = errno;
            }
            if (tcp::clock::now() + std::chrono::milliseconds(50) >= deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        throw_error(errc::timeout, rank_, "bootstrap init",
                    "cannot reach the root (PE 0) at " + root_ + " within " + std::to_string(timeout_.count()) +
                        " ms: " + tcp::errno_text(last_error) + " (PE 0 failed before init, or the address is wrong; " +
                        launch.source + ")");
    }

    void exchange_peer(const exchange_id& call, const void* mine, void* all, std::size_t bytes) {
        if (root_left_) fail(errc::peer_failed, what(call), "the root (PE 0) has left: it destroyed its world", 0);
        const auto deadline = tcp::clock::now() + timeout_ + answer_slack;
        const int fd = root_fd_.get();
        const auto prefix = tcp::encode_prefix(call);
        // When the send fails the root may have aborted already: its reason is
        // still readable, so look for it briefly before reporting a lost root.
        const bool sent =
            tcp::send_frame(fd, tcp::kind::data, mine, bytes, deadline, prefix.data(), prefix.size()) == tcp::io::ok;
        const std::uint64_t expected = prefix_bytes + bytes * std::uint64_t(size_);
        const auto head = root_header(what(call), sent ? deadline : tcp::clock::now() + std::chrono::milliseconds(500),
                                      expected, sent);
        if (head.type != tcp::kind::data || head.length != expected)
            fail(errc::bootstrap, what(call),
                 "the root sent " + std::to_string(head.length) + " bytes where " + std::to_string(expected) +
                     " were expected");
        unsigned char their_prefix[prefix_bytes];
        if (auto r = tcp::recv_all(fd, their_prefix, prefix_bytes, deadline); r != tcp::io::ok) root_lost_mid_answer(call, r);
        auto theirs = tcp::decode_prefix(their_prefix, prefix_bytes, bytes);
        if (!theirs) fail(errc::bootstrap, what(call), "malformed answer from the root: " + theirs.problem, 0);
        // No value is read from an answer to another call.
        if (!(*theirs == call)) fail(errc::collective_mismatch, what(call), mismatch_text(0, *theirs, rank_, call));
        if (auto r = tcp::recv_all(fd, all, bytes * std::size_t(size_), deadline); r != tcp::io::ok)
            root_lost_mid_answer(call, r);
    }

    // A stopped root is not a lost connection (issue 28, item 9).
    [[noreturn]] void root_lost_mid_answer(const exchange_id& call, tcp::io result) {
        if (result == tcp::io::timeout)
            fail(errc::timeout, what(call),
                 "the root (PE 0) stopped sending its answer midway and sent nothing more until the deadline: it is "
                 "stopped or hangs",
                 0);
        fail(errc::peer_failed, what(call), "lost the connection to the root (PE 0) mid-answer: it exited or failed", 0);
    }

    // The next frame from the root, checked: a lost connection, a bye, an
    // abort (thrown with the root's code and text), a malformed header or one
    // longer than max_length never return.
    tcp::header root_header(const std::string& call, tcp::clock::time_point deadline, std::uint64_t max_length,
                            bool waited_full = true) {
        unsigned char raw[tcp::header_bytes];
        while (tcp::wait_ready(root_fd_.get(), POLLIN,
                               std::min(deadline, tcp::clock::now() + std::chrono::milliseconds(stopped_check_ms))) ==
                   tcp::io::timeout &&
               tcp::clock::now() < deadline)
            fail_if_stopped(call, {0});  // the root names any other stopped PE itself
        const auto result = tcp::recv_all(root_fd_.get(), raw, sizeof raw, deadline);
        if (result == tcp::io::timeout && waited_full)
            fail(errc::timeout, call,
                 "no answer from the root (PE 0) within " + std::to_string((timeout_ + answer_slack).count()) +
                     " ms (the root names a PE that does not reach the call before then: it is stopped or hangs, "
                     "or it entered the call more than " +
                     std::to_string(answer_slack.count()) + " ms after this PE)",
                 0);
        if (result != tcp::io::ok)
            fail(errc::peer_failed, call, "lost the connection to the root (PE 0) at " + root_ + ": it exited or failed",
                 0);
        auto head = tcp::decode_header(raw, sizeof raw, std::max<std::uint64_t>(max_length, tcp::max_abort_bytes));
        if (!head) fail(errc::bootstrap, call, "malformed frame from the root at " + root_ + ": " + head.problem, 0);
        if (head->type == tcp::kind::bye) fail(errc::peer_failed, call, "the root (PE 0) has left: it destroyed its world", 0);
        if (head->type == tcp::kind::abort) {
            std::vector<unsigned char> payload(head->length);
            if (tcp::recv_all(root_fd_.get(), payload.data(), payload.size(),
                              tcp::clock::now() + std::chrono::milliseconds(1000)) != tcp::io::ok)
                fail(errc::peer_failed, call, "the root (PE 0) aborted; its reason was lost", 0);
            auto reason = tcp::decode_abort(payload.data(), payload.size(), size_);
            if (!reason) fail(errc::bootstrap, call, "malformed abort from the root: " + reason.problem, 0);
            fail(reason->code, call, "the root (PE 0) aborted: " + reason->text, reason->failed_pe);
        }
        if (head->type != tcp::kind::reject && head->length > max_length)
            fail(errc::bootstrap, call,
                 "the root sent a frame of " + std::to_string(head->length) + " bytes (limit " +
                     std::to_string(max_length) + ")",
                 0);
        return *head;
    }

    // --- both -------------------------------------------------------------------

    // Records the failure, tells every connected rank (root) or drops the
    // connection to the root (others), and throws. failed_pe: the PE at
    // fault when known (the one whose waits should name it), else -1.
    [[noreturn]] void fail(errc code, const std::string& call, const std::string& detail, int failed_pe = -1) {
        abort_all(code, call, detail, failed_pe);
        throw_error(code, rank_, call, detail);
    }

    void abort_all(errc code, const std::string& call, const std::string& detail, int failed_pe) {
        broken_ = detail;
        broken_code_ = code;
        if (rank_ == 0) {
            std::string text = "PE 0 in " + call + ": " + detail;
            if (text.size() > tcp::max_abort_bytes - tcp::abort_fixed_bytes)
                text.resize(tcp::max_abort_bytes - tcp::abort_fixed_bytes);
            const auto payload = tcp::encode_abort(code, failed_pe, text);
            const auto deadline = tcp::clock::now() + std::chrono::milliseconds(1000);
            for (auto& peer : peers_)
                if (peer) {
                    (void)tcp::send_frame(peer.get(), tcp::kind::abort, payload.data(), payload.size(), deadline);
                    ::shutdown(peer.get(), SHUT_WR);
                }
            // Closing a socket with unread bytes sends a reset, which makes the
            // peer's kernel drop the abort frame before it is read: read what
            // the peers still send until they close (they do on the abort).
            const auto drained = tcp::clock::now() + std::chrono::milliseconds(500);
            for (auto& peer : peers_)
                if (peer) tcp::drain(peer.get(), drained);
            for (auto& peer : peers_) peer.reset();
        }
        root_fd_.reset();
    }

    // --- the watcher: peer deaths between collectives ---------------------------

    void watch_loop() {
        std::unique_lock stop_lock(stop_mutex_);
        while (!stop_changed_.wait_for(stop_lock, std::chrono::milliseconds(50), [&] { return stopping_; })) {
            if (on_tick_) on_tick_();
            std::unique_lock io(io_, std::try_to_lock);
            if (!io || !broken_.empty() || reported_) continue;
            const int failed = rank_ == 0 ? watch_peers() : watch_root();
            if (failed < 0) continue;
            reported_ = true;
            if (on_failure_) on_failure_(failed);
        }
    }

    // Rank 0: a peer whose connection ended without a bye died; tell everyone.
    // POLLRDHUP also shows a peer that died after sending its next
    // collective's frame (still unread here).
    int watch_peers() {
        for (int r = 1; r < size_; ++r) {
            auto& peer = peers_[std::size_t(r)];
            if (!peer || left_[std::size_t(r)]) continue;
            pollfd p{peer.get(), POLLIN | POLLRDHUP, 0};
            if (::poll(&p, 1, 0) < 0) continue;
            unsigned char raw[tcp::header_bytes];
            const ssize_t n = ::recv(peer.get(), raw, sizeof raw, MSG_PEEK | MSG_DONTWAIT);
            if (n == ssize_t(sizeof raw) && tcp::get(raw, 4) == tcp::magic &&
                tcp::kind(tcp::get(raw + 6, 2)) == tcp::kind::bye) {
                (void)::recv(peer.get(), raw, sizeof raw, MSG_DONTWAIT);
                left_[std::size_t(r)] = true;
                continue;
            }
            if (!(p.revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
            abort_all(errc::peer_failed, "watch",
                      "PE " + std::to_string(r) +
                          " exited or closed its connection outside a collective call (the process died)",
                      r);
            return r;
        }
        return -1;
    }

    // Other ranks: rank 0's connection closed, or an abort naming a PE waits.
    // The abort stays unread, for the next collective to throw its text.
    int watch_root() {
        if (!root_fd_ || root_left_) return -1;
        unsigned char raw[tcp::header_bytes + 8];
        const ssize_t n = ::recv(root_fd_.get(), raw, sizeof raw, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return 0;
        if (n < ssize_t(tcp::header_bytes)) return -1;
        const auto type = tcp::kind(tcp::get(raw + 6, 2));
        if (type == tcp::kind::bye) {
            (void)::recv(root_fd_.get(), raw, tcp::header_bytes, MSG_DONTWAIT);
            root_left_ = true;
            return -1;
        }
        if (type == tcp::kind::abort && n == ssize_t(sizeof raw)) {
            // Only the fixed part is peeked: the PE it names (when in range).
            auto reason = tcp::decode_abort(raw + tcp::header_bytes, tcp::abort_fixed_bytes, size_);
            return reason && reason->failed_pe >= 0 ? reason->failed_pe : 0;
        }
        return -1;
    }

    int rank_;
    int size_;
    std::chrono::milliseconds timeout_;
    std::string token_;
    std::string root_;  // host:port or the socket path, for messages
    std::string root_path_;  // a Unix-domain rendezvous: its socket path
    // Rank 0: the socket file (and the directory made for it, if any), removed once everyone joined or init
    // failed; the file only while it is the one this root bound (never another root's).
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
    tcp::unique_fd listener_;             // rank 0 during init
    std::vector<tcp::unique_fd> peers_;   // rank 0: one per rank (index 0 empty)
    tcp::unique_fd root_fd_;              // other ranks: the connection to rank 0
    std::string rejected_;                // rank 0: connections turned away, for the timeout message
    int rejected_more_ = 0;               // ... and how many more
    std::string broken_;
    errc broken_code_ = errc::bootstrap;
    std::vector<bool> left_;          // rank 0: peers that said bye
    bool root_left_ = false;          // other ranks: rank 0 said bye
    // The watcher (see watch()); io_ keeps it off the sockets during collectives.
    std::mutex io_;
    std::function<void(int)> on_failure_;
    std::function<void()> on_tick_;
    std::function<int(std::uint64_t*)> stopped_peer_;
    bool reported_ = false;
    std::mutex stop_mutex_;
    std::condition_variable stop_changed_;
    bool stopping_ = false;
    std::thread watcher_;
};

}  // namespace detail
PGAS_NAMESPACE_END
