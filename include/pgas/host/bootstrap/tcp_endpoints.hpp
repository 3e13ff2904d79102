// Where the TCP bootstrap's root listens and its ranks connect: resolved host:port addresses, or a Unix-domain
// socket in a directory only this user can enter.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/bootstrap/tcp_wire.hpp>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <cerrno>
#include <cstdint>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {
namespace tcp {

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
        throw_error(errc::bootstrap, rank, "bootstrap",
                    "cannot resolve the root address " + host + ":" + std::to_string(port) + ": " + ::gai_strerror(rc));
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
    // fresh private directory beside it, dir-XXXXXX (mkdtemp), whose name goes to `made`.
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

// A TCP port that is free now on the IPv4 address `bind_address` (INADDR_ANY: every interface): a new launch's
// rendezvous (pgasrun's, nvshmemx_get_uniqueid's), which rank 0 then binds with SO_REUSEADDR. Throws errc::system
// naming `call`.
inline int free_port(const char* call, std::uint32_t bind_address) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(bind_address);
    socklen_t length = sizeof address;
    const bool found = s >= 0 && ::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                       ::getsockname(s, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    const int error = errno;
    if (s >= 0) ::close(s);
    if (!found)
        throw_error(errc::system, -1, call, std::string("cannot find a free TCP port: ") + std::strerror(error));
    return ntohs(address.sin_port);
}

// 16 bytes of /dev/urandom as 32 hex digits: a new launch's token (launch_info::token). Throws errc::system naming
// `call`.
inline std::string random_token(const char* call) {
    unsigned char bytes[16] = {};
    const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    const bool read_all = fd >= 0 && ::read(fd, bytes, sizeof bytes) == ssize_t(sizeof bytes);
    if (fd >= 0) ::close(fd);
    if (!read_all) throw_error(errc::system, -1, call, "cannot read 16 bytes of /dev/urandom");
    std::string token;
    for (unsigned char b : bytes) {
        token += "0123456789abcdef"[b >> 4];
        token += "0123456789abcdef"[b & 15];
    }
    return token;
}

}  // namespace tcp
}  // namespace detail
PGAS_NAMESPACE_END
