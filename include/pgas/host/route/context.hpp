// pgas::route_context: builds a device::context<route<Near, Far>> from a Near and a Far context (or a world).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/bootstrap/node.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/route/route.hpp>

#include <optional>
#include <string>
#include <vector>

PGAS_NAMESPACE_BEGIN

/// The context of one PE whose operations to the PEs in near_pes go through
/// `near` and all others through `far`. Both contexts must belong to the same
/// PE of the same world (checked). The wait timeout and peer-failure flag are
/// far's: a proxy transport may hand kernels a mapped copy of the flag that
/// the world's own (pageable on host heaps) is not.
///
///   pgas::libfabric_domain fabric(w);
///   auto ctx = pgas::route_context<pgas::host>(w, fabric.context(), pgas::route_node_pes(w));
///   // ctx: device::context<pgas::route<pgas::host, pgas::libfabric>>
///
/// Throws errc::invalid_argument when the contexts belong to different PEs or heaps, errc::pe_out_of_range when
/// near_pes does not fit the world, errc::transport_unavailable when Near does not reach a PE of near_pes.
template <class Near, class Far>
device::context<route<Near, Far>> route_context(const device::context<Near>& near, const device::context<Far>& far,
                                                pe_range near_pes) {
    const int pe = near.my_pe(), n = near.n_pes();
    const char* call = "route_context";
    if (far.my_pe() != pe || far.n_pes() != n || far.transport.heap_bytes() != near.transport.heap_bytes())
        detail::throw_error(errc::invalid_argument, pe, call,
                            std::string("the ") + Near::name + " context is PE " + std::to_string(pe) + " of " +
                                std::to_string(n) + " but the " + Far::name + " context is PE " +
                                std::to_string(far.my_pe()) + " of " + std::to_string(far.n_pes()) +
                                " (or their heaps differ): both must come from the same PE of one world");
    if (near_pes.first < 0 || near_pes.count < 0 || near_pes.first + near_pes.count > n)
        detail::throw_error(errc::pe_out_of_range, pe, call,
                            "near PEs [" + std::to_string(near_pes.first) + ", " +
                                std::to_string(near_pes.first + near_pes.count) + ") do not fit a world of " +
                                std::to_string(n) + " PEs");
    for (int q = near_pes.first; q < near_pes.first + near_pes.count; ++q) {
        bool reached = near.transport.reachable(q);
        if constexpr (load_store_transport<Near>) reached = reached && near.transport.peer_address(0, q) != nullptr;
        if (!reached)
            detail::throw_error(errc::transport_unavailable, pe, call,
                                std::string("PE ") + std::to_string(q) + " is in the near range but the " + Near::name +
                                    " transport does not reach it from here");
    }
    device::context<route<Near, Far>> ctx;
    ctx.transport = route<Near, Far>(near.transport, far.transport, near_pes);
    ctx.runtime = far.runtime;
    return ctx;
}

/// The same with Near's context taken from the world (world::context<Near>).
template <class Near, class Far>
device::context<route<Near, Far>> route_context(const world& w, const device::context<Far>& far, pe_range near_pes,
                                                int local = 0) {
    return route_context(w.template context<Near>(local), far, near_pes);
}

/// PGAS_NODE_SIZE=k: "nodes" of k consecutive world PEs instead of hosts
/// (the last may be smaller), so that one machine can stand for several nodes:
/// e.g. 4 PEs on one GPU, near pairs over NVLink and the far side over a
/// network transport. nullopt when unset.
///
/// A malformed PGAS_NODE_SIZE throws errc::invalid_argument.
inline std::optional<pe_range> virtual_node_pes(int pe, int n_pes) {
    const auto node = detail::virtual_node(pe, n_pes, pe);
    if (!node) return std::nullopt;
    return pe_range{node->first, node->second};
}

/// Collective: the PEs on this process's node (same boot and network
/// namespace: the node the heap shares memory within), the usual near range,
/// or PGAS_NODE_SIZE's virtual node when that is set. They must be
/// consecutive world PEs (one node's launch ranks are); otherwise this throws
/// and the caller passes its own pe_range.
inline pe_range route_node_pes(world& w) {
    std::vector<int> pes;
    for (int i = 0; i < w.n_local_pes(); ++i) pes.push_back(w.local_pe(i));
    const auto [first, count] =
        detail::node_pes(w.channel(), pes, w.n_pes(), "route_node_pes", ": pass a pe_range to route_context");
    return pe_range{first, count};
}

PGAS_NAMESPACE_END
