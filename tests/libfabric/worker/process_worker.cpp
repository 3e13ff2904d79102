// One process of a multi-process libfabric world (started by pgasrun): every op through the proxy, checked per PE.
//
//   pgasrun -n N pgas_libfabric_worker <provider>     ("tcp+ofi_rxm" for tcp;ofi_rxm)
//
// Exits non-zero with "libfabric worker: ..." on a wrong value or an error.
#include <pgas/pgas.hpp>
#include <pgas/device/window.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what, int pe, std::uint64_t got, std::uint64_t want) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "libfabric worker: PE %d: %s: got %llu, expected %llu\n", pe, what, (unsigned long long)got,
                 (unsigned long long)want);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: pgas_libfabric_worker <provider>\n");
        return 2;
    }
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        auto w = pgas::world::init(wo);
        pgas::libfabric_options fo;
        fo.provider = argv[1];
        for (char& c : fo.provider)
            if (c == '+') c = ';';
        fo.iface = "lo";
        pgas::libfabric_domain fabric(w, fo);
        const auto ctx = fabric.context();
        const int me = ctx.my_pe(), n = ctx.n_pes();
        const int right = (me + 1) % n, left = (me + n - 1) % n;

        constexpr std::size_t count = (std::size_t{1} << 20) / 8 + 3;  // chunked, not inline
        auto data = w.alloc<std::uint64_t>(count);
        auto sig = w.alloc<std::uint64_t>(1);
        auto counter = w.alloc<std::uint64_t>(1);
        std::vector<std::uint64_t> source(count);
        for (std::size_t i = 0; i < count; ++i) source[i] = std::uint64_t(me) * 1000003 + i;

        // put_signal: the whole buffer is there when the signal is
        pgas::put_signal(ctx, data, source.data(), count, sig, 1, pgas::signal_op::add, right);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, std::uint64_t(1));
        for (std::size_t i = 0; i < count; ++i)
            if (ctx.local(data)[i] != std::uint64_t(left) * 1000003 + i) {
                expect(false, "put_signal data", me, ctx.local(data)[i], std::uint64_t(left) * 1000003 + i);
                break;
            }
        pgas::barrier_all(ctx);

        // get back what the right neighbour received (from me)
        std::vector<std::uint64_t> back(count);
        pgas::get(ctx, back.data(), data, count, right);
        expect(back[count - 1] == source[count - 1], "get", me, back[count - 1], source[count - 1]);

        // atomics: everyone increments PE 0's counter
        for (int i = 0; i < 100; ++i) pgas::atomic_inc(ctx, counter, 0);
        pgas::barrier_all(ctx);
        if (me == 0) expect(*ctx.local(counter) == std::uint64_t(100 * n), "atomic_inc total", me, *ctx.local(counter), 100 * n);
        expect(pgas::g(ctx, counter, 0) == std::uint64_t(100 * n), "g of the counter", me, pgas::g(ctx, counter, 0), 100 * n);
        pgas::barrier_all(ctx);

        // A registered window of this process's private memory (unreachable to the host transport between
        // processes): put_signal at an element offset into the right neighbour's, get and fetch_add back.
        std::vector<std::uint64_t> own(count, 0);
        auto win = w.register_window(own.data(), count);
        pgas::put_signal(ctx, win + 7, source.data(), count - 7, sig, 1, pgas::signal_op::add, right);
        pgas::signal_wait_until(ctx, sig, pgas::cmp::ge, std::uint64_t(2));
        expect(own[6] == 0, "window: element before the offset", me, own[6], 0);
        expect(own[count - 1] == std::uint64_t(left) * 1000003 + count - 8, "window put_signal data", me,
               own[count - 1], std::uint64_t(left) * 1000003 + count - 8);
        std::vector<std::uint64_t> mine_back(count - 7);
        pgas::get(ctx, mine_back.data(), win + 7, count - 7, right);
        expect(mine_back[3] == source[3], "window get", me, mine_back[3], source[3]);
        (void)pgas::atomic_fetch_add(ctx, win + 0, std::uint64_t(1), 0);
        pgas::quiet(ctx);
        pgas::barrier_all(ctx);
        if (me == 0) expect(own[0] == std::uint64_t(n), "window fetch_add total", me, own[0], n);
        w.release_window(win);
        std::printf("libfabric worker: PE %d of %d ok on %s\n", me, n, fabric.provider().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "libfabric worker: %s\n", e.what());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
