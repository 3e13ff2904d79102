// Shared helpers of the IBGDA tests: worlds with an emulated-NIC domain, PE loops, patterns.
#pragma once

#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace test {

using ib_ctx = pgas::device::context<pgas::ibgda>;

inline pgas::world_options options(std::int64_t timeout_ms = 20000) {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{16} << 20;
    o.timeout_ms = timeout_ms;
    return o;
}

inline pgas::ibgda_options emulated(std::uint32_t blocks = 64, std::uint32_t batch = 1, std::uint32_t cq_entries = 1) {
    pgas::ibgda_options o;
    o.nic = pgas::ibgda_options::nic_kind::emulated;
    o.send_queue_blocks = blocks;
    o.doorbell_batch = batch;
    o.cq_entries = cq_entries;
    return o;
}

// Runs body(ctx) on every PE of a host world, each with its IBGDA context.
template <class Body>
void launch(pgas::world& w, pgas::ibgda_domain& ib, Body&& body) {
    w.launch_host([&](const pgas::device::context<pgas::host>& host) { body(ib.context(host.my_pe())); });
}

inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace test
