#!/bin/sh
# Runs a ThreadSanitizer test binary ($1, its arguments after it), or exits 77 (ctest: skipped) saying why when
# TSan cannot start a program on this kernel: its shadow memory needs a fixed layout, which ASLR with more
# random bits than the runtime knows (vm.mmap_rnd_bits > 28 with GCC 12's libtsan) breaks. It then retries
# without address randomisation (setarch -R), which some containers forbid.
bin=$1
if probe=$("$bin" --list-test-cases 2>&1); then
  exec "$@"
fi
arch=$(uname -m)
if setarch "$arch" -R "$bin" --list-test-cases >/dev/null 2>&1; then
  echo "tsan: running without address randomisation (setarch -R): TSan cannot start with it on $(uname -r)"
  exec setarch "$arch" -R "$@"
fi
case $probe in
  *ThreadSanitizer*) ;;
  *) printf '%s\n' "$probe"; echo "tsan: $bin --list-test-cases failed (above), and not for TSan's sake"; exit 1 ;;
esac
bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null)
echo "tsan: SKIPPED: ThreadSanitizer cannot start $bin on this kernel ($(uname -r), vm.mmap_rnd_bits=$bits)," \
     "not even under setarch -R:"
printf '%s\n' "$probe" | head -n 5
exit 77
