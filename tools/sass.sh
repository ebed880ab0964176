#!/usr/bin/env bash
# The SASS that ptxas makes of one CUDA source of the library (sm_90a), for reading a kernel's
# instruction schedule on a machine whose CUDA toolkit lacks the disassembler. cuobjdump and the
# nvdisasm it calls come from NVIDIA's wheels on PyPI (nvidia-cuda-cuobjdump,
# nvidia-cuda-nvdisasm), fetched once into $SASS_TOOLS.
# usage: tools/sass.sh SOURCE.cu [FUNCTION-REGEX]   (only the functions whose name matches)
# env:   SASS_TOOLS (default ~/.cache/bf16fp32-sass), NVCC (default nvcc)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: tools/sass.sh SOURCE.cu [FUNCTION-REGEX]}
pattern=${2:-.}
tools=${SASS_TOOLS:-$HOME/.cache/bf16fp32-sass}
cuobjdump=$(command -v cuobjdump || true)

if [ -z "$cuobjdump" ]; then
  cuobjdump=$(find "$tools" -type f -name cuobjdump 2>/dev/null | head -n 1 || true)
  if [ -z "$cuobjdump" ]; then
    mkdir -p "$tools"
    python3 -m pip download --quiet --no-deps --dest "$tools" nvidia-cuda-cuobjdump \
      nvidia-cuda-nvdisasm >&2
    for wheel in "$tools"/nvidia_cuda_*.whl; do
      python3 -m zipfile -e "$wheel" "$tools" >&2
    done
    cuobjdump=$(find "$tools" -type f -name cuobjdump | head -n 1)
    chmod +x "$(dirname "$cuobjdump")"/*
  fi
  bin=$(dirname "$cuobjdump")
  export PATH="$bin:$PATH" # nvdisasm sits beside it
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${NVCC:-nvcc}" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$root/src" \
  -I"$root/include" -cubin "$src" -o "$work/k.cubin"
# One function per block of cuobjdump's listing; keep the blocks whose name matches.
"$cuobjdump" -sass "$work/k.cubin" | awk -v pat="$pattern" '
  /Function :/ { keep = ($0 ~ pat) }
  keep { print }'
