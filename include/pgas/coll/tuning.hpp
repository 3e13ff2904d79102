// Tuning policies of the collectives: constexpr value structs chosen per transport, checked by a concept.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/transport/concepts.hpp>

#include <concepts>
#include <cstddef>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace coll {

/// A policy says, per call, which algorithm a collective runs. Every PE of a
/// team must call with the same policy (the choice depends only on the policy,
/// the team and the count, so all PEs choose alike).
///
///   ll_max_bytes   the low-latency (LL) flag-in-data algorithm runs while what
///                  one PE sends all its peers (count * sizeof(T) * (n - 1))
///                  is at most this, and one chunk per LL channel carries the
///                  block (the team's scratch bounds that: coll/detail/driver.hpp
///                  ll_fits); above it the direct algorithm runs. 0: never LL;
///                  ~0: LL at every size, in as many chunks as it takes.
///   ll_max_peer_bytes
///                  and while what one PE sends each peer (count * sizeof(T))
///                  is at most this.
///   ll_bytes_per_block
///                  an *_on_stream call on the LL path spreads over
///                  ceil(buffer bytes / this) blocks, at most the team's LL
///                  channels (32 for the world and node teams, 1 for split teams).
///   peer_pointers  the direct path loads/stores peers' buffers through
///                  ctx.peer() when every member is mapped; false: it moves data
///                  with put/get only (what a network transport does).
///   stream_threads threads per block of an *_on_stream kernel.
///   stream_max_blocks, stream_bytes_per_block
///                  an *_on_stream call on the direct peer-pointer path spreads
///                  over ceil(buffer bytes / stream_bytes_per_block) blocks, at
///                  most stream_max_blocks (<= 64), each block moving its share
///                  between barriers of its own; put/get runs one block.
template <class P>
concept tuning_policy = requires {
    { P::ll_max_bytes } -> std::convertible_to<std::size_t>;
    { P::ll_max_peer_bytes } -> std::convertible_to<std::size_t>;
    { P::ll_bytes_per_block } -> std::convertible_to<std::size_t>;
    { P::peer_pointers } -> std::convertible_to<bool>;
    { P::stream_threads } -> std::convertible_to<unsigned>;
    { P::stream_max_blocks } -> std::convertible_to<unsigned>;
    { P::stream_bytes_per_block } -> std::convertible_to<std::size_t>;
}
&&P::stream_max_blocks >= 1 && P::stream_max_blocks <= 64 && P::stream_bytes_per_block >= 1 &&
    P::ll_bytes_per_block >= 1;

/// Transports that map peers' heaps (nvlink, host) or some of them (a route
/// whose Near does: a team of near peers runs as on Near alone; a team with a
/// far member takes put/get, in one block of the launch, the others exiting).
struct load_store_policy {
    // scripts/bench-compare on 4xH100 (NV18), 2026-11-27, one process per
    // GPU as users run it, pgas us per call with LL up to the cells (this
    // rule, 973423f) | LL only up to a 64 KiB buffer (6c3570a):
    //   2 GPUs  allreduce 256 KiB 7.7 | 10.9, allgather 6.9 | 10.8,
    //           reduce_scatter 6.7 | 11.2, broadcast 6.1 | 11.2, alltoall 7.1 | 10.6
    //   4 GPUs  allreduce 256 KiB 14.2 | 19.3, allgather 9.8 | 17.2; 1 MiB
    //           allgather 14.0 | 18.2, alltoall 14.6 | 18.3
    // So LL runs wherever the cells carry the block in one chunk per channel
    // (512 KiB blocks on 2 PEs, 256 KiB on 4, 128 KiB on 8), and 1 MiB keeps
    // 8 PEs (7 peers) inside that too. bench_coll_tune, one process driving
    // every GPU, disagrees from 128 KiB (LL 15-69 us against direct 12-20, and
    // 7.5 to 39 us between runs of one size): it is not how users launch, and
    // docs/perf/multi-gpu-h100-2026-11-27.md keeps both.
    /// LL runs while what one PE sends all its peers is at most this many bytes (0: never).
    static constexpr std::size_t ll_max_bytes = std::size_t{1} << 20;
    // scripts/bench-compare's pgas_compare with each path forced
    // (PGAS_COMPARE_COLL_POLICY=ll / direct; 2xH200 NV18, one process per GPU,
    // programmatic launches, 2026-11-28), us per call, LL | direct:
    //   256 KiB (128 KiB to the peer): allgather 5.3 | 7.3, reduce_scatter
    //           5.4 | 8.3, alltoall 5.4 | 7.4, allreduce 7.6 | 8.0
    //   1 MiB (512 KiB to the peer): allgather 10.3 | 8.4, reduce_scatter
    //           13.4 | 9.3, alltoall 10.4 | 8.6
    // At 2 PEs the cells carry 512 KiB blocks, so the cap below binds there
    // only; at 4 PEs (256 KiB blocks, the cells' limit) LL still won at 1 MiB
    // (allgather 14.0 | 18.2 above).
    /// LL runs while what one PE sends each peer is at most this many bytes.
    static constexpr std::size_t ll_max_peer_bytes = std::size_t{256} << 10;
    // Probe of the on-stream collectives at 4 KiB-1 MiB under 2, 4, 8 and
    // 16 KiB per block (4xH100, one process per GPU, 2026-11-28): from 4 to
    // 64 KiB the smaller blocks won (allreduce 16 KiB, 4 GPUs: 6.5 us at
    // 2 KiB against 11.2 at 8 KiB); from 256 KiB the channels cap the
    // blocks and all tie. scripts/bench-compare's tuning build
    // (PGAS_COMPARE_LL_BLOCK_BYTES, docs/perf/README.md "Tuning runs";
    // 4xH200, 2026-11-28) at 1, 2, 4 and 8 KiB: 1 KiB took 0.92-0.94 of
    // 2 KiB's time for allreduce and broadcast at 4-16 KiB, at 2 and 4
    // GPUs; every other collective and size within 2% of it.
    /// Buffer bytes per block of an LL `*_on_stream` call (blocks = ceil(bytes / this), at most the team's channels).
    static constexpr std::size_t ll_bytes_per_block = std::size_t{1} << 10;
    /// The direct path loads/stores peers' buffers through ctx.peer() (false: put/get only).
    static constexpr bool peer_pointers = true;
    // 1024 threads with the reductions' registers cannot launch
    // ("too many resources requested", 2xH200); 512 can.
    /// Threads per block of an `*_on_stream` kernel.
    static constexpr unsigned stream_threads = 512;
    // Measured on 2xH200, allreduce: 64 blocks reach 299 GB/s at 256 MiB and
    // 265 GB/s at 16 MiB, 32 blocks 289 and 257, 16 blocks 189 and 188; at
    // 32-64 KiB a block per 8 KiB (8.3 us) beats a block per 32 KiB (9.4 us).
    /// Most blocks an `*_on_stream` call on the direct peer-pointer path spreads over (<= 64).
    static constexpr unsigned stream_max_blocks = 64;
    /// Buffer bytes per block of such a call (blocks = ceil(bytes / this), at most stream_max_blocks).
    static constexpr std::size_t stream_bytes_per_block = std::size_t{8} << 10;
};

/// The policy of transports that move data only through put/get (libfabric, ibgda, route): no LL, no peer
/// pointers, one block on a stream.
struct rma_policy {
    /// Never LL.
    static constexpr std::size_t ll_max_bytes = 0;
    /// Never LL.
    static constexpr std::size_t ll_max_peer_bytes = 0;
    /// Unused without LL.
    static constexpr std::size_t ll_bytes_per_block = ~std::size_t{0};
    /// put/get only.
    static constexpr bool peer_pointers = false;
    // bench_coll_tune, allreduce with put/get forced on NVLink (2 and 4
    // H100s, 2026-11-27): 256 threads are the fastest from 16 KiB (2 GPUs:
    // 13.8 us against 16.4 with 128 and 14.3 with 512; 64 KiB 27.2 / 37.0 /
    // 28.6) and within 3% of 128 below it.
    /// Threads per block of an `*_on_stream` kernel.
    static constexpr unsigned stream_threads = 256;
    /// One block: the put/get path stages through one scratch buffer per team.
    static constexpr unsigned stream_max_blocks = 1;
    /// Unused with one block.
    static constexpr std::size_t stream_bytes_per_block = ~std::size_t{0};
};

/// Forces the direct path through ctx.peer() at every size (tests, benchmarks).
struct direct_policy : load_store_policy {
    /// Never LL.
    static constexpr std::size_t ll_max_bytes = 0;
};
/// Forces the LL path at every size it can run (tests, benchmarks).
struct ll_policy : load_store_policy {
    /// LL at every size.
    static constexpr std::size_t ll_max_bytes = ~std::size_t{0};
    /// LL at every size.
    static constexpr std::size_t ll_max_peer_bytes = ~std::size_t{0};
};

static_assert(tuning_policy<load_store_policy> && tuning_policy<rma_policy> && tuning_policy<direct_policy> &&
              tuning_policy<ll_policy>);

/// The default of every collective: picks the policy of the transport (resolve_policy).
struct automatic {};

/// The policy a call with `Policy` runs on transport `Tr`: load_store_policy or rma_policy for automatic, else
/// `Policy` itself.
template <class Policy, class Tr>
using resolve_policy =
    std::conditional_t<std::is_same_v<Policy, automatic>,
                       std::conditional_t<peer_pointer_transport<Tr>, load_store_policy, rma_policy>, Policy>;

}  // namespace coll
PGAS_NAMESPACE_END
