// The consumer side of the proxy ring: its memory, the backend contract, and the proxy thread of one PE.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/transport/proxy/command.hpp>
#include <pgas/transport/channel.hpp>
#include <pgas/transport/proxy/ring.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

PGAS_NAMESPACE_BEGIN
namespace proxy {

// Where a PE's rings live: plain host memory when producers are CPU threads
// (the host transport, CI), or cudaHostAlloc'd mapped memory for the slots and
// the control blocks plus device-memory reservation counters when producers
// are GPU threads. One ring per channel (ring_view::on_channel), in one
// allocation: ring c's control block and slots lie c * stride bytes in, its
// reservation counter and credit c * ring_view::tail_stride words in; the reply
// pool after the rings is shared by all of them.
enum class producers : std::uint8_t { host_threads, gpu };
static_assert(sizeof(control_block) % alignof(command) == 0, "the slots after a control block must stay aligned");

class ring_memory {
public:
    ring_memory(std::uint32_t capacity, producers who, int pe, int channels = 1)
        : capacity_(capacity), who_(who), pe_(pe), channels_(channels) {
        if (capacity < 2 || (capacity & (capacity - 1)) != 0)
            pgas::detail::throw_error(errc::invalid_argument, pe, "proxy ring",
                                      "capacity must be a power of two >= 2, got " + std::to_string(capacity));
        // A warp reserves up to 32 consecutive tickets at once; a ring smaller
        // than that could make a lane wait for a slot its own warp holds.
        if (who == producers::gpu && capacity < 64)
            pgas::detail::throw_error(
                errc::invalid_argument, pe, "proxy ring",
                "a ring for GPU producers needs at least 64 slots, got " + std::to_string(capacity));
        if (channels < 1 || channels > max_channels)
            pgas::detail::throw_error(
                errc::invalid_argument, pe, "proxy ring",
                "channels must be in [1, " + std::to_string(max_channels) + "], got " + std::to_string(channels));
        reply_count_ = who == producers::gpu ? resident_threads() : 4096;
        const std::size_t bytes = replies_offset() + std::size_t(reply_count_) * sizeof(reply_entry);
        const std::size_t claim_bytes = reply_count_ / 8;
        const std::size_t tail_words = std::size_t(channels) * ring_view::tail_stride;
        if (who == producers::host_threads) {
            host_ = static_cast<std::byte*>(std::aligned_alloc(128, (bytes + 127) / 128 * 128));
            tail_ = new std::uint64_t[tail_words]();  // per channel: tail, credit cache
            claims_ = new std::uint32_t[reply_count_ / 32]();
            if (host_ == nullptr) pgas::detail::throw_error(errc::system, pe, "proxy ring", "out of host memory");
        } else {
            cuda_check(
                cudaHostAlloc(reinterpret_cast<void**>(&host_), bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                "cudaHostAlloc of the ring");
            cuda_check(cudaMalloc(reinterpret_cast<void**>(&tail_), tail_words * sizeof(std::uint64_t)),
                       "cudaMalloc of the ring tail");
            cuda_check(cudaMemset(tail_, 0, tail_words * sizeof(std::uint64_t)), "cudaMemset of the ring tail");
            cuda_check(cudaMalloc(reinterpret_cast<void**>(&claims_), claim_bytes), "cudaMalloc of the reply claims");
            cuda_check(cudaMemset(claims_, 0, claim_bytes), "cudaMemset of the reply claims");
            cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0),
                       "cudaHostGetDevicePointer of the ring");
        }
        std::memset(host_, 0, bytes);
    }
    ring_memory(const ring_memory&) = delete;
    ring_memory& operator=(const ring_memory&) = delete;
    ~ring_memory() {
        if (who_ == producers::host_threads) {
            std::free(host_);
            delete[] tail_;
            delete[] claims_;
        } else {
            cudaFreeHost(host_);
            cudaFree(tail_);
            cudaFree(claims_);
        }
    }

    // The proxy's (host) view of channel c's ring.
    control_block& control(int channel = 0) const {
        return *reinterpret_cast<control_block*>(host_ + std::size_t(channel) * stride());
    }
    command& slot(std::uint64_t ticket, int channel = 0) const {
        return reinterpret_cast<command*>(host_ + std::size_t(channel) * stride() +
                                          sizeof(control_block))[ticket & (capacity_ - 1)];
    }
    reply_entry& reply(std::uint32_t entry) const {
        return reinterpret_cast<reply_entry*>(host_ + replies_offset())[entry % reply_count_];
    }
    std::uint32_t capacity() const { return capacity_; }
    producers who() const { return who_; }
    int channels() const { return channels_; }

    // The producers' view of channel 0's ring (device pointers when producers are GPU threads); the others are
    // ring_view::on_channel(c) of it.
    ring_view view(runtime_state runtime) const {
        std::byte* base = who_ == producers::gpu ? device_ : host_;
        ring_view v;
        v.control = reinterpret_cast<const control_block*>(base);
        v.slots = reinterpret_cast<command*>(base + sizeof(control_block));
        v.replies = reinterpret_cast<reply_entry*>(base + replies_offset());
        v.tail = tail_;
        v.credit = tail_ + 1;
        v.reply_claims = claims_;
        v.capacity = capacity_;
        v.reply_count = reply_count_;
        v.pe = pe_;
        v.channel = 0;
        v.channels = std::uint16_t(channels_);
        v.ring_stride = stride();
        v.runtime = runtime;
        return v;
    }

private:
    // One ring: its control block, then its slots (128-byte aligned: the control block is a multiple of 128).
    std::size_t stride() const { return sizeof(control_block) + std::size_t(capacity_) * sizeof(command); }
    std::size_t replies_offset() const { return std::size_t(channels_) * stride(); }

    // One reply entry per thread the current GPU can hold resident (a thread
    // waits for one reply at a time, so claims never run out): 270,336 on an
    // H100/H200, 17 MB of pinned host memory.
    std::uint32_t resident_threads() const {
        int device = 0, sms = 0, per_sm = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
        cuda_check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
                   "cudaDeviceGetAttribute");
        // reply_hint's slots: 64 warp slots of 32 lanes per SM.
        return std::uint32_t(sms) * std::max(std::uint32_t(per_sm), 64u * 32u);
    }

    void cuda_check(cudaError_t rc, const char* what) const {
        if (rc != cudaSuccess)
            pgas::detail::throw_error(errc::cuda, pe_, "proxy ring", std::string(what) + ": " + cudaGetErrorString(rc));
    }
    std::uint32_t capacity_;
    producers who_;
    int pe_;
    int channels_;
    std::uint32_t reply_count_ = 0;
    std::byte* host_ = nullptr;
    std::byte* device_ = nullptr;
    std::uint64_t* tail_ = nullptr;
    std::uint32_t* claims_ = nullptr;
};

// What the proxy asks of a fabric. Each call starts work for one command
// (token = its ticket) and returns how many completions it will report for
// it through progress(on_complete); the backend queues what it cannot post
// yet. Errors (a provider error completion included) throw pgas::error.
//   put(token, pe, remote_offset, src, bytes, src_is_device)
//   get(token, pe, dst, remote_offset, bytes, dst_is_device)
//   atomic(token, pe, remote_offset, amo, kind, operand, compare, result or nullptr)
//   signal(token, pe, remote_offset, signal_op, value)
//   progress(on_complete) -> whether anything happened
template <class B>
concept backend = requires(B& b, std::uint64_t token, int pe, std::uint64_t off, const void* src, void* dst,
                           std::size_t bytes, bool device, amo a, value_kind k, std::uint64_t v, signal_op s,
                           void (*on_complete)(std::uint64_t)) {
    { b.put(token, pe, off, src, bytes, device) } -> std::same_as<std::uint32_t>;
    { b.get(token, pe, dst, off, bytes, device) } -> std::same_as<std::uint32_t>;
    { b.atomic(token, pe, off, a, k, v, v, dst) } -> std::same_as<std::uint32_t>;
    { b.signal(token, pe, off, s, v) } -> std::same_as<std::uint32_t>;
    { b.progress(on_complete) } -> std::same_as<bool>;
};

// Optional backend members the proxy uses when present:
//   flush(waited_on) -> bool: make everything posted so far complete without
//     further commands (a backend that defers completions, e.g. libfabric's
//     "flush" put delivery, posts what confirms them); called when the proxy
//     waits for completions: waited_on when a fence or signal stands behind
//     them, false for an idle ring with commands outstanding (which is how a
//     quiet, which pushes nothing, gets its flush).
//   ordered() -> bool: operations to one PE are processed in the order
//     posted, so put_signal's signal may follow its data at once.
template <class B>
concept flushing_backend = requires(B& b) {
    { b.flush(true) } -> std::same_as<bool>;
};
template <class B>
concept ordering_backend = requires(const B& b) {
    { b.ordered() } -> std::same_as<bool>;
};
//   window_put/window_get/window_atomic(token, pe, window, offset, ...): as
//     put/get/atomic, into registered window `window` (its table offset; the
//     command's flag_window) at byte `offset` of PE pe's buffer. A command
//     naming a window fails the proxy on a backend without them.
template <class B>
concept window_backend = requires(B& b, std::uint64_t token, int pe, std::uint64_t w, std::uint64_t off,
                                  const void* src, void* dst, std::size_t bytes, bool device, amo a, value_kind k,
                                  std::uint64_t v) {
    { b.window_put(token, pe, w, off, src, bytes, device) } -> std::same_as<std::uint32_t>;
    { b.window_get(token, pe, dst, w, off, bytes, device) } -> std::same_as<std::uint32_t>;
    { b.window_atomic(token, pe, w, off, a, k, v, v, dst) } -> std::same_as<std::uint32_t>;
};
//   on_proxy_thread(bool starting): called on the proxy thread when it
//     starts (true; a throw fails the proxy) and before it exits (false), for
//     per-thread setup such as the CUDA device the provider's copies need.
template <class B>
concept thread_setup_backend = requires(B& b) {
    b.on_proxy_thread(true);
};

// The proxy thread of one PE: drains each of the PE's rings (one per channel)
// in ticket order, hands each command to the backend, and publishes each ring's
// `completed` (in order: a ticket counts only once every earlier one of its
// ring is done; it is the ring's credit too). fence and signal start only when
// every earlier command of their ring has completed; put_signal posts its
// signal once its own data is delivered (or right behind the data when the
// backend processes a PE's operations in order, ordering_backend). Rings do not
// wait for each other: a fence, a slow command or an unpublished slot in one
// holds back only that ring. A backend that defers completions is asked to
// flush whenever some wait depends on them (flushing_backend). It polls
// continuously: libfabric's rxm and shm progress the target side of other
// PEs' operations only while someone polls, so it never sleeps;
// when idle it yields the core every options::yield_after_idle_ns, which
// costs no wake-up latency beyond one scheduler pass.
//
// One thread for all of a PE's rings, not one per ring: the backend's endpoint
// and its bookkeeping (merging, flush delivery, staging) belong to one thread
// (FI_THREAD_DOMAIN, no locks), and what channels remove is the producers'
// contention (one reservation counter, one credit, one in-order drain that a
// slow producer's unpublished slot stalls), not the thread's work, which is
// the same per command whichever ring holds it. Each pass takes at most a
// ring's capacity of commands from each ring, so a busy ring cannot starve
// the others. bench/channels measures what the rings buy.
template <backend Backend>
class service {
public:
    struct options {
        int cpu = -1;  // pin the thread to this CPU (-1: leave it to the OS)
        // Idle time between yields (-1: never yield). Time, not a poll count:
        // one poll costs ~0.1 us on shm but ~0.7 us on tcp (socket calls), and
        // on 2 cores shared with a producer and the peer's proxy every idle
        // microsecond held is one the thread that can make progress waits
        // (measured: 64 polls per yield cost 6.8 us per put+quiet on shm and
        // 44 us on tcp; 500 ns, 2.9 and 12 us).
        std::int64_t yield_after_idle_ns = 500;
        // While it loops the thread copies *abort_source (a peer-failure flag
        // kernels cannot read, e.g. in pageable memory) into *abort_mirror
        // (mapped pinned memory they poll). Both null: nothing to mirror.
        const volatile int* abort_source = nullptr;
        volatile int* abort_mirror = nullptr;
    };

    service(Backend& backend, ring_memory& ring, int pe, options opts)
        : backend_(backend), ring_(ring), pe_(pe), opts_(opts) {
        lanes_.resize(std::size_t(ring.channels()));
        for (auto& lane : lanes_) lane.state.resize(ring.capacity());
        thread_ = std::thread([this] { run(); });
    }
    service(const service&) = delete;
    service& operator=(const service&) = delete;
    ~service() { stop(); }

    // Stops the thread (the rings' producers then fail their waits with "stopped").
    void stop() {
        if (!thread_.joinable()) return;
        stop_.store(true, std::memory_order_relaxed);
        thread_.join();
    }

    // Waits (bounded) until every published command has completed; false on timeout.
    bool wait_idle(std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (idle_.load(std::memory_order_acquire) || !thread_.joinable() || failed_flag_.load()) return true;
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        return false;
    }

    // Test hook: the thread exits as if it had crashed, without marking the rings.
    void simulate_death() {
        die_.store(true, std::memory_order_relaxed);
        if (thread_.joinable()) thread_.join();
    }

    // Non-empty once the proxy failed: the message producers also see.
    std::string failure() const {
        return detail::load_acquire(&ring_.control().status) == status_failed ? std::string(ring_.control().error)
                                                                              : std::string();
    }

private:
    enum class stage : std::uint8_t { idle, data, signal, done };
    struct slot_state {
        std::uint32_t pending = 0;
        stage at = stage::idle;
    };
    // One ring's drain: its slots' states, next ticket to start, tickets completed, and what the last pass saw
    // (waited_on: a fence or signal is held back waiting on earlier commands; idle: nothing more was published).
    struct lane {
        std::vector<slot_state> state;
        std::uint64_t cursor = 0, completed = 0;
        bool waited_on = false, idle = false;
    };

    static int channel_of(std::uint64_t token) { return int(token >> ring_view::channel_shift); }
    static std::uint64_t ticket_of(std::uint64_t token) {
        return token & ((std::uint64_t{1} << ring_view::channel_shift) - 1);
    }
    static std::uint64_t token_of(int channel, std::uint64_t ticket) {
        return (std::uint64_t(channel) << ring_view::channel_shift) | ticket;
    }

    void run() {
        pin();
        if constexpr (thread_setup_backend<Backend>) {
            try {
                backend_.on_proxy_thread(true);
            } catch (const std::exception& e) {
                fail(e.what());
            }
        }
        run_loop();
        if constexpr (thread_setup_backend<Backend>) backend_.on_proxy_thread(false);
    }

    void run_loop() {
        std::int64_t idle_since = -1;  // steady_clock ns; -1: busy last poll
        const int channels = int(lanes_.size());
        while (!stop_.load(std::memory_order_relaxed)) {
            if (die_.load(std::memory_order_relaxed)) return;
            bool busy = false;
            try {
                busy = backend_.progress([this](std::uint64_t token) { on_complete(token); });
                if (!failed_) {
                    busy |= continue_signals();
                    bool flush_wanted = false, waited_on = false;
                    for (int c = 0; c < channels; ++c) {
                        busy |= issue(c);
                        busy |= retire(c);
                        const lane& l = lanes_[std::size_t(c)];
                        if ((l.waited_on || l.idle) && l.completed != l.cursor) {
                            flush_wanted = true;
                            waited_on |= l.waited_on;
                        }
                    }
                    if constexpr (flushing_backend<Backend>) {
                        if (flush_wanted) busy |= backend_.flush(waited_on);
                    }
                }
            } catch (const std::exception& e) {
                fail(e.what());
            }
            bool idle = true;
            for (int c = 0; c < channels; ++c) {
                control_block& control = ring_.control(c);
                detail::store_release(&control.heartbeat, control.heartbeat + 1);
                const lane& l = lanes_[std::size_t(c)];
                idle = idle && l.completed == l.cursor &&
                       detail::load_acquire(&ring_.slot(l.cursor, c).seq) != l.cursor + 1;
            }
            if (opts_.abort_mirror != nullptr) {
                const int failed = pgas::detail::load_abort_flag(opts_.abort_source);
                int* mirror = const_cast<int*>(opts_.abort_mirror);
                if (detail::load_acquire(mirror) != failed) detail::store_release(mirror, failed);
            }
            idle_.store(idle, std::memory_order_release);
            if (busy) {
                idle_since = -1;
            } else if (opts_.yield_after_idle_ns >= 0) {
                const std::int64_t now = clock_ns();
                if (idle_since < 0) {
                    idle_since = now;
                } else if (now - idle_since >= opts_.yield_after_idle_ns) {
                    std::this_thread::yield();  // never a sleep: wake-up costs at most this one call
                    idle_since = clock_ns();
                }
            }
        }
        if (!failed_)
            for (int c = 0; c < channels; ++c) detail::store_release(&ring_.control(c).status, status_stopped);
    }

    static std::int64_t clock_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    void pin() {
#if defined(__linux__)
        if (opts_.cpu < 0) return;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(opts_.cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
#endif
    }

    // Every ring's producers see the failure (each waits on its own ring's control block).
    void fail(const std::string& message) {
        if (failed_) return;
        failed_ = true;
        failed_flag_.store(true);
        for (int c = 0; c < int(lanes_.size()); ++c) {
            control_block& control = ring_.control(c);
            const std::size_t n = std::min(message.size(), sizeof(control.error) - 1);
            std::memcpy(control.error, message.data(), n);
            control.error[n] = '\0';
            detail::store_release(&control.status, status_failed);
        }
    }

    slot_state& state(int channel, std::uint64_t ticket) {
        return lanes_[std::size_t(channel)].state[ticket & (ring_.capacity() - 1)];
    }

    void on_complete(std::uint64_t token) {
        const int channel = channel_of(token);
        const std::uint64_t ticket = ticket_of(token);
        slot_state& s = state(channel, ticket);
        if (s.pending == 0 || --s.pending != 0) return;
        command& c = ring_.slot(ticket, channel);
        if (c.op == op_code::put_signal && s.at == stage::data) {
            ready_signals_.push_back(token);  // posted after progress() returns
            return;
        }
        finish(token, c, s);
    }

    void finish(std::uint64_t token, command& c, slot_state& s) {
        s.at = stage::done;
        if (c.flags & flag_reply) detail::store_release(&ring_.reply(c.reply_entry).tag, token + 1);
    }

    bool continue_signals() {
        if (ready_signals_.empty()) return false;
        for (std::uint64_t token : ready_signals_) {
            command& c = ring_.slot(ticket_of(token), channel_of(token));
            slot_state& s = state(channel_of(token), ticket_of(token));
            s.at = stage::signal;
            s.pending = backend_.signal(token, c.pe, c.compare, c.sig_op, c.operand);
            if (s.pending == 0) finish(token, c, s);
        }
        ready_signals_.clear();
        return true;
    }

    // Starts channel's published commands in ticket order, at most a ring's
    // capacity of them (the other rings' turn comes in the same pass).
    bool issue(int channel) {
        lane& l = lanes_[std::size_t(channel)];
        bool any = false;
        l.waited_on = l.idle = false;
        for (std::uint32_t n = 0; n < ring_.capacity(); ++n) {
            command& c = ring_.slot(l.cursor, channel);
            if (detail::load_acquire(&c.seq) != l.cursor + 1) {
                l.idle = true;
                return any;
            }
            const bool ordered = c.op == op_code::fence || c.op == op_code::signal;
            if (ordered && l.completed != l.cursor) {  // waits for every earlier command of the ring
                l.waited_on = true;
                return any;
            }
            start(token_of(channel, l.cursor), c, state(channel, l.cursor));
            ++l.cursor;
            any = true;
        }
        return any;
    }

    void start(std::uint64_t token, command& c, slot_state& s) {
        const bool in_payload = (c.flags & flag_inline) != 0;
        const bool device = (c.flags & flag_device_memory) != 0;
        const bool reply = (c.flags & flag_reply) != 0;
        // Inline put data travels in the slot; a reply (small get, fetched value) goes to the reply entry.
        void* local = !in_payload ? reinterpret_cast<void*>(c.local)
                      : reply     ? static_cast<void*>(ring_.reply(c.reply_entry).payload)
                                  : static_cast<void*>(c.payload);
        s.at = stage::data;
        if (c.flags & flag_window) {
            start_window(token, c, s, local, device && !in_payload, reply);
        } else {
            switch (c.op) {
                case op_code::put:
                case op_code::put_signal:
                    s.pending = backend_.put(token, c.pe, c.remote, local, c.bytes, device && !in_payload);
                    break;
                case op_code::get:
                    s.pending = backend_.get(token, c.pe, local, c.remote, c.bytes, device && !in_payload);
                    break;
                case op_code::atomic:
                    s.pending =
                        backend_.atomic(token, c.pe, c.remote, c.amo_op, c.kind, c.operand, c.compare,
                                        reply ? static_cast<void*>(ring_.reply(c.reply_entry).payload) : nullptr);
                    break;
                case op_code::signal:
                    s.pending = backend_.signal(token, c.pe, c.remote, c.sig_op, c.operand);
                    break;
                case op_code::fence:
                    s.pending = 0;
                    break;
            }
        }
        if (c.op == op_code::put_signal) {
            if constexpr (ordering_backend<Backend>) {
                if (backend_.ordered()) {  // the signal lands after the data: post it now
                    s.at = stage::signal;
                    s.pending += backend_.signal(token, c.pe, c.compare, c.sig_op, c.operand);
                }
            }
        }
        if (s.pending != 0) return;
        if (c.op == op_code::put_signal && s.at == stage::data) {
            ready_signals_.push_back(token);
        } else {
            finish(token, c, s);
        }
    }

    // A command naming a registered window (flag_window): put, put_signal's data, get or atomic into window
    // c.window at byte c.remote of PE c.pe's buffer.
    void start_window(std::uint64_t token, command& c, slot_state& s, void* local, bool device, bool reply) {
        if constexpr (window_backend<Backend>) {
            switch (c.op) {
                case op_code::put:
                case op_code::put_signal:
                    s.pending = backend_.window_put(token, c.pe, c.window, c.remote, local, c.bytes, device);
                    return;
                case op_code::get:
                    s.pending = backend_.window_get(token, c.pe, local, c.window, c.remote, c.bytes, device);
                    return;
                case op_code::atomic:
                    s.pending = backend_.window_atomic(
                        token, c.pe, c.window, c.remote, c.amo_op, c.kind, c.operand, c.compare,
                        reply ? static_cast<void*>(ring_.reply(c.reply_entry).payload) : nullptr);
                    return;
                default:
                    break;
            }
        }
        pgas::detail::throw_error(errc::invalid_argument, pe_, "proxy",
                                  std::string(to_string(c.op)) + " naming registered window (table offset " +
                                      std::to_string(c.window) + "): this proxy backend reaches no windows");
    }

    // Publishes channel's completion (its ring's credit too) strictly in ticket order.
    bool retire(int channel) {
        lane& l = lanes_[std::size_t(channel)];
        const std::uint64_t completed_before = l.completed;
        while (l.completed < l.cursor && state(channel, l.completed).at == stage::done)
            state(channel, l.completed++).at = stage::idle;
        if (l.completed == completed_before) return false;
        detail::store_release(&ring_.control(channel).completed, l.completed);
        return true;
    }

    Backend& backend_;
    ring_memory& ring_;
    int pe_;
    options opts_;
    std::vector<lane> lanes_;
    std::vector<std::uint64_t> ready_signals_;  // tokens
    bool failed_ = false;
    std::atomic<bool> stop_{false}, die_{false}, idle_{false}, failed_flag_{false};
    std::thread thread_;
};

}  // namespace proxy
PGAS_NAMESPACE_END
