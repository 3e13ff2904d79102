// transport_builder<nvlink>: the NVLink transport's host side, contexts over the world's GPU heap (CUDA VMM).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/device/context.hpp>
#include <pgas/host/heap/gpu.hpp>
#include <pgas/host/transport_builder.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/nvlink/nvlink.hpp>

PGAS_NAMESPACE_BEGIN

/// Holds nothing: the heap that world::init_local(devices) and world::init_gpu
/// map (every local PE's view of every PE's heap) is all NVLink needs, and the
/// world tears it down. world::context<nvlink> builds one on the fly.
template <>
class transport_builder<nvlink> {
public:
    /// The builder itself (transport_builder_t<T>).
    using type = transport_builder;
    /// Nothing to choose.
    struct options {};

    /// Keeps `w`; builds nothing (the world's heap is all this transport needs).
    explicit transport_builder(const world& w, const options& = {}) : world_(&w) {}

    /// The NVLink context of local PE `local`: needs a GPU heap.
    device::context<nvlink> context(int local = 0) const {
        const int pe = world_->local_pe(local);
        auto* gpu = dynamic_cast<detail::gpu_heap_memory*>(&world_->heap_memory());
        if (gpu == nullptr)
            detail::throw_error(errc::transport_unavailable, pe, "world::context<nvlink>",
                                "the NVLink transport needs a GPU heap: create the world with init_local(devices)");
        device::context<nvlink> ctx;
        ctx.transport = nvlink(gpu->base(), gpu->stride(), pe, world_->n_pes(),
                               gpu->addressable_bytes(world_->heap_bytes()), world_->channels());
        ctx.runtime = world_->runtime();
        return ctx;
    }

private:
    const world* world_;
};

static_assert(detail::diagnose_transport_builder<nvlink>());
static_assert(host_buildable_transport<nvlink>);

PGAS_NAMESPACE_END
