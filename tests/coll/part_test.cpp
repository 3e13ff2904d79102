// Multi-block (parted) collectives on the host transport: each PE runs every part in turn, as the blocks of an on-stream kernel would.
#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using namespace coll_test;
using pgas::detail::coll_part;

// Runs call(part) for every part of `parts`, in order. The parts of one PE
// share nothing but their barriers with the same part of the other PEs, so
// running them one after another on every PE is a valid schedule of what
// the GPU runs in parallel.
template <class Call>
void each_part(unsigned parts, Call call) {
    for (unsigned p = 0; p < parts; ++p) call(coll_part{p, parts});
}

template <class Policy, class T>
void part_cases(const ctx& c, const teams& ts, pgas::symmetric_ptr<unsigned char> src_bytes,
                pgas::symmetric_ptr<unsigned char> dst_bytes, int& round, failure_log& log) {
    const int me_world = c.my_pe();
    for (int which = 0; which < 2; ++which) {
        const pgas::team t = (which == 0 ? ts.world : ts.strided).bound_to(me_world);
        const int n = t.n_pes(), me = t.my_pe();
        for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(37), std::size_t(1031)}) {
            for (unsigned parts : {2u, 3u, 7u}) {
                round += 3;  // every PE steps alike, members or not
                if (me < 0) continue;
                case_info info{"", type_name<T>(), "sum", which == 0 ? "world" : "strided", policy_name<Policy>(),
                               c.n_pes(), count, int(parts)};
                const std::size_t total = count * std::size_t(n);
                auto src = pgas::symmetric_cast<T>(src_bytes);
                auto dst = pgas::symmetric_cast<T>(dst_bytes);
                T* s = c.local(src);
                T* d = c.local(dst);
                std::vector<T> want(total);
                auto input = [&](int pe, std::size_t i) { return reduce_input<T>(pe, i, round, pgas::op::sum); };
                auto guarded = [&](std::size_t elements, const char* what) {
                    const auto* g = reinterpret_cast<const unsigned char*>(d + elements);
                    for (std::size_t i = 0; i < guard * sizeof(T); ++i)
                        if (g[i] != guard_byte) {
                            log.add(info.text(me_world) + ": " + what + " wrote past its result");
                            return;
                        }
                };
                auto reset = [&](std::size_t elements) {
                    std::memset(static_cast<void*>(d), guard_byte, (elements + guard) * sizeof(T));
                    for (std::size_t i = 0; i < total; ++i) s[i] = input(me_world, i);
                };

                info.collective = "allreduce";
                reset(count);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::allreduce>(count), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::op::sum, p);
                });
                for (std::size_t i = 0; i < count; ++i) {
                    T acc = input(t.world_pe(0), i);
                    for (int q = 1; q < n; ++q) acc = reference_op(acc, input(t.world_pe(q), i), pgas::op::sum);
                    want[i] = acc;
                }
                expect_equal(log, info, me_world, "dst", d, want.data(), count);
                guarded(count, "allreduce");

                info.collective = "reduce";
                const int root = (round / 3) % n;
                reset(count);
                std::vector<T> before(d, d + count);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::reduce>(count, root), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::op::sum, p);
                });
                expect_equal(log, info, me_world, "dst", d, me == root ? want.data() : before.data(), count);
                guarded(count, "reduce");

                info.collective = "reduce_scatter";
                reset(count);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::reduce_scatter>(count), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::op::sum, p);
                });
                for (std::size_t i = 0; i < count; ++i) {
                    const std::size_t k = count * std::size_t(me) + i;
                    T acc = input(t.world_pe(0), k);
                    for (int q = 1; q < n; ++q) acc = reference_op(acc, input(t.world_pe(q), k), pgas::op::sum);
                    want[i] = acc;
                }
                expect_equal(log, info, me_world, "dst", d, want.data(), count);
                guarded(count, "reduce_scatter");

                info.collective = "allgather";
                reset(total);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::allgather>(count), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::detail::no_reduction{}, p);
                });
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < count; ++i) want[count * std::size_t(q) + i] = input(t.world_pe(q), i);
                expect_equal(log, info, me_world, "dst", d, want.data(), total);
                guarded(total, "allgather");

                info.collective = "alltoall";
                reset(total);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::alltoall>(count), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::detail::no_reduction{}, p);
                });
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < count; ++i)
                        want[count * std::size_t(q) + i] = input(t.world_pe(q), count * std::size_t(me) + i);
                expect_equal(log, info, me_world, "dst", d, want.data(), total);
                guarded(total, "alltoall");

                info.collective = "broadcast";
                reset(count);
                each_part(parts, [&](coll_part p) {
                    pgas::detail::run_collective<pgas::thread, Policy>(
                        c, t, pgas::detail::plan_of<pgas::detail::coll_kind::broadcast>(count, root), dst,
                        pgas::symmetric_ptr<const T>(src), pgas::detail::no_reduction{}, p);
                });
                for (std::size_t i = 0; i < count; ++i) want[i] = input(t.world_pe(root), i);
                expect_equal(log, info, me_world, "dst", d, want.data(), count);
                guarded(count, "broadcast");
            }
        }
    }
}

template <class Policy>
void check_parts(int n_pes) {
    auto w = pgas::world::init_local(n_pes, options());
    const teams ts = make_teams(w);
    const std::size_t bytes = (std::size_t(n_pes) * 1031 + guard + 2) * 16;
    auto src = w.alloc<unsigned char>(bytes);
    auto dst = w.alloc<unsigned char>(bytes);
    failure_log log;
    w.launch_host([&](const ctx& c) {
        int round = 0;
        part_cases<Policy, float>(c, ts, src, dst, round, log);
        part_cases<Policy, std::int16_t>(c, ts, src, dst, round, log);
        part_cases<Policy, double>(c, ts, src, dst, round, log);
    });
    log.check();
}

}  // namespace

// The direct path splits each collective's elements over the parts, each
// between barriers of its own; LL and put/get (rma) run whole in part 0 and
// the other parts return at once. Both must give the reference result.
TEST_CASE_TEMPLATE("collectives spread over parts (the blocks of an on-stream kernel) match the host reference",
                   Policy, pgas::coll::direct_policy, pgas::coll::ll_policy, pgas::coll::rma_policy) {
    for (int n : {1, 2, 3, 5}) {
        CAPTURE(n);
        check_parts<Policy>(n);
    }
}
