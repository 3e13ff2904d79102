// A transport that models only pgas::transport (no RMA, atomics or signals), for concept tests.
#pragma once

#include <pgas/pgas.hpp>

namespace test {

struct identity_only_transport {
    static constexpr const char* name = "identity_only";
    static constexpr bool provides_rma = false;
    static constexpr bool provides_atomics = false;
    static constexpr bool provides_signals = false;
    static constexpr bool provides_load_store = false;
    int my_pe() const { return 0; }
    int n_pes() const { return 1; }
    bool reachable(int pe) const { return pe == 0; }
    void* local_address(std::uint64_t) const { return nullptr; }
    std::uint64_t heap_bytes() const { return 0; }
};

// Claims RMA but lacks the members: the opt-in alone must not be enough.
struct claims_rma_transport : identity_only_transport {
    static constexpr bool provides_rma = true;
};

}  // namespace test
