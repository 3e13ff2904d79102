#!/usr/bin/env bash
# Runs a GPU test binary as N processes under an outside launcher (mpirun or torchrun), the launch modes pgas must accept besides pgasrun.
#   launch_with.sh mpirun|torchrun N BINARY ARGS...
set -euo pipefail
launcher=$1
n=$2
shift 2
case $launcher in
  mpirun)
    # Open MPI refuses root without --allow-run-as-root (the GPU machine runs as root); MPICH has no such flag.
    if mpirun --version 2>&1 | grep -q "Open MPI"; then
      exec mpirun --allow-run-as-root --oversubscribe -n "$n" "$@"
    fi
    exec mpirun -n "$n" "$@" ;;
  torchrun)
    exec torchrun --standalone --nproc-per-node "$n" --no-python "$@" ;;
  *)
    echo "launch_with.sh: unknown launcher '$launcher' (mpirun or torchrun)" >&2
    exit 2 ;;
esac
