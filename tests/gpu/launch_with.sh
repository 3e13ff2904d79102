#!/usr/bin/env bash
# Runs a GPU test binary as 2 processes under an outside launcher (mpirun or torchrun), the launch modes pgas must accept besides pgasrun.
#   launch_with.sh mpirun|torchrun BINARY ARGS...
set -euo pipefail
launcher=$1
shift
case $launcher in
  mpirun)
    # Open MPI refuses root without --allow-run-as-root (the GPU machine runs as root); MPICH has no such flag.
    if mpirun --version 2>&1 | grep -q "Open MPI"; then
      exec mpirun --allow-run-as-root --oversubscribe -n 2 "$@"
    fi
    exec mpirun -n 2 "$@" ;;
  torchrun)
    exec torchrun --standalone --nproc-per-node 2 --no-python "$@" ;;
  *)
    echo "launch_with.sh: unknown launcher '$launcher' (mpirun or torchrun)" >&2
    exit 2 ;;
esac
