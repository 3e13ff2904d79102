// Reading pgas's environment variables (sizes, timeouts) with errors that name the variable and value.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/transport/channel.hpp>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Bounds of what pgas accepts from its environment (and from explicit
// arguments): values past them are mistakes, reported before anything is
// allocated or waited for.
inline constexpr int max_world_size = 1 << 16;                           // PEs of one world
inline constexpr std::uint64_t max_heap_bytes = std::uint64_t{1} << 40;  // 1 TiB per PE
inline constexpr std::uint64_t max_timeout_ms = 24ull * 3600 * 1000;     // one day
inline constexpr std::uint64_t default_bootstrap_timeout_ms = 30000;

inline std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

// "268435456", "256M", "1G", "64k", "1T" (binary multiples), up to and including max_heap_bytes.
inline std::uint64_t parse_size(const char* what, const std::string& text) {
    std::size_t used = 0;
    unsigned long long number = 0;
    try {
        number = std::stoull(text, &used);
    } catch (...) {
        used = 0;
    }
    std::uint64_t scale = 1;
    if (used > 0 && used + 1 == text.size()) {
        switch (std::toupper(static_cast<unsigned char>(text[used]))) {
            case 'K':
                scale = 1ull << 10;
                break;
            case 'M':
                scale = 1ull << 20;
                break;
            case 'G':
                scale = 1ull << 30;
                break;
            case 'T':
                scale = 1ull << 40;
                break;
            default:
                used = 0;
        }
        if (used) ++used;
    }
    if (used == 0 || used != text.size() || number == 0 || text[0] == '-' || text[0] == '+' ||
        std::isspace(static_cast<unsigned char>(text[0])))
        throw_error(errc::invalid_argument, -1, what,
                    "expected a positive size such as 268435456, 256M or 1G, got '" + text + "'");
    if (number > max_heap_bytes / scale)
        throw_error(errc::invalid_argument, -1, what,
                    "'" + text + "' is larger than the limit of " + std::to_string(max_heap_bytes) + " bytes (1T)");
    return std::uint64_t(number) * scale;
}

inline std::uint64_t env_size(const char* name, std::uint64_t fallback) {
    auto text = env(name);
    return text ? parse_size(name, *text) : fallback;
}

inline std::uint64_t env_milliseconds(const char* name, std::uint64_t fallback) {
    auto text = env(name);
    if (!text) return fallback;
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(*text, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != text->size() || !std::isdigit(static_cast<unsigned char>((*text)[0])))
        throw_error(errc::invalid_argument, -1, name,
                    "expected milliseconds as a non-negative integer (0 disables), got '" + *text + "'");
    if (value > max_timeout_ms)
        throw_error(errc::invalid_argument, -1, name,
                    "'" + *text + "' is larger than the limit of " + std::to_string(max_timeout_ms) + " ms (one day)");
    return value;
}

// PGAS_BOOTSTRAP_TIMEOUT_MS: the bound on every host-side collective step
// (default 30 s); it cannot be disabled.
inline std::chrono::milliseconds env_bootstrap_timeout() {
    const auto ms = env_milliseconds("PGAS_BOOTSTRAP_TIMEOUT_MS", default_bootstrap_timeout_ms);
    if (ms == 0)
        throw_error(errc::invalid_argument, -1, "PGAS_BOOTSTRAP_TIMEOUT_MS",
                    "must be positive: bootstrap steps are always bounded");
    return std::chrono::milliseconds(ms);
}

// Channels per peer for `call` on PE `pe` (-1: the process's): `requested` when it is not 0 (an options field),
// else PGAS_CHANNELS when set, else `fallback` (the transport's default). Outside [1, max_channels], or
// PGAS_CHANNELS not an integer: errc::invalid_argument naming the call, the PE and the value.
inline int resolve_channels(int requested, int fallback, const char* call, int pe) {
    const auto bad = [&](const std::string& where, const std::string& value) {
        throw_error(errc::invalid_argument, pe, call,
                    where + " must be an integer in [1, " + std::to_string(max_channels) + "], got '" + value + "'");
    };
    if (requested != 0) {
        if (requested < 1 || requested > max_channels) bad("channels", std::to_string(requested));
        return requested;
    }
    const auto text = env("PGAS_CHANNELS");
    if (!text) return fallback;
    std::size_t used = 0;
    long value = 0;
    try {
        value = std::stol(*text, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != text->size() || value < 1 || value > max_channels) bad("PGAS_CHANNELS", *text);
    return int(value);
}

}  // namespace detail
PGAS_NAMESPACE_END
