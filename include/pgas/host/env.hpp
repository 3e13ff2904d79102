// Reading pgas's environment variables (sizes, timeouts) with errors that name the variable and value.
#pragma once

#include <pgas/core/error.hpp>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

PGAS_NAMESPACE_BEGIN
namespace detail {

inline std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

// "268435456", "256M", "1G", "64k" (binary multiples).
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
            case 'K': scale = 1ull << 10; break;
            case 'M': scale = 1ull << 20; break;
            case 'G': scale = 1ull << 30; break;
            default: used = 0;
        }
        if (used) ++used;
    }
    if (used == 0 || used != text.size() || number == 0 || text[0] == '-')
        throw_error(errc::invalid_argument, -1, what,
                    "expected a positive size such as 268435456, 256M or 1G, got '" + text + "'");
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
    if (used == 0 || used != text->size() || (*text)[0] == '-')
        throw_error(errc::invalid_argument, -1, name,
                    "expected milliseconds as a non-negative integer (0 disables), got '" + *text + "'");
    return value;
}

}  // namespace detail
PGAS_NAMESPACE_END
