#!/usr/bin/env bash
# The H200 session in as few calls as possible: clean build, GPU tests, check, select, the
# benchmark of the DSV4 suite (rules alone), smallm and auto (shipped table) with PDL, the
# decode-step figures, a tune (plainly, then under PDL at M <= 256 for the device-pdl entries)
# whose result becomes the shipped table (src/tune-builtin.c, rebuilt), auto with the shipped
# table and with the fresh tune file, and compute-sanitizer on the smallm test.
# Logs and CSVs go to $OUT (or ./device-out). Usage: tools/device-run.sh [parts]
# parts: build tests check bench pdl decode tune shipped sanitize (default: all, in that order),
# cells (only when named, and runs pdl too): smallm's 81 target cells, smallm and auto (shipped table)
# plainly into $out/cells-plain.csv, and with pdl's $out/bench-pdl.csv the table $out/cells.md
# (tools/targets-table.py);
# steptune (only when named): `tune --decode-step` for both models, under PDL and plainly, into
# $out/tune-step-h200-dsv4-<model>.tsv, then the decode step with each file against the shipped
# table at STEP_BATCH (default 1,16,48,64,128,256), two interleaved rounds;
# grid (only when named): each suite of GRID_SUITES (names of shapes/*.txt; default
# narrow-weights), smallm and auto plainly and under PDL into $out/grid-<suite>-pdl<0|1>.csv and
# their tables (tools/grid-table.py) into $out/grid-<suite>.txt; gridtune (only when named): `tune`
# of the same suites at GRID_TUNE_M (default 24,40,56), both launch kinds, each form against the
# grid's cuBLAS (tools/tune-vs-bench.py; run grid first) into $out/gridtune-<suite>-pdl<0|1>.txt;
# and bigtile (only when named): the M > 64 probe, bench/bigtile.cu, one run per variant set in
# BIGTILE_SETS (default --pull --prod --rows --pairs; the others, such as --place and --sum, are
# listed in the probe's header), on BIGTILE_SHAPES (N K M ...; default: its own list).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-device-out}
mkdir -p "$out"
parts=${*:-build tests check bench pdl decode tune shipped sanitize}
build=build-device
bin=$build/bf16fp32
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
step() { echo "=== $* ($(date +%T))"; }
rules_only() { BF16FP32_TUNE_FILE= BF16FP32_TUNE_BUILTIN=0 "$@"; }
# smallm and auto (shipped table) into CSV $1, the text into $2, with bench options $3...: the
# pdl, cells and grid parts' bench, under BF16FP32_PDL=1 and plainly
smallm_bench() {
  local csv=$1 text=$2
  shift 2
  BF16FP32_TUNE_FILE= $bin bench --backends auto,smallm "$@" --csv "$csv" >"$text" 2>>"$out/bench.err"
}
cells_m=1,2,4,8,16,32,64,128,256 # the 81 cells' M

if want build; then
  step build
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
  cmake --build $build -j 16 >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
fi
if want tests; then
  step tests
  (cd $build && ctest --output-on-failure -j 4 --timeout 300) >"$out/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log"
fi
if want check; then
  step info/check/select
  $bin info >"$out/info.txt" 2>&1
  $bin check >"$out/check.txt" 2>&1; echo "check exit $?"; tail -1 "$out/check.txt"
  $bin select >"$out/select.txt" 2>&1
fi
if want bench; then
  step bench
  rules_only $bin bench --csv "$out/bench-h200.csv" >"$out/bench-h200.txt" 2>"$out/bench.err"
  echo "bench exit $?"
fi
if want pdl || want cells; then
  step pdl
  BF16FP32_PDL=1 smallm_bench "$out/bench-pdl.csv" "$out/bench-pdl.txt" --m $cells_m
  echo "pdl bench exit $?"
fi
if want cells; then
  step cells
  smallm_bench "$out/cells-plain.csv" /dev/null --m $cells_m
  echo "cells plain bench exit $?"
  python3 tools/targets-table.py "$out/cells-plain.csv" "$out/bench-pdl.csv" >"$out/cells.md"
  tail -1 "$out/cells.md"
fi
if want grid; then
  step grid
  for suite in ${GRID_SUITES:-narrow-weights}; do
    for pdl in 0 1; do
      BF16FP32_PDL=$pdl smallm_bench "$out/grid-$suite-pdl$pdl.csv" /dev/null \
        --suite "shapes/$suite.txt"
      echo "grid $suite pdl=$pdl exit $?"
      for be in auto smallm; do
        echo "-- $suite, pdl=$pdl, $be (cuBLAS / $be)"
        python3 tools/grid-table.py "$out/grid-$suite-pdl$pdl.csv" $be
      done >>"$out/grid-$suite.txt"
    done
    grep -E "^(--|geo)" "$out/grid-$suite.txt"
  done
fi
if want gridtune; then
  step gridtune
  for suite in ${GRID_SUITES:-narrow-weights}; do
    for pdl in 0 1; do
      # tune's own file, so that no tuning file of the machine changes
      BF16FP32_PDL=$pdl BF16FP32_TUNE_FILE= $bin tune --suite "shapes/$suite.txt" \
        --m "${GRID_TUNE_M:-24,40,56}" --out "$out/gridtune-$suite.tsv" \
        >"$out/gridtune-$suite-pdl$pdl.log" 2>&1
      echo "gridtune $suite pdl=$pdl exit $?"
      python3 tools/tune-vs-bench.py "$out/gridtune-$suite-pdl$pdl.log" \
        "$out/grid-$suite-pdl$pdl.csv" >"$out/gridtune-$suite-pdl$pdl.txt"
    done
  done
fi
if want decode; then
  step decode
  for model in dsv4-flash dsv4-pro; do
    rules_only $bin bench --decode-step $model --batch 1,4,16,64,256 2>>"$out/bench.err"
  done >"$out/decode-step-rules.txt"
  grep -v "^#" "$out/decode-step-rules.txt"
fi
if want tune; then
  step tune
  rules_only $bin tune --out "$out/tune-h200.tsv" >"$out/tune.txt" 2>&1
  echo "tune exit $?"
  rules_only $bin tune --m 24,40,48,56 --out "$out/tune-h200.tsv" >>"$out/tune.txt" 2>&1
  echo "tune at M = 24-56 exit $?"
  BF16FP32_PDL=1 rules_only $bin tune \
    --m 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,24,32,40,48,56,64,128,256 \
    --out "$out/tune-h200.tsv" --emit-c src/tune-builtin.c >>"$out/tune.txt" 2>&1
  echo "tune under PDL exit $?"
  cp src/tune-builtin.c "$out/tune-builtin.c"
  cmake --build $build -j 16 >>"$out/build.log" 2>&1 || { echo "rebuild failed"; exit 1; }
fi
if want shipped; then
  step shipped
  BF16FP32_TUNE_FILE= $bin bench --backends auto --csv "$out/bench-shipped.csv" >"$out/bench-shipped.txt" 2>>"$out/bench.err"
  echo "shipped bench exit $?"
  BF16FP32_TUNE_FILE="$out/tune-h200.tsv" BF16FP32_TUNE_BUILTIN=0 $bin bench --backends auto \
    --csv "$out/bench-fresh.csv" >"$out/bench-fresh.txt" 2>>"$out/bench.err"
  echo "fresh bench exit $?"
  for model in dsv4-flash dsv4-pro; do
    BF16FP32_TUNE_FILE= $bin bench --decode-step $model --batch 1,4,16,64,256 2>>"$out/bench.err"
  done >"$out/decode-step-h200.txt"
  grep -v "^#" "$out/decode-step-h200.txt"
fi
if want sanitize; then
  step sanitize
  # memcheck on the whole test; racecheck, which instruments every shared-memory access, on a
  # part of it at a time (the whole test ran past 8 minutes on the H200; the router part takes
  # about 110 s, shapes alone took 3 minutes; memcheck of the whole test takes seconds).
  # SANITIZE_PARTS picks the runs, e.g. "memcheck sample" for one command on a machine that
  # allows 10 minutes per command: "sample" (gpu-smallm's GPU_SMALLM_PART=sample, every share
  # form at a sample of M, about 70 s) is a short racecheck of the share kernel, whose full part
  # ran past 9 minutes alone in session 38; "share:LO-HI" runs that part at M = LO .. HI only
  # (GPU_SMALLM_SHARE_M), e.g. "share:1-32" and "share:33-64" in two commands; "rest" is the
  # declines and the PDL tests (GPU_SMALLM_PART also takes each alone: declines, pdl, producer,
  # chain); "paired" (only when named) is gpu-smallm-variants' paired launches (both footprints,
  # under PDL; PAIRED_TEXTS runs other texts in their place, GPU_SMALLM_VARIANTS_TEXTS);
  # "variants" (only when named) is the whole of gpu-smallm-variants (2 minutes, session 64).
  # The tool's deadlock detection is off (--racecheck-deadlock-timeout 0): with the tool's
  # default or a timeout of 10-30 s, racecheck stalled in launches that varied from run to run
  # (sessions 60-63: the share kernel's push wait reported as a deadlock, one launch going on
  # after 60 s, the paired and chain parts not ending), with launches overlapping or serialized;
  # with it off the same parts passed in 3-35 s (session 63). The tests' traces name each launch
  # before it starts.
  rc="compute-sanitizer --tool racecheck --racecheck-deadlock-timeout 0 --error-exitcode 9"
  for p in ${SANITIZE_PARTS:-memcheck router shapes rest share:1-32 share:33-64}; do
    if [ "$p" = memcheck ]; then
      timeout 420 compute-sanitizer --tool memcheck --error-exitcode 9 $build/gpu-smallm \
        >"$out/sanitize-memcheck.txt" 2>&1
      echo "compute-sanitizer memcheck exit $?"; tail -2 "$out/sanitize-memcheck.txt"
      continue
    fi
    if [ "$p" = paired ] || [ "$p" = variants ]; then
      vpart=; [ "$p" = paired ] && vpart=paired # unset: the whole test
      GPU_SMALLM_VARIANTS_PART=$vpart GPU_SMALLM_VARIANTS_TRACE=1 \
        GPU_SMALLM_VARIANTS_TEXTS=${PAIRED_TEXTS:-} timeout 540 $rc $build/gpu-smallm-variants \
        >"$out/sanitize-racecheck-$p.txt" 2>&1
      echo "compute-sanitizer racecheck ($p) exit $?"; tail -2 "$out/sanitize-racecheck-$p.txt"
      continue
    fi
    range=; [ "${p#share:}" != "$p" ] && range=${p#share:}
    name=${p/:/-}
    GPU_SMALLM_TRACE=1 GPU_SMALLM_PART=${p%%:*} GPU_SMALLM_SHARE_M=$range timeout 540 $rc \
      $build/gpu-smallm >"$out/sanitize-racecheck-$name.txt" 2>&1
    echo "compute-sanitizer racecheck ($p) exit $?"; tail -2 "$out/sanitize-racecheck-$name.txt"
  done
fi
if want steptune; then
  step steptune
  for model in dsv4-pro dsv4-flash; do
    for pdl in 1 0; do
      BF16FP32_PDL=$pdl BF16FP32_TUNE_FILE= $bin tune --decode-step $model \
        --out "$out/tune-step-h200-$model.tsv" >"$out/step-tune-$model-pdl$pdl.txt" 2>&1
      echo "step tune $model pdl=$pdl exit $?"
      for round in 1 2; do
        for file in "" "$out/tune-step-h200-$model.tsv"; do
          tag=shipped; [ -n "$file" ] && tag=step
          echo "=== round $round $tag $model"
          BF16FP32_PDL=$pdl BF16FP32_TUNE_FILE=$file $bin bench --decode-step $model \
            --batch ${STEP_BATCH:-1,16,48,64,128,256} 2>>"$out/bench.err"
        done
      done >"$out/step-ab-$model-pdl$pdl.txt"
    done
  done
fi
if want bigtile; then
  step bigtile
  mkdir -p $build
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude bench/bigtile.cu \
    src/backends/smallm/smallm-{kernel,decode,wide,stream,share,fold,wgmma-sm90a}.cu \
    src/backends/smallm/smallm-{config,prefer}.c -lcublas -o $build/bigtile >"$out/bigtile-build.log" 2>&1 ||
    { tail -5 "$out/bigtile-build.log"; exit 1; }
  # one run per variant set, each with its own time limit (a set that hangs costs 90 s, not all)
  for set in ${BIGTILE_SETS:---pull --prod --rows --pairs}; do
    timeout 90 $build/bigtile $set ${BIGTILE_SHAPES:-} >"$out/bigtile${set#-}.txt" 2>&1
    echo "bigtile $set exit $?"
  done
fi
step done
