#!/usr/bin/env bash
# Measures, under pgasrun -n 4, that kill -9 of any rank at any stage is named with status 137, and that no
# rank outlives pgasrun by more than its grace period, whatever signal ends pgasrun. Not a CTest (minutes long).
#
#   tests/bootstrap/kill_runs.sh BUILD_DIR [RUNS]
set -u
build=${1:?usage: kill_runs.sh BUILD_DIR [RUNS]}
runs=${2:-100}
pgasrun=$build/tools/pgasrun
worker=$build/tests/bootstrap/pgas_boot_worker
export PGAS_BOOTSTRAP_TIMEOUT_MS=2000 PGAS_TIMEOUT_MS=3000
stages=(init admission alloc free barrier fd device collective external)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

alive() {  # pids given that still run (zombies do not)
  local p left=""
  for p in "$@"; do
    [[ -r /proc/$p/stat ]] && [[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) != Z ]] && left+=" $p"
  done
  echo "$left"
}

named=0
for ((run = 0; run < runs; ++run)); do
  stage=${stages[run % ${#stages[@]}]}
  victim=$(((run / ${#stages[@]}) % 4))
  if [[ $stage == external ]]; then  # the test kills the victim from outside while the others wait
    "$pgasrun" -n 4 --grace 4 "$worker" fault external KILL "$victim" >"$out" 2>&1 &
    job=$!
    for _ in $(seq 300); do (($(grep -c '] ready' "$out") == 4)) && break; sleep 0.02; done
    pid=$(sed -n "s/^\[$victim\] pid \([0-9]*\)$/\1/p" "$out")
    kill -9 "$pid"
    wait "$job"
  else
    "$pgasrun" -n 4 --grace 4 "$worker" fault "$stage" KILL "$victim" >"$out" 2>&1
  fi
  status=$?
  pids=$(sed -n 's/^\[[0-9]*\] pid \([0-9]*\)$/\1/p' "$out")
  left=$(alive $pids)
  if ((status == 137)) && grep -q "^pgasrun: rank $victim (pid [0-9]*) was killed by signal 9" "$out" && [[ -z $left ]]; then
    ((++named))
  else
    echo "run $run ($stage, victim $victim): status $status, left:$left"
    grep '^pgasrun:' "$out"
  fi
done
echo "kill -9 named with status 137 and nothing left: $named of $runs runs"

# pgasrun itself ended by each signal while its ranks sleep: every rank must be gone within the grace (3 s).
for signal in TERM INT HUP KILL; do
  "$pgasrun" -n 4 /bin/sh -c 'echo pid $$; exec sleep 60' >"$out" 2>&1 &
  job=$!
  for _ in $(seq 300); do (($(grep -c '] pid' "$out") == 4)) && break; sleep 0.02; done
  pids=$(sed -n 's/^\[[0-9]*\] pid \([0-9]*\)$/\1/p' "$out")
  kill -s "$signal" "$job"
  wait "$job" 2>/dev/null
  ended=$(date +%s%N)
  while [[ -n $(alive $pids) ]] && (($(date +%s%N) - ended < 3000000000)); do sleep 0.01; done
  left=$(alive $pids)
  echo "pgasrun ended by SIG$signal: ranks gone $((($(date +%s%N) - ended) / 1000000)) ms after it${left:+, still alive:$left}"
  [[ -n $left ]] && kill -9 $left
done
