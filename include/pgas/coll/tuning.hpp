// Tuning policies of the collectives: constexpr value structs chosen per transport, checked by a concept.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/concepts.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace coll {

// A policy says, per call, which algorithm a collective runs. Every PE of a
// team must call with the same policy (the choice depends only on the policy,
// the team size and the count, so all PEs choose alike).
//
//   ll_max_bytes   the low-latency (LL) flag-in-data path runs while the block
//                  one PE sends to one peer (count * sizeof(T)) is at most this;
//                  above it the direct path runs. 0: never LL.
//   peer_pointers  the direct path loads/stores peers' buffers through
//                  ctx.peer() when every member is mapped; false: it moves data
//                  with put/get only (what a network transport does).
//   stream_threads threads per block of an *_on_stream kernel.
//   stream_max_blocks, stream_bytes_per_block
//                  an *_on_stream call on the direct peer-pointer path spreads
//                  over ceil(buffer bytes / stream_bytes_per_block) blocks, at
//                  most stream_max_blocks (<= 64), each block moving its share
//                  between barriers of its own; LL and put/get run one block.
template <class P>
concept tuning_policy = requires {
    { P::ll_max_bytes } -> std::convertible_to<std::size_t>;
    { P::peer_pointers } -> std::convertible_to<bool>;
    { P::stream_threads } -> std::convertible_to<unsigned>;
    { P::stream_max_blocks } -> std::convertible_to<unsigned>;
    { P::stream_bytes_per_block } -> std::convertible_to<std::size_t>;
} && P::stream_max_blocks >= 1 && P::stream_max_blocks <= 64 && P::stream_bytes_per_block >= 1;

// Transports that map peers' heaps (nvlink, host).
struct load_store_policy {
    // placeholder: to be measured on 2xH200. LL moves 4 data bytes per 8
    // written, so it pays only while latency dominates; NCCL's own LL on NVLink
    // hands over near 64 KiB per peer.
    static constexpr std::size_t ll_max_bytes = std::size_t{8} << 10;
    static constexpr bool peer_pointers = true;
    // placeholder: to be measured on 2xH200 (one block of 512 threads keeps
    // 16 B loads from every peer in flight).
    static constexpr unsigned stream_threads = 512;
    // placeholder: to be measured on 2xH200. A block of 512 threads keeps
    // about 16 KiB of 16-byte loads in flight; NVLink needs ~0.5 MB in flight
    // to stay busy, so large calls take 32 blocks.
    static constexpr unsigned stream_max_blocks = 32;
    static constexpr std::size_t stream_bytes_per_block = std::size_t{32} << 10;
};

// Transports that move data only through put/get (proxy, ibgda, libfabric).
struct rma_policy {
    static constexpr std::size_t ll_max_bytes = 0;
    static constexpr bool peer_pointers = false;
    // placeholder: to be measured on 2xH200 and on a network transport.
    static constexpr unsigned stream_threads = 256;
    // one block: the put/get path stages through one scratch buffer per team
    static constexpr unsigned stream_max_blocks = 1;
    static constexpr std::size_t stream_bytes_per_block = ~std::size_t{0};
};

// Forces the direct path through ctx.peer() at every size (tests, benchmarks).
struct direct_policy : load_store_policy {
    static constexpr std::size_t ll_max_bytes = 0;
};
// Forces the LL path at every size it can run (tests, benchmarks).
struct ll_policy : load_store_policy {
    static constexpr std::size_t ll_max_bytes = ~std::size_t{0};
};

static_assert(tuning_policy<load_store_policy> && tuning_policy<rma_policy> && tuning_policy<direct_policy> &&
              tuning_policy<ll_policy>);

// The default of every collective: picks the policy of the transport.
struct automatic {};

template <class Policy, class Tr>
using resolve_policy = std::conditional_t<
    std::is_same_v<Policy, automatic>,
    std::conditional_t<load_store_transport<Tr>, load_store_policy, rma_policy>, Policy>;

}  // namespace coll
PGAS_NAMESPACE_END
