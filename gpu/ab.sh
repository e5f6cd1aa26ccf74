#!/bin/bash
# gpu/ab.sh "DIR ..." "ARGS" ...: every gpu_bench ARGS line with the binary of each DIR in
# turn, in one run on one machine (on the GPU machine, from the repository root). Each DIR
# holds gpu_bench, its shared libraries and the reference CSVs (see docs/PERFORMANCE.md,
# Method); an entry may also name a binary in such a folder (e.g. .carry/gpu/gpu_bench_p13,
# gpu/pack_gpu_tests.sh). SUMMARY and verify lines; the whole log in $OUT/ab.log.
dirs=$1; shift
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for args in "$@"; do
  for d in $dirs; do
    echo "== $d: $args"
    dir=$d bin=gpu_bench
    if [[ -f $d ]]; then dir=$(dirname "$d") bin=$(basename "$d"); fi
    (cd "$dir" && LD_LIBRARY_PATH=$PWD COLLATZ_SHARED_DATA=$PWD timeout 200 "./$bin" $args 2>&1) |
      tee -a "$OUT/ab.log" | grep -E "SUMMARY|verify|gpu_bench:|unit \[|^result:|join map|^setup" | sed -e "s/; candidates=.*//" -e "s/SUMMARY //" | cut -c1-230
  done
done
