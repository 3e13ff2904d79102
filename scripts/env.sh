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
# Configures and builds into $1 (default build) with every core.
pgas_build() {
  local build=${1:-build}
  cmake -S "$_pgas_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$(nproc)"
}
