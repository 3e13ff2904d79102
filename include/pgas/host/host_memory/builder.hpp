// transport_builder<host>: the host transport's host side, contexts over the world's host-memory heap.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/host/host.hpp>

PGAS_NAMESPACE_BEGIN

/// Holds nothing: the host-memory heap of world::init_local(n),
/// world::run_threads or world::init (shared memory between the node's
/// processes) is all the host transport needs, and the world tears it down.
/// world::context<host> and world::launch_host build one on the fly.
template <>
class transport_builder<host> {
public:
    /// The builder itself (transport_builder_t<T>).
    using type = transport_builder;
    /// Nothing to choose.
    struct options {};

    /// Keeps `w`; builds nothing (the world's heap is all this transport needs).
    explicit transport_builder(const world& w, const options& = {}) : world_(&w) {}

    /// The host context of local PE `local`: needs a host-memory heap.
    device::context<host> context(int local = 0) const {
        const int pe = world_->local_pe(local);
        if (!world_->heap_memory().host_accessible())
            detail::throw_error(errc::transport_unavailable, pe, "world::context<host>",
                                "the host transport needs a host-memory heap; this world's heap is GPU memory");
        device::context<host> ctx;
        ctx.transport = host(world_->heap_memory().peer_bases(local), pe, world_->n_pes(), world_->heap_bytes(),
                             world_->channels());
        ctx.runtime = world_->runtime();
        return ctx;
    }

private:
    const world* world_;
};

static_assert(detail::diagnose_transport_builder<host>());
static_assert(host_buildable_transport<host>);

PGAS_NAMESPACE_END
