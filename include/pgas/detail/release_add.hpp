// A release add to a mapped word that does not wait for the result: the arrival of barriers and the add of signals.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

#include <cuda/atomic>
#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Adds v to *word (this GPU's or a peer's memory, or host memory) with
// release semantics at system scope. On the GPU it is a `red`: an atom whose
// result is never used still cost a 2-PE barrier a round trip on 2xH200
// (2.0 us per barrier against 1.22 us for red.release.sys followed by
// ld.acquire polls; bench_coll_tune's barrier2 forms).
PGAS_HD inline void add_release(std::uint64_t* word, std::uint64_t v) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(word), "l"(v) : "memory");),
                 (cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>(*word).fetch_add(
                      v, cuda::memory_order_release);))
}

}  // namespace detail
PGAS_NAMESPACE_END
