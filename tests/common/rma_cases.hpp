// The one-sided puts' and gets' behaviour, written once over the device API as bodies that host code and kernels
// both run: put/get and their _nbi forms for every calling group, p/g of every element size, strided iput/iget; each
// transport's test binary registers these cases for its launchers with PGAS_TEST_RMA_CASES (tests/common/support.hpp
// says what a launcher is).
#pragma once

#include "support.hpp"

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace test::rma_cases {

// Sizes in bytes around every transport's limits: ibgda's 12-byte inline put, 28-byte inline pieces and 64-byte
// scratch pieces, the proxy's 48-byte inline payload, a 4 KiB bounce buffer, odd sizes that are a multiple of no
// vector width, and one over the 256 KiB of a default bounce buffer (the case's four buffers of it fit beside the
// collectives' share of the tests' 16 MiB heap; 1 MiB ones do not).
inline constexpr std::size_t max_size = (std::size_t{1} << 19) + 3;
// (a function: a kernel cannot index a namespace-scope constexpr array)
PGAS_HD constexpr std::size_t size_at(int i) {
    constexpr std::size_t sizes[] = {1, 8, 12, 13, 28, 29, 48, 49, 64, 65, 4096, 4127, max_size};
    return sizes[i];
}
inline constexpr int n_sizes = 13;

// Where a put lands in the target's buffer and where a get reads the source's, with guard bytes around.
inline constexpr std::size_t put_at = 3, get_at = 5, guard = 8;
inline constexpr std::uint8_t untouched = 0xa5;

PGAS_HD inline std::uint8_t byte_of(int pe, std::size_t i, std::uint64_t round) {
    return std::uint8_t(mix(std::uint64_t(pe), i, round));
}

struct put_get_buffers {
    pgas::symmetric_ptr<std::uint8_t> inbox, outbox, source, target;
};

// One round of put then get, blocking and then _nbi, of `bytes` from and to private memory or the symmetric heap
// (registered: one RDMA op or zero-copy where the transport has it). Each PE puts to its right neighbour's inbox at
// an offset and gets its neighbours' outboxes at another: the bytes land where they should, the guard bytes around
// stay untouched, a blocking put's source is reusable when it returns, an _nbi op is complete after quiet.
template <class G, class Ctx>
PGAS_HD void put_get_round(const Ctx& ctx, const put_get_buffers& b, std::uint8_t* source, std::uint8_t* target,
                   std::size_t bytes, std::uint64_t round) {
    const int me = ctx.my_pe(), n = ctx.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    std::uint8_t* inbox = ctx.local(b.inbox);
    std::uint8_t* outbox = ctx.local(b.outbox);
    const std::size_t span = put_at + bytes + guard;
    const auto landed = [&](std::uint64_t r) {
        return [=](std::size_t i) {
            return i < put_at || i >= put_at + bytes ? untouched : byte_of(left, i - put_at, r);
        };
    };

    for (std::size_t i = 0; i < span; ++i) inbox[i] = untouched;
    for (std::size_t i = 0; i < get_at + bytes; ++i) outbox[i] = byte_of(me, i, round + 1);
    for (std::size_t i = 0; i < bytes; ++i) source[i] = byte_of(me, i, round);
    pgas::barrier_all<G>(ctx);
    pgas::put<G>(ctx, b.inbox + put_at, source, bytes, right);
    for (std::size_t i = 0; i < bytes; ++i) source[i] = 0xee;  // reusable at once
    pgas::get<G>(ctx, target, b.outbox + get_at, bytes, left);
    PGAS_TEST_REQUIRE(first_wrong(target, bytes, [&](std::size_t i) { return byte_of(left, i + get_at, round + 1); }) == bytes);
    pgas::barrier_all<G>(ctx);
    PGAS_TEST_REQUIRE(first_wrong(inbox, span, landed(round)) == span);
    pgas::barrier_all<G>(ctx);  // before the left neighbour's put_nbi rewrites my inbox

    for (std::size_t i = 0; i < bytes; ++i) source[i] = byte_of(me, i, round + 2);
    pgas::put_nbi<G>(ctx, b.inbox + put_at, source, bytes, right);
    pgas::get_nbi<G>(ctx, target, b.outbox + get_at, bytes, right);
    pgas::quiet<G>(ctx);
    PGAS_TEST_REQUIRE(first_wrong(target, bytes, [&](std::size_t i) { return byte_of(right, i + get_at, round + 1); }) == bytes);
    pgas::barrier_all<G>(ctx);
    PGAS_TEST_REQUIRE(first_wrong(inbox, span, landed(round + 2)) == span);
    pgas::barrier_all<G>(ctx);
}

// Every group, every size, from and to private memory and the heap.
struct put_get_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const put_get_buffers& b) const {
        const scratch<std::uint8_t> private_source(max_size), private_target(max_size);
        std::uint64_t round = 0;
        for_each_body_group(body_groups{}, [&](auto tag) {
            PGAS_TEST_INFO("group " << std::string(group_name<typename decltype(tag)::type>()));
            for (int size = 0; size < n_sizes; ++size) {
                const std::size_t bytes = size_at(size);
                PGAS_TEST_CAPTURE(bytes);
                for (bool heap : {false, true}) {
                    PGAS_TEST_CAPTURE(heap);
                    put_get_round<typename decltype(tag)::type>(
                        ctx, b, heap ? ctx.local(b.source) : private_source.data(),
                        heap ? ctx.local(b.target) : private_target.data(), bytes, round += 3);
                }
            }
        });
    }
};
template <class Launch>
void put_get(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        const std::size_t n = max_size + 64;
        return put_get_buffers{w.alloc<std::uint8_t>(n), w.alloc<std::uint8_t>(n), w.alloc<std::uint8_t>(n),
                               w.alloc<std::uint8_t>(n)};
    }, put_get_body{});
}

// 8 and 16 bytes, the larger above ibgda's 12-byte inline limit of p.
struct pair {
    int a;
    float b;
    bool operator==(const pair&) const = default;
    friend std::ostream& operator<<(std::ostream& os, const pair& v) { return os << '{' << v.a << ", " << v.b << '}'; }
};
struct triple {
    int a;
    float b;
    double c;
    bool operator==(const triple&) const = default;
    friend std::ostream& operator<<(std::ostream& os, const triple& v) {
        return os << '{' << v.a << ", " << v.b << ", " << v.c << '}';
    }
};

struct element_buffers {
    pgas::symmetric_ptr<std::int8_t> i8;
    pgas::symmetric_ptr<std::int16_t> i16;
    pgas::symmetric_ptr<float> f32;
    pgas::symmetric_ptr<std::uint64_t> u64;
    pgas::symmetric_ptr<double> f64;
    pgas::symmetric_ptr<pair> pairs;
    pgas::symmetric_ptr<triple> triples;
};

// Every PE p's its own slot of every PE, in every element size: each PE then holds every slot, and g reads every
// slot from every PE.
struct p_g_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const element_buffers& b) const {
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const auto i8 = [](int pe) { return std::int8_t(pe - 100); };
        const auto i16 = [](int pe) { return std::int16_t(pe * 300 - 7); };
        const auto f32 = [](int pe) { return pe * 0.75f + 1; };
        const auto u64 = [](int pe) { return (std::uint64_t(pe) << 40) + 5; };
        const auto f64 = [](int pe) { return pe + 0.25; };
        const auto pr = [](int pe) { return pair{pe, pe * 0.5f}; };
        const auto tr = [](int pe) { return triple{-pe, pe * 1.5f, pe * 2.0}; };
        for (int pe = 0; pe < n; ++pe) {
            pgas::p(ctx, b.i8 + me, i8(me), pe);
            pgas::p(ctx, b.i16 + me, i16(me), pe);
            pgas::p(ctx, b.f32 + me, f32(me), pe);
            pgas::p(ctx, b.u64 + me, u64(me), pe);
            pgas::p(ctx, b.f64 + me, f64(me), pe);
            pgas::p(ctx, b.pairs + me, pr(me), pe);
            pgas::p(ctx, b.triples + me, tr(me), pe);
        }
        pgas::barrier_all(ctx);
        for (int pe = 0; pe < n; ++pe) {
            PGAS_TEST_CAPTURE(pe);
            PGAS_TEST_REQUIRE(ctx.local(b.i8)[pe] == i8(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.i16)[pe] == i16(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.f32)[pe] == f32(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.u64)[pe] == u64(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.f64)[pe] == f64(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.pairs)[pe] == pr(pe));
            PGAS_TEST_REQUIRE(ctx.local(b.triples)[pe] == tr(pe));
            const int from = (me + pe) % n;
            PGAS_TEST_CAPTURE(from);
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.i8 + pe, from) == i8(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.i16 + pe, from) == i16(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.f32 + pe, from) == f32(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.u64 + pe, from) == u64(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.f64 + pe, from) == f64(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.pairs + pe, from) == pr(pe));
            PGAS_TEST_REQUIRE(pgas::g(ctx, b.triples + pe, from) == tr(pe));
        }
        pgas::barrier_all(ctx);
    }
};
template <class Launch>
void p_g(const Launch& launch) {
    on_each_world(launch, [](pgas::world& w) {
        const auto n = std::size_t(w.n_pes());
        return element_buffers{w.alloc<std::int8_t>(n), w.alloc<std::int16_t>(n), w.alloc<float>(n),
                               w.alloc<std::uint64_t>(n), w.alloc<double>(n), w.alloc<pair>(n), w.alloc<triple>(n)};
    }, p_g_body{});
}

struct strided_buffers {
    pgas::symmetric_ptr<std::uint64_t> into, from, source, target;
};

// iput from private memory or the heap to the right neighbour at stride 3 from stride 2, then iget of a third of
// the left neighbour's elements at stride 3 into stride 2: every strided element arrives, nothing between them
// changes.
inline constexpr std::size_t strided_count = 37;
inline constexpr std::ptrdiff_t wide = 3, narrow = 2;
struct iput_iget_body {
    template <class Ctx>
    PGAS_HD void operator()(const Ctx& ctx, const strided_buffers& b) const {
        constexpr std::size_t count = strided_count;
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;
        const scratch<std::uint64_t> private_source(count * narrow), private_target(count * narrow);
        std::uint64_t round = 0;
        for_each_body_group(body_groups{}, [&](auto tag) {
            using G = typename decltype(tag)::type;
            PGAS_TEST_INFO("group " << std::string(group_name<G>()));
            for (bool heap : {false, true}) {
                PGAS_TEST_CAPTURE(heap);
                ++round;
                std::uint64_t* source = heap ? ctx.local(b.source) : private_source.data();
                std::uint64_t* target = heap ? ctx.local(b.target) : private_target.data();
                for (std::size_t i = 0; i < count * narrow; ++i) source[i] = mix(std::uint64_t(me), i, round);
                for (std::size_t i = 0; i < count * narrow; ++i) target[i] = 7;
                for (std::size_t i = 0; i < count * wide; ++i) ctx.local(b.into)[i] = 0;
                for (std::size_t i = 0; i < count * wide; ++i)
                    ctx.local(b.from)[i] = mix(std::uint64_t(me), i, round + 100);
                pgas::barrier_all<G>(ctx);
                pgas::iput<G>(ctx, b.into, source, wide, narrow, count, right);
                pgas::barrier_all<G>(ctx);
                PGAS_TEST_REQUIRE(first_wrong(ctx.local(b.into), count * wide, [&](std::size_t i) {
                                      return i % wide ? 0 : mix(std::uint64_t(left), i / wide * narrow, round);
                                  }) == count * wide);
                pgas::iget<G>(ctx, target, b.from, narrow, wide, count / 3, left);
                PGAS_TEST_REQUIRE(first_wrong(target, count * narrow, [&](std::size_t i) {
                                      return i % narrow || i / narrow >= count / 3
                                                 ? 7
                                                 : mix(std::uint64_t(left), i / narrow * wide, round + 100);
                                  }) == count * narrow);
                pgas::barrier_all<G>(ctx);
            }
        });
    }
};
template <class Launch>
void iput_iget(const Launch& launch) {
    constexpr std::size_t count = strided_count;
    on_each_world(launch, [](pgas::world& w) {
        return strided_buffers{w.alloc<std::uint64_t>(count * wide), w.alloc<std::uint64_t>(count * wide),
                               w.alloc<std::uint64_t>(count * narrow), w.alloc<std::uint64_t>(count * narrow)};
    }, iput_iget_body{});
}

}  // namespace test::rma_cases

// The cases, each registered once per launcher type given to PGAS_TEST_RMA_CASES.
TEST_CASE_TEMPLATE_DEFINE("rma: put, get, put_nbi and get_nbi of every group move every byte to the right place", Launch,
                          rma_put_get) {
    test::rma_cases::put_get(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("rma: p and g move single elements of every size", Launch, rma_p_g) {
    test::rma_cases::p_g(Launch{});
}
TEST_CASE_TEMPLATE_DEFINE("rma: iput and iget move every strided element and nothing between them", Launch,
                          rma_strided) {
    test::rma_cases::iput_iget(Launch{});
}

// Registers every RMA case for each launcher type (one test binary's translation unit does this once).
#define PGAS_TEST_RMA_CASES(...)                          \
    TEST_CASE_TEMPLATE_INVOKE(rma_put_get, __VA_ARGS__);  \
    TEST_CASE_TEMPLATE_INVOKE(rma_p_g, __VA_ARGS__);      \
    TEST_CASE_TEMPLATE_INVOKE(rma_strided, __VA_ARGS__)
