// transport_builder<route<Near, Far>>: builds both sides of a route from the world and composes their contexts.
#pragma once

#include <pgas/device/context.hpp>
#include <pgas/host/host_memory/builder.hpp>
#include <pgas/host/nvlink/builder.hpp>
#include <pgas/host/route/context.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/route/route.hpp>

#include <optional>

PGAS_NAMESPACE_BEGIN

/// Owns Near's and Far's builders (built in that order, each as it would be
/// alone: collective where it is) and the near range; contexts are
/// route_context(near's, far's, near range). Torn down in reverse order.
///
///   pgas::transport_builder_t<pgas::route<pgas::nvlink, pgas::libfabric>> r(w, {});  // near range: route_node_pes
///   auto ctx = r.context();  // device::context<route<nvlink, libfabric>>
template <class Near, class Far>
class transport_builder<route<Near, Far>> {
    static_assert(host_buildable_transport<Near>,
                  "pgas: route<Near, Far>'s builder needs Near's (include Near's host side; see "
                  "host/transport_builder.hpp)");
    static_assert(host_buildable_transport<Far>,
                  "pgas: route<Near, Far>'s builder needs Far's (include Far's host side; see "
                  "host/transport_builder.hpp)");

public:
    /// The builder itself (transport_builder_t<route<Near, Far>>).
    using type = transport_builder;
    /// Both sides' options and the near range.
    struct options {
        typename transport_builder_t<Near>::options near{};  ///< Near's builder options
        typename transport_builder_t<Far>::options far{};    ///< Far's builder options
        /// The PEs Near serves; empty: route_node_pes(world), collective (this host's PEs, or PGAS_NODE_SIZE's).
        std::optional<pe_range> near_pes;
    };

    /// Builds Near's side, then Far's (each collective where it is alone), then settles the near range.
    explicit transport_builder(world& w, const options& o = {})
        : near_(w, o.near), far_(w, o.far), near_pes_(o.near_pes ? *o.near_pes : route_node_pes(w)) {}

    /// Local PE `local`'s route context: route_context(Near's, Far's, near range).
    device::context<route<Near, Far>> context(int local = 0) const {
        return route_context(near_.context(local), far_.context(local), near_pes_);
    }

    /// Near's builder.
    const transport_builder_t<Near>& near() const { return near_; }
    /// Far's builder.
    const transport_builder_t<Far>& far() const { return far_; }
    /// The PEs Near serves.
    pe_range near_pes() const { return near_pes_; }

private:
    transport_builder_t<Near> near_;
    transport_builder_t<Far> far_;
    pe_range near_pes_;
};

// Any pair of buildable transports (here the two whose builders are always visible; route<nvlink, libfabric>
// where libfabric's is, tests/route).
static_assert(detail::diagnose_transport_builder<route<nvlink, host>>());

PGAS_NAMESPACE_END
