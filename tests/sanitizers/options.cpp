// The sanitizer lanes' runtime options, linked into every sanitizer twin (tests/sanitizers/sanitizers.cmake): a
// report fails the test (non-zero exit), whoever runs the binary (ctest, by hand, a worker under pgasrun), with no
// *_OPTIONS variable to set. A variable set in the environment still overrides these.
extern "C" {
// Every ASan report ends the process; UBSan's are made fatal by -fno-sanitize-recover=all at compile time.
// detect_stack_use_after_return: a PE thread reading another's frame after it returned (a collective mismatch can
// read a value from the wrong frame). protect_shadow_gap=0: the CUDA driver maps memory in ASan's shadow gap on a
// GPU machine, and these suites load cudart (without it the first CUDA call there dies).
const char* __asan_default_options() {
    return "detect_leaks=1:detect_stack_use_after_return=1:protect_shadow_gap=0";
}
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
// TSan reports every race and exits 66 at the end (tests see the first one in the output); second_deadlock_stack
// shows where both locks of a lock-order inversion were taken.
const char* __tsan_default_options() { return "halt_on_error=0:exitcode=66:second_deadlock_stack=1"; }
// Suppressions, one per line, each with the reason beside it: none. (The libfabric lane adds its own file,
// tests/sanitizers/tsan-libfabric.supp, in TSAN_OPTIONS.)
const char* __tsan_default_suppressions() { return ""; }
const char* __lsan_default_suppressions() { return ""; }
}
