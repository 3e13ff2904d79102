// libfabric proxy transport: put+quiet and put_signal latency, 8 B message rate, bandwidth, and raw fi_write latency.
//
// PEs are two SPMD threads of this process (each with its own world, heap,
// endpoint and proxy thread) on loopback: shm and tcp;ofi_rxm. Producers are
// host threads, so "proxy cost" here is the ring + proxy thread + completion
// write-back without PCIe; raw_* is the provider alone (same endpoint setup,
// a thread polling the target's completion queue), so proxy_put_quiet minus
// the raw figure of the same put delivery is the proxy's added cost:
//   delivery "complete": raw_fi_write (FI_DELIVERY_COMPLETE per write)
//   delivery "flush":    raw_inject_flush (fi_inject_write, then an ordered
//                        read whose completion confirms it)
// Message rates: raw_fi_write_rate / raw_inject_rate are the provider's own
// 8-byte rates with the proxy's batching (up to 256 writes in flight; one
// flush per 256 injected writes); proxy_message_rate's pattern 0 writes
// consecutive words (the proxy merges adjacent puts), pattern 1 every other
// word (nothing merges: one provider write per put).
//
// On a 2-core box the producer thread, PE 0's proxy and PE 1's proxy (whose
// polling is the target-side progress of shm and tcp) share two cores: the
// proxy figures include that contention; raw_fi_write "+yielder" adds a
// third busy thread to the raw figure for a like-for-like comparison.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>
#include <pgas/host/proxy/service.hpp>

#include <benchmark/benchmark.h>

#include "ring_only.hpp"

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
const char* const deliveries[] = {"complete", "flush"};  // libfabric_options::put_delivery

pgas::world_options world_options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{192} << 20;
    o.timeout_ms = 60000;
    return o;
}

pgas::libfabric_options fabric_options(const char* provider, const char* delivery = "") {
    pgas::libfabric_options o;
    o.provider = provider;
    o.iface = "lo";
    o.put_delivery = delivery;
    return o;
}

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Two PEs with a domain each; PE 0 runs the benchmark loop (`measure`),
// PE 1 runs `serve` (or only keeps its proxy polling) until PE 0 is done.
// range(0): provider; `delivery`: put delivery ("": the provider's default).
template <class Setup, class Measure, class Serve>
void two_pes(benchmark::State& state, const char* delivery, Setup setup, Measure measure, Serve serve) {
    const char* provider = providers[state.range(0)];
    std::atomic<bool> done{false};
    try {
        pgas::world::run_threads(2, [&](pgas::world& w) {
            pgas::libfabric_domain fabric(w, fabric_options(provider, delivery));
            auto shared = setup(w);
            const ctx_t ctx = fabric.context();
            pgas::barrier_all(ctx);
            if (ctx.my_pe() == 0) {
                state.SetLabel(std::string(provider) + " " + fabric.put_delivery());
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
        state, deliveries[state.range(1)], [](pgas::world& w) { return w.alloc<std::uint64_t>(1); },
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
BENCHMARK(proxy_put_quiet)->ArgsProduct({{0, 1}, {0, 1}})->UseManualTime();

// put_signal ping-pong of 8 B: each side waits for the other's signal;
// one_way_us is half a round trip (push -> proxy -> write -> signal -> seen).
void proxy_put_signal_ping_pong(benchmark::State& state) {
    constexpr int repeats = 500;
    struct bufs {
        pgas::symmetric_ptr<std::uint64_t> data, sig;
    };
    std::atomic<std::uint64_t> rounds_total{0};
    two_pes(
        state, deliveries[state.range(1)],
        [](pgas::world& w) { return bufs{w.alloc<std::uint64_t>(1), w.alloc<std::uint64_t>(1)}; },
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
BENCHMARK(proxy_put_signal_ping_pong)->ArgsProduct({{0, 1}, {0, 1}})->UseManualTime();

// 8 B put_nbi from `producers` host threads of PE 0 sharing its ring; one
// quiet per thread at the end. Mputs_per_s is the proxy thread's sustained
// rate. range(3): 0 consecutive words per thread (adjacent puts merge),
// 1 every other word (no two puts adjacent: one provider write each).
void proxy_message_rate(benchmark::State& state) {
    const int producers = int(state.range(2));
    const std::ptrdiff_t stride = state.range(3) == 0 ? 1 : 2;
    constexpr int per_thread = 20000;
    two_pes(
        state, deliveries[state.range(1)], [](pgas::world& w) { return w.alloc<std::uint64_t>(per_thread * 2 * 4); },
        [&](const ctx_t& ctx, pgas::symmetric_ptr<std::uint64_t> target) {
            double total = 0;
            for (auto _ : state) {
                std::vector<std::thread> threads;
                const auto start = clock_type::now();
                for (int t = 0; t < producers; ++t)
                    threads.emplace_back([&, t] {
                        for (int i = 0; i < per_thread; ++i) {
                            const std::uint64_t v = std::uint64_t(i);
                            pgas::put_nbi(ctx, target + (std::ptrdiff_t(t) * per_thread + i) * stride, &v, 1, 1);
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
BENCHMARK(proxy_message_rate)->ArgsProduct({{0, 1}, {0, 1}, {1, 4}, {0, 1}})->UseManualTime();

// put_nbi of `bytes` from host memory outside the heap (no staging on shm
// and tcp: neither needs FI_MR_LOCAL), `count` of them, then quiet.
void proxy_put_bandwidth(benchmark::State& state) {
    const auto bytes = std::size_t(state.range(1));
    const int count = bytes >= (std::size_t{1} << 20) ? 4 : bytes >= 65536 ? 64 : 1000;
    std::vector<std::byte> source(bytes, std::byte{7});
    two_pes(
        state, "", [&](pgas::world& w) { return w.alloc<std::byte>(bytes); },
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

// The provider alone: two fabric_backends (the proxy's own endpoint setup:
// RDM, FI_DELIVERY_COMPLETE), PE 1's completion queue polled by a thread
// (its target-side progress, as its proxy would), PE 0's benchmark thread
// posting 8 B fi_write and reading their completions itself.
struct raw_pair {
    explicit raw_pair(const char* provider) {
        auto info = pgas::ofi::select_provider(fabric_options(provider), true, false, 0);
        for (int pe = 0; pe < 2; ++pe) {
            heaps[pe].resize(std::size_t{1} << 20);
            pgas::ofi::fabric_backend::setup s;
            s.pe = pe;
            s.n_pes = 2;
            s.heap_base = heaps[pe].data();
            s.heap_bytes = heaps[pe].size();
            s.max_in_flight = 256;
            s.bounce_chunks = 1;
            s.bounce_chunk_bytes = 4096;
            pes[pe] = std::make_unique<pgas::ofi::fabric_backend>(info.get(), s);
        }
        const std::vector<pgas::ofi::address_card> cards = {pes[0]->card(), pes[1]->card()};
        for (auto& p : pes) p->connect(cards);
        target = std::thread([this] {  // the proxy's idle policy: yield after 500 ns without progress
            auto idle_since = clock_type::time_point::min();
            while (!stop.load(std::memory_order_relaxed)) {
                if (pes[1]->progress([](std::uint64_t) {})) {
                    idle_since = clock_type::time_point::min();
                    continue;
                }
                const auto now = clock_type::now();
                if (idle_since == clock_type::time_point::min()) {
                    idle_since = now;
                } else if (now - idle_since >= std::chrono::nanoseconds(500)) {
                    std::this_thread::yield();
                    idle_since = clock_type::now();
                }
            }
        });
    }
    ~raw_pair() {
        stop = true;
        target.join();
    }
    // Posts one 8 B write: 0, -FI_EAGAIN (queue full: reap first) or an error.
    ssize_t post(const std::uint64_t* value, fi_context2* context) {
        auto& a = *pes[0];
        return fi_write(a.endpoint(), value, 8, nullptr, a.address(1), a.remote_address(1, 64), a.remote_key(1), context);
    }
    // fi_inject_write of 8 B (no completion), as the proxy's "flush" delivery posts puts.
    ssize_t inject(const std::uint64_t* value, std::uint64_t offset) {
        auto& a = *pes[0];
        return fi_inject_write(a.endpoint(), value, 8, a.address(1), a.remote_address(1, offset), a.remote_key(1));
    }
    // The proxy's flush: an 8 B FI_ATOMIC_READ where atomics are ordered
    // with RMA (shm), else an fi_read; its completion confirms earlier injects.
    ssize_t flush(fi_context2* context) {
        auto& a = *pes[0];
        if (a.ordered())
            return fi_fetch_atomic(a.endpoint(), &operand, 1, nullptr, &result, nullptr, a.address(1),
                                   a.remote_address(1, 0), a.remote_key(1), FI_UINT64, FI_ATOMIC_READ, context);
        return fi_read(a.endpoint(), &result, 8, nullptr, a.address(1), a.remote_address(1, 0), a.remote_key(1), context);
    }
    // Reads up to `most` completions; returns how many.
    int reap(int most) {
        fi_cq_entry entries[64];
        const ssize_t n = fi_cq_read(pes[0]->completion_queue(), entries, most > 64 ? 64 : (most < 1 ? 1 : most));
        if (n == -FI_EAGAIN) return 0;
        if (n < 0) throw std::runtime_error(pgas::ofi::describe("fi_cq_read", n));
        return int(n);
    }
    std::vector<std::byte> heaps[2];
    std::unique_ptr<pgas::ofi::fabric_backend> pes[2];
    std::uint64_t operand = 0, result = 0;
    std::atomic<bool> stop{false};
    std::thread target;
};

// Arg 1 = 1 adds a thread that polls and yields like a host producer waiting
// on quiet: the same number of busy threads as proxy_put_quiet (on a 2-core
// CI box that third thread, not the ring, is most of the proxy's added cost).
void raw_fi_write(benchmark::State& state) {
    state.SetLabel(std::string(providers[state.range(0)]) + (state.range(1) ? " +yielder" : ""));
    std::atomic<bool> stop_yielder{false};
    std::thread yielder;
    if (state.range(1))
        yielder = std::thread([&] {
            while (!stop_yielder.load(std::memory_order_relaxed)) std::this_thread::yield();
        });
    struct joiner {
        std::atomic<bool>& stop;
        std::thread& t;
        ~joiner() {
            stop = true;
            if (t.joinable()) t.join();
        }
    } join_yielder{stop_yielder, yielder};
    try {
        raw_pair pair(providers[state.range(0)]);
        std::uint64_t value = 0;
        fi_context2 context{};
        constexpr int repeats = 1000;
        double total = 0;
        for (auto _ : state) {
            const auto start = clock_type::now();
            for (int i = 0; i < repeats; ++i) {
                ++value;
                ssize_t rc;
                while ((rc = pair.post(&value, &context)) == -FI_EAGAIN) pair.reap(0);  // nothing to lose: none in flight
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("fi_write", rc));
                while (pair.reap(1) == 0) {
                }
            }
            const double s = seconds_since(start);
            state.SetIterationTime(s);
            total += s;
        }
        state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(raw_fi_write)->ArgsProduct({{0, 1}, {0, 1}})->UseManualTime();

// The provider's own 8 B message rate: up to 256 writes in flight.
void raw_fi_write_rate(benchmark::State& state) {
    const int window = int(state.range(1));
    state.SetLabel(providers[state.range(0)]);
    try {
        raw_pair pair(providers[state.range(0)]);
        std::vector<fi_context2> contexts(256);
        std::uint64_t value = 7;
        constexpr int repeats = 20000;
        double total = 0;
        for (auto _ : state) {
            const auto start = clock_type::now();
            int posted = 0, done = 0;
            while (done < repeats) {
                while (posted < repeats && posted - done < window) {
                    const ssize_t rc = pair.post(&value, &contexts[std::size_t(posted % 256)]);
                    if (rc == -FI_EAGAIN) break;
                    if (rc != 0) throw std::runtime_error(pgas::ofi::describe("fi_write", rc));
                    ++posted;
                }
                done += pair.reap(64);
            }
            const double s = seconds_since(start);
            state.SetIterationTime(s);
            total += s;
        }
        state.counters["Mputs_per_s"] = repeats * double(state.iterations()) / total / 1e6;
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(raw_fi_write_rate)->ArgsProduct({{0, 1}, {1, 16, 256}})->UseManualTime();

// What the proxy's "flush" delivery asks of the provider for put+quiet:
// fi_inject_write of 8 B, then the flush read, waiting for its completion.
void raw_inject_flush(benchmark::State& state) {
    state.SetLabel(providers[state.range(0)]);
    try {
        raw_pair pair(providers[state.range(0)]);
        std::uint64_t value = 0;
        fi_context2 context{};
        constexpr int repeats = 1000;
        double total = 0;
        for (auto _ : state) {
            const auto start = clock_type::now();
            for (int i = 0; i < repeats; ++i) {
                ++value;
                ssize_t rc;
                while ((rc = pair.inject(&value, 64)) == -FI_EAGAIN) pair.reap(0);
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("fi_inject_write", rc));
                while ((rc = pair.flush(&context)) == -FI_EAGAIN) pair.reap(0);
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("flush", rc));
                while (pair.reap(1) == 0) {
                }
            }
            const double s = seconds_since(start);
            state.SetIterationTime(s);
            total += s;
        }
        state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(raw_inject_flush)->DenseRange(0, 1)->UseManualTime();

// The provider's own 8 B rate under the proxy's "flush" batching: one
// fi_inject_write per put (consecutive words, never merged), a flush after
// every 256 of them and at the end, all flushes' completions awaited.
void raw_inject_rate(benchmark::State& state) {
    state.SetLabel(providers[state.range(0)]);
    try {
        raw_pair pair(providers[state.range(0)]);
        std::vector<fi_context2> contexts(256);
        std::uint64_t value = 7;
        constexpr int repeats = 20000, flush_every = 256;
        double total = 0;
        for (auto _ : state) {
            const auto start = clock_type::now();
            int flushes = 0, done = 0;
            auto post_flush = [&] {
                ssize_t rc;
                while ((rc = pair.flush(&contexts[std::size_t(flushes % 256)])) == -FI_EAGAIN) done += pair.reap(64);
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("flush", rc));
                ++flushes;
            };
            for (int i = 0; i < repeats; ++i) {
                ssize_t rc;
                while ((rc = pair.inject(&value, 64 + 8 * std::uint64_t(i % 4096))) == -FI_EAGAIN) done += pair.reap(64);
                if (rc != 0) throw std::runtime_error(pgas::ofi::describe("fi_inject_write", rc));
                if ((i + 1) % flush_every == 0) post_flush();
            }
            if (repeats % flush_every != 0) post_flush();
            while (done < flushes) done += pair.reap(64);
            const double s = seconds_since(start);
            state.SetIterationTime(s);
            total += s;
        }
        state.counters["Mputs_per_s"] = repeats * double(state.iterations()) / total / 1e6;
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(raw_inject_rate)->DenseRange(0, 1)->UseManualTime();

// The ring and proxy thread alone, over a backend that completes every
// command on its next poll: the proxy's own latency and rate, free of any
// provider (what a GPU producer would add PCIe round trips to).
using ring_only_bench::null_backend;
using ring_only_bench::ring_only;

void proxy_only_put_quiet(benchmark::State& state) {
    null_backend backend;
    pgas::proxy::ring_memory memory(1024, pgas::proxy::producers::host_threads, 0);
    pgas::proxy::service<null_backend> proxy(backend, memory, 0, {});
    ring_only t;
    pgas::runtime_state runtime;
    runtime.timeout_ns = 60'000'000'000ull;
    t.view = memory.view(runtime);
    constexpr int repeats = 1000;
    double total = 0;
    std::uint64_t v = 0;
    for (auto _ : state) {
        const auto start = clock_type::now();
        for (int i = 0; i < repeats; ++i) {
            t.put<pgas::thread>(64, &v, 8, 1);
            t.quiet<pgas::thread>();
        }
        const double s = seconds_since(start);
        state.SetIterationTime(s);
        total += s;
    }
    state.counters["us_per_op"] = total * 1e6 / (repeats * double(state.iterations()));
}
BENCHMARK(proxy_only_put_quiet)->UseManualTime();

void proxy_only_message_rate(benchmark::State& state) {
    const int producers = int(state.range(0));
    null_backend backend;
    pgas::proxy::ring_memory memory(1024, pgas::proxy::producers::host_threads, 0);
    pgas::proxy::service<null_backend> proxy(backend, memory, 0, {});
    ring_only t;
    pgas::runtime_state runtime;
    runtime.timeout_ns = 60'000'000'000ull;
    t.view = memory.view(runtime);
    constexpr int per_thread = 200000;
    double total = 0;
    for (auto _ : state) {
        std::vector<std::thread> threads;
        const auto start = clock_type::now();
        for (int p = 0; p < producers; ++p)
            threads.emplace_back([&] {
                std::uint64_t v = 1;
                for (int i = 0; i < per_thread; ++i) t.put_nbi<pgas::thread>(64, &v, 8, 1);
                t.quiet<pgas::thread>();
            });
        for (auto& th : threads) th.join();
        const double s = seconds_since(start);
        state.SetIterationTime(s);
        total += s;
    }
    state.counters["Mputs_per_s"] = double(producers) * per_thread * double(state.iterations()) / total / 1e6;
}
BENCHMARK(proxy_only_message_rate)->Arg(1)->Arg(2)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
