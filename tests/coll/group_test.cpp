// Collectives called by multi-thread groups on the host: a simulated group of K threads per PE splits the work as a GPU block would.
#include "support.hpp"

#include <barrier>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using namespace coll_test;

// Models pgas::group with K real threads: rank and barrier are per thread,
// so the collectives' work splitting, G::sync placement and rank-0-only
// steps run for real (pgas's own groups are size 1 on the host).
template <unsigned K>
struct sim_group {
    static inline thread_local unsigned rank_ = 0;
    static inline thread_local std::barrier<>* barrier_ = nullptr;
    static unsigned rank() { return rank_; }
    static unsigned size() { return K; }
    static void sync() { barrier_->arrive_and_wait(); }
};
static_assert(pgas::group<sim_group<3>>);

// Runs f on K threads forming one sim_group<K>; rethrows the first failure.
template <unsigned K, class F>
void as_group(F&& f) {
    std::barrier<> barrier(K);
    std::exception_ptr failure;
    std::mutex mutex;
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < K; ++r)
        threads.emplace_back([&, r] {
            sim_group<K>::rank_ = r;
            sim_group<K>::barrier_ = &barrier;
            try {
                f();
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!failure) failure = std::current_exception();
            }
        });
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
}

template <class Policy, unsigned K>
void check_groups(int n_pes) {
    auto w = pgas::world::init_local(n_pes, options());
    const teams ts = make_teams(w);
    constexpr std::size_t most = 2053;
    auto src = w.alloc<std::int32_t>(std::size_t(n_pes) * most + 8);
    auto dst = w.alloc<std::int32_t>(std::size_t(n_pes) * most + 8);
    failure_log log;
    using G = sim_group<K>;
    w.launch_host([&](const ctx& c) {
        int round = 0;
        for (int which = 0; which < 2; ++which) {
            const pgas::team t = (which == 0 ? ts.world : ts.strided).bound_to(c.my_pe());
            const int n = t.n_pes(), me = t.my_pe();
            for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(33), most}) {
                round += 1;
                if (me < 0) continue;
                case_info info{"", "int32", "sum", which == 0 ? "world" : "strided", policy_name<Policy>(), c.n_pes(),
                               count, 0};
                std::int32_t* s = c.local(src);
                std::int32_t* d = c.local(dst);
                auto value = [&](int pe, std::size_t i) { return std::int32_t(mix(std::uint64_t(pe), i, std::uint64_t(round))); };
                std::vector<std::int32_t> want(count * std::size_t(n));

                info.collective = "allreduce";
                for (std::size_t i = 0; i < count; ++i) s[i] = value(c.my_pe(), i);
                for (std::size_t i = 0; i < count; ++i) {
                    std::uint32_t sum = 0;
                    for (int q = 0; q < n; ++q) sum += std::uint32_t(value(t.world_pe(q), i));
                    want[i] = std::int32_t(sum);
                }
                as_group<K>([&] { pgas::allreduce<G, Policy>(c, t, dst, src, count, pgas::op::sum); });
                expect_equal(log, info, c.my_pe(), "dst", d, want.data(), count);

                info.collective = "reduce";
                const int root = round % n;
                as_group<K>([&] { pgas::reduce<G, Policy>(c, t, dst, src, count, pgas::op::sum, root); });
                if (me == root) expect_equal(log, info, c.my_pe(), "root dst", d, want.data(), count);

                info.collective = "broadcast";
                for (std::size_t i = 0; i < count; ++i) want[i] = value(t.world_pe(root), i);
                as_group<K>([&] { pgas::broadcast<G, Policy>(c, t, dst, src, count, root); });
                expect_equal(log, info, c.my_pe(), "dst", d, want.data(), count);

                info.collective = "allgather";
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < count; ++i) want[count * std::size_t(q) + i] = value(t.world_pe(q), i);
                as_group<K>([&] { pgas::allgather<G, Policy>(c, t, dst, src, count); });
                expect_equal(log, info, c.my_pe(), "dst", d, want.data(), count * std::size_t(n));

                info.collective = "reduce_scatter";
                for (std::size_t i = 0; i < count * std::size_t(n); ++i) s[i] = value(c.my_pe(), i);
                for (std::size_t i = 0; i < count; ++i) {
                    std::uint32_t sum = 0;
                    for (int q = 0; q < n; ++q) sum += std::uint32_t(value(t.world_pe(q), count * std::size_t(me) + i));
                    want[i] = std::int32_t(sum);
                }
                as_group<K>([&] { pgas::reduce_scatter<G, Policy>(c, t, dst, src, count, pgas::op::sum); });
                expect_equal(log, info, c.my_pe(), "dst", d, want.data(), count);

                info.collective = "alltoall";
                for (int q = 0; q < n; ++q)
                    for (std::size_t i = 0; i < count; ++i)
                        want[count * std::size_t(q) + i] = value(t.world_pe(q), count * std::size_t(me) + i);
                as_group<K>([&] { pgas::alltoall<G, Policy>(c, t, dst, src, count); });
                expect_equal(log, info, c.my_pe(), "dst", d, want.data(), count * std::size_t(n));
            }
        }
    });
    log.check();
}

}  // namespace

TEST_CASE_TEMPLATE("groups of 3 threads per PE split every collective's work correctly on every path", Policy,
                   pgas::coll::automatic, pgas::coll::ll_policy, pgas::coll::direct_policy, pgas::coll::rma_policy) {
    for (int n : {1, 2, 3, 5}) {
        CAPTURE(n);
        check_groups<Policy, 3>(n);
    }
}
