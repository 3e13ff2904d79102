// The TCP bootstrap's wire: sockets with deadlines, and the frames (16-byte header, then payload) with the
// decoders every byte from a socket goes through.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/env.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
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
        return invalid<header>("protocol version " + std::to_string(out.version) + " where " + std::to_string(version) +
                               " was expected (pgas versions differ)");
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

}  // namespace tcp
}  // namespace detail
PGAS_NAMESPACE_END
