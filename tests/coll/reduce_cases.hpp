// reduce, allreduce and reduce_scatter on the host transport: the cases every reduce_*_test.cpp runs (split in
// several translation units so that no one of them dominates the build: one TU held them all and took ~110 s).
#pragma once

#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace coll_test::reduce_cases {


enum class placement { out_of_place, in_place };

template <class Policy, class T, class Op>
void reduction_cases(const ctx& c, const teams& ts, pgas::symmetric_ptr<unsigned char> src_bytes,
                     pgas::symmetric_ptr<unsigned char> dst_bytes, const std::vector<std::size_t>& counts,
                     int& round, failure_log& log, Op op) {
    const int me_world = c.my_pe();
    for (int which = 0; which < 2; ++which) {
        const pgas::team t = (which == 0 ? ts.world : ts.strided).bound_to(me_world);
        const int n = t.n_pes(), me = t.my_pe();
        for (std::size_t count : counts) {
            for (placement place : {placement::out_of_place, placement::in_place}) {
                const int shift = int(count % 2);  // odd counts also start one element off 16-byte alignment
                round += 3;  // every PE steps alike, members or not: inputs and roots stay in agreement
                if (me < 0) continue;
                case_info info{"", type_name<T>(), Op::name, which == 0 ? "world" : "strided", policy_name<Policy>(),
                               c.n_pes(), count, shift};
                auto src = pgas::symmetric_cast<T>(src_bytes) + shift;
                auto dst = pgas::symmetric_cast<T>(dst_bytes) + shift;
                T* s = c.local(src);
                T* d = c.local(dst);
                const bool in_place = place == placement::in_place;

                auto reference = [&](std::size_t block) { return reduced_block<T>(t, block, count, round, op); };
                auto fill = [&](T* where, std::size_t elements) {
                    for (std::size_t i = 0; i < elements; ++i) where[i] = reduce_input<T>(me_world, i, round, op);
                };
                auto guard_ok = [&](const T* end_of_result, const char* what) {
                    const auto* g = reinterpret_cast<const unsigned char*>(end_of_result);
                    for (std::size_t i = 0; i < guard * sizeof(T); ++i)
                        if (g[i] != guard_byte) {
                            log.add(info.text(me_world) + ": " + what + " wrote past its result (guard byte " +
                                    std::to_string(i) + ")");
                            return;
                        }
                };

                // allreduce
                info.collective = in_place ? "allreduce(in place)" : "allreduce";
                std::memset(static_cast<void*>(d), guard_byte, (count + guard) * sizeof(T));
                fill(in_place ? d : s, count);
                pgas::allreduce<pgas::thread, Policy>(c, t, dst, in_place ? dst : src, count, op);
                expect_equal(log, info, me_world, "dst", d, reference(0).data(), count);
                guard_ok(d + count, "allreduce");

                // reduce to a root that moves with the round
                const int root = (round / 3) % n;
                info.collective = in_place ? "reduce(in place)" : "reduce";
                std::memset(static_cast<void*>(d), guard_byte, (count + guard) * sizeof(T));
                fill(in_place ? d : s, count);
                std::vector<T> before(d, d + count);
                pgas::reduce<pgas::block, Policy>(c, t, dst, in_place ? dst : src, count, op, root);
                if (me == root)
                    expect_equal(log, info, me_world, "root dst", d, reference(0).data(), count);
                else
                    expect_equal(log, info, me_world, "non-root dst (must be untouched)", d, before.data(), count);
                guard_ok(d + count, "reduce");

                // reduce_scatter: block i of everyone's src, reduced, to member i
                info.collective = in_place ? "reduce_scatter(in place)" : "reduce_scatter";
                fill(s, count * std::size_t(n));
                if (in_place) {
                    pgas::reduce_scatter<pgas::warp, Policy>(c, t, src + std::ptrdiff_t(count * std::size_t(me)), src,
                                                            count, op);
                    expect_equal(log, info, me_world, "src block", s + count * std::size_t(me),
                                 reference(std::size_t(me)).data(), count);
                } else {
                    std::memset(static_cast<void*>(d), guard_byte, (count + guard) * sizeof(T));
                    pgas::reduce_scatter<pgas::warp, Policy>(c, t, dst, src, count, op);
                    expect_equal(log, info, me_world, "dst", d, reference(std::size_t(me)).data(), count);
                    guard_ok(d + count, "reduce_scatter");
                }
            }
        }
    }
}

// The element types the forced-path cases run (one per width and kind; the
// automatic cases run all twelve).
using path_types = type_list<std::int8_t, std::uint16_t, std::int32_t, std::uint64_t, __half, __nv_bfloat16, float, double>;

// Every op a type takes, or (paths) sum, min and bit_xor: what the forced
// paths must get right beyond the automatic matrix is the data flow, not the op.
template <class T, class F>
void for_each_path_op(F&& f) {
    f(pgas::op::sum);
    f(pgas::op::min);
    if constexpr (is_int<T>) f(pgas::op::bit_xor);
}

template <class Policy, class Types, bool all_ops>
void check_reductions(int n_pes, const std::vector<std::size_t>& counts) {
    auto w = pgas::world::init_local(n_pes, options());
    const teams ts = make_teams(w);
    std::size_t largest = 0;
    for (std::size_t count : counts) largest = count > largest ? count : largest;
    const std::size_t bytes = (std::size_t(n_pes) * (largest + 1) + guard + 2) * 8;
    auto src = w.alloc<unsigned char>(bytes);
    auto dst = w.alloc<unsigned char>(bytes);
    failure_log log;
    w.launch_host([&](const ctx& c) {
        int round = 0;
        for_each_type(Types{}, [&](auto tag, auto) {
            using T = typename decltype(tag)::type;
            auto run = [&](auto op, auto...) { reduction_cases<Policy, T>(c, ts, src, dst, counts, round, log, op); };
            if constexpr (all_ops)
                for_each_op<T>(run);
            else
                for_each_path_op<T>(run);
        });
    });
    log.check();
}

// Sizes: 0 (no-op), 1, and counts that are not multiples of any vector
// width; 4099 elements spans several LL cells and staging pieces at every
// team size and element width.
inline const std::vector<std::size_t> small_counts = {0, 1, 2, 3, 7, 17, 130};
inline const std::vector<std::size_t> all_counts = {0, 1, 3, 17, 130, 4099};

}  // namespace coll_test::reduce_cases
