// Shared helpers of the libfabric tests: providers to sweep, SPMD worlds with a libfabric domain each, and the
// loopback launcher.
#pragma once

#include "../common/support.hpp"

#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace test {

using ctx = pgas::device::context<pgas::libfabric>;

// Whether this machine's libfabric has `provider` and it passes pgas's checks.
inline bool available(const std::string& provider) {
    pgas::libfabric_options o;
    o.provider = provider;
    o.iface = "lo";
    try {
        (void)pgas::ofi::select_provider(o, true, false, 0);
        return true;
    } catch (const pgas::error&) {
        return false;
    }
}

// The loopback providers CI checks: shared memory and TCP (127.0.0.1 on lo),
// those of them this libfabric has (a missing one is reported, not failed).
inline const std::vector<std::string>& providers() {
    static const std::vector<std::string> present = [] {
        std::vector<std::string> found;
        for (const char* p : {"shm", "tcp;ofi_rxm"}) {
            if (available(p)) found.emplace_back(p);
            else MESSAGE("libfabric provider " << p << " is not available here: its tests are skipped");
        }
        return found;
    }();
    return present;
}

inline pgas::libfabric_options fabric(const std::string& provider, std::uint32_t ring = 1024) {
    pgas::libfabric_options o;
    o.provider = provider;
    o.iface = "lo";
    o.ring_capacity = ring;
    return o;
}

// n SPMD PE threads, each with its own world and libfabric domain on `provider`.
template <class Body>
void run(const std::string& provider, int n_pes, Body&& body, pgas::libfabric_options fo = {},
         pgas::world_options wo = options()) {
    if (fo.provider.empty()) fo = fabric(provider, fo.ring_capacity);
    pgas::world::run_threads(n_pes, [&](pgas::world& w) {
        pgas::libfabric_domain domain(w, fo);
        body(w, domain);
    }, wo);
}

template <class Body>
void for_each_provider(Body&& body) {
    for (const auto& p : providers()) {
        CAPTURE(p);
        body(p);
    }
}

// Launcher (tests/common/support.hpp): SPMD PE threads through the proxy, on every loopback provider in turn; with
// Staged, local buffers go through three 4 KiB bounce buffers (the path of FI_MR_LOCAL providers and GPU memory
// without FI_HMEM), so a megabyte waits for them hundreds of times.
template <bool Staged>
struct loopback_with {
    static constexpr int counts[] = {3};
    std::span<const int> pe_counts() const { return counts; }
    template <class Alloc, class Body>
    void operator()(int n_pes, Alloc& alloc, Body& body) const {
        for_each_provider([&](const std::string& provider) {
            auto o = fabric(provider);
            if (Staged) {
                o.stage_local_buffers = true;
                o.bounce_chunk_bytes = 4096;
                o.bounce_chunks = 3;
            }
            run(provider, n_pes, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
                const auto buffers = alloc(w);
                body(fabric.context(), buffers);
                release_after_run(w, buffers);
            }, o);
        });
    }
};

struct loopback : loopback_with<false> {};
struct loopback_staged : loopback_with<true> {};

}  // namespace test

TYPE_TO_STRING_AS("libfabric loopback", test::loopback);
TYPE_TO_STRING_AS("libfabric loopback through bounce buffers", test::loopback_staged);
