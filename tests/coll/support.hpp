// Shared helpers of the collectives' host-transport tests: the shared collective values and references
// (tests/common/coll_cases.hpp), case descriptions and their comparison, policies, world options.
#pragma once

#include "../common/coll_cases.hpp"

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

namespace coll_test {

using namespace coll_cases;
using test::options;

using ctx = pgas::device::context<pgas::host>;

// What a case is, for failure messages.
struct case_info {
    const char* collective;
    const char* type;
    const char* op;
    const char* team;
    const char* policy;
    int n_pes;
    std::size_t count;
    int shift;
    std::string text(int pe) const {
        std::ostringstream out;
        out << collective << " " << type << " " << op << " team=" << team << " policy=" << policy
            << " n_pes=" << n_pes << " count=" << count << " shift=" << shift << " on PE " << pe;
        return out.str();
    }
};

// Compares n elements; logs the first difference with its context.
template <class T>
bool expect_equal(failure_log& log, const case_info& info, int pe, const char* what, const T* got, const T* want,
                  std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (!same_bits(got[i], want[i])) {
            log.add(info.text(pe) + ": " + what + "[" + std::to_string(i) + "] = " + show(got[i]) + ", expected " +
                    show(want[i]));
            return false;
        }
    return true;
}

template <class P>
const char* policy_name() {
    if constexpr (std::is_same_v<P, pgas::coll::ll_policy>) return "ll";
    else if constexpr (std::is_same_v<P, pgas::coll::direct_policy>) return "direct";
    else if constexpr (std::is_same_v<P, pgas::coll::rma_policy>) return "rma";
    else return "automatic";
}

inline constexpr int max_pes = 8;

// A 12-byte element: data movement takes any trivially copyable type, and its sub-slices split on single elements
// (no 16-byte grain).
struct triple {
    std::int32_t a, b, c;
};

}  // namespace coll_test
