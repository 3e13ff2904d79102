// doctest's main, compiled once (pgas_doctest_main, and one per sanitizer lane) for every doctest suite that has no main of its own.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
