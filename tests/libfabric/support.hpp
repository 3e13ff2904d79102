// Shared helpers of the libfabric tests: providers to sweep and SPMD worlds with a libfabric domain each.
#pragma once

#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <doctest/doctest.h>

#include <cstdint>
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

inline pgas::world_options options(std::int64_t timeout_ms = 20000) {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{16} << 20;
    o.timeout_ms = timeout_ms;
    return o;
}

inline pgas::libfabric_options fabric(const std::string& provider, std::uint32_t ring = 1024) {
    pgas::libfabric_options o;
    o.provider = provider;
    o.iface = "lo";
    o.ring_capacity = ring;
    return o;
}

inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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

}  // namespace test
