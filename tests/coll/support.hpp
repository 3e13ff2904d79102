// Shared helpers of the collectives' host-transport tests: element types, values, host references, failure log.
#pragma once

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace coll_test {

using ctx = pgas::device::context<pgas::host>;

template <class... Ts>
struct type_list {};
using all_types = type_list<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                            std::uint32_t, std::uint64_t, __half, __nv_bfloat16, float, double>;
template <class F, class... Ts>
void for_each_type(type_list<Ts...>, F&& f) {
    (f(std::type_identity<Ts>{}), ...);
}

template <class T>
constexpr bool is_int = std::is_integral_v<T>;
template <class T>
constexpr bool is_small_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <class T>
const char* type_name() {
    if constexpr (std::is_same_v<T, __half>) return "half";
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bf16";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_signed_v<T>) return sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64";
    else return sizeof(T) == 1 ? "uint8" : sizeof(T) == 2 ? "uint16" : sizeof(T) == 4 ? "uint32" : "uint64";
}

// Every reduction op a type takes (bitwise ones for integers only).
template <class T, class F>
void for_each_op(F&& f) {
    f(pgas::op::sum);
    f(pgas::op::prod);
    f(pgas::op::min);
    f(pgas::op::max);
    if constexpr (is_int<T>) {
        f(pgas::op::bit_and);
        f(pgas::op::bit_or);
        f(pgas::op::bit_xor);
    }
}

inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
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
// movement, where only the bytes matter.
// Every byte comes from the mix, whatever sizeof(T) (12-byte elements once
// took 4 bytes from beyond an 8-byte source: stack garbage that differed
// between the sender's and the reference's frames).
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

template <class T>
bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

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

// Failures seen by PE threads, reported once by the test thread.
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

inline pgas::world_options options() {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{16} << 20;
    o.timeout_ms = 20000;
    return o;
}

inline constexpr int max_pes = 8;

// Guard elements after every destination: a collective must not write past count.
inline constexpr std::size_t guard = 5;
inline constexpr unsigned char guard_byte = 0xA5;

}  // namespace coll_test
