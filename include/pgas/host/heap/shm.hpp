// The host transport's heap across processes: each PE's heap is a memfd that every process of the node maps.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/fd_exchange.hpp>
#include <pgas/detail/heartbeat.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/heap/memory.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/bootstrap/tcp_store.hpp>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// One memfd per PE, mapped shared by every process of the world, so that
// host-transport loads, stores and atomics reach other processes' heaps.
// Pages are allocated on first touch (a large heap costs nothing until used)
// and outlive a process that dies while others still map them. Needs every
// PE on one node; with several processes, one PE per process.
class shm_heap_memory final : public heap_memory {
public:
    explicit shm_heap_memory(const heap_request& request) : bytes_(request.heap_bytes) {
        bootstrap& channel = *request.channel;
        const int me = request.local_pes.empty() ? -1 : request.local_pes.front();
        if (channel.size() > 1 && request.local_pes.size() != 1)
            throw_error(errc::invalid_argument, -1, "shm heap",
                        "a multi-process shared-memory heap takes one PE per process, got " +
                            std::to_string(request.local_pes.size()));
        bases_.assign(std::size_t(request.n_pes), nullptr);
        std::vector<tcp::unique_fd> mine;
        for (int pe : request.local_pes) mine.push_back(create(pe));
        if (channel.size() == 1) {
            for (std::size_t i = 0; i < mine.size(); ++i)
                bases_[std::size_t(request.local_pes[i])] = map(mine[i].get(), request.local_pes[i]);
        } else {
            const auto node = discover_node(channel);
            const auto pes = channel.allgather_value(me);
            if (node.size() != channel.size())
                throw_error(errc::transport_unavailable, me, "shm heap",
                            "the host transport's shared-memory heap needs every PE on one node; " +
                                std::to_string(channel.size() - node.size()) + " of " + std::to_string(channel.size()) +
                                " processes run on other nodes (or in another network namespace)");
            auto fds = allgather_fds(channel, mine.front().get(), node);
            std::vector<tcp::unique_fd> owned;
            for (int fd : fds) owned.emplace_back(fd);
            for (std::size_t i = 0; i < owned.size(); ++i) {
                const int pe = pes[std::size_t(node.ranks[i])];
                struct stat info {};
                if (::fstat(owned[i].get(), &info) != 0 || std::uint64_t(info.st_size) != bytes_)
                    throw_error(errc::collective_mismatch, me, "shm heap",
                                "PE " + std::to_string(pe) + "'s heap is " + std::to_string(info.st_size) +
                                    " bytes but " + std::to_string(bytes_) +
                                    " here (PGAS_HEAP_SIZE or world_options::heap_bytes differ between processes)");
                bases_[std::size_t(pe)] = map(owned[i].get(), me);
            }
        }
        for (int pe : request.local_pes) locals_.push_back(bases_[std::size_t(pe)]);
        if (channel.size() > 1)
            for (std::byte* base : bases_) heartbeats_.push_back(heap_heartbeat_word(base));
    }

    shm_heap_memory(const shm_heap_memory&) = delete;
    shm_heap_memory& operator=(const shm_heap_memory&) = delete;

    std::byte* local_base(int local) const override { return locals_[std::size_t(local)]; }
    std::byte* const* peer_bases(int) const override { return bases_.data(); }
    void zero(int local, std::uint64_t offset, std::uint64_t bytes) override {
        std::memset(local_base(local) + offset, 0, bytes);
    }
    bool host_accessible() const override { return true; }
    // The word at heap_layout::heartbeat_offset of every PE's heap (several processes only).
    std::uint64_t* const* heartbeat_words() const override {
        return heartbeats_.empty() ? nullptr : heartbeats_.data();
    }

private:
    tcp::unique_fd create(int pe) const {
        const std::string name = "pgas-heap-pe" + std::to_string(pe);
        tcp::unique_fd fd(::memfd_create(name.c_str(), MFD_CLOEXEC));
        if (!fd) throw_error(errc::system, pe, "shm heap", "memfd_create failed: " + std::string(std::strerror(errno)));
        if (::ftruncate(fd.get(), off_t(bytes_)) != 0)
            throw_error(errc::heap_exhausted, pe, "shm heap",
                        "cannot size a shared heap of " + std::to_string(bytes_) + " bytes: " + std::strerror(errno));
        return fd;
    }

    std::byte* map(int fd, int pe) {
        std::byte* at = map_aligned(bytes_, fd);  // heap_base_alignment: alloc(count, alignment) needs it
        if (at == nullptr)
            throw_error(errc::heap_exhausted, pe, "shm heap",
                        "cannot map a shared heap of " + std::to_string(bytes_) + " bytes: " + std::strerror(errno));
        mapped_.emplace_back(at, unmap{bytes_});
        return mapped_.back().get();
    }

    std::uint64_t bytes_;
    std::vector<std::byte*> bases_;           // by world PE
    std::vector<std::byte*> locals_;          // by local PE index
    std::vector<std::uint64_t*> heartbeats_;  // by world PE, in bases_'s heaps
    struct unmap {
        std::uint64_t bytes;
        void operator()(std::byte* base) const { ::munmap(base, bytes); }
    };
    std::vector<std::unique_ptr<std::byte, unmap>> mapped_;  // unmapped also when the constructor throws
};

// The heap factory of world::init's default (host transport across processes).
inline std::unique_ptr<heap_memory> make_shm_heap(const heap_request& request) {
    return std::make_unique<shm_heap_memory>(request);
}

}  // namespace detail
PGAS_NAMESPACE_END
