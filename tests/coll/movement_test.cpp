// broadcast, allgather (fcollect) and alltoall on the host transport: every dtype x team x size x path, 1-8 PEs.
#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using namespace coll_test;

template <class T>
const char* movement_type_name() {
    if constexpr (std::is_same_v<T, triple>) return "triple";
    else return type_name<T>();
}

template <class Policy, class T>
void movement_cases(const ctx& c, const teams& ts, pgas::symmetric_ptr<unsigned char> src_bytes,
                    pgas::symmetric_ptr<unsigned char> dst_bytes, const std::vector<std::size_t>& counts, int& round,
                    failure_log& log) {
    const int me_world = c.my_pe();
    for (int which = 0; which < 2; ++which) {
        const pgas::team t = (which == 0 ? ts.world : ts.strided).bound_to(me_world);
        const int n = t.n_pes(), me = t.my_pe();
        for (std::size_t count : counts) {
            for (bool in_place : {false, true}) {
                round += 1;  // every PE steps alike, members or not
                if (me < 0) continue;
                const int shift = int(count % 2);
                case_info info{"", movement_type_name<T>(), "-", which == 0 ? "world" : "strided",
                               policy_name<Policy>(), c.n_pes(), count, shift};
                auto src = pgas::symmetric_cast<T>(src_bytes) + shift;
                auto dst = pgas::symmetric_cast<T>(dst_bytes) + shift;
                T* s = c.local(src);
                T* d = c.local(dst);
                const std::size_t block = count;
                auto guard_ok = [&](const T* end, const char* what) {
                    const auto* g = reinterpret_cast<const unsigned char*>(end);
                    for (std::size_t i = 0; i < guard * sizeof(T); ++i)
                        if (g[i] != guard_byte) {
                            log.add(info.text(me_world) + ": " + what + " wrote past its result (guard byte " +
                                    std::to_string(i) + ")");
                            return;
                        }
                };
                std::vector<T> want(block * std::size_t(n));

                // broadcast from a root that moves with the round
                const int root = round % n;
                info.collective = in_place ? "broadcast(in place)" : "broadcast";
                std::memset(static_cast<void*>(d), guard_byte, (block + guard) * sizeof(T));
                T* broadcast_src = in_place ? d : s;
                for (std::size_t i = 0; i < block; ++i) broadcast_src[i] = raw_value<T>(me_world, i, round);
                for (std::size_t i = 0; i < block; ++i) want[i] = raw_value<T>(t.world_pe(root), i, round);
                pgas::broadcast<pgas::thread, Policy>(c, t, dst, in_place ? dst : src, count, root);
                expect_equal(log, info, me_world, "dst", d, want.data(), block);
                guard_ok(d + block, "broadcast");

                // allgather: in place means src is this member's block of dst
                info.collective = in_place ? "allgather(in place)" : "allgather";
                const std::size_t total = block * std::size_t(n);
                std::memset(static_cast<void*>(d), guard_byte, (total + guard) * sizeof(T));
                T* gather_src = in_place ? d + block * std::size_t(me) : s;
                for (std::size_t i = 0; i < block; ++i) gather_src[i] = raw_value<T>(me_world, i, round + 1);
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < block; ++i)
                        want[block * std::size_t(q) + i] = raw_value<T>(t.world_pe(q), i, round + 1);
                if (in_place)
                    pgas::fcollect<pgas::block, Policy>(c, t, dst, dst + std::ptrdiff_t(block * std::size_t(me)), count);
                else
                    pgas::allgather<pgas::block, Policy>(c, t, dst, src, count);
                expect_equal(log, info, me_world, "dst", d, want.data(), total);
                guard_ok(d + total, "allgather");

                // alltoall (no in-place form: run it twice out of place instead)
                info.collective = in_place ? "alltoall(again)" : "alltoall";
                std::memset(static_cast<void*>(d), guard_byte, (total + guard) * sizeof(T));
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < block; ++i)
                        s[block * std::size_t(q) + i] = raw_value<T>(me_world, block * std::size_t(q) + i, round + 2);
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < block; ++i)
                        want[block * std::size_t(q) + i] =
                            raw_value<T>(t.world_pe(q), block * std::size_t(me) + i, round + 2);
                pgas::alltoall<pgas::warp, Policy>(c, t, dst, src, count);
                expect_equal(log, info, me_world, "dst", d, want.data(), total);
                guard_ok(d + total, "alltoall");
            }
        }
    }
}

template <class Policy, class Types>
void check_movement(int n_pes, const std::vector<std::size_t>& counts) {
    auto w = pgas::world::init_local(n_pes, options());
    const teams ts = make_teams(w);
    std::size_t largest = 0;
    for (std::size_t count : counts) largest = count > largest ? count : largest;
    const std::size_t bytes = (std::size_t(n_pes) * (largest + 1) + guard + 2) * 16;
    auto src = w.alloc<unsigned char>(bytes);
    auto dst = w.alloc<unsigned char>(bytes);
    failure_log log;
    w.launch_host([&](const ctx& c) {
        int round = 0;
        for_each_type(Types{}, [&](auto tag, auto) {
            movement_cases<Policy, typename decltype(tag)::type>(c, ts, src, dst, counts, round, log);
        });
    });
    log.check();
}

using movement_types = type_list<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                                 std::uint32_t, std::uint64_t, __half, __nv_bfloat16, float, double, triple>;
using path_types = type_list<std::uint8_t, __half, float, double, triple>;

const std::vector<std::size_t> small_counts = {0, 1, 2, 3, 7, 17, 130};
const std::vector<std::size_t> all_counts = {0, 1, 3, 17, 130, 4099};

}  // namespace

TEST_CASE("broadcast, allgather and alltoall match the host reference: every dtype, default policy, 1-8 PEs") {
    for (int n = 1; n <= max_pes; ++n) {
        CAPTURE(n);
        check_movement<pgas::coll::automatic, movement_types>(n, small_counts);
    }
}

TEST_CASE_TEMPLATE("broadcast, allgather and alltoall on every path, multi-chunk sizes", Policy, pgas::coll::ll_policy,
                   pgas::coll::direct_policy, pgas::coll::rma_policy) {
    for (int n : {1, 2, 3, 4, 5, 8}) {
        CAPTURE(n);
        check_movement<Policy, path_types>(n, all_counts);
    }
}
