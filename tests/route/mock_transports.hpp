// Minimal transports for route's compile-time checks: one that cannot put/get, one with put/get only.
#pragma once

#include <pgas/pgas.hpp>

#include <cstddef>
#include <cstdint>

namespace mock {

// Identity and reachability, nothing else (models pgas::transport only).
struct bare {
    static constexpr const char* name = "bare";
    static constexpr bool provides_rma = false;
    static constexpr bool provides_atomics = false;
    static constexpr bool provides_signals = false;
    static constexpr bool provides_load_store = false;
    int my_pe() const { return 0; }
    int n_pes() const { return 1; }
    bool reachable(int) const { return true; }
    void* local_address(std::uint64_t) const { return nullptr; }
    std::uint64_t heap_bytes() const { return 0; }
};

// put/get/fence/quiet but no atomics or signals.
struct rma_only : bare {
    static constexpr const char* name = "rma_only";
    static constexpr bool provides_rma = true;
    template <class G> void put(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G> void put_nbi(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G> void get(void*, std::uint64_t, std::size_t, int) const {}
    template <class G> void get_nbi(void*, std::uint64_t, std::size_t, int) const {}
    template <class G> void fence() const {}
    template <class G> void quiet() const {}
};

}  // namespace mock
