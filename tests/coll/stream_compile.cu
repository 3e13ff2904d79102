// Compile-only: instantiates every on-stream collective for the NVLink context (not a test; it cannot run without GPUs).
#include <pgas/host/stream/collectives.cuh>
#include <pgas/transport/nvlink/nvlink.hpp>

#include <cstdint>

namespace coll_stream_compile {

using nvlink_ctx = pgas::device::context<pgas::nvlink>;

template <class T, class Op>
void reductions(const nvlink_ctx& ctx, pgas::team t, pgas::symmetric_ptr<T> a, pgas::symmetric_ptr<T> b, Op op,
                cudaStream_t s) {
    pgas::reduce_on_stream(ctx, t, b, a, 8, op, 0, s);
    pgas::allreduce_on_stream(ctx, t, b, a, 8, op, s);
    pgas::allreduce_on_stream<pgas::coll::direct_policy>(ctx, t, b, a, 8, op, s);
    pgas::reduce_scatter_on_stream(ctx, t, b, a, 8, op, s);
}

template <class T>
void movement(const nvlink_ctx& ctx, pgas::team t, pgas::symmetric_ptr<T> a, pgas::symmetric_ptr<T> b, cudaStream_t s) {
    pgas::broadcast_on_stream(ctx, t, b, a, 8, 0, s);
    pgas::allgather_on_stream(ctx, t, b, a, 8, s);
    pgas::alltoall_on_stream(ctx, t, b, pgas::symmetric_ptr<const T>(a), 8, s);
}

// Never called: taking its address keeps the instantiations.
void instantiate(const nvlink_ctx& ctx, pgas::team t, cudaStream_t s) {
    auto i8 = pgas::symmetric_ptr<std::int8_t>(pgas::detail::offset_tag{}, 0);
    auto u64 = pgas::symmetric_ptr<std::uint64_t>(pgas::detail::offset_tag{}, 0);
    auto h = pgas::symmetric_ptr<__half>(pgas::detail::offset_tag{}, 0);
    auto bf = pgas::symmetric_ptr<__nv_bfloat16>(pgas::detail::offset_tag{}, 0);
    auto f = pgas::symmetric_ptr<float>(pgas::detail::offset_tag{}, 0);
    reductions(ctx, t, i8, i8, pgas::op::bit_xor, s);
    reductions(ctx, t, u64, u64, pgas::op::prod, s);
    reductions(ctx, t, h, h, pgas::op::sum, s);
    reductions(ctx, t, bf, bf, pgas::op::max, s);
    reductions(ctx, t, f, f, pgas::op::min, s);
    movement(ctx, t, f, f, s);
    movement(ctx, t, i8, i8, s);
    pgas::barrier_on_stream(ctx, t, s);
    pgas::sync_on_stream(ctx, t, s);
}

}  // namespace coll_stream_compile

void (*pgas_coll_stream_compile_anchor)(const coll_stream_compile::nvlink_ctx&, pgas::team, cudaStream_t) =
    &coll_stream_compile::instantiate;
