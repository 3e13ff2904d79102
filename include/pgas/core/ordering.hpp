// Vocabulary of waits, signals and atomics: comparison, signal and atomic operation codes.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>

PGAS_NAMESPACE_BEGIN

/// Comparison used by wait_until, test and signal_wait_until: `seen <op> value`, with eq `==`, ne `!=`, gt `>`,
/// ge `>=`, lt `<`, le `<=`.
enum class cmp : std::uint8_t { eq, ne, gt, ge, lt, le };

/// What put_signal / signal does to the 64-bit signal word at the target: set (the word becomes the value) or add
/// (the value is added to it atomically).
enum class signal_op : std::uint8_t { set, add };

/// Remote atomic operation codes, shared by every transport (the proxy and
/// IBGDA encode them into commands / work requests). Programs call the
/// `atomic_*` functions; a transport's `atomic` member receives these.
enum class amo : std::uint8_t {
    fetch,         ///< read
    set,           ///< write
    swap,          ///< write, return old
    compare_swap,  ///< write if equal, return old
    fetch_add,     ///< add, return old
    fetch_and,     ///< bitwise and, return old
    fetch_or,      ///< bitwise or, return old
    fetch_xor,     ///< bitwise xor, return old
};

/// Whether `seen <op> value` holds; what every wait and test evaluates.
template <class T>
PGAS_HD constexpr bool compare(T seen, cmp op, T value) {
    switch (op) {
        case cmp::eq:
            return seen == value;
        case cmp::ne:
            return seen != value;
        case cmp::gt:
            return seen > value;
        case cmp::ge:
            return seen >= value;
        case cmp::lt:
            return seen < value;
        case cmp::le:
            return seen <= value;
    }
    return false;
}

/// The operator's C++ spelling ("==", "<", ...), for diagnostics.
PGAS_HD constexpr const char* to_string(cmp op) {
    switch (op) {
        case cmp::eq:
            return "==";
        case cmp::ne:
            return "!=";
        case cmp::gt:
            return ">";
        case cmp::ge:
            return ">=";
        case cmp::lt:
            return "<";
        case cmp::le:
            return "<=";
    }
    return "?";
}

PGAS_NAMESPACE_END
