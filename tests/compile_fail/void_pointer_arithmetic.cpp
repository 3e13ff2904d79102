// expect: arithmetic on symmetric_ptr<void>
#include <pgas/pgas.hpp>
pgas::symmetric_ptr<void> misuse(pgas::symmetric_ptr<void> p) { return p + 1; }
