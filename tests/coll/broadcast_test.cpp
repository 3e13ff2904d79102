// broadcast on the direct paths (peer pointers and put/get): every root, uneven counts, in place, one part or several.
#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace coll_test;
using pgas::detail::coll_part;

template <class T>
const char* element_name() {
    if constexpr (std::is_same_v<T, triple>) return "triple";
    else return type_name<T>();
}

// Counts that leave the owners' sub-slices uneven: 1 and 7 (one owner holds
// everything, the others nothing), 4099 (a short last sub-slice), and 64 per
// owner plus a tail of 3 (every owner's sub-slice rounds up past 64 elements,
// so the last owner gets a short one or none).
std::vector<std::size_t> counts_for(int n) { return {1, 7, 4099, std::size_t(n - 1) * 64 + 3}; }

template <class Policy, class T>
void broadcast_cases(const ctx& c, const teams& ts, pgas::symmetric_ptr<unsigned char> src_bytes,
                     pgas::symmetric_ptr<unsigned char> dst_bytes, int& round, failure_log& log) {
    const int me_world = c.my_pe();
    for (int which = 0; which < 2; ++which) {
        const pgas::team t = (which == 0 ? ts.world : ts.strided).bound_to(me_world);
        const int n = t.n_pes(), me = t.my_pe();
        for (std::size_t count : counts_for(n)) {
            for (int root = 0; root < n; ++root) {
                for (bool in_place : {false, true}) {
                    for (unsigned parts : {1u, 3u}) {
                        round += 1;  // every PE steps alike, members or not
                        if (me < 0) continue;
                        const int shift = int(count % 2);
                        case_info info{in_place ? "broadcast(in place)" : "broadcast", element_name<T>(), "-",
                                       which == 0 ? "world" : "strided", policy_name<Policy>(), c.n_pes(), count,
                                       shift};
                        const std::string where = " root=" + std::to_string(root) + " parts=" + std::to_string(parts);
                        auto src = pgas::symmetric_cast<T>(src_bytes) + shift;
                        auto dst = pgas::symmetric_cast<T>(dst_bytes) + shift;
                        T* s = c.local(src);
                        T* d = c.local(dst);
                        std::memset(static_cast<void*>(d), guard_byte, (count + guard) * sizeof(T));
                        std::memset(static_cast<void*>(s), guard_byte, count * sizeof(T));
                        T* from = in_place ? d : s;
                        if (me == root)
                            for (std::size_t i = 0; i < count; ++i) from[i] = raw_value<T>(me_world, i, round);
                        std::vector<T> want(count);
                        for (std::size_t i = 0; i < count; ++i) want[i] = raw_value<T>(t.world_pe(root), i, round);

                        auto source = in_place ? dst : src;
                        if (parts == 1) {
                            pgas::broadcast<pgas::thread, Policy>(c, t, dst, source, count, root);
                        } else {
                            for (unsigned p = 0; p < parts; ++p)
                                pgas::detail::run_collective<pgas::thread, Policy>(
                                    c, t, pgas::detail::plan_of<pgas::detail::coll_kind::broadcast>(count, root), dst,
                                    pgas::symmetric_ptr<const T>(source), pgas::detail::no_reduction{},
                                    coll_part{p, parts});
                        }

                        // Every element of dst on every member: a sub-slice the second phase skipped keeps
                        // the guard bytes.
                        for (std::size_t i = 0; i < count; ++i)
                            if (!same_bits(d[i], want[i])) {
                                log.add(info.text(me_world) + where + ": dst[" + std::to_string(i) + "] = " +
                                        show(d[i]) + ", expected " + show(want[i]));
                                break;
                            }
                        const auto* g = reinterpret_cast<const unsigned char*>(d + count);
                        for (std::size_t i = 0; i < guard * sizeof(T); ++i)
                            if (g[i] != guard_byte) {
                                log.add(info.text(me_world) + where + ": wrote past dst (guard byte " +
                                        std::to_string(i) + ")");
                                break;
                            }
                        if (!in_place && me == root)
                            for (std::size_t i = 0; i < count; ++i)
                                if (!same_bits(s[i], want[i])) {
                                    log.add(info.text(me_world) + where + ": the root's src changed at " +
                                            std::to_string(i));
                                    break;
                                }
                    }
                }
            }
        }
    }
}

template <class Policy>
void check_broadcast(int n_pes) {
    auto w = pgas::world::init_local(n_pes, options());
    const teams ts = make_teams(w);
    const std::size_t bytes = (4099 + guard + 2) * 16;
    auto src = w.alloc<unsigned char>(bytes);
    auto dst = w.alloc<unsigned char>(bytes);
    failure_log log;
    w.launch_host([&](const ctx& c) {
        int round = 0;
        broadcast_cases<Policy, std::uint8_t>(c, ts, src, dst, round, log);
        broadcast_cases<Policy, double>(c, ts, src, dst, round, log);
        broadcast_cases<Policy, triple>(c, ts, src, dst, round, log);
    });
    log.check();
}

}  // namespace

// The direct path scatters the root's block over the n - 1 other members,
// then each pulls the others' sub-slices; put/get (rma) runs it whole in
// part 0. Every root, on the world team and a strided one, so the owners'
// order skips the root wherever it sits.
TEST_CASE_TEMPLATE("broadcast on the direct paths matches the root's block on every member: every root, uneven counts",
                   Policy, pgas::coll::direct_policy, pgas::coll::rma_policy) {
    for (int n : {2, 3, 4, 8}) {
        CAPTURE(n);
        check_broadcast<Policy>(n);
    }
}
