// libfabric proxy transport: put+quiet and put_signal latency, 8 B message rate, bandwidth, and raw fi_write latency.
//
// PEs are two SPMD threads of this process (each with its own world, heap,
// endpoint and proxy thread) on loopback: shm and tcp;ofi_rxm. Producers are
// host threads, so "proxy cost" here is the ring + proxy thread + completion
// write-back without PCIe; raw_fi_write is the provider alone (same
// endpoint setup: RDM, FI_DELIVERY_COMPLETE, a thread polling the target's
// completion queue), so proxy_put_quiet - raw_fi_write is the proxy's added cost.
#include <pgas/pgas.hpp>
#include <pgas/transport/libfabric/libfabric.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using ctx_t = pgas::device::context<pgas::libfabric>;
using clock_type = std::chrono::steady_clock;

const char* const providers[] = {"shm", "tcp;ofi_rxm"};

pgas::world_options world_options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{192} << 20;
    o.timeout_ms = 60000;
    return o;
}

pgas::libfabric_options fabric_options(const char* provider) {
    pgas::libfabric_options o;
    o.provider = provider;
    o.iface = "lo";
    return o;
}

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Two PEs with a domain each; PE 0 runs the benchmark loop (`measure`),
// PE 1 runs `serve` (or only keeps its proxy polling) until PE 0 is done.
template <class Setup, class Measure, class Serve>
void two_pes(benchmark::State& state, Setup setup, Measure measure, Serve serve) {
    const char* provider = providers[state.range(0)];
    state.SetLabel(provider);
    std::atomic<bool> done{false};
    try {
        pgas::world::run_threads(2, [&](pgas::world& w) {
            pgas::libfabric_domain fabric(w, fabric_options(provider));
            auto shared = setup(w);
            const ctx_t ctx = fabric.context();
            pgas::barrier_all(ctx);
            if (ctx.my_pe() == 0) {
                measure(ctx, shared);
                done = true;
                done.notify_all();
            } else {
                serve(ctx, shared, done);
            }
            pgas::barrier_all(ctx);
        }, world_options());
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

auto idle_serve = [](const ctx_t&, auto&, std::atomic<bool>& done) { done.wait(false); };

// 8 B put (inline in the command) then quiet: one command round trip plus
// the provider's delivery-complete write.
void proxy_put_quiet(benchmark::State& state) {
    constexpr int repeats = 1000;
    two_pes(
        state, [](pgas::world& w) { return w.alloc<std::uint64_t>(1); },
        [&](const ctx_t& ctx, pgas::symmetric_ptr<std::uint64_t> target) {
            double total = 0;
            for (auto _ : state) {
                const auto start = clock_type::now();
                for (int i = 0; i < repeats; ++i) {
                    pgas::p(ctx, target, std::uint64_t(i), 1);
                    pgas::quiet(ctx);
                }
                const double s = seconds_since(start);
                state.SetIterationTime(s);
                total += s;
            }
            state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
        },
        idle_serve);
}
BENCHMARK(proxy_put_quiet)->DenseRange(0, 1)->UseManualTime();

// put_signal ping-pong of 8 B: each side waits for the other's signal;
// one_way_us is half a round trip (push -> proxy -> write -> signal -> seen).
void proxy_put_signal_ping_pong(benchmark::State& state) {
    constexpr int repeats = 500;
    struct bufs {
        pgas::symmetric_ptr<std::uint64_t> data, sig;
    };
    std::atomic<std::uint64_t> rounds_total{0};
    two_pes(
        state, [](pgas::world& w) { return bufs{w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1)}; },
        [&](const ctx_t& ctx, bufs b) {
            double total = 0;
            std::uint64_t round = 0;
            for (auto _ : state) {
                const auto start = clock_type::now();
                for (int i = 0; i < repeats; ++i) {
                    ++round;
                    pgas::put_signal(ctx, b.data, &round, 1, b.sig, round, pgas::signal_op::set, 1);
                    pgas::signal_wait_until(ctx, b.sig, pgas::cmp::ge, round);
                }
                const double s = seconds_since(start);
                state.SetIterationTime(s);
                total += s;
            }
            rounds_total = round;
            // tell PE 1 to stop: a round it will see as the last
            const std::uint64_t stop = ~std::uint64_t{0};
            pgas::put_signal(ctx, b.data, &stop, 1, b.sig, stop, pgas::signal_op::set, 1);
            pgas::quiet(ctx);
            state.counters["one_way_us"] = total * 1e6 / (2.0 * repeats * double(state.iterations()));
        },
        [](const ctx_t& ctx, bufs b, std::atomic<bool>&) {
            for (std::uint64_t round = 1;; ++round) {
                const std::uint64_t seen = pgas::signal_wait_until(ctx, b.sig, pgas::cmp::ge, round);
                if (seen == ~std::uint64_t{0}) break;
                pgas::put_signal(ctx, b.data, &seen, 1, b.sig, seen, pgas::signal_op::set, 0);
            }
            pgas::quiet(ctx);
        });
}
BENCHMARK(proxy_put_signal_ping_pong)->DenseRange(0, 1)->UseManualTime();

// 8 B put_nbi from `producers` host threads of PE 0 sharing its ring; one
// quiet per thread at the end. Mputs_per_s is the proxy thread's sustained rate.
void proxy_message_rate(benchmark::State& state) {
    const int producers = int(state.range(1));
    constexpr int per_thread = 20000;
    two_pes(
        state, [](pgas::world& w) { return w.alloc<std::uint64_t>(per_thread * 8); },
        [&](const ctx_t& ctx, pgas::symmetric_ptr<std::uint64_t> target) {
            double total = 0;
            for (auto _ : state) {
                std::vector<std::thread> threads;
                const auto start = clock_type::now();
                for (int t = 0; t < producers; ++t)
                    threads.emplace_back([&, t] {
                        for (int i = 0; i < per_thread; ++i) {
                            const std::uint64_t v = std::uint64_t(i);
                            pgas::put_nbi(ctx, target + std::ptrdiff_t(t * per_thread + i), &v, 1, 1);
                        }
                        pgas::quiet(ctx);
                    });
                for (auto& th : threads) th.join();
                const double s = seconds_since(start);
                state.SetIterationTime(s);
                total += s;
            }
            const double puts = double(producers) * per_thread * double(state.iterations());
            state.counters["Mputs_per_s"] = puts / total / 1e6;
        },
        idle_serve);
}
BENCHMARK(proxy_message_rate)->ArgsProduct({{0, 1}, {1, 2, 4}})->UseManualTime();

// put_nbi of `bytes` from host memory outside the heap (no staging on shm
// and tcp: neither needs FI_MR_LOCAL), `count` of them, then quiet.
void proxy_put_bandwidth(benchmark::State& state) {
    const auto bytes = std::size_t(state.range(1));
    const int count = bytes >= (std::size_t{1} << 20) ? 4 : bytes >= 65536 ? 64 : 1000;
    std::vector<std::byte> source(bytes, std::byte{7});
    two_pes(
        state, [&](pgas::world& w) { return w.alloc<std::byte>(bytes); },
        [&](const ctx_t& ctx, pgas::symmetric_ptr<std::byte> target) {
            double total = 0;
            for (auto _ : state) {
                const auto start = clock_type::now();
                for (int i = 0; i < count; ++i) pgas::put_nbi(ctx, target, source.data(), bytes, 1);
                pgas::quiet(ctx);
                const double s = seconds_since(start);
                state.SetIterationTime(s);
                total += s;
            }
            state.SetBytesProcessed(std::int64_t(double(bytes) * count * double(state.iterations())));
            state.counters["GB_per_s"] = double(bytes) * count * double(state.iterations()) / total / 1e9;
        },
        idle_serve);
}
BENCHMARK(proxy_put_bandwidth)->ArgsProduct({{0, 1}, benchmark::CreateRange(8, 64 << 20, 16)})->UseManualTime();

// The provider alone: two fabric_backends (the proxy's own endpoint setup),
// PE 1's completion queue polled by a thread, PE 0's thread posting 8 B
// fi_write and polling for its completion.
void raw_fi_write(benchmark::State& state) {
    const char* provider = providers[state.range(0)];
    state.SetLabel(provider);
    try {
        auto info = pgas::ofi::select_provider(fabric_options(provider), true, false, 0);
        constexpr std::size_t heap = std::size_t{1} << 20;
        std::vector<std::byte> heaps[2] = {std::vector<std::byte>(heap), std::vector<std::byte>(heap)};
        std::vector<std::unique_ptr<pgas::ofi::fabric_backend>> pes;
        for (int pe = 0; pe < 2; ++pe) {
            pgas::ofi::fabric_backend::setup s;
            s.pe = pe;
            s.n_pes = 2;
            s.heap_base = heaps[pe].data();
            s.heap_bytes = heap;
            s.max_in_flight = 64;
            s.bounce_chunks = 1;
            s.bounce_chunk_bytes = 4096;
            pes.push_back(std::make_unique<pgas::ofi::fabric_backend>(info.get(), s));
        }
        const std::vector<pgas::ofi::address_card> cards = {pes[0]->card(), pes[1]->card()};
        for (auto& p : pes) p->connect(cards);
        std::atomic<bool> stop{false};
        std::thread target([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                pes[1]->progress([](std::uint64_t) {});
                std::this_thread::yield();
            }
        });
        auto& a = *pes[0];
        std::uint64_t value = 0;
        fi_context2 context{};
        fi_cq_entry entry{};
        constexpr int repeats = 1000;
        double total = 0;
        for (auto _ : state) {
            const auto start = clock_type::now();
            for (int i = 0; i < repeats; ++i) {
                ++value;
                ssize_t rc;
                while ((rc = fi_write(a.endpoint(), &value, 8, nullptr, a.address(1), a.remote_address(1, 64),
                                      a.remote_key(1), &context)) == -FI_EAGAIN)
                    fi_cq_read(a.completion_queue(), &entry, 0);
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("fi_write", rc));
                while ((rc = fi_cq_read(a.completion_queue(), &entry, 1)) == -FI_EAGAIN) {
                }
                if (rc != 1) throw std::runtime_error(pgas::ofi::describe("fi_cq_read", rc));
            }
            const double s = seconds_since(start);
            state.SetIterationTime(s);
            total += s;
        }
        stop = true;
        target.join();
        state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(raw_fi_write)->DenseRange(0, 1)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
