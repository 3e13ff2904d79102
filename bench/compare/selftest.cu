// Host-only checks of the harness's shared parts (no GPU needed): sizes, budgets, progress notes, shapes, busbw factors, expected values, forked ranks.
#include "common.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

int failures = 0;
#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                       \
        }                                                                     \
    } while (0)

void sizes_and_plans() {
    const auto sizes = compare::sweep_sizes();
    EXPECT(sizes.size() == 14);
    EXPECT(sizes.front() == 8 && sizes.back() == (std::size_t{256} << 20));
    for (std::size_t s : {std::size_t{1} << 10, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20})
        EXPECT(std::find(sizes.begin(), sizes.end(), s) != sizes.end());  // the sizes the issues quote
    for (std::size_t s : sizes) {
        const auto p = compare::plan_for(s);
        EXPECT(p.iters >= 5 && p.iters <= 200 && p.reps >= 7);
    }
    setenv("PGAS_COMPARE_MAX_BYTES", "1024", 1);
    EXPECT(compare::sweep_sizes().back() == 1024);
    unsetenv("PGAS_COMPARE_MAX_BYTES");
}

// fit(): slow operations get fewer iterations, then fewer replays, never
// below min_reps; what it returns fits the budget unless nothing smaller may.
void budgets() {
    using compare::fit;
    using compare::plan;
    const double budget = 1e6;  // 1 s in µs
    auto p = fit({200, 15}, 10.0, budget);
    EXPECT(p.iters == 200 && p.reps == 15);  // fast: untouched
    p = fit({5, 7}, 204e3, budget);          // NVSHMEM allreduce 256 MiB on 2xH200
    EXPECT(p.iters == 1 && p.reps == compare::min_reps);
    p = fit({5, 7}, 51e3, budget);  // iterations give way first
    EXPECT(p.iters == 2 && p.reps == 7);
    p = fit({2, 2}, 1e7, budget);  // never more replays than asked
    EXPECT(p.iters == 1 && p.reps == 2);
    EXPECT(fit({5, 7}, 0.0, budget).iters == 5);  // no time known: the plan as asked
    for (double op : {1.0, 50.0, 400.0, 3e3, 2e4, 1e5, 1e6, 5e6})
        for (plan asked : {plan{200, 15}, plan{50, 15}, plan{5, 7}, plan{10, 9}}) {
            p = fit(asked, op, budget);
            EXPECT(p.iters >= 1 && p.iters <= asked.iters);
            EXPECT(p.reps >= compare::min_reps && p.reps <= asked.reps);
            EXPECT(p.iters * (p.reps + 1) * op <= budget || (p.iters == 1 && p.reps == compare::min_reps));
        }
}

// selected() and plan_for() leave "begin"/"size" lines in PGAS_COMPARE_PROGRESS;
// PGAS_COMPARE_SKIP drops sizes from the running benchmark's sweep only.
void progress_and_skips() {
    char path[] = "/tmp/pgas_compare_selftest_XXXXXX";
    const int fd = mkstemp(path);
    EXPECT(fd >= 0);
    close(fd);
    setenv("PGAS_COMPARE_PROGRESS", path, 1);
    setenv("PGAS_COMPARE_SKIP", "allgather@268435456,allgather@8,broadcast@1024", 1);
    setenv("PGAS_COMPARE_ONLY", "allgather,alltoall", 1);
    EXPECT(compare::sweep_sizes().size() == 14);  // before any benchmark: the full sweep
    EXPECT(!compare::selected("broadcast"));
    EXPECT(compare::selected("allgather"));
    const auto sizes = compare::sweep_sizes();
    EXPECT(sizes.size() == 12 && sizes.front() == 16 && sizes.back() == (std::size_t{64} << 20));
    compare::plan_for(16);
    EXPECT(compare::selected("alltoall"));
    EXPECT(compare::sweep_sizes().size() == 14);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT(text.str() == "begin allgather\nsize 16\nbegin alltoall\n");
    std::remove(path);
    for (const char* name : {"PGAS_COMPARE_PROGRESS", "PGAS_COMPARE_SKIP", "PGAS_COMPARE_ONLY"}) unsetenv(name);
    compare::current_benchmark().clear();
}

void shapes_and_factors() {
    using compare::coll;
    // nccl-tests' sizes for 2 ranks and 1 MiB (262144 floats)
    auto s = compare::shape(coll::allgather, 1 << 20, 2);
    EXPECT(s.valid && s.send_elems == 131072 && s.recv_elems == 262144 && s.count == 131072);
    s = compare::shape(coll::reduce_scatter, 1 << 20, 2);
    EXPECT(s.valid && s.send_elems == 262144 && s.recv_elems == 131072 && s.count == 131072);
    s = compare::shape(coll::alltoall, 1 << 20, 2);
    EXPECT(s.valid && s.send_elems == 262144 && s.recv_elems == 262144 && s.count == 131072);
    s = compare::shape(coll::allreduce, 8, 2);
    EXPECT(s.valid && s.count == 2);
    EXPECT(!compare::shape(coll::allgather, 8, 4).valid);  // 2 floats do not split over 4 ranks
    EXPECT(std::fabs(compare::busbw_factor(coll::allreduce, 2) - 1.0) < 1e-12);
    EXPECT(std::fabs(compare::busbw_factor(coll::allreduce, 8) - 1.75) < 1e-12);
    EXPECT(std::fabs(compare::busbw_factor(coll::allgather, 4) - 0.75) < 1e-12);
    EXPECT(compare::busbw_factor(coll::broadcast, 8) == 1.0);
    // outputs for inputs rank r = r + 1
    s = compare::shape(coll::alltoall, 1 << 20, 2);
    EXPECT(compare::expected(coll::alltoall, 0, 2, 0, s) == 1.0f);
    EXPECT(compare::expected(coll::alltoall, 0, 2, s.recv_elems - 1, s) == 2.0f);
    EXPECT(compare::expected(coll::allreduce, 1, 4, 7, s) == 10.0f);
}

// Forked ranks: barrier, unique-id broadcast and all_ok agree; a failing
// rank makes run_forked fail instead of hanging.
void forked_ranks() {
    struct blob {
        char text[200];
    };
    const int rc = compare::run_forked(4, [](compare::ranks& rk) {
        blob mine{};
        if (rk.rank() == 0) std::snprintf(mine.text, sizeof mine.text, "id-from-rank-0");
        const blob got = rk.broadcast_blob(mine);
        if (std::string(got.text) != "id-from-rank-0") return 10;
        for (int i = 0; i < 50; ++i) rk.barrier();
        if (!rk.all_ok(true)) return 11;
        if (rk.all_ok(rk.rank() != 2)) return 12;  // one rank says no: all see it
        if (!rk.all_ok(true)) return 13;           // and the vote after is clean again
        if (!rk.all_ok(true)) return 14;
        for (int i = 0; i < 3; ++i)  // the same largest value on every rank, every time
            if (rk.max_over_ranks(1.5 * ((rk.rank() + i) % rk.size())) != 1.5 * (rk.size() - 1)) return 15;
        return 0;
    });
    EXPECT(rc == 0);
    setenv("PGAS_COMPARE_BARRIER_TIMEOUT_S", "20", 1);
    const int failed = compare::run_forked(2, [](compare::ranks& rk) {
        if (rk.rank() == 1) return 7;  // dies before the barrier
        rk.barrier();
        return 0;
    });
    EXPECT(failed != 0);
}

}  // namespace

int main() {
    sizes_and_plans();
    budgets();
    progress_and_skips();
    shapes_and_factors();
    forked_ranks();
    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
