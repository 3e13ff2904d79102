// The NVLink transport: peers' heaps mapped into one VA range, so every op is a load, store or atomic.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/channel.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/load_store.hpp>

#include <cstddef>
#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// Device-side state of the NVLink transport: the base of the VA range that
/// maps every node-local PE's heap and the stride between them (host/heap/gpu.hpp).
/// A remote address is base + pe * stride + offset: one multiply-add, no table
/// load. Puts/gets are 16-byte vector copies spread over the calling group,
/// atomics are system-scope atomics on the peer address (native NVLink
/// atomics), fence/quiet a fence.sc.sys (see load_store_ops for the model).
class nvlink : public detail::load_store_ops<nvlink> {
public:
    /// The transport's name in diagnostics ("nvlink").
    static constexpr const char* name = "nvlink";

    /// An empty transport (reaches no PE), as in a default-constructed context.
    nvlink() = default;
    /// Over the VA range that maps every node-local PE's heap, with `channels` channels per peer
    /// (world::context<nvlink> makes it).
    PGAS_HD nvlink(std::byte* base, std::uint64_t stride, int my_pe, int n_pes, std::uint64_t heap_bytes,
                   int channels = 1)
        : base_(base),
          stride_(stride),
          heap_bytes_(heap_bytes),
          my_pe_(my_pe),
          n_pes_(n_pes),
          channel_{0, std::uint16_t(channels)} {}

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return my_pe_; }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return n_pes_; }
    /// Whether this transport reaches PE `pe` at all.
    PGAS_HD bool reachable(int pe) const { return unsigned(pe) < unsigned(n_pes_); }
    /// Bytes of each PE's symmetric heap.
    PGAS_HD std::uint64_t heap_bytes() const { return heap_bytes_; }
    /// This PE's own heap byte at symmetric `offset`.
    PGAS_HD void* local_address(std::uint64_t offset) const { return base_ + stride_ * std::uint64_t(my_pe_) + offset; }
    /// PE `pe`'s heap byte at `offset` as a pointer the caller may load from and store to, or nullptr when `pe` is
    /// not reachable that way (pgas::load_store_transport).
    PGAS_HD void* peer_address(std::uint64_t offset, int pe) const {
        return reachable(pe) ? static_cast<void*>(base_ + stride_ * std::uint64_t(pe) + offset) : nullptr;
    }

    /// The channel this value is bound to (pgas::channel_transport): one path for all of them, so it changes
    /// nothing but what channel() answers.
    PGAS_HD int channel() const { return channel_.index; }
    /// Channels per peer (world_options::channels / PGAS_CHANNELS), all the same path here.
    PGAS_HD int channels() const { return channel_.count; }
    /// A copy bound to channel `c` (device::context::on_channel checks the range).
    PGAS_HD nvlink on_channel(int c) const {
        nvlink bound = *this;
        bound.channel_.index = std::uint16_t(c);
        return bound;
    }

private:
    std::byte* base_ = nullptr;
    std::uint64_t stride_ = 0;
    std::uint64_t heap_bytes_ = 0;
    int my_pe_ = 0;
    int n_pes_ = 0;
    detail::channel_choice channel_{};
};

static_assert(rma_transport<nvlink>);
static_assert(atomic_transport<nvlink>);
static_assert(signal_transport<nvlink>);
static_assert(load_store_transport<nvlink>);
static_assert(channel_transport<nvlink>);
static_assert(completion_scope_transport<nvlink>);

PGAS_NAMESPACE_END
