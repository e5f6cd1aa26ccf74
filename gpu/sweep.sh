#!/bin/bash
# gpu/sweep.sh KINDS AT NUMBERS "config 1" "config 2" ...: one gpu_bench per config (on the
# GPU machine, from the repository root); SUMMARY and verify lines, full log in $OUT/sweep.log.
kinds=$1 at=$2 numbers=$3; shift 3
# BENCH_DIR: where gpu_bench and its libraries are (.carry/gpu; or the folder of
# gpu/pack_real_path.sh, which keeps them in lib/ and the CSVs in data/).
cd "${BENCH_DIR:-.carry/gpu}" || exit 1
export LD_LIBRARY_PATH=$PWD:$PWD/lib COLLATZ_SHARED_DATA=$PWD
[[ -d data ]] && export COLLATZ_SHARED_DATA=$PWD/data
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for c in "$@"; do
  timeout 120 ./gpu_bench --at "$at" --numbers "$numbers" --kinds "$kinds" --baseline-numbers 0 $c 2>&1 |
    tee -a "$OUT/sweep.log" | grep -E "SUMMARY|verify|gpu_bench:|stopped inside" | sed -e 's/; candidates=.*//' -e 's/SUMMARY //'
done
