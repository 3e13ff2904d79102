// Time and back-off for waits, identical in meaning on host and device.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

#include <sched.h>  // POSIX calls rather than <chrono> and <thread>: those cost every device TU ~10k lines of parsing
#include <time.h>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Nanoseconds from an arbitrary origin: %globaltimer on the GPU, CLOCK_MONOTONIC (steady_clock's clock) on the host.
PGAS_HD inline std::uint64_t now_ns() {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (std::uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;"
                                                : "=l"(t));
                  return t;),
                 (timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                  return std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);))
}

// One step of back-off inside a polling loop. On the host it yields, since
// host-transport PEs are threads that may outnumber the cores (CI has 2); on
// the GPU it does nothing, because sleeping adds its length to every wake-up.
PGAS_HD inline void relax() { NV_IF_TARGET(NV_IS_HOST, (sched_yield();), ()) }

}  // namespace detail
PGAS_NAMESPACE_END
