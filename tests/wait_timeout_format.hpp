// The one format of every wait's timeout (detail/wait.hpp), checked by the heap-word, proxy-ring and IBGDA tests.
#pragma once

#include <regex>
#include <string>

namespace test {

// "pgas: <call> on PE <pe>: timed out after <ms> ms waiting for <what>; raise PGAS_TIMEOUT_MS if the wait is legitimate"
inline bool is_wait_timeout(const std::string& text) {
    static const std::regex format(
        R"(pgas: \w+ on PE \d+: timed out after \d+ ms waiting for .+; raise PGAS_TIMEOUT_MS if the wait is legitimate)");
    return std::regex_match(text, format);
}

}  // namespace test
