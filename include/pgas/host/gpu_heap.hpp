// The CUDA VMM symmetric heap of the NVLink transport (work in progress: issue 3).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/heap_memory.hpp>

#include <functional>
#include <memory>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace detail {

using heap_factory = std::function<std::unique_ptr<heap_memory>(const heap_request&)>;

inline heap_factory gpu_heap_factory(std::vector<int> devices) {
    return [devices](const heap_request&) -> std::unique_ptr<heap_memory> {
        throw_error(errc::transport_unavailable, -1, "world::init_local",
                    "GPU heaps are not implemented yet (" + std::to_string(devices.size()) + " devices requested)");
    };
}

}  // namespace detail
PGAS_NAMESPACE_END
