// The route suite's checks, written once for route<host, libfabric> (host threads) and route<nvlink, libfabric> (kernels).
//
// 4 PEs, near pairs {0,1} and {2,3}: PE p reaches p ^ 1 near and (p + 2) % 4
// far. Each PE's near and far targets are also the PEs that write to it on
// that path, so every receive slot has one writer. run_all() goes through
// every op to a near and a far peer, checked byte for byte, put_signal,
// fence, quiet across the paths, barriers and the collectives; it is
// __host__ __device__ and runs on one thread (a host PE's, or a kernel's
// <<<1, 1>>>) with every buffer it touches reachable from there. A wrong
// value prints "route worker: PE n: ..." (what the CTest entries look for)
// and counts in *failures.
#pragma once

#include <pgas/pgas.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace route_checks {

inline constexpr std::size_t big = (std::size_t{64} << 10) + 5;  // not inline: staged or chunked by the proxy
inline constexpr std::size_t small = 13;                          // inline in a proxy command
inline constexpr std::size_t max_coll = 50000;                    // elements of the largest collective
// Bytes of local (non-heap) scratch one PE needs: two big and two small sources, three big get destinations.
inline constexpr std::size_t scratch_bytes = 5 * big + 2 * 64;

struct triple {
    std::uint64_t a;
    std::uint32_t b;
    std::uint16_t c;
    std::uint8_t d[10];
};

// Every symmetric buffer (world::alloc'd by the caller, zero-filled) and the
// PE-local pieces of one PE's run.
struct buffers {
    pgas::symmetric_ptr<std::uint8_t> recv;        // 2 * big
    pgas::symmetric_ptr<std::uint8_t> recv_small;  // 2 * 64
    pgas::symmetric_ptr<std::uint8_t> src_area;    // big
    pgas::symmetric_ptr<std::uint64_t> sig, psig, flag, qsig, p64, w64;  // 2, 4, 2, 2, 2, 2
    pgas::symmetric_ptr<std::uint16_t> p16;        // 2
    pgas::symmetric_ptr<triple> ptri;              // 2
    pgas::symmetric_ptr<std::uint32_t> w32;        // 2
    pgas::symmetric_ptr<double> wf64;              // 2
    pgas::symmetric_ptr<std::uint64_t> coll_src, coll_dst;  // max_coll each
    pgas::symmetric_ptr<double> one, out;          // 3 each
    pgas::team column;                             // this PE's column of split_2d(world, 2): {0, 2} or {1, 3}
    std::uint8_t* scratch;                         // scratch_bytes, local to this PE, outside the heap
    unsigned* failures;                            // where wrong values are counted
};

struct reporter {
    int me;
    unsigned* failures;

    PGAS_HD void operator()(bool ok, const char* what, int k, unsigned long long got, unsigned long long want) const {
        if (ok) return;
        ++*failures;
        printf("route worker: PE %d: %s (%s peer): got %llu, expected %llu\n", me, what, k == 0 ? "near" : "far", got,
               want);
    }
};

// Byte i of what PE `from` sends to PE `to` in phase `tag`.
PGAS_HD inline std::uint8_t pattern(int from, int to, int tag, std::size_t i) {
    return std::uint8_t((from * 131 + to * 31 + tag * 7 + i * 13 + (i >> 8) * 3) & 0xff);
}

PGAS_HD inline void fill(std::uint8_t* to, int from, int dest, int tag, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) to[i] = pattern(from, dest, tag, i);
}

// Byte for byte; reports the first difference.
PGAS_HD inline void expect_bytes(const reporter& expect, const std::uint8_t* got, int from, int to, int tag, std::size_t n,
                                 const char* what, int k) {
    for (std::size_t i = 0; i < n; ++i)
        if (got[i] != pattern(from, to, tag, i)) {
            printf("route worker: PE %d: %s (%s peer %d): byte %llu of %llu differs\n", expect.me, what,
                   k == 0 ? "near" : "far", from, (unsigned long long)i, (unsigned long long)n);
            expect(false, what, k, got[i], pattern(from, to, tag, i));
            return;
        }
}

// What both parts of run_all share: this PE's two targets (a near and a far
// peer) and its scratch areas.
struct plan {
    int me;
    reporter expect;
    int target[2];            // near, far
    std::uint8_t* data[2];    // big sources, one per path
    std::uint8_t* tiny[2];    // small sources
    std::uint8_t* got;        // get destinations
    std::uint8_t* got_nbi;
    std::uint8_t* got_small;
};

PGAS_HD inline plan make_plan(int me, const buffers& b) {
    plan p{me, reporter{me, b.failures}, {me ^ 1, (me + 2) % 4}, {b.scratch, b.scratch + big},
           {b.scratch + 2 * big, b.scratch + 2 * big + 64}, nullptr, nullptr, nullptr};
    p.got = b.scratch + 2 * big + 128;
    p.got_nbi = p.got + big;
    p.got_small = p.got_nbi + big;
    return p;
}

PGAS_HD inline pgas::symmetric_ptr<std::uint8_t> slot(pgas::symmetric_ptr<std::uint8_t> base, int k, std::size_t size) {
    return base + std::ptrdiff_t(k) * std::ptrdiff_t(size);
}

// The data movement checks: put, put_nbi, get, get_nbi, p, g and the atomics.
template <class Ctx>
PGAS_HD void run_data(const Ctx& ctx, const buffers& b) {
    const plan p = make_plan(ctx.my_pe(), b);
    const int me = p.me;
    const reporter& expect = p.expect;
    const int* target = p.target;
    std::uint8_t* const* data = p.data;
    std::uint8_t* const* tiny = p.tiny;
    std::uint8_t* got = p.got;
    std::uint8_t* got_nbi = p.got_nbi;
    std::uint8_t* got_small = p.got_small;

    // put (blocking), big and inline-small
    for (int k = 0; k < 2; ++k) {
        fill(data[k], me, target[k], 1, big);
        fill(tiny[k], me, target[k], 101, small);
        pgas::put(ctx, slot(b.recv, k, big), data[k], big, target[k]);
        pgas::put(ctx, slot(b.recv_small, k, 64), tiny[k], small, target[k]);
    }
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k) {
        expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, 1, big, "put", k);
        expect_bytes(expect, ctx.local(slot(b.recv_small, k, 64)), target[k], me, 101, small, "put (small)", k);
    }
    pgas::barrier_all(ctx);

    // put_nbi + quiet
    for (int k = 0; k < 2; ++k) {
        fill(data[k], me, target[k], 2, big);
        fill(tiny[k], me, target[k], 102, small);
        pgas::put_nbi(ctx, slot(b.recv, k, big), data[k], big, target[k]);
        pgas::put_nbi(ctx, slot(b.recv_small, k, 64), tiny[k], small, target[k]);
    }
    pgas::quiet(ctx);
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k) {
        expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, 2, big, "put_nbi", k);
        expect_bytes(expect, ctx.local(slot(b.recv_small, k, 64)), target[k], me, 102, small, "put_nbi (small)", k);
    }
    pgas::barrier_all(ctx);

    // get and get_nbi (big, and small at an odd offset) of what each owner wrote into its own area
    fill(ctx.local(b.src_area), me, -1, 3, big);
    pgas::sync_all(ctx);
    for (int k = 0; k < 2; ++k) {
        pgas::get(ctx, got, b.src_area, big, target[k]);
        expect_bytes(expect, got, target[k], -1, 3, big, "get", k);
        pgas::get(ctx, got_small, b.src_area + 5, small, target[k]);
        for (std::size_t i = 0; i < small; ++i)
            if (got_small[i] != pattern(target[k], -1, 3, 5 + i)) {
                expect(false, "get (small, offset 5)", k, got_small[i], pattern(target[k], -1, 3, 5 + i));
                break;
            }
        pgas::get_nbi(ctx, got_nbi, b.src_area, big, target[k]);
        pgas::quiet(ctx);
        expect_bytes(expect, got_nbi, target[k], -1, 3, big, "get_nbi", k);
    }
    pgas::barrier_all(ctx);

    // p and g: 8-byte, 2-byte and a 24-byte struct
    for (int k = 0; k < 2; ++k) {
        pgas::p(ctx, b.p64 + k, std::uint64_t(me) * 1000003 + 17 * std::uint64_t(k), target[k]);
        pgas::p(ctx, b.p16 + k, std::uint16_t(0xA000 + me * 16 + k), target[k]);
        triple t{};
        t.a = 0x0102030405060708ull * std::uint64_t(me + 1);
        t.b = 0xDEAD0000u + std::uint32_t(me);
        t.c = std::uint16_t(k + 7);
        for (int i = 0; i < 10; ++i) t.d[i] = pattern(me, target[k], 4, std::size_t(i));
        pgas::p(ctx, b.ptri + k, t, target[k]);
    }
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k) {
        const int from = target[k];
        const std::uint64_t want64 = std::uint64_t(from) * 1000003 + 17 * std::uint64_t(k);
        expect(*ctx.local(b.p64 + k) == want64, "p 8 bytes", k, *ctx.local(b.p64 + k), want64);
        expect(*ctx.local(b.p16 + k) == std::uint16_t(0xA000 + from * 16 + k), "p 2 bytes", k, *ctx.local(b.p16 + k),
               0xA000 + from * 16 + k);
        const triple landed = *ctx.local(b.ptri + k);
        expect(landed.a == 0x0102030405060708ull * std::uint64_t(from + 1) &&
                   landed.b == 0xDEAD0000u + std::uint32_t(from) && landed.c == std::uint16_t(k + 7),
               "p struct", k, landed.a, 0x0102030405060708ull * std::uint64_t(from + 1));
        for (int i = 0; i < 10; ++i)
            expect(landed.d[i] == pattern(from, me, 4, std::size_t(i)), "p struct bytes", k, landed.d[i],
                   pattern(from, me, 4, std::size_t(i)));
        // g reads back what this PE wrote into the target's slot k
        const std::uint64_t mine64 = std::uint64_t(me) * 1000003 + 17 * std::uint64_t(k);
        const std::uint64_t back64 = pgas::g(ctx, b.p64 + k, from);
        expect(back64 == mine64, "g 8 bytes", k, back64, mine64);
        const std::uint16_t back16 = pgas::g(ctx, b.p16 + k, from);
        expect(back16 == std::uint16_t(0xA000 + me * 16 + k), "g 2 bytes", k, back16, 0xA000 + me * 16 + k);
        const triple back = pgas::g(ctx, b.ptri + k, from);
        expect(back.a == 0x0102030405060708ull * std::uint64_t(me + 1) && back.d[9] == pattern(me, from, 4, 9),
               "g struct", k, back.a, 0x0102030405060708ull * std::uint64_t(me + 1));
    }
    pgas::barrier_all(ctx);

    // atomics: each PE owns word k of its path-k target (one writer per word)
    for (int k = 0; k < 2; ++k) {
        const int t = target[k];
        const auto word = b.w64 + k;
        pgas::atomic_set(ctx, word, std::uint64_t(5), t);
        pgas::fence(ctx);  // the set (no reply) before the fetching ops
        const std::uint64_t fetched = pgas::atomic_fetch(ctx, word, t);
        expect(fetched == 5, "atomic_set/fetch", k, fetched, 5);
        std::uint64_t old = pgas::atomic_fetch_add(ctx, word, std::uint64_t(3), t);
        expect(old == 5, "atomic_fetch_add", k, old, 5);
        old = pgas::atomic_swap(ctx, word, std::uint64_t(100), t);
        expect(old == 8, "atomic_swap", k, old, 8);
        old = pgas::atomic_compare_swap(ctx, word, std::uint64_t(100), std::uint64_t(7), t);
        expect(old == 100, "atomic_compare_swap (hit)", k, old, 100);
        old = pgas::atomic_compare_swap(ctx, word, std::uint64_t(1), std::uint64_t(9), t);
        expect(old == 7, "atomic_compare_swap (miss)", k, old, 7);
        old = pgas::atomic_fetch_or(ctx, word, std::uint64_t(0xF0), t);
        expect(old == 7, "atomic_fetch_or", k, old, 7);
        old = pgas::atomic_fetch_and(ctx, word, std::uint64_t(0x3F), t);
        expect(old == 0xF7, "atomic_fetch_and", k, old, 0xF7);
        old = pgas::atomic_fetch_xor(ctx, word, std::uint64_t(0x1), t);
        expect(old == 0x37, "atomic_fetch_xor", k, old, 0x37);
        old = pgas::atomic_fetch_inc(ctx, word, t);
        expect(old == 0x36, "atomic_fetch_inc", k, old, 0x36);
        pgas::atomic_inc(ctx, word, t);
        pgas::atomic_add(ctx, word, std::uint64_t(1) << 40, t);
        pgas::atomic_set(ctx, b.w32 + k, std::uint32_t(0xFFFFFFF0u), t);
        pgas::fence(ctx);
        const std::uint32_t old32 = pgas::atomic_fetch_add(ctx, b.w32 + k, std::uint32_t(0x20), t);
        expect(old32 == 0xFFFFFFF0u, "atomic_fetch_add 32-bit", k, old32, 0xFFFFFFF0u);
        pgas::atomic_set(ctx, b.wf64 + k, 1.5, t);
        pgas::fence(ctx);
        const double oldf = pgas::atomic_fetch_add(ctx, b.wf64 + k, 0.25 * (me + 1), t);
        expect(oldf == 1.5, "atomic_fetch_add double", k, (unsigned long long)(oldf * 1000), 1500);
    }
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k) {
        const int from = target[k];
        expect(*ctx.local(b.w64 + k) == 0x38 + (std::uint64_t(1) << 40), "atomics' final word", k, *ctx.local(b.w64 + k),
               0x38 + (std::uint64_t(1) << 40));
        expect(*ctx.local(b.w32 + k) == 0x10u, "32-bit wrap-around", k, *ctx.local(b.w32 + k), 0x10);
        expect(*ctx.local(b.wf64 + k) == 1.5 + 0.25 * (from + 1), "double add", k,
               (unsigned long long)(*ctx.local(b.wf64 + k) * 1000), (unsigned long long)((1.5 + 0.25 * (from + 1)) * 1000));
    }
    pgas::barrier_all(ctx);

}

// The ordering and synchronisation checks: signals, put_signal, fence, quiet
// across the paths, barriers and the collectives. `near_ctx` and `far_ctx`
// are the route's two transports on their own (the quiet check tells each
// target through the path its data did not take).
template <class Ctx, class NearCtx, class FarCtx>
PGAS_HD void run_sync(const Ctx& ctx, const NearCtx& near_ctx, const FarCtx& far_ctx, const buffers& b) {
    const plan p = make_plan(ctx.my_pe(), b);
    const int me = p.me;
    const reporter& expect = p.expect;
    const int* target = p.target;
    std::uint8_t* const* data = p.data;
    std::uint8_t* const* tiny = p.tiny;

    // signal add and set
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < 2; ++i) pgas::signal(ctx, b.sig + k, std::uint64_t(me + 1), pgas::signal_op::add, target[k]);
    for (int k = 0; k < 2; ++k) {
        const std::uint64_t want = 2 * std::uint64_t(target[k] + 1);
        const std::uint64_t seen = pgas::signal_wait_until(ctx, b.sig + k, pgas::cmp::eq, want);
        expect(seen == want, "signal add", k, seen, want);
    }
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k) pgas::signal(ctx, b.sig + k, 1000 + std::uint64_t(me), pgas::signal_op::set, target[k]);
    for (int k = 0; k < 2; ++k) pgas::signal_wait_until(ctx, b.sig + k, pgas::cmp::eq, 1000 + std::uint64_t(target[k]));
    pgas::barrier_all(ctx);

    // put_signal (big, add) and put_signal_nbi (small, set): the data is there when the signal is
    for (int k = 0; k < 2; ++k) {
        fill(data[k], me, target[k], 5, big);
        fill(tiny[k], me, target[k], 105, small);
        pgas::put_signal(ctx, slot(b.recv, k, big), data[k], big, b.psig + k, 1, pgas::signal_op::add, target[k]);
        pgas::put_signal_nbi(ctx, slot(b.recv_small, k, 64), tiny[k], small, b.psig + 2 + k, 7, pgas::signal_op::set,
                             target[k]);
    }
    for (int k = 0; k < 2; ++k) {
        pgas::signal_wait_until(ctx, b.psig + k, pgas::cmp::ge, std::uint64_t(1));
        expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, 5, big, "put_signal data at the signal", k);
        pgas::signal_wait_until(ctx, b.psig + 2 + k, pgas::cmp::eq, std::uint64_t(7));
        expect_bytes(expect, ctx.local(slot(b.recv_small, k, 64)), target[k], me, 105, small,
                     "put_signal_nbi data at the signal", k);
    }
    pgas::quiet(ctx);  // the _nbi sources may go
    pgas::barrier_all(ctx);

    // fence: data put before it is there when the flag set after it is
    for (std::uint64_t round = 1; round <= 8; ++round) {
        const int tag = 10 + int(round);
        for (int k = 0; k < 2; ++k) {
            fill(data[k], me, target[k], tag, big);
            pgas::put_nbi(ctx, slot(b.recv, k, big), data[k], big, target[k]);
        }
        pgas::fence(ctx);
        for (int k = 0; k < 2; ++k) pgas::atomic_set(ctx, b.flag + k, round, target[k]);
        for (int k = 0; k < 2; ++k) {
            pgas::wait_until(ctx, b.flag + k, pgas::cmp::ge, round);
            expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, tag, big, "put_nbi, fence, flag", k);
        }
        pgas::barrier_all(ctx);
    }

    // quiet: complete on both paths. The target is told through the other
    // path (far targets by the near transport, near ones by the far one), so
    // only quiet can have put the data there first.
    for (int k = 0; k < 2; ++k) {
        fill(data[k], me, target[k], 30, big);
        pgas::put_nbi(ctx, slot(b.recv, k, big), data[k], big, target[k]);
    }
    pgas::quiet(ctx);
    pgas::signal(far_ctx, b.qsig + 0, 1, pgas::signal_op::set, target[0]);
    pgas::signal(near_ctx, b.qsig + 1, 1, pgas::signal_op::set, target[1]);
    for (int k = 0; k < 2; ++k) {
        pgas::signal_wait_until(ctx, b.qsig + k, pgas::cmp::eq, std::uint64_t(1));
        expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, 30, big, "put_nbi, quiet, other path", k);
    }
    pgas::quiet(far_ctx);
    pgas::quiet(near_ctx);
    pgas::barrier_all(ctx);

    // barrier: completes every PE's puts on both paths
    for (int k = 0; k < 2; ++k) {
        fill(data[k], me, target[k], 40, big);
        pgas::put_nbi(ctx, slot(b.recv, k, big), data[k], big, target[k]);
    }
    pgas::barrier_all(ctx);
    for (int k = 0; k < 2; ++k)
        expect_bytes(expect, ctx.local(slot(b.recv, k, big)), target[k], me, 40, big, "put_nbi then barrier", k);
    for (int i = 0; i < 20; ++i) pgas::barrier_all(ctx);
    for (int i = 0; i < 20; ++i) pgas::sync_all(ctx);

    // collectives over the route (put/get path: the far peers are not mapped)
    const std::size_t counts[4] = {1, 7, 1000, max_coll};
    for (std::size_t count : counts) {
        std::uint64_t* src = ctx.local(b.coll_src);
        std::uint64_t* dst = ctx.local(b.coll_dst);
        for (std::size_t i = 0; i < count; ++i) src[i] = std::uint64_t(me) * 1000003 + i * 3;
        pgas::allreduce(ctx, ctx.world_team(), b.coll_dst, b.coll_src, count, pgas::op::sum);
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint64_t want = (0 + 1 + 2 + 3) * std::uint64_t(1000003) + 4 * i * 3;
            if (dst[i] != want) {
                expect(false, "allreduce sum", 1, dst[i], want);
                break;
            }
        }
        for (int root = 0; root < 4; ++root) {
            for (std::size_t i = 0; i < count; ++i) src[i] = std::uint64_t(root + 1) * 7777 + i;
            pgas::broadcast(ctx, ctx.world_team(), b.coll_dst, b.coll_src, count, root);
            for (std::size_t i = 0; i < count; ++i)
                if (dst[i] != std::uint64_t(root + 1) * 7777 + i) {
                    expect(false, "broadcast", 1, dst[i], std::uint64_t(root + 1) * 7777 + i);
                    break;
                }
        }
        pgas::barrier_all(ctx);
    }
    // a team of far peers only: the columns {0, 2} and {1, 3}
    for (int i = 0; i < 3; ++i) ctx.local(b.one)[i] = double(me) + 0.5 * i;
    pgas::allreduce(ctx, b.column, b.out, b.one, 3, pgas::op::max);
    for (int i = 0; i < 3; ++i)
        expect(ctx.local(b.out)[i] == double(me % 2 + 2) + 0.5 * i, "allreduce max over far peers", 1,
               (unsigned long long)ctx.local(b.out)[i], (unsigned long long)(me % 2 + 2));
    pgas::barrier_all(ctx);
    pgas::quiet(far_ctx);
}

// Every check, in order, on this PE's thread: run_data, then run_sync (two
// functions so that a GPU build can put them in two kernels, and two
// translation units: as one kernel it was the longest step of the build).
template <class Ctx, class NearCtx, class FarCtx>
PGAS_HD void run_all(const Ctx& ctx, const NearCtx& near_ctx, const FarCtx& far_ctx, const buffers& b) {
    run_data(ctx, b);
    run_sync(ctx, near_ctx, far_ctx, b);
}

// Allocates every symmetric buffer of `buffers` (collective; scratch,
// failures and column are the caller's).
template <class World>
buffers allocate(World& w) {
    buffers b{};
    b.recv = w.template alloc<std::uint8_t>(2 * big);
    b.recv_small = w.template alloc<std::uint8_t>(2 * 64);
    b.src_area = w.template alloc<std::uint8_t>(big);
    b.sig = w.template alloc<std::uint64_t>(2);
    b.psig = w.template alloc<std::uint64_t>(4);
    b.flag = w.template alloc<std::uint64_t>(2);
    b.qsig = w.template alloc<std::uint64_t>(2);
    b.p64 = w.template alloc<std::uint64_t>(2);
    b.p16 = w.template alloc<std::uint16_t>(2);
    b.ptri = w.template alloc<triple>(2);
    b.w64 = w.template alloc<std::uint64_t>(2);
    b.w32 = w.template alloc<std::uint32_t>(2);
    b.wf64 = w.template alloc<double>(2);
    b.coll_src = w.template alloc<std::uint64_t>(max_coll);
    b.coll_dst = w.template alloc<std::uint64_t>(max_coll);
    b.one = w.template alloc<double>(3);
    b.out = w.template alloc<double>(3);
    return b;
}

}  // namespace route_checks
