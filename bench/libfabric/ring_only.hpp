// The proxy ring without a fabric, for bench_libfabric and bench_libfabric_gpu: a backend that completes
// every command on its next poll, and a transport that is nothing but a ring (the proxy ops on top of it).
#pragma once

#include <pgas/transport/proxy/proxy_ops.hpp>
#include <pgas/host/proxy/service.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ring_only_bench {

// Completes every command on the proxy's next poll: the ring's and the proxy thread's own cost.
struct null_backend {
    std::vector<std::uint64_t> pending;
    std::uint32_t put(std::uint64_t t, int, std::uint64_t, const void*, std::size_t, bool) { return done(t); }
    std::uint32_t get(std::uint64_t t, int, void*, std::uint64_t, std::size_t, bool) { return done(t); }
    std::uint32_t atomic(std::uint64_t t, int, std::uint64_t, pgas::amo, pgas::proxy::value_kind, std::uint64_t,
                         std::uint64_t, void*) {
        return done(t);
    }
    std::uint32_t signal(std::uint64_t t, int, std::uint64_t, pgas::signal_op, std::uint64_t) { return done(t); }
    template <class F>
    bool progress(F&& on_complete) {
        if (pending.empty()) return false;
        for (auto t : pending) on_complete(t);
        pending.clear();
        return true;
    }
    std::uint32_t done(std::uint64_t t) {
        pending.push_back(t);
        return 1;
    }
};
static_assert(pgas::proxy::backend<null_backend>);

// Usable by host threads and by kernels (passed by value).
struct ring_only : pgas::proxy::proxy_ops<ring_only> {
    pgas::proxy::ring_view view;
    PGAS_HD const pgas::proxy::ring_view& ring() const { return view; }
};

}  // namespace ring_only_bench
