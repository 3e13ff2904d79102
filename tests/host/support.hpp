// Shared helpers of the host-transport tests: PE counts to sweep and world options.
#pragma once

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace test {

using ctx = pgas::device::context<pgas::host>;

// The PE counts every host-transport behaviour is checked with: the trivial
// world, a pair, an odd count (dissemination rounds that wrap) and more PEs
// than CI has cores.
inline constexpr int pe_counts[] = {1, 2, 3, 8};

// Small heaps keep 8-PE worlds cheap; a wait that takes 20 s is a bug.
inline pgas::world_options options(std::int64_t timeout_ms = 20000) {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{16} << 20;
    o.timeout_ms = timeout_ms;
    return o;
}

// A value in which every byte depends on all three inputs (splitmix64's
// finaliser), so a missing, misplaced or stale byte of a copy is always seen.
inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Whether text contains part (doctest 2.4's Contains takes no std::string).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class Body>
void for_each_pe_count(Body&& body) {
    for (int n : pe_counts) {
        CAPTURE(n);
        body(n);
    }
}

}  // namespace test
