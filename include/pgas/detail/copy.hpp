// Group-wide memory copy: 16-byte vectors spread over the calling group on the GPU, memcpy on the host.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/scope.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

#if defined(__CUDACC__)
// Each thread keeps `unroll` independent 16-byte loads in flight before it
// stores, so a warp moves 2 KiB per step; across NVLink the latency of one
// load would otherwise bound the bandwidth of a single group. Loads are
// ld.global.cg (L2, not L1): L1 is not coherent with a peer's writes, so a
// repeated get could otherwise return stale lines (seen on 2xH200 as get
// "bandwidth" above NVLink's).
template <class Word, bool bypass_l1>
__device__ inline Word load_word(const Word* p) {
    if constexpr (bypass_l1)
        return __ldcg(p);
    else
        return *p;
}

template <bool bypass_l1, unsigned unroll = 4>
__device__ inline void copy_vectors(uint4* dst, const uint4* src, std::size_t n, unsigned rank,
                                    unsigned size) {
    std::size_t i = rank;
    const std::size_t step = std::size_t(size) * unroll;
    for (; i + std::size_t(size) * (unroll - 1) < n; i += step) {
        uint4 v[unroll];
#pragma unroll
        for (unsigned u = 0; u < unroll; ++u) v[u] = load_word<uint4, bypass_l1>(src + i + u * size);
#pragma unroll
        for (unsigned u = 0; u < unroll; ++u) dst[i + u * size] = v[u];
    }
    for (; i < n; i += size) dst[i] = load_word<uint4, bypass_l1>(src + i);
}

template <bool bypass_l1, class Word>
__device__ inline void copy_words(Word* dst, const Word* src, std::size_t n, unsigned rank,
                                  unsigned size) {
    for (std::size_t i = rank; i < n; i += size) dst[i] = load_word<Word, bypass_l1>(src + i);
}
#endif

// Copies `bytes` from src to dst, each thread of G taking a share. Does not
// sync the group: callers sync when they need the whole copy done.
// remote_source: src is a peer's global memory (a get), read through L2 only;
// a put's source may be shared or local memory, which ld.global.cg cannot read.
#if defined(__CUDACC__)
// Widest words first: 16-byte vectors while both pointers allow, then 8, 4
// and single bytes for what is left, so a small or odd-sized copy is a few
// stores, not one per byte (an 8-byte put_nbi was 8 byte stores: 3x below
// NVSHMEM's 8-byte message rate on 2xH200).
template <class G, bool remote_source>
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
        copy_vectors<remote_source>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), n, rank, size);
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

template <class G, bool remote_source = false>
PGAS_HD inline void group_copy(void* dst, const void* src, std::size_t bytes) {
    NV_IF_TARGET(NV_IS_DEVICE, (group_copy_device<G, remote_source>(dst, src, bytes);),
                 (if (bytes != 0) std::memmove(dst, src, bytes);))
}

}  // namespace detail
PGAS_NAMESPACE_END
