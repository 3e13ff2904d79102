// One process of a 4-PE route<host, libfabric> world (started by pgasrun): every op to a near and a far peer, checked.
//
//   pgasrun -n 4 pgas_route_worker <provider>     ("tcp+ofi_rxm" for tcp;ofi_rxm)
//
// Near pairs {0,1} and {2,3} reach each other through the host transport
// (the node's shared-memory heap); PE p reaches p ^ 1 near and (p + 2) % 4
// far, through libfabric. Each PE's near and far targets are also the PEs
// that write to it on that path, so every receive slot has one writer.
// Exits non-zero with "route worker: ..." on a wrong value or an error.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>
#include <pgas/host/route/context.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

int failures = 0;
const char* path_name[2] = {"near", "far"};

void expect(bool ok, const char* what, int me, int k, unsigned long long got, unsigned long long want) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "route worker: PE %d: %s (%s peer): got %llu, expected %llu\n", me, what, path_name[k], got,
                 want);
}

// Byte i of what PE `from` sends to PE `to` in phase `tag`.
std::uint8_t pattern(int from, int to, int tag, std::size_t i) {
    return std::uint8_t((from * 131 + to * 31 + tag * 7 + i * 13 + (i >> 8) * 3) & 0xff);
}

std::vector<std::uint8_t> bytes_of(int from, int to, int tag, std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = pattern(from, to, tag, i);
    return v;
}

// Byte for byte; reports the first difference.
void expect_bytes(const std::uint8_t* got, int from, int to, int tag, std::size_t n, const char* what, int me, int k) {
    for (std::size_t i = 0; i < n; ++i)
        if (got[i] != pattern(from, to, tag, i)) {
            std::fprintf(stderr, "route worker: PE %d: %s (%s peer %d): byte %zu of %zu differs\n", me, what,
                         path_name[k], from, i, n);
            expect(false, what, me, k, got[i], pattern(from, to, tag, i));
            return;
        }
}

struct triple {
    std::uint64_t a;
    std::uint32_t b;
    std::uint16_t c;
    std::uint8_t d[10];
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: pgas_route_worker <provider>\n");
        return 2;
    }
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        auto w = pgas::world::init(wo);
        if (w.n_pes() != 4) {
            std::fprintf(stderr, "route worker: needs 4 PEs, got %d\n", w.n_pes());
            return 2;
        }
        pgas::libfabric_options fo;
        fo.provider = argv[1];
        for (char& c : fo.provider)
            if (c == '+') c = ';';
        fo.iface = "lo";
        pgas::libfabric_domain fabric(w, fo);
        const int me = w.my_pe();
        const auto ctx = pgas::route_context<pgas::host>(w, fabric.context(), pgas::pe_range{me / 2 * 2, 2});
        static_assert(std::is_same_v<decltype(ctx), const pgas::device::context<pgas::route<pgas::host, pgas::libfabric>>>);
        const auto host_ctx = w.context<pgas::host>();
        const auto far_ctx = fabric.context();
        const int target[2] = {me ^ 1, (me + 2) % 4};
        // The node's PEs (all four here) and the factory's checks.
        const pgas::pe_range node = pgas::route_node_pes(w);
        expect(node.first == 0 && node.count == 4, "route_node_pes", me, 0, (unsigned long long)node.count, 4);
        // PGAS_NODE_SIZE splits the host into virtual nodes of consecutive PEs (issue 18); a bad value is refused.
        setenv("PGAS_NODE_SIZE", "2", 1);
        const pgas::pe_range pair = pgas::route_node_pes(w);
        expect(pair.first == me / 2 * 2 && pair.count == 2, "route_node_pes with PGAS_NODE_SIZE=2", me, 0,
               (unsigned long long)pair.first, (unsigned long long)(me / 2 * 2));
        setenv("PGAS_NODE_SIZE", "5", 1);
        try {
            (void)pgas::route_node_pes(w);
            expect(false, "PGAS_NODE_SIZE=5 in a world of 4 accepted", me, 0, 0, 1);
        } catch (const pgas::error& e) {
            expect(std::string(e.what()).find("PGAS_NODE_SIZE on PE") != std::string::npos &&
                       std::string(e.what()).find("expected PEs per node in [1, 4], got '5'") != std::string::npos,
                   "PGAS_NODE_SIZE=5's error names the variable and value", me, 0, 0, 1);
        }
        unsetenv("PGAS_NODE_SIZE");
        try {
            (void)pgas::route_context<pgas::host>(w, fabric.context(), pgas::pe_range{3, 2});
            expect(false, "route_context with near PEs beyond the world", me, 0, 0, 1);
        } catch (const pgas::error& e) {
            expect(e.code() == pgas::errc::pe_out_of_range, "route_context's error code", me, 0, int(e.code()),
                   int(pgas::errc::pe_out_of_range));
        }
        expect(ctx.transport.is_near(target[0]) && !ctx.transport.is_near(target[1]), "near range", me, 0, 0, 1);
        expect(ctx.peer(pgas::symmetric_ptr<int>{}, target[0]) != nullptr &&
                   ctx.peer(pgas::symmetric_ptr<int>{}, target[1]) == nullptr,
               "ctx.peer is Near's pointer for near peers only", me, 0, 1, 0);
        expect(ctx.transport.near_address(0, target[0]) != nullptr && ctx.transport.near_address(0, target[1]) == nullptr,
               "near_address", me, 1, 0, 1);

        constexpr std::size_t big = (std::size_t{64} << 10) + 5;  // not inline: staged, chunked by the proxy
        constexpr std::size_t small = 13;                          // inline in a proxy command
        auto recv = w.alloc<std::uint8_t>(2 * big);
        auto recv_small = w.alloc<std::uint8_t>(2 * 64);
        auto src_area = w.alloc<std::uint8_t>(big);
        auto sig = w.alloc<std::uint64_t>(2);
        auto psig = w.alloc<std::uint64_t>(4);
        auto flag = w.alloc<std::uint64_t>(2);
        auto qsig = w.alloc<std::uint64_t>(2);
        auto p64 = w.alloc<std::uint64_t>(2);
        auto p16 = w.alloc<std::uint16_t>(2);
        auto ptri = w.alloc<triple>(2);
        auto w64 = w.alloc<std::uint64_t>(2);
        auto w32 = w.alloc<std::uint32_t>(2);
        auto wf64 = w.alloc<double>(2);
        auto slot = [](pgas::symmetric_ptr<std::uint8_t> base, int k, std::size_t size) {
            return base + std::ptrdiff_t(k) * std::ptrdiff_t(size);
        };

        // put (blocking), big and inline-small
        {
            std::vector<std::uint8_t> data[2], tiny[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], 1, big);
                tiny[k] = bytes_of(me, target[k], 101, small);
                pgas::put(ctx, slot(recv, k, big), data[k].data(), big, target[k]);
                pgas::put(ctx, slot(recv_small, k, 64), tiny[k].data(), small, target[k]);
            }
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k) {
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, 1, big, "put", me, k);
                expect_bytes(ctx.local(slot(recv_small, k, 64)), target[k], me, 101, small, "put (small)", me, k);
            }
            pgas::barrier_all(ctx);
        }
        // put_nbi + quiet
        {
            std::vector<std::uint8_t> data[2], tiny[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], 2, big);
                tiny[k] = bytes_of(me, target[k], 102, small);
                pgas::put_nbi(ctx, slot(recv, k, big), data[k].data(), big, target[k]);
                pgas::put_nbi(ctx, slot(recv_small, k, 64), tiny[k].data(), small, target[k]);
            }
            pgas::quiet(ctx);
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k) {
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, 2, big, "put_nbi", me, k);
                expect_bytes(ctx.local(slot(recv_small, k, 64)), target[k], me, 102, small, "put_nbi (small)", me, k);
            }
            pgas::barrier_all(ctx);
        }
        // get and get_nbi (big, and small at an odd offset) of what each owner wrote into its own area
        {
            const auto mine = bytes_of(me, -1, 3, big);
            std::memcpy(ctx.local(src_area), mine.data(), big);
            pgas::sync_all(ctx);
            for (int k = 0; k < 2; ++k) {
                std::vector<std::uint8_t> got(big), got_nbi(big), tiny(small);
                pgas::get(ctx, got.data(), src_area, big, target[k]);
                expect_bytes(got.data(), target[k], -1, 3, big, "get", me, k);
                pgas::get(ctx, tiny.data(), src_area + 5, small, target[k]);
                const auto want = bytes_of(target[k], -1, 3, big);
                expect(std::memcmp(tiny.data(), want.data() + 5, small) == 0, "get (small, offset 5)", me, k, tiny[0],
                       want[5]);
                pgas::get_nbi(ctx, got_nbi.data(), src_area, big, target[k]);
                pgas::quiet(ctx);
                expect_bytes(got_nbi.data(), target[k], -1, 3, big, "get_nbi", me, k);
            }
            pgas::barrier_all(ctx);
        }
        // p and g: 8-byte, 2-byte and a 24-byte struct
        {
            for (int k = 0; k < 2; ++k) {
                pgas::p(ctx, p64 + k, std::uint64_t(me) * 1000003 + 17 * std::uint64_t(k), target[k]);
                pgas::p(ctx, p16 + k, std::uint16_t(0xA000 + me * 16 + k), target[k]);
                triple t{};
                t.a = 0x0102030405060708ull * std::uint64_t(me + 1);
                t.b = 0xDEAD0000u + std::uint32_t(me);
                t.c = std::uint16_t(k + 7);
                for (int i = 0; i < 10; ++i) t.d[i] = pattern(me, target[k], 4, std::size_t(i));
                pgas::p(ctx, ptri + k, t, target[k]);
            }
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k) {
                const int from = target[k];
                expect(*ctx.local(p64 + k) == std::uint64_t(from) * 1000003 + 17 * std::uint64_t(k), "p 8 bytes", me,
                       k, *ctx.local(p64 + k), std::uint64_t(from) * 1000003 + 17 * std::uint64_t(k));
                expect(*ctx.local(p16 + k) == std::uint16_t(0xA000 + from * 16 + k), "p 2 bytes", me, k,
                       *ctx.local(p16 + k), 0xA000 + from * 16 + k);
                const triple got = *ctx.local(ptri + k);
                expect(got.a == 0x0102030405060708ull * std::uint64_t(from + 1) &&
                           got.b == 0xDEAD0000u + std::uint32_t(from) && got.c == std::uint16_t(k + 7),
                       "p struct", me, k, got.a, 0x0102030405060708ull * std::uint64_t(from + 1));
                for (int i = 0; i < 10; ++i)
                    expect(got.d[i] == pattern(from, me, 4, std::size_t(i)), "p struct bytes", me, k, got.d[i],
                           pattern(from, me, 4, std::size_t(i)));
                // g reads back what this PE wrote into the target's slot k
                expect(pgas::g(ctx, p64 + k, from) == std::uint64_t(me) * 1000003 + 17 * std::uint64_t(k), "g 8 bytes",
                       me, k, pgas::g(ctx, p64 + k, from), std::uint64_t(me) * 1000003 + 17 * std::uint64_t(k));
                expect(pgas::g(ctx, p16 + k, from) == std::uint16_t(0xA000 + me * 16 + k), "g 2 bytes", me, k,
                       pgas::g(ctx, p16 + k, from), 0xA000 + me * 16 + k);
                const triple back = pgas::g(ctx, ptri + k, from);
                expect(back.a == 0x0102030405060708ull * std::uint64_t(me + 1) && back.d[9] == pattern(me, from, 4, 9),
                       "g struct", me, k, back.a, 0x0102030405060708ull * std::uint64_t(me + 1));
            }
            pgas::barrier_all(ctx);
        }
        // atomics: each PE owns word k of its path-k target (one writer per word)
        {
            for (int k = 0; k < 2; ++k) {
                const int t = target[k];
                const auto word = w64 + k;
                pgas::atomic_set(ctx, word, std::uint64_t(5), t);
                pgas::fence(ctx);  // the set (no reply) before the fetching ops
                expect(pgas::atomic_fetch(ctx, word, t) == 5, "atomic_set/fetch", me, k, pgas::atomic_fetch(ctx, word, t), 5);
                expect(pgas::atomic_fetch_add(ctx, word, std::uint64_t(3), t) == 5, "atomic_fetch_add", me, k, 0, 5);
                expect(pgas::atomic_swap(ctx, word, std::uint64_t(100), t) == 8, "atomic_swap", me, k, 0, 8);
                expect(pgas::atomic_compare_swap(ctx, word, std::uint64_t(100), std::uint64_t(7), t) == 100,
                       "atomic_compare_swap (hit)", me, k, 0, 100);
                expect(pgas::atomic_compare_swap(ctx, word, std::uint64_t(1), std::uint64_t(9), t) == 7,
                       "atomic_compare_swap (miss)", me, k, 0, 7);
                expect(pgas::atomic_fetch_or(ctx, word, std::uint64_t(0xF0), t) == 7, "atomic_fetch_or", me, k, 0, 7);
                expect(pgas::atomic_fetch_and(ctx, word, std::uint64_t(0x3F), t) == 0xF7, "atomic_fetch_and", me, k, 0, 0xF7);
                expect(pgas::atomic_fetch_xor(ctx, word, std::uint64_t(0x1), t) == 0x37, "atomic_fetch_xor", me, k, 0, 0x37);
                expect(pgas::atomic_fetch_inc(ctx, word, t) == 0x36, "atomic_fetch_inc", me, k, 0, 0x36);
                pgas::atomic_inc(ctx, word, t);
                pgas::atomic_add(ctx, word, std::uint64_t(1) << 40, t);
                pgas::atomic_set(ctx, w32 + k, std::uint32_t(0xFFFFFFF0u), t);
                pgas::fence(ctx);
                expect(pgas::atomic_fetch_add(ctx, w32 + k, std::uint32_t(0x20), t) == 0xFFFFFFF0u,
                       "atomic_fetch_add 32-bit", me, k, 0, 0xFFFFFFF0u);
                pgas::atomic_set(ctx, wf64 + k, 1.5, t);
                pgas::fence(ctx);
                expect(pgas::atomic_fetch_add(ctx, wf64 + k, 0.25 * (me + 1), t) == 1.5, "atomic_fetch_add double", me,
                       k, 0, 1);
            }
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k) {
                const int from = target[k];
                expect(*ctx.local(w64 + k) == 0x38 + (std::uint64_t(1) << 40), "atomics' final word", me, k,
                       *ctx.local(w64 + k), 0x38 + (std::uint64_t(1) << 40));
                expect(*ctx.local(w32 + k) == 0x10u, "32-bit wrap-around", me, k, *ctx.local(w32 + k), 0x10);
                expect(*ctx.local(wf64 + k) == 1.5 + 0.25 * (from + 1), "double add", me, k,
                       (unsigned long long)(*ctx.local(wf64 + k) * 1000), (unsigned long long)((1.5 + 0.25 * (from + 1)) * 1000));
            }
            pgas::barrier_all(ctx);
        }
        // signal add and set
        {
            for (int k = 0; k < 2; ++k)
                for (int i = 0; i < 2; ++i) pgas::signal(ctx, sig + k, std::uint64_t(me + 1), pgas::signal_op::add, target[k]);
            for (int k = 0; k < 2; ++k) {
                const std::uint64_t want = 2 * std::uint64_t(target[k] + 1);
                expect(pgas::signal_wait_until(ctx, sig + k, pgas::cmp::eq, want) == want, "signal add", me, k, 0, want);
            }
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k) pgas::signal(ctx, sig + k, 1000 + std::uint64_t(me), pgas::signal_op::set, target[k]);
            for (int k = 0; k < 2; ++k)
                pgas::signal_wait_until(ctx, sig + k, pgas::cmp::eq, 1000 + std::uint64_t(target[k]));
            pgas::barrier_all(ctx);
        }
        // put_signal (big, add) and put_signal_nbi (small, set): the data is there when the signal is
        {
            std::vector<std::uint8_t> data[2], tiny[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], 5, big);
                tiny[k] = bytes_of(me, target[k], 105, small);
                pgas::put_signal(ctx, slot(recv, k, big), data[k].data(), big, psig + k, 1, pgas::signal_op::add,
                                 target[k]);
                pgas::put_signal_nbi(ctx, slot(recv_small, k, 64), tiny[k].data(), small, psig + 2 + k, 7,
                                     pgas::signal_op::set, target[k]);
            }
            for (int k = 0; k < 2; ++k) {
                pgas::signal_wait_until(ctx, psig + k, pgas::cmp::ge, std::uint64_t(1));
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, 5, big, "put_signal data at the signal", me, k);
                pgas::signal_wait_until(ctx, psig + 2 + k, pgas::cmp::eq, std::uint64_t(7));
                expect_bytes(ctx.local(slot(recv_small, k, 64)), target[k], me, 105, small,
                             "put_signal_nbi data at the signal", me, k);
            }
            pgas::quiet(ctx);  // the _nbi sources may go
            pgas::barrier_all(ctx);
        }
        // fence: data put before it is there when the flag set after it is
        for (std::uint64_t round = 1; round <= 8; ++round) {
            const int tag = 10 + int(round);
            std::vector<std::uint8_t> data[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], tag, big);
                pgas::put_nbi(ctx, slot(recv, k, big), data[k].data(), big, target[k]);
            }
            pgas::fence(ctx);
            for (int k = 0; k < 2; ++k) pgas::atomic_set(ctx, flag + k, round, target[k]);
            for (int k = 0; k < 2; ++k) {
                pgas::wait_until(ctx, flag + k, pgas::cmp::ge, round);
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, tag, big, "put_nbi, fence, flag", me, k);
            }
            pgas::barrier_all(ctx);
        }
        // quiet: complete on both paths. The target is told through the other
        // path (far targets by a shared-memory signal, near ones by libfabric),
        // so only quiet can have put the data there first.
        {
            std::vector<std::uint8_t> data[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], 30, big);
                pgas::put_nbi(ctx, slot(recv, k, big), data[k].data(), big, target[k]);
            }
            pgas::quiet(ctx);
            pgas::signal(far_ctx, qsig + 0, 1, pgas::signal_op::set, target[0]);
            pgas::signal(host_ctx, qsig + 1, 1, pgas::signal_op::set, target[1]);
            for (int k = 0; k < 2; ++k) {
                pgas::signal_wait_until(ctx, qsig + k, pgas::cmp::eq, std::uint64_t(1));
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, 30, big, "put_nbi, quiet, other path", me, k);
            }
            pgas::quiet(far_ctx);
            pgas::barrier_all(ctx);
        }
        // barrier: completes every PE's puts on both paths
        {
            std::vector<std::uint8_t> data[2];
            for (int k = 0; k < 2; ++k) {
                data[k] = bytes_of(me, target[k], 40, big);
                pgas::put_nbi(ctx, slot(recv, k, big), data[k].data(), big, target[k]);
            }
            pgas::barrier_all(ctx);
            for (int k = 0; k < 2; ++k)
                expect_bytes(ctx.local(slot(recv, k, big)), target[k], me, 40, big, "put_nbi then barrier", me, k);
            for (int i = 0; i < 20; ++i) pgas::barrier_all(ctx);
            for (int i = 0; i < 20; ++i) pgas::sync_all(ctx);
        }
        // collectives over the route (put/get path: the far peers are not mapped; a team of near peers would
        // take the load/store paths, whence the policy)
        static_assert(std::is_same_v<pgas::coll::resolve_policy<pgas::coll::automatic, pgas::route<pgas::host, pgas::libfabric>>,
                                     pgas::coll::load_store_policy>);
        {
            for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{50000}}) {
                auto src = w.alloc<std::uint64_t>(count);
                auto dst = w.alloc<std::uint64_t>(count);
                for (std::size_t i = 0; i < count; ++i) ctx.local(src)[i] = std::uint64_t(me) * 1000003 + i * 3;
                pgas::allreduce(ctx, ctx.world_team(), dst, src, count, pgas::op::sum);
                for (std::size_t i = 0; i < count; ++i) {
                    const std::uint64_t want = (0 + 1 + 2 + 3) * std::uint64_t(1000003) + 4 * i * 3;
                    if (ctx.local(dst)[i] != want) {
                        expect(false, "allreduce sum", me, 1, ctx.local(dst)[i], want);
                        break;
                    }
                }
                for (int root : {0, 1, 2, 3}) {
                    for (std::size_t i = 0; i < count; ++i) ctx.local(src)[i] = std::uint64_t(root + 1) * 7777 + i;
                    pgas::broadcast(ctx, ctx.world_team(), dst, src, count, root);
                    for (std::size_t i = 0; i < count; ++i)
                        if (ctx.local(dst)[i] != std::uint64_t(root + 1) * 7777 + i) {
                            expect(false, "broadcast", me, 1, ctx.local(dst)[i], std::uint64_t(root + 1) * 7777 + i);
                            break;
                        }
                }
                pgas::barrier_all(ctx);
                w.free(dst);
                w.free(src);
            }
            // a team of far peers only: the columns {0, 2} and {1, 3}
            const auto column = w.split_2d(w.team_world(), 2).second;
            auto one = w.alloc<double>(3);
            auto out = w.alloc<double>(3);
            for (int i = 0; i < 3; ++i) ctx.local(one)[i] = double(me) + 0.5 * i;
            pgas::allreduce(ctx, column, out, one, 3, pgas::op::max);
            for (int i = 0; i < 3; ++i)
                expect(ctx.local(out)[i] == double(me % 2 + 2) + 0.5 * i, "allreduce max over far peers", me, 1,
                       (unsigned long long)ctx.local(out)[i], (unsigned long long)(me % 2 + 2));
            pgas::barrier_all(ctx);
        }
        pgas::quiet(far_ctx);
        w.barrier();
        if (failures == 0)
            std::printf("route worker: PE %d of 4 ok on %s (near PEs %d-%d)\n", me, fabric.provider().c_str(),
                        ctx.transport.near_pes().first,
                        ctx.transport.near_pes().first + ctx.transport.near_pes().count - 1);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "route worker: %s\n", e.what());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
