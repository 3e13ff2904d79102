# Sourced by pgas's scripts: puts nvcc on PATH and, on a GPU machine without apt, the bundled packages.
_pgas_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [[ -f $_pgas_root/.deps/env.sh ]]; then
  # shellcheck disable=SC1091
  source "$_pgas_root/.deps/env.sh"
fi
# NVLink multicast is never used by pgas; keep the peers we compare with off it too.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# True when a CUDA GPU is visible.
pgas_have_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }
# How many CUDA GPUs are visible (0 without nvidia-smi).
pgas_gpu_count() { if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; else echo 0; fi; }
# ctest label arguments for this machine: no GPU tests without a GPU, no multi_gpu ones with one.
pgas_label_args() {
  local gpus
  gpus=$(pgas_gpu_count)
  if (( gpus == 0 )); then echo "-LE gpu"; elif (( gpus == 1 )); then echo "-LE multi_gpu"; fi
}
# Configures $1 (default build) with the log in $1/configure.log; prints the log when configure fails.
pgas_configure() {
  local build=${1:-build} start=$SECONDS
  mkdir -p "$build"
  echo "pgas: configuring $build (log: $build/configure.log)"
  if ! cmake -S "$_pgas_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$build/configure.log" 2>&1; then
    echo "pgas: configure failed; $build/configure.log:" >&2
    cat "$build/configure.log" >&2
    return 1
  fi
  echo "pgas: configured in $((SECONDS - start)) s"
}
# Builds targets $2... (default all) in $1 with every core, saying how many steps and, every minute, that it still runs.
pgas_make() {
  local build=$1 start=$SECONDS steps rc=0 heartbeat targets=()
  shift
  (( $# == 0 )) || targets=(--target "$@")
  # (ninja -n cannot count them: CONFIGURE_DEPENDS globs make it plan a re-run of CMake first)
  steps=$(ninja -C "$build" -t commands "$@" 2>/dev/null | wc -l || true)
  echo "pgas: building ${*:-everything}: $steps compile and link steps (those up to date are skipped) on $(nproc) cores"
  # One long nvcc step prints nothing for minutes: say that it is still going.
  # (sleep writes nowhere: once this loop is killed, it must not hold a pipe on our output open.)
  ( while sleep 60 >/dev/null 2>&1 && kill -0 $$ 2>/dev/null; do echo "pgas: still building ($((SECONDS - start)) s)"; done ) &
  heartbeat=$!
  cmake --build "$build" -j "$(nproc)" "${targets[@]}" || rc=$?
  kill "$heartbeat" 2>/dev/null; wait "$heartbeat" 2>/dev/null || true
  if (( rc != 0 )); then echo "pgas: build failed after $((SECONDS - start)) s" >&2; return "$rc"; fi
  echo "pgas: built in $((SECONDS - start)) s"
}
# Configures and builds everything into $1 (default build).
pgas_build() {
  local build=${1:-build}
  pgas_configure "$build"
  pgas_make "$build"
}
