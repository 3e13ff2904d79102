// Bootstrap: how the PEs of a world find each other and exchange small messages on the host.
#pragma once

#include <pgas/core/error.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The host call an exchange belongs to. Every exchange carries one (in the
// frame of the TCP bootstrap, in the round of the thread bootstrap), so PEs
// that make different collective calls are told which calls met.
enum class host_call : std::uint16_t {
    none = 0,  // a bare allgather/barrier (heap and transport setup)
    init,
    alloc,
    free,
    split_strided,
    split_2d,
    barrier,
    destroy_team,
    team_node,
    register_window,
    release_window,
    count_  // first invalid value
};
enum class exchange_op : std::uint16_t { allgather = 1, barrier = 2, count_ };

constexpr const char* host_call_name(host_call call) {
    switch (call) {
        case host_call::none:
            return "bootstrap";
        case host_call::init:
            return "world init";
        case host_call::alloc:
            return "alloc";
        case host_call::free:
            return "free";
        case host_call::split_strided:
            return "split_strided";
        case host_call::split_2d:
            return "split_2d";
        case host_call::barrier:
            return "barrier";
        case host_call::destroy_team:
            return "destroy_team";
        case host_call::team_node:
            return "team_node";
        case host_call::register_window:
            return "register_window";
        case host_call::release_window:
            return "release_window";
        case host_call::count_:
            break;
    }
    return "unknown call";
}

// What one participant contributes to one exchange: which call, which step,
// its place in the sequence of exchanges and its block size. All must agree.
struct exchange_id {
    host_call call = host_call::none;
    exchange_op op = exchange_op::allgather;
    std::uint64_t sequence = 0;
    std::uint64_t bytes = 0;

    friend bool operator==(const exchange_id&, const exchange_id&) = default;
};

// "alloc #3 (allgather of 8 bytes)", "barrier #4", "allgather #5 of 16 bytes"
inline std::string describe(const exchange_id& id) {
    const std::string step =
        id.op == exchange_op::barrier ? std::string("barrier") : "allgather of " + std::to_string(id.bytes) + " bytes";
    const std::string number = " #" + std::to_string(id.sequence);
    if (id.call == host_call::none)
        return id.op == exchange_op::barrier ? "barrier" + number : "allgather" + number + step.substr(9);
    if (id.call == host_call::barrier && id.op == exchange_op::barrier) return "barrier" + number;
    return host_call_name(id.call) + number + " (" + step + ")";
}

// The error text of two PEs in different exchanges, the same on every PE.
inline std::string mismatch_text(int pe_a, const exchange_id& a, int pe_b, const exchange_id& b) {
    return "collective calls differ between PEs: PE " + std::to_string(pe_a) + " called " + describe(a) + " while PE " +
           std::to_string(pe_b) + " called " + describe(b) +
           " (PEs must make the same collective calls in the same order)";
}

// PEs for a message: "1, 2, 3", or past 8 "1, 2, ..., 8 and 65527 more (65535 in all)": a list of every
// missing PE would be 448 KB on one line at 65,536 PEs.
inline std::string pe_list(const std::vector<int>& pes) {
    constexpr std::size_t shown = 8;
    std::string out;
    for (std::size_t i = 0; i < pes.size() && i < shown; ++i) out += (i ? ", " : "") + std::to_string(pes[i]);
    if (pes.size() > shown)
        out += " and " + std::to_string(pes.size() - shown) + " more (" + std::to_string(pes.size()) + " in all)";
    return out.empty() ? "?" : out;
}

// One participant per process (or per SPMD thread). Collective calls must be
// made by every participant in the same order; each is bounded by a timeout
// and a missing participant becomes pgas::error(errc::timeout or peer_failed),
// a mismatched one errc::collective_mismatch naming both calls, on every PE.
class bootstrap {
public:
    virtual ~bootstrap() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;

    // all[i * bytes ...] receives participant i's `mine`.
    void allgather(const void* mine, void* all, std::size_t bytes) {
        exchange(next_id(exchange_op::allgather, bytes), mine, all, bytes);
    }
    void barrier() {
        const char token = 0;
        std::vector<char> all(static_cast<std::size_t>(size()));
        exchange(next_id(exchange_op::barrier, 1), &token, all.data(), 1);
    }

    template <class T>
    std::vector<T> allgather_value(const T& mine) {
        std::vector<T> all(static_cast<std::size_t>(size()));
        allgather(&mine, all.data(), sizeof(T));
        return all;
    }

    // Names the host call whose exchanges follow, until it goes out of scope.
    class call_scope {
    public:
        call_scope(bootstrap& channel, host_call call) : channel_(channel), outer_(channel.call_) {
            channel.call_ = call;
        }
        ~call_scope() { channel_.call_ = outer_; }
        call_scope(const call_scope&) = delete;
        call_scope& operator=(const call_scope&) = delete;

    private:
        bootstrap& channel_;
        host_call outer_;
    };

    // The flag (failed PE + 1, 0 while none failed) that every PE of this
    // bootstrap shares when they are threads of one process, else nullptr.
    virtual std::atomic<int>* shared_abort_flag() { return nullptr; }

    // The bound of every step (PGAS_BOOTSTRAP_TIMEOUT_MS), for the exchanges
    // built beside the bootstrap (fd passing) to honour too.
    virtual std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(30000); }

    // For those exchanges, while they wait on participants `awaited`: throws
    // pgas::error (errc::peer_failed naming the PE, as the bootstrap's own
    // calls would) when the bootstrap knows of a failure: a participant died,
    // the root left, or an awaited one stopped; else returns at once.
    virtual void check_peers(const std::string& call, const std::vector<int>& awaited) {
        (void)call;
        (void)awaited;
    }

protected:
    // One collective step; `id` is this participant's, to be compared with everyone's.
    virtual void exchange(const exchange_id& id, const void* mine, void* all, std::size_t bytes) = 0;

private:
    exchange_id next_id(exchange_op op, std::size_t bytes) { return {call_, op, sequence_++, bytes}; }

    host_call call_ = host_call::none;
    std::uint64_t sequence_ = 0;
};

// A world of one participant (one process driving all its PEs).
class single_bootstrap final : public bootstrap {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }

protected:
    void exchange(const exchange_id&, const void* mine, void* all, std::size_t bytes) override {
        std::memcpy(all, mine, bytes);
    }
};

// Participants are threads of this process (host-transport SPMD worlds).
// Shared state: one round at a time, guarded by one mutex. A participant
// that fails calls shared::fail: every other one's bootstrap waits and device
// waits (through the shared abort flag) stop at once, naming it.
class thread_bootstrap final : public bootstrap {
public:
    struct shared {
        shared(int n, std::chrono::milliseconds timeout)
            : size(n), timeout(timeout), ids(std::size_t(n)), arrived_flags(std::size_t(n), false) {}
        std::mutex mutex;
        std::condition_variable changed;
        const int size;
        const std::chrono::milliseconds timeout;
        int arrived = 0;
        int leaving = 0;
        std::uint64_t generation = 0;
        std::vector<unsigned char> buffer;
        std::vector<exchange_id> ids;     // this round's, per participant
        std::vector<bool> arrived_flags;  // who is in this round (for the timeout message)
        std::string mismatch;             // set for the round when ids differ
        std::atomic<int> abort_flag{0};   // failed PE + 1

        // PE `pe` failed: every wait (host or device) of the others stops.
        void fail(int pe) {
            int expected = 0;
            abort_flag.compare_exchange_strong(expected, pe + 1);
            std::lock_guard lock(mutex);
            changed.notify_all();
        }
    };

    thread_bootstrap(std::shared_ptr<shared> state, int rank) : state_(std::move(state)), rank_(rank) {}

    int rank() const override { return rank_; }
    int size() const override { return state_->size; }
    std::atomic<int>* shared_abort_flag() override { return &state_->abort_flag; }
    std::chrono::milliseconds timeout() const override { return state_->timeout; }
    void check_peers(const std::string& call, const std::vector<int>&) override {
        if (const int failed = state_->abort_flag.load(); failed != 0)
            throw_error(errc::peer_failed, rank_, call, "PE " + std::to_string(failed - 1) + " failed");
    }

protected:
    void exchange(const exchange_id& id, const void* mine, void* all, std::size_t bytes) override {
        auto& s = *state_;
        std::unique_lock lock(s.mutex);
        // A round starts only after every participant has copied the last
        // round's result out (`leaving` back to 0), so no one overwrites it.
        wait(lock, id, [&] { return s.leaving == 0; });
        if (s.arrived == 0) {
            s.mismatch.clear();
            s.buffer.assign(bytes * std::size_t(s.size), 0);
        }
        s.ids[std::size_t(rank_)] = id;
        s.arrived_flags[std::size_t(rank_)] = true;
        // The first arrival's id sizes the buffer: a different one is a mismatch
        // (and writes nothing), found by every participant of the round.
        int first = -1;
        for (int r = 0; r < s.size && first < 0; ++r)
            if (r != rank_ && s.arrived_flags[std::size_t(r)]) first = r;
        if (first >= 0 && s.mismatch.empty() && !(s.ids[std::size_t(first)] == id))
            s.mismatch = mismatch_text(first, s.ids[std::size_t(first)], rank_, id);
        if (s.mismatch.empty() && s.buffer.size() == bytes * std::size_t(s.size))
            std::memcpy(s.buffer.data() + bytes * std::size_t(rank_), mine, bytes);
        const std::uint64_t my_generation = s.generation;
        if (++s.arrived == s.size) {
            s.arrived = 0;
            s.leaving = s.size;
            s.arrived_flags.assign(std::size_t(s.size), false);
            ++s.generation;
            s.changed.notify_all();
        } else {
            wait(lock, id, [&] { return s.generation != my_generation; });
        }
        const std::string mismatch = s.mismatch;
        if (mismatch.empty()) std::memcpy(all, s.buffer.data(), bytes * std::size_t(s.size));
        if (--s.leaving == 0) s.changed.notify_all();
        if (!mismatch.empty()) throw_error(errc::collective_mismatch, rank_, host_call_name(id.call), mismatch);
    }

private:
    template <class Predicate>
    void wait(std::unique_lock<std::mutex>& lock, const exchange_id& id, Predicate ready) {
        auto& s = *state_;
        const auto failed = [&] { return s.abort_flag.load() != 0; };
        if (!s.changed.wait_for(lock, s.timeout, [&] { return failed() || ready(); })) {
            std::vector<int> late;
            for (int r = 0; r < s.size; ++r)
                if (!s.arrived_flags[std::size_t(r)] && r != rank_) late.push_back(r);
            throw_error(
                errc::timeout, rank_, host_call_name(id.call),
                "PE(s) " + pe_list(late) + " did not reach " + describe(id) + " within " +
                    std::to_string(s.timeout.count()) +
                    " ms (a PE hangs or skipped a collective call; PGAS_BOOTSTRAP_TIMEOUT_MS raises the limit)");
        }
        if (!ready()) {  // a round that completed is still read, so all report the same
            const int pe = s.abort_flag.load() - 1;
            throw_error(errc::peer_failed, rank_, host_call_name(id.call),
                        "PE " + std::to_string(pe) + " failed; stopped waiting in " + describe(id));
        }
    }

    std::shared_ptr<shared> state_;
    int rank_;
};

}  // namespace detail
PGAS_NAMESPACE_END
