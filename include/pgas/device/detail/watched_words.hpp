// The one implementation behind the wait/test family: which words a call watches, how it scans them, how it waits.
#pragma once

#include <pgas/core/ordering.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/detail/wait.hpp>
#include <pgas/device/context.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The comparison value every word shares (the forms without _vector); a `const T*` gives one value per word.
template <class T>
struct same_value {
    T value;
    PGAS_HD T operator[](std::size_t) const { return value; }
};

// What a scan looks for among the selected words: all of them holding, any one, or every one that holds.
enum class match { all, any, some };

// ivars[0, count) of the caller's own heap, word i selected when status is null or status[i] == 0, holding when
// `seen <op> expected[i]`. A lone word (wait_until, signal_wait_until) is named without an index.
template <class T, class Expected>
struct watched_words {
    const char* call;
    const T* local;
    std::uint64_t offset;  // ivars[0]'s, for the timeout
    std::size_t count;
    const int* status;
    cmp op;
    Expected expected;
    bool lone;

    PGAS_HD bool selected(std::size_t i) const { return status == nullptr || status[i] == 0; }
    PGAS_HD bool holds(std::size_t i) const { return compare(load_acquire(local + i), op, T(expected[i])); }

    // all: the first selected word that does not hold (count when all do); any: the first that holds (count when
    // none does); some: how many hold, their indices written to `indices`.
    template <match M>
    PGAS_HD std::size_t scan(std::size_t* indices = nullptr) const {
        std::size_t found = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (!selected(i)) continue;
            const bool holding = holds(i);
            if constexpr (M == match::all) {
                if (!holding) return i;
            } else if constexpr (M == match::any) {
                if (holding) return i;
            } else if (holding) {
                indices[found++] = i;
            }
        }
        return M == match::some ? found : count;
    }

    PGAS_HD bool any_selected() const {
        for (std::size_t i = 0; i < count; ++i)
            if (selected(i)) return true;
        return false;
    }
};

template <class T>
PGAS_HD constexpr void require_waitable() {
    static_assert(is_atomic_word<T>,
                  "pgas: waits and tests take 2-, 4- or 8-byte integers or 4- or 8-byte "
                  "floating-point values");
}

// The words of one call, its arguments checked (PGAS_CHECKS: in the heap, naturally aligned).
template <class Tr, class T, class Expected>
PGAS_HD watched_words<T, Expected> watch(const device::context<Tr>& ctx, const char* call, symmetric_ptr<T> ivars,
                                         std::size_t count, const int* status, cmp op, Expected expected) {
    require_waitable<T>();
    check_range(ctx, call, ivars.offset(), std::uint64_t(count) * sizeof(T));
    check_aligned(ctx, call, ivars.offset(), sizeof(T));
    return {call, ctx.local(ivars), ivars.offset(), count, status, op, expected, false};
}

template <class Tr, class T>
PGAS_HD watched_words<T, same_value<T>> watch_lone(const device::context<Tr>& ctx, const char* call,
                                                   symmetric_ptr<T> ivar, cmp op, T value) {
    auto words = watch(ctx, call, ivar, 1, nullptr, op, same_value<T>{value});
    words.lone = true;
    return words;
}

// Waits until word i holds and returns the value that made it hold.
template <class Ctx, class T, class Expected>
PGAS_HD T wait_word(const Ctx& ctx, const watched_words<T, Expected>& w, std::size_t i) {
    const std::uint64_t offset = w.offset + i * sizeof(T);
    if (w.lone) return wait_address(ctx, w.call, w.local + i, offset, w.op, T(w.expected[i]));
    return wait_address_reporting(ctx, w.call, w.local + i, w.op, T(w.expected[i]), -1, [&](T seen, std::uint64_t ms) {
        report_word_timeout(w.call, ctx.my_pe(), i, offset, w.op, T(w.expected[i]), seen, ms);
    });
}

// Waits until scan<M> finds what it looks for and returns its result; without a selected word returns at once
// (all: count, any: count, some: 0). A timeout names the first selected word that does not hold.
template <match M, class Ctx, class T, class Expected>
PGAS_HD std::size_t wait_words(const Ctx& ctx, const watched_words<T, Expected>& w, std::size_t* indices = nullptr) {
    const std::size_t nothing = M == match::any ? w.count : 0;
    if constexpr (M == match::all) {
        // One word at a time: each poll loads one word, not count of them.
        for (std::size_t i = 0; i < w.count; ++i)
            if (w.selected(i)) wait_word(ctx, w, i);
        return w.count;
    } else {
        if (!w.any_selected()) return nothing;
        std::size_t found = nothing;
        auto attempt = [&] {
            found = w.template scan<M>(indices);
            return found != nothing;
        };
        poll_until(ctx.runtime, ctx.my_pe(), w.call, attempt, [&](std::uint64_t waited_ms) {
            const std::size_t i = w.template scan<match::all>();
            if (i == w.count) return;  // every selected word holds now: the next attempt returns
            report_word_timeout(w.call, ctx.my_pe(), i, w.offset + i * sizeof(T), w.op, T(w.expected[i]),
                                load_acquire(w.local + i), waited_ms);
        });
        return found;
    }
}

}  // namespace detail
PGAS_NAMESPACE_END
