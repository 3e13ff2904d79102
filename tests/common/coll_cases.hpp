// What the collectives' tests share on the host transport (tests/coll) and on GPUs (tests/gpu): element types, ops,
// input values, the host reference of every op, value printing, the failure log and the teams a case runs on.
#pragma once

#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace coll_cases {

using test::for_each_type;
using test::mix;
using test::type_list;
using test::type_name;

using all_types = type_list<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                            std::uint32_t, std::uint64_t, __half, __nv_bfloat16, float, double>;

template <class T>
constexpr bool is_int = std::is_integral_v<T>;
template <class T>
constexpr bool is_small_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// Every reduction op a type takes (bitwise ones for integers only): f(op, index of the op).
template <class T>
constexpr int n_ops = is_int<T> ? 7 : 4;
template <class T, class F>
void for_each_op(F&& f) {
    f(pgas::op::sum, std::integral_constant<int, 0>{});
    f(pgas::op::prod, std::integral_constant<int, 1>{});
    f(pgas::op::min, std::integral_constant<int, 2>{});
    f(pgas::op::max, std::integral_constant<int, 3>{});
    if constexpr (is_int<T>) {
        f(pgas::op::bit_and, std::integral_constant<int, 4>{});
        f(pgas::op::bit_or, std::integral_constant<int, 5>{});
        f(pgas::op::bit_xor, std::integral_constant<int, 6>{});
    }
}

template <class T>
T from_double(double v) {
    if constexpr (std::is_same_v<T, __half>) return __double2half(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __double2bfloat16(v);
    else return T(v);
}
template <class T>
double to_double(T v) {
    if constexpr (std::is_same_v<T, __half>) return double(__half2float(v));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return double(__bfloat162float(v));
    else return double(v);
}

// An element in which every bit depends on (pe, index, round): for data
// movement, where only the bytes matter. Every byte comes from the mix,
// whatever sizeof(T), so no byte is read from beyond the source.
template <class T>
T raw_value(int pe, std::size_t i, int round) {
    unsigned char bytes[sizeof(T)];
    for (std::size_t at = 0; at < sizeof(T); at += 8) {
        const std::uint64_t bits = mix(std::uint64_t(pe), i, std::uint64_t(round) + 977 * at);
        std::memcpy(bytes + at, &bits, sizeof(T) - at < 8 ? sizeof(T) - at : 8);
    }
    T v;
    std::memcpy(static_cast<void*>(&v), bytes, sizeof(T));
    return v;
}

// An input of a reduction: integers take every bit pattern (sums and
// products wrap); floating point takes values whose results are exact in
// any order, so the reference needs no tolerance.
template <class T, class Op>
T reduce_input(int pe, std::size_t i, int round, Op) {
    const std::uint64_t r = mix(std::uint64_t(pe), i, std::uint64_t(round) + 7);
    if constexpr (is_int<T>) {
        return raw_value<T>(pe, i, round);
    } else if constexpr (std::is_same_v<Op, pgas::op::prod_t>) {
        static constexpr double factors[] = {-2, -1, -0.5, 0.5, 1, 2};
        return from_double<T>(factors[r % 6]);
    } else if constexpr (std::is_same_v<Op, pgas::op::sum_t> || is_small_float<T>) {
        return from_double<T>(double(std::int64_t(r % 33) - 16));
    } else {
        return from_double<T>((double(std::int64_t(r % 200001)) - 100000.0) / 64.0);
    }
}

// The host reference of op, written independently of pgas's ops.
template <class T, class Op>
T reference_op(T a, T b, Op) {
    if constexpr (is_int<T>) {
        using U = std::make_unsigned_t<T>;
        const std::uint64_t x = U(a), y = U(b);
        if constexpr (std::is_same_v<Op, pgas::op::sum_t>) return T(U(x + y));
        else if constexpr (std::is_same_v<Op, pgas::op::prod_t>) return T(U(x * y));
        else if constexpr (std::is_same_v<Op, pgas::op::min_t>) return a < b ? a : b;
        else if constexpr (std::is_same_v<Op, pgas::op::max_t>) return a < b ? b : a;
        else if constexpr (std::is_same_v<Op, pgas::op::bit_and_t>) return T(U(x & y));
        else if constexpr (std::is_same_v<Op, pgas::op::bit_or_t>) return T(U(x | y));
        else return T(U(x ^ y));
    } else {
        const double x = to_double(a), y = to_double(b);
        if constexpr (std::is_same_v<Op, pgas::op::sum_t>) return from_double<T>(x + y);
        else if constexpr (std::is_same_v<Op, pgas::op::prod_t>) return from_double<T>(x * y);
        else if constexpr (std::is_same_v<Op, pgas::op::min_t>) return from_double<T>(x < y ? x : y);
        else return from_double<T>(x < y ? y : x);
    }
}

// Block `block` (count elements) of every member's reduce_input, reduced over team t in team order: what a
// reduction of round `round` must leave (reference_op, so floating point needs no tolerance).
template <class T, class Op>
std::vector<T> reduced_block(const pgas::team& t, std::size_t block, std::size_t count, int round, Op op) {
    std::vector<T> want(count);
    for (std::size_t i = 0; i < count; ++i) {
        T acc = reduce_input<T>(t.world_pe(0), block * count + i, round, op);
        for (int q = 1; q < t.n_pes(); ++q)
            acc = reference_op(acc, reduce_input<T>(t.world_pe(q), block * count + i, round, op), op);
        want[i] = acc;
    }
    return want;
}

template <class T>
bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// A value as a number (where it is one) and its bytes.
template <class T>
std::string show(const T& v) {
    std::ostringstream out;
    if constexpr (is_int<T>) out << +v << " ";
    else if constexpr (is_small_float<T> || std::is_floating_point_v<T>) out << to_double(v) << " ";
    out << "(bytes 0x" << std::hex;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&v);
    for (std::size_t i = sizeof(T); i-- > 0;) out << (bytes[i] < 16 ? "0" : "") << unsigned(bytes[i]);
    out << ")";
    return out.str();
}

// Mismatches of a whole run (seen by PE threads too), reported once by the test thread, the first ones in full.
class failure_log {
public:
    void add(const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (entries_.size() < 20) entries_.push_back(what);
        ++count_;
    }
    void check() const {
        std::string all;
        for (auto& e : entries_) all += e + "\n";
        CHECK_MESSAGE(count_ == 0, count_, " mismatches, first ones:\n", all);
    }

private:
    std::mutex mutex_;
    std::vector<std::string> entries_;
    std::size_t count_ = 0;
};

// The teams every case runs on: the world and a strided sub-team (odd PEs:
// 1, 3, 5, 7 as far as the world reaches; {0} for one PE).
struct teams {
    pgas::team world;
    pgas::team strided;
};
inline teams make_teams(pgas::world& w) {
    const int n = w.n_pes();
    const int start = n >= 2 ? 1 : 0;
    const int size = (n - start + 1) / 2;
    return {w.team_world(), w.split_strided(w.team_world(), start, 2, size)};
}

// Guard elements after every destination: a collective must not write past count.
inline constexpr std::size_t guard = 5;
inline constexpr unsigned char guard_byte = 0xA5;

}  // namespace coll_cases
