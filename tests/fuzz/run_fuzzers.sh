#!/usr/bin/env bash
# Builds each bootstrap frame decoder's libFuzzer target with clang (ASan+UBSan) and runs it for a bounded time
# over a copy of its checked-in seed corpus. Exit 0: all clean; 1: a crash (the input is kept under WORK/crashes);
# 77: skipped (no clang with libFuzzer). Usage: run_fuzzers.sh WORK_DIR SECONDS_EACH
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?work dir}
seconds=${2:-20}
clang=${PGAS_FUZZ_CXX:-clang++}
cuda_include=""
for nvcc in "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
  if [[ -n $nvcc && -e $(dirname "$nvcc")/../include/nv/target ]]; then cuda_include=$(dirname "$nvcc")/../include; break; fi
done
mkdir -p "$work/crashes"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root/include")
[[ -n $cuda_include ]] && flags+=(-I"$cuda_include")
if ! command -v "$clang" >/dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     "$clang" -x c++ -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
  echo "fuzz: skipped: $clang with libFuzzer (-fsanitize=fuzzer) is not available; apt-get install clang libclang-rt-14-dev"
  exit 77
fi
status=0
for decoder in header hello prefix abort; do
  "$clang" "${flags[@]}" -DPGAS_FUZZ_DECODER_"$decoder" "$here/decode_fuzz.cpp" -o "$work/fuzz_$decoder"
  rm -rf "$work/corpus_$decoder" && cp -r "$here/corpus/$decoder" "$work/corpus_$decoder"
  echo "fuzz: $decoder for ${seconds}s"
  if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$work/fuzz_$decoder" -max_total_time="$seconds" -max_len=512 \
       -rss_limit_mb=1024 -artifact_prefix="$work/crashes/${decoder}-" -print_final_stats=1 \
       "$work/corpus_$decoder" "$here/corpus/$decoder" >"$work/fuzz_$decoder.log" 2>&1; then
    echo "fuzz: $decoder FAILED; its log:"; tail -40 "$work/fuzz_$decoder.log"; status=1
  else
    grep -E "^stat::number_of_executed_units|^Done" "$work/fuzz_$decoder.log" | tail -1 | sed "s/^/fuzz: $decoder: /"
  fi
done
exit $status
