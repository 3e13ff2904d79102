// The one owner of the load/store data path on mapped memory (this GPU's, a peer's over NVLink, or host memory):
// group-wide vector copies, 16-byte and element loads/stores of peers' data, release adds and LL lines.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/detail/atomic_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

#if defined(__CUDACC__)
// Each thread keeps `unroll` independent 16-byte loads in flight before it
// stores (4: a warp moves 2 KiB per step); across NVLink the latency of one
// load would otherwise bound the bandwidth of a single group. A kernel with
// few copying warps and registers to spare asks for more (group_copy's
// loads_in_flight); its tail then goes in steps of half as many, not one
// vector at a time (a predicated last step spilled the on-stream collectives).
// Loads are ld.global.cg (L2, not L1): L1 is not coherent with a peer's
// writes, so a repeated get could otherwise return stale lines (seen on
// 2xH200 as get "bandwidth" above NVLink's).
template <class Word, bool bypass_l1>
__device__ inline Word load_word(const Word* p) {
    if constexpr (bypass_l1)
        return __ldcg(p);
    else
        return *p;
}

template <bool bypass_l1, unsigned unroll = 4>
__device__ inline void copy_vectors(uint4* dst, const uint4* src, std::size_t n, std::size_t first, unsigned size) {
    std::size_t i = first;  // the thread's rank, or where a deeper copy's steps ended
    const std::size_t step = std::size_t(size) * unroll;
    for (; i + std::size_t(size) * (unroll - 1) < n; i += step) {
        uint4 v[unroll];
#pragma unroll
        for (unsigned u = 0; u < unroll; ++u) v[u] = load_word<uint4, bypass_l1>(src + i + u * size);
#pragma unroll
        for (unsigned u = 0; u < unroll; ++u) dst[i + u * size] = v[u];
    }
    if constexpr (unroll > 4)
        copy_vectors<bypass_l1, unroll / 2>(dst, src, n, i, size);  // the rest, half as many a step
    else
        for (; i < n; i += size) dst[i] = load_word<uint4, bypass_l1>(src + i);
}

template <bool bypass_l1, class Word>
__device__ inline void copy_words(Word* dst, const Word* src, std::size_t n, unsigned rank, unsigned size) {
    for (std::size_t i = rank; i < n; i += size) dst[i] = load_word<Word, bypass_l1>(src + i);
}
#endif

// Copies `bytes` from src to dst, each thread of G taking a share. Does not
// sync the group: callers sync when they need the whole copy done.
// remote_source: src is a peer's global memory (a get), read through L2 only;
// a put's source may be shared or local memory, which ld.global.cg cannot read.
// loads_in_flight: 16-byte loads each thread issues before it stores (each
// costs 4 registers).
#if defined(__CUDACC__)
// Widest words first: 16-byte vectors while both pointers allow, then 8, 4
// and single bytes for what is left, so a small or odd-sized copy is a few
// stores, not one per byte (an 8-byte put_nbi was 8 byte stores: 3x below
// NVSHMEM's 8-byte message rate on 2xH200).
template <class G, bool remote_source, unsigned loads_in_flight>
__device__ inline void group_copy_device(void* dst, const void* src, std::size_t bytes) {
    auto* d = static_cast<unsigned char*>(dst);
    auto* s = static_cast<const unsigned char*>(src);
    const unsigned rank = G::rank();
    const unsigned size = G::size();
    auto aligned = [&](std::uintptr_t a) {
        return ((reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s)) & (a - 1)) == 0;
    };
    if (aligned(16) && bytes >= 16) {
        const std::size_t n = bytes / 16;
        copy_vectors<remote_source, loads_in_flight>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), n,
                                                     rank, size);
        d += n * 16, s += n * 16, bytes -= n * 16;
    }
    if (aligned(8) && bytes >= 8) {
        const std::size_t n = bytes / 8;
        copy_words<remote_source>(reinterpret_cast<std::uint64_t*>(d), reinterpret_cast<const std::uint64_t*>(s), n,
                                  rank, size);
        d += n * 8, s += n * 8, bytes -= n * 8;
    }
    if (aligned(4) && bytes >= 4) {
        const std::size_t n = bytes / 4;
        copy_words<remote_source>(reinterpret_cast<std::uint32_t*>(d), reinterpret_cast<const std::uint32_t*>(s), n,
                                  rank, size);
        d += n * 4, s += n * 4, bytes -= n * 4;
    }
    copy_words<remote_source>(d, s, bytes, rank, size);
}
#endif

template <class G, bool remote_source = false, unsigned loads_in_flight = 4>
PGAS_HD inline void group_copy(void* dst, const void* src, std::size_t bytes) {
    NV_IF_TARGET(NV_IS_DEVICE, (group_copy_device<G, remote_source, loads_in_flight>(dst, src, bytes);),
                 (if (bytes != 0) std::memmove(dst, src, bytes);))
}

// Two copies of `bytes` each (dst_a <- src_a, dst_b <- src_b) in one loop, each thread of G taking a share: where
// one goes over a link and the other stays in this GPU's memory, the local one's traffic runs while the link is
// busy instead of before or after it. Both pairs 16-byte aligned: two vectors of each in flight per step; otherwise
// the two copies one after the other. Does not sync the group.
#if defined(__CUDACC__)
template <class G>
__device__ inline void group_copy_pair_device(void* dst_a, const void* src_a, void* dst_b, const void* src_b,
                                              std::size_t bytes) {
    const bool aligned = ((reinterpret_cast<std::uintptr_t>(dst_a) | reinterpret_cast<std::uintptr_t>(src_a) |
                           reinterpret_cast<std::uintptr_t>(dst_b) | reinterpret_cast<std::uintptr_t>(src_b)) &
                          15u) == 0;
    const std::size_t n = aligned ? bytes / 16 : 0;
    auto* da = static_cast<uint4*>(dst_a);
    auto* db = static_cast<uint4*>(dst_b);
    const auto* sa = static_cast<const uint4*>(src_a);
    const auto* sb = static_cast<const uint4*>(src_b);
    const std::size_t size = G::size();
    std::size_t i = G::rank();
    for (; i + size < n; i += 2 * size) {
        const uint4 a0 = sa[i], a1 = sa[i + size], b0 = sb[i], b1 = sb[i + size];
        da[i] = a0, da[i + size] = a1, db[i] = b0, db[i + size] = b1;
    }
    for (; i < n; i += size) da[i] = sa[i], db[i] = sb[i];
    const std::size_t done = n * 16;
    group_copy_device<G, false, 4>(static_cast<unsigned char*>(dst_a) + done,
                                   static_cast<const unsigned char*>(src_a) + done, bytes - done);
    group_copy_device<G, false, 4>(static_cast<unsigned char*>(dst_b) + done,
                                   static_cast<const unsigned char*>(src_b) + done, bytes - done);
}
#endif

template <class G>
PGAS_HD inline void group_copy_pair(void* dst_a, const void* src_a, void* dst_b, const void* src_b, std::size_t bytes) {
    NV_IF_TARGET(NV_IS_DEVICE, (group_copy_pair_device<G>(dst_a, src_a, dst_b, src_b, bytes);),
                 (group_copy<G>(dst_a, src_a, bytes); group_copy<G>(dst_b, src_b, bytes);))
}

// --- 16-byte and element loads/stores of peers' buffers (the direct collectives) ---

// 16 bytes of elements, loaded and stored as one vector on the GPU.
template <class T>
struct vec16 {
    static constexpr std::size_t lanes = 16 / sizeof(T);
    T v[lanes];
};
// Loads go through L2 only (ld.global.cg): L1 is not coherent with peers'
// writes, and a collective called in a loop inside one kernel re-reads them.
// On the host the lanes are assigned one by one: __half and __nv_bfloat16 have
// a protected member, which a consumer's -Wclass-memaccess rejects in memcpy.
template <class T>
PGAS_HD inline vec16<T> load16(const T* p) {
    vec16<T> r;
    NV_IF_TARGET(NV_IS_DEVICE, (uint4 raw = __ldcg(reinterpret_cast<const uint4*>(p)); std::memcpy(&r, &raw, 16);),
                 (for (std::size_t i = 0; i < vec16<T>::lanes; ++i) r.v[i] = p[i];))
    return r;
}
template <class T>
PGAS_HD inline T load_peer(const T* p) {
    using word =
        std::conditional_t<sizeof(T) == 8, unsigned long long,
                           std::conditional_t<sizeof(T) == 4, unsigned,
                                              std::conditional_t<sizeof(T) == 2, unsigned short, unsigned char>>>;
    if constexpr (sizeof(T) == sizeof(word)) {
        NV_IF_TARGET(NV_IS_DEVICE,
                     (const word raw = __ldcg(reinterpret_cast<const word*>(p)); T v; std::memcpy(&v, &raw, sizeof v);
                      return v;),
                     (return *p;))
    } else {
        return *p;
    }
}
template <class T>
PGAS_HD inline void store16(T* p, const vec16<T>& v) {
    NV_IF_TARGET(NV_IS_DEVICE, (uint4 raw; std::memcpy(&raw, &v, 16); *reinterpret_cast<uint4*>(p) = raw;),
                 (for (std::size_t i = 0; i < vec16<T>::lanes; ++i) p[i] = v.v[i];))
}

// --- release adds: the arrival of barriers and the add of signals ----------

// Adds v to *word (this GPU's or a peer's memory, or host memory) with
// release semantics at system scope, without waiting for the result. On the
// GPU it is a `red`: an atom whose result is never used still cost a 2-PE
// barrier a round trip on 2xH200 (2.0 us per barrier against 1.22 us for
// red.release.sys followed by ld.acquire polls; bench_coll_tune's barrier2 forms).
PGAS_HD inline void add_release(std::uint64_t* word, std::uint64_t v) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(word), "l"(v)
                               : "memory");),
                 (detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*word).fetch_add(
                     v, detail::memory_order_release);))
}

// --- LL lines: 8-byte words and 16-byte units of flag-in-data packets (coll/detail/ll.hpp) ---

PGAS_HD inline void store_relaxed(std::uint64_t* word, std::uint64_t value) {
    detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*word).store(value, detail::memory_order_relaxed);
}
PGAS_HD inline std::uint64_t load_relaxed(const std::uint64_t* word) {
    return detail::atomic_ref<std::uint64_t, detail::thread_scope::system>(*const_cast<std::uint64_t*>(word))
        .load(detail::memory_order_relaxed);
}

// Asks for the line holding p in L1 and goes on (nothing on the host): a later load of it finds it there, its trip
// to L2 made beside other work.
PGAS_HD inline void prefetch_l1(const void* p) {
    NV_IF_TARGET(NV_IS_DEVICE, (asm volatile("prefetch.L1 [%0];" ::"l"(p));), ((void)p;))
}

// A unit's two LL words, stored or loaded as one 16-byte access on the GPU
// (volatile, so every poll goes to memory). Each 8-byte half is still written
// whole, which is all the flags rely on; one access instead of two halves the
// receiver's polls: the second word's poll was a second L2 round trip after
// the first had landed (~0.5 us per LL call on 2xH200). As NCCL's LL lines.
PGAS_HD inline void ll_store_unit(std::uint64_t* pair, std::uint64_t lo, std::uint64_t hi) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(pair), "l"(lo), "l"(hi)
                               : "memory");),
                 (store_relaxed(pair, lo); store_relaxed(pair + 1, hi);))
}
PGAS_HD inline void ll_load_unit(const std::uint64_t* pair, std::uint64_t& lo, std::uint64_t& hi) {
    NV_IF_TARGET(NV_IS_DEVICE,
                 (asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];"
                               : "=l"(lo), "=l"(hi)
                               : "l"(pair)
                               : "memory");),
                 (lo = load_relaxed(pair); hi = load_relaxed(pair + 1);))
}

}  // namespace detail
PGAS_NAMESPACE_END
