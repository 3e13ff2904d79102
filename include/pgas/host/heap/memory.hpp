// Where a world's symmetric heap lives: the interface, and the host-memory heap of one process.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Every heap base is a multiple of this, so a heap offset's alignment (up to
// it) is the address's alignment on every PE: alloc(count, alignment) relies on
// it. 2 MiB is the CUDA VMM granularity of the GPU heaps; the host heaps map
// their memory at such a boundary (map_aligned).
inline constexpr std::uint64_t heap_base_alignment = std::uint64_t{2} << 20;

// `bytes` of fd (or of zero-filled anonymous memory when fd < 0), shared
// (MAP_SHARED) or private, at an address that is a multiple of
// heap_base_alignment. nullptr when the kernel refuses; unmap_aligned frees it.
inline std::byte* map_aligned(std::uint64_t bytes, int fd) {
    const std::uint64_t reserved = bytes + heap_base_alignment;
    void* region = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(region);
    const std::uintptr_t aligned = (start + heap_base_alignment - 1) / heap_base_alignment * heap_base_alignment;
    const int flags = MAP_FIXED | MAP_NORESERVE | (fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED);
    void* at = ::mmap(reinterpret_cast<void*>(aligned), bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
    if (at == MAP_FAILED) {
        ::munmap(region, reserved);
        return nullptr;
    }
    // Give back the unused head and tail of the reservation.
    if (aligned > start) ::munmap(region, aligned - start);
    const std::uintptr_t end = aligned + bytes, reserved_end = start + reserved;
    const std::uintptr_t page_end = (end + 4095) / 4096 * 4096;
    if (reserved_end > page_end) ::munmap(reinterpret_cast<void*>(page_end), reserved_end - page_end);
    return static_cast<std::byte*>(at);
}
inline void unmap_aligned(std::byte* base, std::uint64_t bytes) { ::munmap(base, bytes); }

// What a heap backend is asked to build: each of the world's PEs gets
// `heap_bytes`; this process drives `local_pes`; `bootstrap` connects it to
// the other processes (exchanging handles is the backend's business).
struct heap_request {
    std::uint64_t heap_bytes = 0;
    std::vector<int> local_pes;
    int n_pes = 0;
    bootstrap* channel = nullptr;
};

// The memory behind a world's symmetric heap. The allocator (offsets) is the
// world's; a backend only provides bytes and addresses: host memory (this
// file), shared memory between processes, CUDA VMM mapped across GPUs.
class heap_memory {
public:
    virtual ~heap_memory() = default;
    // Local PE `local`'s heap base in this address space.
    virtual std::byte* local_base(int local) const = 0;
    // Every world PE's heap base as the transport sees it from local PE
    // `local` (nullptr where that PE is not mapped); stable for the world's life.
    virtual std::byte* const* peer_bases(int local) const = 0;
    // Sets [offset, offset+bytes) of local PE `local`'s heap to zero.
    virtual void zero(int local, std::uint64_t offset, std::uint64_t bytes) = 0;
    // Whether the CPU may dereference local_base() (host memory), or only kernels can.
    virtual bool host_accessible() const = 0;
    // Every world PE's heartbeat word (detail/heartbeat.hpp) as this process's
    // host threads see it, this process's own writable; null when the heap
    // spans one process (nothing to watch). Stable for the world's life.
    virtual std::uint64_t* const* heartbeat_words() const { return nullptr; }
};

// Host memory of this process: one anonymous mapping (zero-filled, lazily) per local PE. When the
// world is SPMD threads (one PE per participant) the bases are exchanged
// through the bootstrap, valid because all participants share this process.
class host_heap_memory final : public heap_memory {
public:
    explicit host_heap_memory(const heap_request& request) : bases_(std::size_t(request.n_pes), nullptr) {
        for (int pe : request.local_pes) {
            auto* memory = map_aligned(request.heap_bytes, -1);
            if (memory == nullptr)
                throw_error(errc::heap_exhausted, pe, "world init",
                            "cannot allocate a host heap of " + std::to_string(request.heap_bytes) + " bytes");
            heaps_.emplace_back(memory, unmap{request.heap_bytes});
        }
        if (request.channel->size() == 1) {
            for (std::size_t i = 0; i < request.local_pes.size(); ++i)
                bases_[std::size_t(request.local_pes[i])] = heaps_[i].get();
        } else {
            auto all = request.channel->allgather_value(heaps_.front().get());
            for (std::size_t pe = 0; pe < all.size(); ++pe) bases_[pe] = all[pe];
        }
    }
    std::byte* local_base(int local) const override { return heaps_[std::size_t(local)].get(); }
    std::byte* const* peer_bases(int) const override { return bases_.data(); }
    void zero(int local, std::uint64_t offset, std::uint64_t bytes) override {
        std::memset(local_base(local) + offset, 0, bytes);
    }
    bool host_accessible() const override { return true; }

private:
    struct unmap {
        std::uint64_t bytes;
        void operator()(std::byte* base) const { unmap_aligned(base, bytes); }
    };
    std::vector<std::unique_ptr<std::byte, unmap>> heaps_;
    std::vector<std::byte*> bases_;
};

}  // namespace detail
PGAS_NAMESPACE_END
