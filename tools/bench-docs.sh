#!/usr/bin/env bash
# Regenerates the benchmark figures in docs/ on a GPU machine (one command):
#   docs/bench-h200.csv, docs/bench-h200.txt (table), docs/bench-h200.png (plot),
#   docs/decode-step-h200.txt (one decode step of dsv4-flash and dsv4-pro, batch 1..256).
# usage: tools/bench-docs.sh [extra `bf16fp32 bench` options, e.g. --shapes 'flash.*']
# env:   BUILD_DIR (default: build/ in the source tree; configured and built when the program is
#        missing), BENCH_DOCS_ANY_GPU=1 to run on a GPU other than an H200 (the file names stay).
# The plot needs gnuplot (pngcairo) and awk; without gnuplot the command to plot later is printed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
docs=$root/docs
bin=$build/bf16fp32

if ! command -v nvidia-smi >/dev/null 2>&1 || ! gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) || [ -z "$gpu" ]; then
  echo "bench-docs.sh: no NVIDIA GPU here (nvidia-smi): these figures come from a GPU machine" >&2
  exit 1
fi
case "$gpu" in
  *H200*) ;;
  *) if [ "${BENCH_DOCS_ANY_GPU:-0}" != 1 ]; then
       echo "bench-docs.sh: the GPU is '$gpu', not an H200 (BENCH_DOCS_ANY_GPU=1 to run anyway)" >&2
       exit 1
     fi ;;
esac

if [ ! -x "$bin" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j"$(nproc)" --target bf16fp32_cli
fi
mkdir -p "$docs"

echo "bench-docs.sh: $gpu; table -> $docs/bench-h200.{txt,csv}" >&2
"$bin" bench --csv "$docs/bench-h200.csv" "$@" | tee "$docs/bench-h200.txt"
if ! awk -F, 'NR > 1 && $1 != "gpu" { bad = 1 } END { exit bad }' "$docs/bench-h200.csv"; then
  echo "bench-docs.sh: the bench ran in CPU mode (no usable GPU for the program)" >&2
  exit 1
fi

echo "bench-docs.sh: decode steps -> $docs/decode-step-h200.txt" >&2
{
  "$bin" bench --decode-step dsv4-flash --batch 1,4,16,64,256
  echo
  "$bin" bench --decode-step dsv4-pro --batch 1,4,16,64,256
} | tee "$docs/decode-step-h200.txt"

plot=(gnuplot -e "csv='$docs/bench-h200.csv'; png='$docs/bench-h200.png'; title='bf16fp32 on $gpu: us per call (graph replay, cold L2)'" "$root/tools/plot-bench.gp")
if command -v gnuplot >/dev/null 2>&1; then
  "${plot[@]}"
  echo "bench-docs.sh: plot -> $docs/bench-h200.png" >&2
else
  echo "bench-docs.sh: no gnuplot here; plot elsewhere with:" >&2
  printf ' %q' "${plot[@]}" >&2
  echo >&2
fi
