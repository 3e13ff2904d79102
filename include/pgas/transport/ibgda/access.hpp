// How IBGDA producers touch NIC-visible memory: WQE stores, doorbell record, doorbell register, CQE loads.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/detail/atomic_ref.hpp>

#include <cstdint>
#include <cstring>

#include <nv/target>

PGAS_NAMESPACE_BEGIN

// The access policy of the IBGDA algorithms (producer.hpp, completion.hpp):
// every store or load the NIC observes goes through one of these members, so
// the same algorithm runs on the GPU, as host code against the emulated NIC,
// and under a recording policy in tests that checks the order of the steps.
//
// The protocol (mlx5): write the WQE's building blocks; a release fence at
// system scope; the doorbell record's send counter (big-endian, mod 2^16); a
// second fence so the record is visible before the NIC is told to look; one
// 8-byte store of the last WQE's first control bytes to the doorbell
// register. Completions: one 8-byte acquire load of the CQE's last 8 bytes
// (the NIC writes them last), then the rest of the CQE if needed.
struct ibgda_system_access {
    // One 64-byte building block: four 16-byte stores on the GPU.
    PGAS_HD void write_block(std::uint32_t* slot, const std::uint32_t* words) const {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (auto* d = reinterpret_cast<uint4*>(slot);
                      for (int i = 0; i < 4; ++i) d[i] =
                          make_uint4(words[4 * i], words[4 * i + 1], words[4 * i + 2], words[4 * i + 3]);),
                     (std::memcpy(slot, words, 64);))
    }
    PGAS_HD void fence_before_doorbell_record() const { detail::atomic_thread_fence(detail::memory_order_release); }
    // Relaxed after the release fence on the GPU. On the host (the emulated NIC's producers) a release store as
    // well: the same ordering, and one ThreadSanitizer can see (it does not model standalone fences, and took the
    // NIC thread's read of a put's source for a race with the PE's write before the put).
    PGAS_HD void write_doorbell_record(std::uint32_t* send_counter, std::uint32_t big_endian) const {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(*send_counter)
                          .store(big_endian, detail::memory_order_relaxed);),
                     (detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(*send_counter)
                          .store(big_endian, detail::memory_order_release);))
    }
    PGAS_HD void fence_before_doorbell() const { detail::atomic_thread_fence(detail::memory_order_seq_cst); }
    // The doorbell register is MMIO on a real NIC (a UAR page mapped for the
    // GPU): there st.mmio keeps the GPU from merging or dropping the store.
    // `mmio` is false where the "register" is ordinary memory (the emulated
    // NIC, the shadow word a CPU doorbell thread relays): a release store.
    PGAS_HD void ring_doorbell(std::uint64_t* reg, std::uint64_t value, bool mmio) const {
        if (mmio) {
            NV_IF_TARGET(NV_PROVIDES_SM_70,
                         (asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(reg), "l"(value)
                                       : "memory");
                          return;),
                         (*reinterpret_cast<volatile std::uint64_t*>(reg) = value; return;))
        }
        detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*reg).store(value,
                                                                                    detail::memory_order_release);
    }
    // A ring CQ's consumer index, so the NIC may reuse the CQEs before it.
    PGAS_HD void write_cq_doorbell_record(std::uint32_t* consumer, std::uint32_t big_endian) const {
        detail::atomic_ref<std::uint32_t, detail::thread_scope::system>(*consumer).store(big_endian,
                                                                                         detail::memory_order_release);
    }
    PGAS_HD std::uint64_t read_cqe_tail(const std::uint64_t* cqe) const {
        return detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*const_cast<std::uint64_t*>(cqe + 7))
            .load(detail::memory_order_acquire);
    }
    PGAS_HD std::uint8_t read_cqe_byte(const std::uint64_t* cqe, unsigned at) const {
        return reinterpret_cast<const volatile std::uint8_t*>(cqe)[at];
    }
};

PGAS_NAMESPACE_END
