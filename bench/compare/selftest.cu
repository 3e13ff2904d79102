// Host-only checks of the harness's shared parts (no GPU needed): sizes, budgets, progress notes, shapes and busbw factors at N ranks, expected values, the rank count, the JSON line, forked ranks.
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
    EXPECT(s.bytes == (std::size_t{1} << 20));
}

// The shapes at N ranks (scripts/bench-compare --ranks N): nccl-tests' counts, the size measured, and the
// value every output element must hold, for each collective; a power-of-two count measures the sizes asked.
void shapes_at_n_ranks() {
    using compare::coll;
    for (int n : {2, 4, 8, 16, 64})
        for (coll c : compare::all_colls)
            for (std::size_t bytes : compare::sweep_sizes()) {
                const auto s = compare::shape(c, bytes, n);
                if (!s.valid) {
                    EXPECT(c != coll::allreduce && c != coll::broadcast && bytes / 4 < std::size_t(n));
                    continue;
                }
                EXPECT(s.bytes == bytes);
                EXPECT(std::max(s.send_elems, s.recv_elems) * 4 <= bytes);  // fits the programs' buffers
            }
    // 8 ranks, 1 MiB = 262144 floats: 32768 per rank
    auto s = compare::shape(coll::allgather, 1 << 20, 8);
    EXPECT(s.valid && s.send_elems == 32768 && s.recv_elems == 262144 && s.count == 32768);
    s = compare::shape(coll::reduce_scatter, 1 << 20, 8);
    EXPECT(s.valid && s.send_elems == 262144 && s.recv_elems == 32768 && s.count == 32768);
    s = compare::shape(coll::alltoall, 1 << 20, 8);
    EXPECT(s.valid && s.send_elems == 262144 && s.recv_elems == 262144 && s.count == 32768);
    // outputs at 4 ranks (rank r sends r + 1): sums 1+2+3+4, block j of a gather or exchange from rank j
    s = compare::shape(coll::alltoall, 1 << 10, 4);  // 256 floats, 64 to each peer
    for (std::size_t j = 0; j < 4; ++j) {
        EXPECT(compare::expected(coll::alltoall, 2, 4, j * 64, s) == float(j + 1));
        EXPECT(compare::expected(coll::alltoall, 2, 4, j * 64 + 63, s) == float(j + 1));
    }
    s = compare::shape(coll::allgather, 1 << 10, 4);
    EXPECT(compare::expected(coll::allgather, 0, 4, s.recv_elems - 1, s) == 4.0f);
    EXPECT(compare::expected(coll::reduce_scatter, 3, 4, 0, compare::shape(coll::reduce_scatter, 1 << 10, 4)) == 10.0f);
    EXPECT(compare::expected(coll::allreduce, 7, 8, 0, compare::shape(coll::allreduce, 8, 8)) == 36.0f);
    EXPECT(compare::expected(coll::broadcast, 5, 8, 0, compare::shape(coll::broadcast, 8, 8)) == 1.0f);
    EXPECT(std::fabs(compare::busbw_factor(coll::reduce_scatter, 8) - 0.875) < 1e-12);
    EXPECT(std::fabs(compare::busbw_factor(coll::alltoall, 4) - 0.75) < 1e-12);
    EXPECT(std::fabs(compare::busbw_factor(coll::allreduce, 4) - 1.5) < 1e-12);
    // 3 ranks: shares rounded down (as nccl-tests), the size measured said by s.bytes
    s = compare::shape(coll::allgather, 1 << 20, 3);  // 262144 floats: 87381 per rank
    EXPECT(s.valid && s.send_elems == 87381 && s.recv_elems == 262143 && s.count == 87381 && s.bytes == 1048572);
    s = compare::shape(coll::reduce_scatter, 16, 3);
    EXPECT(s.valid && s.send_elems == 3 && s.recv_elems == 1 && s.bytes == 12);
    s = compare::shape(coll::alltoall, 64, 3);  // 16 floats: 5 to each peer
    EXPECT(s.valid && s.send_elems == 15 && s.recv_elems == 15 && s.count == 5 && s.bytes == 60);
    EXPECT(compare::expected(coll::alltoall, 0, 3, 14, s) == 3.0f);
    EXPECT(!compare::shape(coll::allgather, 8, 3).valid);
    EXPECT(compare::shape(coll::allreduce, 8, 3).bytes == 8);
}

// PGAS_COMPARE_RANKS: the rank count every program forks (default 2).
void rank_count() {
    unsetenv("PGAS_COMPARE_RANKS");
    EXPECT(compare::rank_count() == 2);
    setenv("PGAS_COMPARE_RANKS", "8", 1);
    EXPECT(compare::rank_count() == 8);
    unsetenv("PGAS_COMPARE_RANKS");
}

// A record carries its rank count: one JSON line with "ranks": N.
void record_line() {
    char path[] = "/tmp/pgas_compare_selftest_XXXXXX";
    const int fd = mkstemp(path);
    EXPECT(fd >= 0);
    std::fflush(stdout);
    const int saved = dup(1);
    dup2(fd, 1);
    compare::record r;
    r.impl = "pgas";
    r.benchmark = "allreduce";
    r.ranks = 4;
    r.bytes = 1024;
    r.t.us = 2.0;
    r.busbw_factor = compare::busbw_factor(compare::coll::allreduce, 4);
    compare::emit(r, "4x SAMPLE", "2000-01-01T00:00:00Z");
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(fd);
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    EXPECT(line.find("\"ranks\": 4, \"machine\": \"4x SAMPLE\"") != std::string::npos);
    EXPECT(line.find("\"busbw_GBps\": 0.768") != std::string::npos);  // 1024 B / 2 us * 1.5
    std::remove(path);
}

// Forked ranks: barrier, unique-id broadcast and all_ok agree; a failing
// rank makes run_forked fail instead of hanging.
void forked_ranks() {
    struct blob {
        char text[200];
    };
    for (int n : {4, 8}) {  // 8: scripts/bench-compare's one rank per GPU on an 8-GPU machine
        const int rc = compare::run_forked(n, [](compare::ranks& rk) {
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
    }
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
    shapes_at_n_ranks();
    rank_count();
    record_line();
    forked_ranks();
    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
