#!/bin/bash
# gpu/profile.sh DIR NAME KERNEL_REGEX GPU_BENCH_ARGS...: Nsight Compute source counters of
# one launch of gpu_bench (built with -lineinfo) in DIR; per-source-line and per-SASS CSVs
# and the headline sections under $OUT. Run on the GPU machine from the repository root.
dir=$1 name=$2 kernel=$3; shift 3
cd "$dir" || exit 1
export LD_LIBRARY_PATH=$PWD COLLATZ_SHARED_DATA=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
timeout 300 ncu --clock-control none -k "regex:$kernel" -c 1 --import-source yes \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section SourceCounters \
  --section InstructionStats --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
  -o "$OUT/$name" -f ./gpu_bench --baseline-numbers 0 --verify-numbers 0 --repeat 1 "$@" > "$OUT/$name.run.txt" 2>&1
ncu -i "$OUT/$name.ncu-rep" --print-details all > "$OUT/$name.details.txt" 2>&1
ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source cuda > "$OUT/$name.cuda.csv" 2>&1
ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name.sass.csv" 2>&1
gzip -f "$OUT/$name.sass.csv"
grep -E "Duration|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|inst_executed|Registers Per|Avg. Active Threads|Avg. Not Predicated" "$OUT/$name.details.txt" | head -20
tail -3 "$OUT/$name.run.txt"
