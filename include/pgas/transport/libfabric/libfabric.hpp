// pgas::libfabric: the device-side state of the CPU-proxy transport over libfabric (no libfabric headers needed).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/proxy/proxy_ops.hpp>
#include <pgas/transport/proxy/ring.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// What a kernel (or a host PE thread) carries in device::context<libfabric>:
/// the caller's PE's proxy ring of the context's channel and its own heap base. Every remote operation
/// is a command the PE's proxy thread turns into fi_write / fi_read /
/// fi_*atomic (see proxy/proxy_ops.hpp for semantics). Made by
/// pgas::libfabric_domain::context (host/libfabric/domain.hpp).
///
/// route<nvlink, libfabric> (NVLink inside the node, the proxy outside) is to
/// come once the NVLink transport lands: it composes this type unchanged.
class libfabric : public proxy::proxy_ops<libfabric> {
public:
    /// The transport's name in diagnostics ("libfabric").
    static constexpr const char* name = "libfabric";

    /// An empty transport (reaches no PE), as in a default-constructed context.
    libfabric() = default;
    /// Over the PE's proxy ring and heap base (libfabric_domain::context makes it).
    libfabric(proxy::ring_view ring, std::byte* local_base, int my_pe, int n_pes, std::uint64_t heap_bytes)
        : ring_(ring), local_base_(local_base), my_pe_(my_pe), n_pes_(n_pes), heap_bytes_(heap_bytes) {}

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return my_pe_; }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return n_pes_; }
    /// Whether this transport reaches PE `pe` at all.
    PGAS_HD bool reachable(int pe) const { return pe >= 0 && pe < n_pes_; }
    /// Bytes of each PE's symmetric heap.
    PGAS_HD std::uint64_t heap_bytes() const { return heap_bytes_; }
    /// This PE's own heap byte at symmetric `offset`.
    PGAS_HD void* local_address(std::uint64_t offset) const { return local_base_ + offset; }
    /// The PE's proxy ring of this value's channel (producer side).
    PGAS_HD const proxy::ring_view& ring() const { return ring_; }
    /// The channel this value pushes to (pgas::channel_transport).
    PGAS_HD int channel() const { return ring_.channel; }
    /// Proxy rings of the PE, one per channel (libfabric_options::channels).
    PGAS_HD int channels() const { return ring_.channels; }
    /// A copy pushing into channel `c`'s ring (device::context::on_channel checks the range).
    PGAS_HD libfabric on_channel(int c) const {
        libfabric bound = *this;
        bound.ring_ = ring_.on_channel(c);
        return bound;
    }

private:
    proxy::ring_view ring_;
    std::byte* local_base_ = nullptr;
    int my_pe_ = 0;
    int n_pes_ = 0;
    std::uint64_t heap_bytes_ = 0;
};

static_assert(rma_transport<libfabric>);
static_assert(atomic_transport<libfabric>);
static_assert(signal_transport<libfabric>);
static_assert(!load_store_transport<libfabric>);
static_assert(channel_transport<libfabric>);
static_assert(completion_scope_transport<libfabric>);

PGAS_NAMESPACE_END
