// Host transport: the *_vector waits and tests, waits on 2-byte words, and the wait family's timeouts (device/sync.hpp,
// signal.hpp), which name the word each form waited on, in one shape.
#include "../wait_timeout_format.hpp"
#include "support.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <regex>
#include <string>
#include <vector>

namespace {

// One PE, four words, word 0 masked out by the status array; waits time out after 100 ms.
struct masked_words {
    pgas::world w = pgas::world::init_local(1, test::options(/*timeout_ms=*/100));
    pgas::symmetric_ptr<std::uint64_t> words = w.alloc<std::uint64_t>(4);
    test::ctx ctx = w.context<pgas::host>(0);
    const int status[4] = {1, 0, 0, 0};
    const std::uint64_t want[4] = {9, 9, 9, 9};
    std::size_t indices[4] = {};

    explicit masked_words(std::vector<std::uint64_t> seen) {
        for (std::size_t i = 0; i < 4; ++i) w.local(words, 0)[i] = seen[i];
    }
    std::string offset(int i) const { return std::to_string((words + i).offset()); }
};

// The text of the timeout `wait` ends in (a failed check when it returns or throws something else).
std::string timeout_of(const std::function<void()>& wait) {
    const std::string text = test::error_of(wait, pgas::errc::timeout);
    CHECK_MESSAGE(test::is_wait_timeout(text), text);
    return text;
}

// "... waiting for [ivars[<i>] at ]heap offset <offset> >= 9 (seen <seen>); raise ...": the shape every form shares.
void parse(const std::string& text, std::smatch& parts) {
    static const std::regex shape(
        R"(pgas: (\w+) on PE 0: timed out after \d+ ms waiting for (ivars\[(\d+)\] at )?heap offset (\d+) >= 9 \(seen (\d+)\); .*)");
    CHECK_MESSAGE(std::regex_match(text, parts, shape), text);
}

using wait_form = std::pair<const char*, std::function<void()>>;

// Each form times out naming itself, word `index` (none for a lone word) at its offset, and the value seen there.
template <std::size_t N>
void expect_names(const wait_form (&forms)[N], const masked_words& m, int index, bool lone, const char* seen) {
    for (const auto& [call, form] : forms) {
        INFO(call);
        std::smatch parts;
        const std::string text = timeout_of(form);
        parse(text, parts);
        CHECK(parts[1] == call);
        CHECK(parts[2].matched == !lone);
        if (!lone) CHECK(parts[3] == std::to_string(index));
        CHECK(parts[4] == m.offset(index));
        CHECK(parts[5] == seen);
    }
}

}  // namespace

TEST_CASE("wait_until_any with ivars[0] masked out by the status array names the word it waited on") {
    masked_words m({3, 7, 8, 8});
    const std::string text = timeout_of([&] { (void)pgas::wait_until_any(m.ctx, m.words, 4, m.status, pgas::cmp::ge, 9); });
    CHECK_MESSAGE(test::contains(text, "wait_until_any on PE 0"), text);
    CHECK_MESSAGE(test::contains(text, "ivars[1] at heap offset " + m.offset(1) + " >= 9 (seen 7)"), text);
    CHECK_MESSAGE(!test::contains(text, "seen 3"), text);
}

TEST_CASE("every array wait names the first selected word not yet satisfied, its offset, the condition and the value seen") {
    // words 0 (masked) and 1 hold; the first selected word still short of 9 is word 2
    masked_words m({3, 9, 8, 7});
    const wait_form all_forms[] = {
        {"wait_until_all", [&] { pgas::wait_until_all(m.ctx, m.words, 4, m.status, pgas::cmp::ge, 9); }},
        {"wait_until_all_vector", [&] { pgas::wait_until_all_vector(m.ctx, m.words, 4, m.status, pgas::cmp::ge, m.want); }},
    };
    expect_names(all_forms, m, 2, false, "8");
    // no selected word holds: the any and some forms name the first selected one, word 1
    masked_words none({3, 7, 8, 8});
    const wait_form any_forms[] = {
        {"wait_until_any", [&] { (void)pgas::wait_until_any(none.ctx, none.words, 4, none.status, pgas::cmp::ge, 9); }},
        {"wait_until_some",
         [&] { (void)pgas::wait_until_some(none.ctx, none.words, 4, none.indices, none.status, pgas::cmp::ge, 9); }},
        {"wait_until_any_vector",
         [&] { (void)pgas::wait_until_any_vector(none.ctx, none.words, 4, none.status, pgas::cmp::ge, none.want); }},
        {"wait_until_some_vector",
         [&] {
             (void)pgas::wait_until_some_vector(none.ctx, none.words, 4, none.indices, none.status, pgas::cmp::ge,
                                                none.want);
         }},
    };
    expect_names(any_forms, none, 1, false, "7");
}

TEST_CASE("a lone word's wait (wait_until, signal_wait_until) times out in the same shape, without an index") {
    masked_words m({3, 7, 8, 8});
    const wait_form forms[] = {
        {"wait_until", [&] { (void)pgas::wait_until(m.ctx, m.words + 1, pgas::cmp::ge, 9); }},
        {"signal_wait_until", [&] { (void)pgas::signal_wait_until(m.ctx, m.words + 1, pgas::cmp::ge, 9); }},
    };
    expect_names(forms, m, 1, true, "7");
}

TEST_CASE("a floating-point array wait names its word and values as numbers") {
    auto w = pgas::world::init_local(1, test::options(/*timeout_ms=*/100));
    auto words = w.alloc<double>(3);
    auto ctx = w.context<pgas::host>(0);
    const double seen[3] = {0.5, 1.5, 2.5};
    for (int i = 0; i < 3; ++i) w.local(words, 0)[i] = seen[i];
    const int status[3] = {1, 1, 0};
    const std::string text = timeout_of([&] { (void)pgas::wait_until_any(ctx, words, 3, status, pgas::cmp::gt, 4.0); });
    CHECK_MESSAGE(test::contains(text, "ivars[2] at heap offset " + std::to_string((words + 2).offset()) +
                                           " > 4 (seen 2.5)"),
                  text);
}

// ---- the *_vector waits and tests ----

TEST_CASE("wait_until_{all,any,some}_vector and test_*_vector: one comparison value per word, status mask") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options());
        constexpr std::size_t count = 6;
        auto words = w.alloc<std::int64_t>(count * std::size_t(n_pes));  // block q: words PE q waits on
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes();
            const auto mine = words + std::ptrdiff_t(count * std::size_t(me));
            const std::int64_t want[count] = {1, 2, 3, 4, 5, 6};
            const int status[count] = {0, 0, 1, 0, 0, 1};  // words 2 and 5 are not selected
            std::size_t indices[count];
            // nothing written yet: no selected word reaches its value
            CHECK_FALSE(pgas::test_all_vector(ctx, mine, count, status, pgas::cmp::ge, want));
            CHECK(pgas::test_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) == count);
            CHECK(pgas::test_some_vector(ctx, mine, count, indices, status, pgas::cmp::ge, want) == 0);
            pgas::barrier_all(ctx);
            // the left neighbour writes word 3 first: any and some see exactly it
            const int right = (me + 1) % n;
            const auto theirs = words + std::ptrdiff_t(count * std::size_t(right));
            pgas::p(ctx, theirs + 3, std::int64_t(4), right);
            pgas::quiet(ctx);
            CHECK(pgas::wait_until_any_vector(ctx, mine, count, status, pgas::cmp::ge, want) == 3);
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, status, pgas::cmp::ge, want) == 1);
            CHECK(indices[0] == 3);
            CHECK(pgas::test_any_vector(ctx, mine, count, nullptr, pgas::cmp::ge, want) == 3);
            pgas::sync_all(ctx);
            // then every word (the unselected ones below their values): all is satisfied with the mask only
            for (std::size_t i = 0; i < count; ++i)
                pgas::p(ctx, theirs + std::ptrdiff_t(i), std::int64_t(status[i] ? 0 : want[i] + 10), right);
            pgas::quiet(ctx);
            pgas::wait_until_all_vector(ctx, mine, count, status, pgas::cmp::ge, want);
            CHECK(pgas::test_all_vector(ctx, mine, count, status, pgas::cmp::ge, want));
            CHECK_FALSE(pgas::test_all_vector(ctx, mine, count, nullptr, pgas::cmp::ge, want));
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, status, pgas::cmp::gt, want) == 4);
            CHECK(indices[3] == 4);
            // a mask that selects nothing returns at once
            const int none[count] = {1, 1, 1, 1, 1, 1};
            CHECK(pgas::wait_until_any_vector(ctx, mine, count, none, pgas::cmp::eq, want) == count);
            CHECK(pgas::wait_until_some_vector(ctx, mine, count, indices, none, pgas::cmp::eq, want) == 0);
            pgas::barrier_all(ctx);
        });
    });
}

TEST_CASE("a *_vector wait that cannot finish times out naming the first selected word, its value and what it saw") {
    auto w = pgas::world::init_local(1, test::options(/*timeout_ms=*/200));
    auto words = w.alloc<std::uint64_t>(4);
    auto ctx = w.context<pgas::host>(0);
    w.local(words, 0)[1] = 7;
    const std::uint64_t want[4] = {1, 9, 9, 9};
    const int status[4] = {1, 0, 0, 0};
    for (int which = 0; which < 3; ++which) {
        CAPTURE(which);
        const std::string text = test::error_of([&] {
            std::size_t indices[4];
            if (which == 0) pgas::wait_until_all_vector(ctx, words, 4, status, pgas::cmp::ge, want);
            if (which == 1) (void)pgas::wait_until_any_vector(ctx, words, 4, status, pgas::cmp::ge, want);
            if (which == 2) (void)pgas::wait_until_some_vector(ctx, words, 4, indices, status, pgas::cmp::ge, want);
        }, pgas::errc::timeout);
        CHECK_MESSAGE(test::contains(text, "_vector on PE 0"), text);
        CHECK_MESSAGE(test::contains(text, "heap offset " + std::to_string((words + 1).offset()) + " >= 9 (seen 7)"),
                      text);
    }
}

TEST_CASE("2-byte integer words: wait_until, test and wait_until_any read the word alone, its sign kept") {
    test::for_each_pe_count([](int n_pes) {
        auto w = pgas::world::init_local(n_pes, test::options(/*timeout_ms=*/2000));
        auto words = w.alloc<std::int16_t>(4);  // word 1 is written by the left neighbour; 0, 2 and 3 stay 0x7f7f
        w.launch_host([&](const test::ctx& ctx) {
            const int me = ctx.my_pe(), n = ctx.n_pes(), left = (me + n - 1) % n;
            for (int i = 0; i < 4; ++i) w.local(words, me)[i] = 0x7f7f;
            pgas::barrier_all(ctx);
            CHECK_FALSE(pgas::test(ctx, words + 1, pgas::cmp::lt, std::int16_t(0)));
            pgas::barrier_all(ctx);
            pgas::p(ctx, words + 1, std::int16_t(-300 - me), (me + 1) % n);
            pgas::quiet(ctx);
            CHECK(pgas::wait_until(ctx, words + 1, pgas::cmp::lt, std::int16_t(0)) == std::int16_t(-300 - left));
            CHECK(pgas::wait_until_any(ctx, words, 4, nullptr, pgas::cmp::lt, std::int16_t(0)) == 1);
            CHECK(pgas::test(ctx, words + 1, pgas::cmp::eq, std::int16_t(-300 - left)));
            // its neighbours in the same 4-byte word are untouched
            CHECK(w.local(words, me)[0] == 0x7f7f);
            CHECK(w.local(words, me)[2] == 0x7f7f);
            pgas::barrier_all(ctx);
        });
    });
}
