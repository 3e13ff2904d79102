// Bootstrap: how the PEs of a world find each other and exchange small messages on the host.
#pragma once

#include <pgas/core/error.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

PGAS_NAMESPACE_BEGIN
namespace detail {

// One participant per process (or per SPMD thread). Collective calls must be
// made by every participant in the same order; each is bounded by a timeout
// and a missing participant becomes pgas::error(errc::timeout or bootstrap).
class bootstrap {
public:
    virtual ~bootstrap() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // all[i * bytes ...] receives participant i's `mine`.
    virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
    virtual void barrier() = 0;

    template <class T>
    std::vector<T> allgather_value(const T& mine) {
        std::vector<T> all(static_cast<std::size_t>(size()));
        allgather(&mine, all.data(), sizeof(T));
        return all;
    }
};

// A world of one participant (one process driving all its PEs).
class single_bootstrap final : public bootstrap {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    void allgather(const void* mine, void* all, std::size_t bytes) override { std::memcpy(all, mine, bytes); }
    void barrier() override {}
};

// Participants are threads of this process (host-transport SPMD worlds).
// Shared state: a generation-counted rendezvous guarded by one mutex.
class thread_bootstrap final : public bootstrap {
public:
    struct shared {
        explicit shared(int n, std::chrono::milliseconds timeout) : size(n), timeout(timeout) {}
        std::mutex mutex;
        std::condition_variable changed;
        const int size;
        const std::chrono::milliseconds timeout;
        int arrived = 0;
        int leaving = 0;
        std::uint64_t generation = 0;
        std::vector<unsigned char> buffer;
    };

    thread_bootstrap(std::shared_ptr<shared> state, int rank) : state_(std::move(state)), rank_(rank) {}

    int rank() const override { return rank_; }
    int size() const override { return state_->size; }

    void allgather(const void* mine, void* all, std::size_t bytes) override {
        std::unique_lock lock(state_->mutex);
        // A round starts only after every participant has copied the last
        // round's result out (`leaving` back to 0), so no one overwrites it.
        wait(lock, [&] { return state_->leaving == 0; });
        if (state_->arrived == 0) state_->buffer.assign(bytes * std::size_t(state_->size), 0);
        std::memcpy(state_->buffer.data() + bytes * std::size_t(rank_), mine, bytes);
        const std::uint64_t my_generation = state_->generation;
        if (++state_->arrived == state_->size) {
            state_->arrived = 0;
            state_->leaving = state_->size;
            ++state_->generation;
            state_->changed.notify_all();
        } else {
            wait(lock, [&] { return state_->generation != my_generation; });
        }
        std::memcpy(all, state_->buffer.data(), bytes * std::size_t(state_->size));
        if (--state_->leaving == 0) state_->changed.notify_all();
    }

    void barrier() override {
        char token = 0;
        std::vector<char> all(std::size_t(state_->size));
        allgather(&token, all.data(), 1);
    }

private:
    template <class Predicate>
    void wait(std::unique_lock<std::mutex>& lock, Predicate ready) {
        if (!state_->changed.wait_for(lock, state_->timeout, ready))
            throw_error(errc::timeout, rank_, "bootstrap allgather",
                        "not every PE arrived within " + std::to_string(state_->timeout.count()) +
                            " ms (a PE failed or skipped a collective call)");
    }

    std::shared_ptr<shared> state_;
    int rank_;
};

}  // namespace detail
PGAS_NAMESPACE_END
