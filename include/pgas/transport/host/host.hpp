// The host transport: PEs are CPU threads of one process sharing a host-memory symmetric heap.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/channel.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/load_store.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN
/// Device-side state of the host transport: every PE's heap base. The device
/// layer's templates compile as host code over it, so collectives and ordering
/// logic run for real on machines without a GPU (CI). world::launch_host runs
/// one thread per PE with a context<host> each. (pgas::host is this
/// transport; the folder pgas/host/ is the host layer, which builds every
/// transport's host side, this one's in host/host_memory/builder.hpp.)
class host : public detail::load_store_ops<host> {
public:
    /// The transport's name in diagnostics ("host").
    static constexpr const char* name = "host";

    /// An empty transport (reaches no PE), as in a default-constructed context.
    host() = default;
    /// Over every PE's heap base, with `channels` channels per peer (world::context<host> makes it).
    host(std::byte* const* heap_bases, int my_pe, int n_pes, std::uint64_t heap_bytes, int channels = 1)
        : bases_(heap_bases),
          my_pe_(my_pe),
          n_pes_(n_pes),
          heap_bytes_(heap_bytes),
          channel_{0, std::uint16_t(channels)} {}

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return my_pe_; }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return n_pes_; }
    /// Whether this transport reaches PE `pe` at all.
    PGAS_HD bool reachable(int pe) const { return pe >= 0 && pe < n_pes_; }
    /// Bytes of each PE's symmetric heap.
    PGAS_HD std::uint64_t heap_bytes() const { return heap_bytes_; }
    /// This PE's own heap byte at symmetric `offset`.
    PGAS_HD void* local_address(std::uint64_t offset) const { return bases_[my_pe_] + offset; }
    /// PE `pe`'s heap byte at `offset` as a pointer the caller may load from and store to, or nullptr when `pe` is
    /// not reachable that way (pgas::load_store_transport).
    PGAS_HD void* peer_address(std::uint64_t offset, int pe) const {
        return reachable(pe) ? static_cast<void*>(bases_[pe] + offset) : nullptr;
    }

    /// The channel this value is bound to (pgas::channel_transport): one path for all of them, so it changes
    /// nothing but what channel() answers.
    PGAS_HD int channel() const { return channel_.index; }
    /// Channels per peer (world_options::channels / PGAS_CHANNELS), all the same path here.
    PGAS_HD int channels() const { return channel_.count; }
    /// A copy bound to channel `c` (device::context::on_channel checks the range).
    PGAS_HD host on_channel(int c) const {
        host bound = *this;
        bound.channel_.index = std::uint16_t(c);
        return bound;
    }

private:
    std::byte* const* bases_ = nullptr;
    int my_pe_ = 0;
    int n_pes_ = 0;
    std::uint64_t heap_bytes_ = 0;
    detail::channel_choice channel_{};
};

static_assert(rma_transport<host>);
static_assert(atomic_transport<host>);
static_assert(signal_transport<host>);
static_assert(load_store_transport<host>);
static_assert(channel_transport<host>);
static_assert(completion_scope_transport<host>);

PGAS_NAMESPACE_END
