// Shared helpers of the IBGDA tests: worlds with an emulated-NIC domain, and the emulated NIC's launcher.
#pragma once

#include "../common/support.hpp"

#include <pgas/pgas.hpp>
#include <pgas/host/ibgda/domain.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>

namespace test {

using ib_ctx = pgas::device::context<pgas::ibgda>;

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

// Launcher (tests/common/support.hpp): PE threads of one world, each with its IBGDA context on the emulated NIC,
// which must have seen no protocol violation by the end of the run; a send queue of Blocks building blocks and a CQ
// of CqEntries (1: collapsed, else a ring read by owner bit).
template <std::uint32_t Blocks, std::uint32_t CqEntries>
struct emulated_nic_with {
    static constexpr int counts[] = {1, 2, 3, 4};
    std::span<const int> pe_counts() const { return counts; }
    template <class Alloc, class Body>
    void operator()(int n_pes, Alloc& alloc, Body& body) const {
        // The NIC is one more spinning thread beside the PEs: on a loaded 2-core machine the 3 MiB put_signal case
        // took 25 times as long as idle (33 s), and once failed under a 20 s bound.
        auto w = pgas::world::init_local(n_pes, options(60000));
        const auto buffers = alloc(w);
        pgas::ibgda_domain ib(w, emulated(Blocks, 1, CqEntries));
        launch(w, ib, [&](const ib_ctx& ctx) { body(ctx, buffers); });
        release_after_run(w, buffers);
        CHECK(ib.emulated_nic().first_violation() == "");
    }
};

// The default queue: 64 blocks, a collapsed CQ.
struct emulated_nic : emulated_nic_with<64, 1> {};
// A small queue that wraps often, its CQ a ring.
struct emulated_nic_ring_cq : emulated_nic_with<16, 16> {};

}  // namespace test

TYPE_TO_STRING_AS("ibgda on the emulated NIC", test::emulated_nic);
TYPE_TO_STRING_AS("ibgda on the emulated NIC with a 16-block queue and a ring CQ", test::emulated_nic_ring_cq);
