# Sourced by pgas's scripts: puts nvcc on PATH and, on a GPU machine without apt, the bundled packages.
_pgas_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [[ -f $_pgas_root/.deps/env.sh ]]; then
  # shellcheck disable=SC1091
  source "$_pgas_root/.deps/env.sh"
fi
# A CUDA-enabled libfabric from scripts/build-libfabric-cuda (FI_HMEM) goes before any other:
# its library first on the loader's path (RUNPATH yields to LD_LIBRARY_PATH), and no other build's providers.
if [[ -z ${PGAS_LIBFABRIC_ROOT:-} && -f $_pgas_root/.deps/libfabric-cuda/lib/pkgconfig/libfabric.pc ]]; then
  export PGAS_LIBFABRIC_ROOT=$_pgas_root/.deps/libfabric-cuda
fi
if [[ -n ${PGAS_LIBFABRIC_ROOT:-} ]]; then
  export LD_LIBRARY_PATH=$PGAS_LIBFABRIC_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  unset FI_PROVIDER_PATH
fi
# NVLink multicast is never used by pgas; keep the peers we compare with off it too.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# True when a CUDA GPU is visible.
pgas_have_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }
# How many CUDA GPUs are visible (0 without nvidia-smi).
pgas_gpu_count() { if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; else echo 0; fi; }
# ctest label arguments for this machine: no GPU tests without a GPU, no multi_gpu ones with one, and
# the mps ones (processes sharing a GPU) only while pgas_mps_start has the daemon running.
pgas_label_args() {
  local gpus skip=()
  gpus=$(pgas_gpu_count)
  if (( gpus == 0 )); then echo "-LE gpu"; return; fi
  (( gpus == 1 )) && skip+=(multi_gpu)
  [[ ${PGAS_MPS_ACTIVE:-0} == 1 ]] || skip+=(mps)
  (( ${#skip[@]} )) && echo "-LE $(IFS='|'; echo "${skip[*]}")"
  return 0
}
# Starts the CUDA MPS daemon (pipe and log directories under /tmp) so that processes sharing a GPU run
# concurrently instead of time-sliced, and stops it when the calling script exits. Says why when it cannot.
pgas_mps_start() {
  if ! command -v nvidia-cuda-mps-control >/dev/null; then
    echo "mps: nvidia-cuda-mps-control not found: the tests of processes sharing one GPU (label mps) are skipped" >&2
    return 1
  fi
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/pgas-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/pgas-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if ! nvidia-cuda-mps-control -d; then
    echo "mps: the MPS daemon did not start (see $CUDA_MPS_LOG_DIRECTORY): label mps skipped" >&2
    return 1
  fi
  trap pgas_mps_stop EXIT
  export PGAS_MPS_ACTIVE=1
  echo "mps: daemon started (pipes in $CUDA_MPS_PIPE_DIRECTORY); stopped when this script exits"
}
# Stops the daemon pgas_mps_start started (never leaves one running).
pgas_mps_stop() {
  [[ ${PGAS_MPS_ACTIVE:-0} == 1 ]] || return 0
  echo quit | nvidia-cuda-mps-control && echo "mps: daemon stopped"
  export PGAS_MPS_ACTIVE=0
}
# ON when a GPU is visible or CI asks for it (PGAS_CI=1: CI compiles the GPU code it cannot run, since it is the only
# compiler that sees it before the GPU machine does); OFF otherwise: no nvcc minutes for binaries nothing here runs.
pgas_gpu_code() { if [[ ${PGAS_CI:-0} == 1 ]] || pgas_have_gpu; then echo ON; else echo OFF; fi; }
# The compile-only checks (every public header compiled alone, as C++ and CUDA; kernels that instantiate every
# device op of ibgda, route and the on-stream collectives) run in CI and on machines without a GPU; a GPU machine
# that is not CI leaves them to CI: they build nothing it runs (tests/CMakeLists.txt).
pgas_compile_checks() { if [[ ${PGAS_CI:-0} != 1 ]] && pgas_have_gpu; then echo OFF; else echo ON; fi; }
# The separable-compilation twins of three GPU suites run only on a GPU: without one (CI) their sources are
# compiled once, whole-program (tests/CMakeLists.txt).
pgas_separable_twins() { if pgas_have_gpu; then echo ON; else echo OFF; fi; }
# CI without a GPU compiles the GPU code only to check it (PTX, no device optimisation: PGAS_CUDA_CHECK_ONLY in
# CMakeLists.txt); wherever the binaries can run, they are built in full.
pgas_cuda_check_only() { if [[ ${PGAS_CI:-0} == 1 ]] && ! pgas_have_gpu; then echo ON; else echo OFF; fi; }
# The sanitizer lanes (tests/sanitizers: host suites under ASan+UBSan, thread-mode suites under TSan, host code
# only, about 3.5 minutes of compile on 2 cores) are built and run in CI, or where PGAS_SANITIZERS=1 asks for them.
pgas_sanitizer_lanes() { if [[ ${PGAS_CI:-0} == 1 || ${PGAS_SANITIZERS:-0} == 1 ]]; then echo ON; else echo OFF; fi; }
# Configures $1 (default build) with the log in $1/configure.log; prints the log when configure fails.
pgas_configure() {
  local build=${1:-build} start=$SECONDS gpu_code
  gpu_code=$(pgas_gpu_code)
  mkdir -p "$build"
  echo "pgas: configuring $build (log: $build/configure.log); GPU-only tests and benchmarks: $gpu_code" \
       "(PGAS_BUILD_GPU_CODE: on with a GPU or PGAS_CI=1); sanitizer lanes: $(pgas_sanitizer_lanes)" \
       "(PGAS_SANITIZER_LANES: on with PGAS_CI=1 or PGAS_SANITIZERS=1)"
  if ! cmake -S "$_pgas_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPGAS_BUILD_GPU_CODE="$gpu_code" -DPGAS_BUILD_COMPILE_CHECKS="$(pgas_compile_checks)" -DPGAS_BUILD_SEPARABLE_TWINS="$(pgas_separable_twins)" \
       -DPGAS_CUDA_CHECK_ONLY="$(pgas_cuda_check_only)" -DPGAS_SANITIZER_LANES="$(pgas_sanitizer_lanes)" \
       > "$build/configure.log" 2>&1; then
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
