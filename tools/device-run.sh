#!/usr/bin/env bash
# Everything the H200 session needs in one call: clean build, GPU tests, check, select, the
# benchmark of the DSV4 suite, the decode-step figures, a tune, and compute-sanitizer on the
# smallm test. Logs and CSVs go to $OUT (or ./device-out). Usage: tools/device-run.sh [parts]
# parts: any of build tests check bench decode tune sanitize (default: all).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-device-out}
mkdir -p "$out"
parts=${*:-build tests check bench decode tune sanitize}
build=build-device
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
step() { echo "=== $* ($(date +%T))"; }

if want build; then
  step build
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
  cmake --build $build -j 16 >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
  grep -E "registers|spill|smem" "$out/build.log" | head -40 >"$out/ptxas.txt" || true
fi
bin=$build/bf16fp32
if want tests; then
  step tests
  (cd $build && ctest --output-on-failure -j 4 --timeout 300) >"$out/ctest.log" 2>&1
  tail -25 "$out/ctest.log"
fi
if want check; then
  step info/check/select
  $bin info | tee "$out/info.txt"
  $bin check >"$out/check.txt" 2>&1; echo "check exit $?"; tail -4 "$out/check.txt"
  $bin select >"$out/select.txt" 2>&1
fi
if want bench; then
  step bench
  $bin bench --csv "$out/bench-h200.csv" >"$out/bench.txt" 2>"$out/bench.err"; echo "bench exit $?"
fi
if want decode; then
  step decode
  for model in dsv4-flash dsv4-pro; do
    $bin bench --decode-step $model --batch 1,4,16,64,256 2>>"$out/bench.err"
  done | tee "$out/decode-step-h200.txt"
fi
if want tune; then
  step tune
  $bin tune --out "$out/tune-h200.tsv" --emit-c "$out/tune-builtin.c" >"$out/tune.txt" 2>&1; echo "tune exit $?"
fi
if want sanitize; then
  step sanitize
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $build/gpu-smallm >"$out/sanitize-$tool.txt" 2>&1
    echo "compute-sanitizer $tool exit $?"; tail -3 "$out/sanitize-$tool.txt"
  done
fi
step done
