#!/bin/bash
# Runs the doctest cases of a ThreadSanitizer binary ($1; doctest filters such as --test-case=... after it), each in
# its own process, and fails when one fails or TSan reports anything (exit 66). Case by case, so that a report names
# its case and every case starts from a fresh TSan state (the host suite's 77 cases: 7.6 s against 6.5 s in one).
# Exits 77 (ctest: skipped), saying why, when TSan cannot start a program on this kernel: its shadow memory needs a
# fixed layout, which ASLR with more random bits than the runtime knows (vm.mmap_rnd_bits > 28 with GCC 12's libtsan)
# breaks; it retries without address randomisation (setarch -R) first, which some containers forbid.
bin=$1
shift
run=()
if ! probe=$("$bin" --list-test-cases 2>&1); then
  if setarch "$(uname -m)" -R "$bin" --list-test-cases >/dev/null 2>&1; then
    echo "tsan: running without address randomisation (setarch -R): TSan cannot start with it on $(uname -r)"
    run=(setarch "$(uname -m)" -R)
  else
    case $probe in
      *ThreadSanitizer*) ;;
      *) printf '%s\n' "$probe"; echo "tsan: $bin --list-test-cases failed (above), and not for TSan's sake"; exit 1 ;;
    esac
    bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null)
    echo "tsan: SKIPPED: ThreadSanitizer cannot start $bin on this kernel ($(uname -r), vm.mmap_rnd_bits=$bits)," \
         "not even under setarch -R:"
    printf '%s\n' "$probe" | head -n 5
    exit 77
  fi
fi
# The listing: doctest's own lines start with "[doctest]" or "===".
mapfile -t cases < <("${run[@]}" "$bin" --list-test-cases "$@" 2>/dev/null | grep -v -e '^\[doctest\]' -e '^===')
if (( ${#cases[@]} == 0 )); then echo "tsan: $bin lists no test case for ${*:-no filter}"; exit 1; fi
failed=0
for name in "${cases[@]}"; do
  # doctest's filters split at commas and read * and ? as wildcards: escape commas, and let ? stand for itself.
  if ! out=$("${run[@]}" "$bin" "--test-case=${name//,/\\,}" 2>&1); then
    printf '%s\n' "$out"
    echo "tsan: FAILED: $name"
    failed=$((failed + 1))
  fi
done
echo "tsan: ${#cases[@]} cases of $(basename "$bin"), each in its own process: $failed failed"
(( failed == 0 )) || exit 66
