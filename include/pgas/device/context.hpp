// device::context<Transport>: the trivially copyable handle a kernel receives by value.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/transport/concepts.hpp>

#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace device {

/// What every context carries besides its transport (pgas::runtime_state).
using runtime_state = ::pgas::runtime_state;

/// The trivially copyable handle of one PE that a kernel receives by value; every device op takes it first.
/// Pass it to a kernel as `__grid_constant__ const pgas::device::context<T> ctx`
/// (no copy to local memory); on the host transport world::launch_host hands
/// one to each PE thread. Made by world::context, libfabric_domain::context, ibgda_domain::context and
/// route_context. `Transport` must model pgas::transport (else: "pgas: device::context<T> needs T to model
/// pgas::transport").
template <class Transport>
struct context {
    static_assert(transport<Transport>,
                  "pgas: device::context<T> needs T to model pgas::transport (see transport/concepts.hpp)");
    /// Transport.
    using transport_type = Transport;

    /// The transport's device-side state (the device ops call it; programs rarely need to).
    Transport transport;
    /// The wait timeout and the peer-failure flag every wait of this PE reads.
    runtime_state runtime;

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return transport.my_pe(); }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return transport.n_pes(); }
    /// The team of every PE, bound to this PE (slot 0).
    PGAS_HD team world_team() const { return team::world_team(my_pe(), n_pes()); }

    /// The channel this context's operations go through: 0 unless the context came from on_channel.
    PGAS_HD int channel() const {
        if constexpr (channel_transport<Transport>)
            return transport.channel();
        else
            return 0;
    }
    /// Channels per peer the transport was built with (world_options::channels, the domains' `channels`,
    /// PGAS_CHANNELS; 1 for a transport without channels).
    PGAS_HD int n_channels() const {
        if constexpr (channel_transport<Transport>)
            return transport.channels();
        else
            return 1;
    }
    /// A copy of this context bound to channel `c` in [0, n_channels()): its puts, gets, atomics and signals go
    /// through that channel's queues (ibgda: its RC queue pair to each peer, with its own send queue, doorbell
    /// and CQ; libfabric: its proxy ring; nvlink/host: the same path, the channel changes nothing), and its
    /// fence, quiet and flush_local cover that channel only (quiet_all covers every one).
    /// - **Called by** any thread, any number of times (a value computation: on ibgda and nvlink/host no memory
    ///   access, on libfabric a few pointer additions). DeepEP's pattern: `auto c = ctx.on_channel(expert %
    ///   ctx.n_channels());` once per warp, then every op of that warp on `c`.
    /// - **Errors:** with PGAS_CHECKS, `c` outside [0, n_channels()) is errc::invalid_argument naming the call,
    ///   the PE and `c` (thrown on the host transport, print and trap on a GPU); without, undefined.
    PGAS_HD context on_channel(int c) const {
        if constexpr (PGAS_CHECKS) {
            if (c < 0 || c >= n_channels())
                detail::report(errc::invalid_argument, "on_channel", my_pe(), "channel outside [0, n_channels()):", c);
        }
        context bound = *this;
        if constexpr (channel_transport<Transport>) bound.transport = transport.on_channel(c);
        return bound;
    }

    /// The caller's own copy of a symmetric object: a raw pointer it may load from and store to (any transport).
    template <class T>
    PGAS_HD T* local(symmetric_ptr<T> p) const {
        return static_cast<T*>(transport.local_address(p.offset()));
    }

    /// A pointer to PE pe's copy that the caller may load from and store to, or
    /// nullptr when the transport cannot reach pe by load/store (as nvshmem_ptr;
    /// on a route, non-null for the near peers its Near transport maps).
    template <class T>
    PGAS_HD T* peer(symmetric_ptr<T> p, int pe) const {
        if constexpr (peer_pointer_transport<Transport>) {
            return static_cast<T*>(transport.peer_address(p.offset(), pe));
        } else {
            return nullptr;
        }
    }
};

}  // namespace device

namespace detail {

// Argument checks of the device layer, compiled in under PGAS_CHECKS. On the
// host they throw pgas::error, on the GPU they print and trap (see report()).
template <class Tr>
PGAS_HD inline void check_pe(const device::context<Tr>& ctx, const char* call, int pe) {
    if constexpr (PGAS_CHECKS) {
        if (pe < 0 || pe >= ctx.n_pes()) report(errc::pe_out_of_range, call, ctx.my_pe(), "target PE", pe);
    }
}

template <class Tr>
PGAS_HD inline void check_range(const device::context<Tr>& ctx, const char* call, std::uint64_t offset,
                                std::uint64_t bytes) {
    if constexpr (PGAS_CHECKS) {
        const std::uint64_t heap = ctx.transport.heap_bytes();
        if (offset == null_offset) report(errc::not_symmetric, call, ctx.my_pe(), "null symmetric_ptr, offset", -1);
        if (offset < heap_layout::user_offset || offset > heap || bytes > heap - offset)
            report(errc::not_symmetric, call, ctx.my_pe(), "symmetric range outside the heap's user area, offset",
                   (long long)offset);
    }
}

// Whether `count` elements of `element` bytes, `displ` elements past heap offset `offset`, lie in the heap's user
// area (no overflow on hostile values); for checks that hold whatever PGAS_CHECKS says (alltoallv's blocks).
template <class Tr>
PGAS_HD inline bool elements_in_heap(const device::context<Tr>& ctx, std::uint64_t offset, std::uint64_t displ,
                                     std::uint64_t count, std::uint64_t element) {
    const std::uint64_t heap = ctx.transport.heap_bytes();
    if (offset == null_offset || offset < heap_layout::user_offset || offset > heap) return false;
    const std::uint64_t room = (heap - offset) / element;
    return displ <= room && count <= room - displ;
}

template <class Tr>
PGAS_HD inline void check_aligned(const device::context<Tr>& ctx, const char* call, std::uint64_t offset,
                                  std::uint64_t alignment) {
    if constexpr (PGAS_CHECKS) {
        if (offset % alignment != 0)
            report(errc::misaligned, call, ctx.my_pe(), "address not naturally aligned, heap offset",
                   (long long)offset);
    }
}

}  // namespace detail

PGAS_NAMESPACE_END
