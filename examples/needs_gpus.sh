#!/usr/bin/env bash
# Runs a command where at least N GPUs are visible; else exits 77 (ctest's SKIP_RETURN_CODE for these tests) and
# says why, so one list of multi-GPU tests serves machines of 2, 4 and 8 GPUs. For the programs that cannot say it
# themselves: the examples (they put PEs on GPUs modulo the count) and launchers that do not pass a skip status on.
#   needs_gpus.sh N COMMAND [ARGS...]
set -euo pipefail
n=$1
shift
found=0
if command -v nvidia-smi >/dev/null; then found=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
# CUDA_VISIBLE_DEVICES narrows what CUDA programs see (one entry per device; empty: none).
if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
  IFS=, read -ra visible <<< "$CUDA_VISIBLE_DEVICES"
  if (( ${#visible[@]} < found )); then found=${#visible[@]}; fi
fi
if (( found < n )); then
  echo "needs $n GPUs, found $found: skipped"
  exit 77
fi
exec "$@"
