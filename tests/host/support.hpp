// Shared helpers of the host-transport tests: PE counts to sweep, and the host transport's launchers.
#pragma once

#include "../common/support.hpp"

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <span>

namespace test {

using ctx = pgas::device::context<pgas::host>;

// The PE counts every host-transport behaviour is checked with: the trivial
// world, a pair, an odd count (dissemination rounds that wrap) and more PEs
// than CI has cores.
inline constexpr int pe_counts[] = {1, 2, 3, 8};

template <class Body>
void for_each_pe_count(Body&& body) {
    for (int n : pe_counts) {
        CAPTURE(n);
        body(n);
    }
}

// Launcher (tests/common/support.hpp): the PEs are threads of one world (init_local), its buffers allocated once.
struct host_threads {
    std::span<const int> pe_counts() const { return test::pe_counts; }
    template <class Alloc, class Body>
    void operator()(int n_pes, Alloc& alloc, Body& body) const {
        auto w = pgas::world::init_local(n_pes, options());
        const auto buffers = alloc(w);
        w.launch_host([&](const ctx& c) { body(c, buffers); });
        release_after_run(w, buffers);
    }
};

// Launcher: the PEs are SPMD threads, each with its own world (run_threads), as processes would be.
struct host_spmd {
    std::span<const int> pe_counts() const { return test::pe_counts; }
    template <class Alloc, class Body>
    void operator()(int n_pes, Alloc& alloc, Body& body) const {
        pgas::world::run_threads(n_pes, [&](pgas::world& w) {
            const auto buffers = alloc(w);
            body(w.context<pgas::host>(), buffers);
            release_after_run(w, buffers);
        }, options());
    }
};

}  // namespace test

TYPE_TO_STRING_AS("host threads", test::host_threads);
TYPE_TO_STRING_AS("host SPMD threads", test::host_spmd);
