// NVTX ranges (domain "pgas") around pgas's host calls, so that Nsight Systems shows world init/finalize, alloc/free
// and every *_on_stream enqueue; -DPGAS_NVTX=0 (or -DPGAS_DISABLE_NVTX) compiles them out.
#pragma once

#include <pgas/core/config.hpp>

// NVTX3 is header-only and ships with the CUDA toolkit; without a tool attached each range costs one
// well-predicted branch. Host layer: every range marks a host call (world, alloc, the *_on_stream enqueues).
#ifndef PGAS_NVTX
#if defined(PGAS_DISABLE_NVTX) || !__has_include(<nvtx3/nvToolsExt.h>)
#define PGAS_NVTX 0
#else
#define PGAS_NVTX 1
#endif
#endif

#if PGAS_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

PGAS_NAMESPACE_BEGIN
namespace detail {
// Translation units built with and without NVTX may share a program: each gets its own symbols.
#if PGAS_NVTX
inline namespace nvtx_on {
#else
inline namespace nvtx_off {
#endif

#if PGAS_NVTX
inline nvtxDomainHandle_t nvtx_domain() {
    static const nvtxDomainHandle_t domain = nvtxDomainCreateA("pgas");
    return domain;
}
inline void nvtx_push(const char* name) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    nvtxDomainRangePushEx(nvtx_domain(), &attributes);
}
inline void nvtx_pop() { nvtxDomainRangePop(nvtx_domain()); }
#else
inline void nvtx_push(const char*) {}
inline void nvtx_pop() {}
#endif

// A range from construction to the end of the scope (one thread: NVTX push/pop ranges are per thread).
class nvtx_range {
public:
    explicit nvtx_range(const char* name) { nvtx_push(name); }
    ~nvtx_range() { nvtx_pop(); }
    nvtx_range(const nvtx_range&) = delete;
    nvtx_range& operator=(const nvtx_range&) = delete;
};

// A range over the destruction of an object's members: declare nvtx_range_end as the object's first member and
// nvtx_range_begin as its last; members are destroyed in reverse order, so the range opens before the others go
// and closes after them (world's teardown: the heap unmapped, the bootstrap closed).
struct nvtx_range_begin {
    const char* name;
    ~nvtx_range_begin() { nvtx_push(name); }
};
struct nvtx_range_end {
    ~nvtx_range_end() { nvtx_pop(); }
};

}  // namespace nvtx_on / nvtx_off
}  // namespace detail
PGAS_NAMESPACE_END

#define PGAS_NVTX_CONCAT2(a, b) a##b
#define PGAS_NVTX_CONCAT(a, b) PGAS_NVTX_CONCAT2(a, b)
// PGAS_NVTX_RANGE("pgas::world::alloc"); marks the rest of the enclosing scope (host code only).
#define PGAS_NVTX_RANGE(name) const ::pgas::detail::nvtx_range PGAS_NVTX_CONCAT(pgas_nvtx_range_, __LINE__)(name)
