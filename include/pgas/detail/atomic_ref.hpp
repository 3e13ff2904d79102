// detail::atomic_ref: cuda::atomic_ref's shape, for the operations pgas uses, on the compilers' own builtins
// (__nv_atomic_* on the GPU, __atomic_* on the host), without <cuda/atomic>'s ~50k lines in every translation unit.
#pragma once

#include <pgas/core/config.hpp>

#include <type_traits>

#include <nv/target>

#if defined(__NVCC__) && (__CUDACC_VER_MAJOR__ < 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 8))
#error "pgas needs nvcc 12.8 or newer: its GPU atomics are nvcc's __nv_atomic builtins (pgas/detail/atomic_ref.hpp)"
#endif

PGAS_NAMESPACE_BEGIN
namespace detail {

/// Which threads an atomic operation is atomic with (and orders against): one block, one GPU, or every GPU and the
/// host (cuda::thread_scope_block / _device / _system). The host ignores it: its atomics are system-wide.
enum class thread_scope { block, device, system };

/// An ordering as a type, so that each operation's ordering is the compile-time constant the builtins take.
template <int Builtin>
struct memory_order {
    static constexpr int value = Builtin;
};
inline constexpr memory_order<__ATOMIC_RELAXED> memory_order_relaxed{};
inline constexpr memory_order<__ATOMIC_ACQUIRE> memory_order_acquire{};
inline constexpr memory_order<__ATOMIC_RELEASE> memory_order_release{};
inline constexpr memory_order<__ATOMIC_ACQ_REL> memory_order_acq_rel{};
inline constexpr memory_order<__ATOMIC_SEQ_CST> memory_order_seq_cst{};

// nvcc's scope constant for S: a macro, since __NV_THREAD_SCOPE_* exist only where nvcc compiles (device branches).
#define PGAS_NV_SCOPE(S)                                                      \
    ((S) == ::pgas::detail::thread_scope::block    ? __NV_THREAD_SCOPE_BLOCK  \
     : (S) == ::pgas::detail::thread_scope::device ? __NV_THREAD_SCOPE_DEVICE \
                                                   : __NV_THREAD_SCOPE_SYSTEM)

/// The words atomic_ref loads and stores: 4- and 8-byte integers and floating point, 2-byte integers.
template <class T>
inline constexpr bool is_atomic_word = ((sizeof(T) == 4 || sizeof(T) == 8) && std::is_arithmetic_v<T>) ||
                                       (sizeof(T) == 2 && std::is_integral_v<T>);

/// Atomic access to one naturally aligned word of 4 or 8 bytes (integer or floating point) in global, shared or host
/// memory, and loads and stores of a 2-byte integer (what the waits on NVSHMEM's short types poll). The GPU side
/// emits what cuda::atomic_ref does (ld.acquire.sys, atom.add.release.sys, ...) minus its check for local memory:
/// pgas never points one at a thread's stack.
template <class T, thread_scope Scope>
class atomic_ref {
    static_assert(is_atomic_word<T> || sizeof(T) == 4 || sizeof(T) == 8,
                  "atomic_ref: 4- or 8-byte words, or loads and stores of 2-byte integers");
    // Read-modify-writes take 4- and 8-byte words only.
    static constexpr bool rmw_word = sizeof(T) >= 4;

public:
    PGAS_HD explicit atomic_ref(T& word) : word_(&word) {}

    template <int O>
    PGAS_HD T load(memory_order<O>) const {
        T seen;
        NV_IF_TARGET(NV_IS_DEVICE, (__nv_atomic_load(word_, &seen, O, PGAS_NV_SCOPE(Scope));),
                     (__atomic_load(word_, &seen, O);))
        return seen;
    }
    template <int O>
    PGAS_HD void store(T value, memory_order<O>) const {
        NV_IF_TARGET(NV_IS_DEVICE, (__nv_atomic_store(word_, &value, O, PGAS_NV_SCOPE(Scope));),
                     (__atomic_store(word_, &value, O);))
    }
    template <int O>
    PGAS_HD T exchange(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        T old;
        NV_IF_TARGET(NV_IS_DEVICE, (__nv_atomic_exchange(word_, &value, &old, O, PGAS_NV_SCOPE(Scope));),
                     (__atomic_exchange(word_, &value, &old, O);))
        return old;
    }
    /// On failure `expected` becomes the word's value; the failure ordering is O without its release part. System
    /// scope only (nvcc's builtin takes its orderings and scope as literals, so each combination is spelled out).
    template <int O>
    PGAS_HD bool compare_exchange_strong(T& expected, T desired, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        static_assert(Scope == thread_scope::system, "atomic_ref::compare_exchange_strong: system scope only");
        static_assert(O != __ATOMIC_SEQ_CST, "atomic_ref::compare_exchange_strong: no seq_cst");
        NV_IF_TARGET(
            NV_IS_DEVICE,
            (if constexpr (O == __ATOMIC_RELAXED) return __nv_atomic_compare_exchange(
                 word_, &expected, &desired, false, __NV_ATOMIC_RELAXED, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_SYSTEM);
             else if constexpr (O == __ATOMIC_ACQUIRE) return __nv_atomic_compare_exchange(
                 word_, &expected, &desired, false, __NV_ATOMIC_ACQUIRE, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_SYSTEM);
             else if constexpr (O == __ATOMIC_RELEASE) return __nv_atomic_compare_exchange(
                 word_, &expected, &desired, false, __NV_ATOMIC_RELEASE, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_SYSTEM);
             else return __nv_atomic_compare_exchange(word_, &expected, &desired, false, __NV_ATOMIC_ACQ_REL,
                                                      __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_SYSTEM);),
            (constexpr int on_failure = O == __ATOMIC_RELEASE   ? __ATOMIC_RELAXED
                                        : O == __ATOMIC_ACQ_REL ? __ATOMIC_ACQUIRE
                                                                : O;
             return __atomic_compare_exchange(word_, &expected, &desired, false, O, on_failure);))
    }
    template <int O>
    PGAS_HD T fetch_add(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        if constexpr (std::is_floating_point_v<T>) {
            NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_add(word_, value, O, PGAS_NV_SCOPE(Scope));),
                         (return update<O>([value](T seen) { return seen + value; });))
        } else if constexpr (std::is_signed_v<T> && sizeof(T) == 8) {  // PTX has no atom.add.s64: add as unsigned
            using U = std::make_unsigned_t<T>;
            return T(atomic_ref<U, Scope>(reinterpret_cast<U&>(*word_)).fetch_add(U(value), memory_order<O>{}));
        } else {
            NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_add(word_, value, O, PGAS_NV_SCOPE(Scope));),
                         (return __atomic_fetch_add(word_, value, O);))
        }
    }
    template <int O>
    PGAS_HD T fetch_or(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_or(word_, value, O, PGAS_NV_SCOPE(Scope));),
                     (return __atomic_fetch_or(word_, value, O);))
    }
    template <int O>
    PGAS_HD T fetch_and(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_and(word_, value, O, PGAS_NV_SCOPE(Scope));),
                     (return __atomic_fetch_and(word_, value, O);))
    }
    template <int O>
    PGAS_HD T fetch_xor(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_xor(word_, value, O, PGAS_NV_SCOPE(Scope));),
                     (return __atomic_fetch_xor(word_, value, O);))
    }
    template <int O>
    PGAS_HD T fetch_max(T value, memory_order<O>) const {
        static_assert(rmw_word, "atomic_ref: read-modify-writes of 4- or 8-byte words only");
        NV_IF_TARGET(NV_IS_DEVICE, (return __nv_atomic_fetch_max(word_, value, O, PGAS_NV_SCOPE(Scope));),
                     (return update<O>([value](T seen) { return seen < value ? value : seen; });))
    }

private:
    // Host read-modify-writes GCC has no builtin for (fetch_max, a floating-point add): a compare-exchange loop.
    template <int O, class F>
    T update(F next) const {
        T seen;
        __atomic_load(word_, &seen, __ATOMIC_RELAXED);
        T want = next(seen);
        while (!__atomic_compare_exchange(word_, &seen, &want, false, O, __ATOMIC_RELAXED)) want = next(seen);
        return seen;
    }

    T* word_;
};

/// A fence at system scope (what pgas's fences order: peers' and the host's view of this thread's accesses):
/// fence.sc.sys for seq_cst, fence.acq_rel.sys for the others, cuda::atomic_thread_fence's instructions (nvcc's fence
/// builtin would make a release fence fence.sc).
template <int O>
PGAS_HD inline void atomic_thread_fence(memory_order<O>) {
    static_assert(O != __ATOMIC_RELAXED, "atomic_thread_fence: a relaxed fence orders nothing");
    NV_IF_TARGET(NV_IS_DEVICE,
                 (if constexpr (O == __ATOMIC_SEQ_CST) asm volatile("fence.sc.sys;" ::
                                                                        : "memory");
                  else asm volatile("fence.acq_rel.sys;" ::
                                        : "memory");),
                 (__atomic_thread_fence(O);))
}

}  // namespace detail
PGAS_NAMESPACE_END

#undef PGAS_NV_SCOPE  // expanded where the bodies above were defined; not for other headers
