// Fixture of ctest "docs: the check finds an undocumented public function": docs/Doxyfile.in over this header must
// fail naming forgotten_call, and neither documented_call nor detail::hidden_helper (implementation is left out).
#pragma once

#include <pgas/core/config.hpp>

PGAS_NAMESPACE_BEGIN

/// Documented: the check must not name it.
PGAS_HD inline int documented_call(int x) { return x; }

PGAS_HD inline int forgotten_call(int x) { return x + 1; }

namespace detail {
PGAS_HD inline int hidden_helper(int x) { return x - 1; }
}  // namespace detail

PGAS_NAMESPACE_END
