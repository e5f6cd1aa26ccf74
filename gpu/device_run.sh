#!/bin/bash
# Runs on the GPU machine from the repository root (see docs/PERFORMANCE.md, GPU section):
# the binaries, libgmp and the reference CSVs travel in .carry/gpu (built on the dev host).
#   gpu/device_run.sh test|sieve|stats|known|mutation|bench|full|all   (logs under $OUT)
# sieve: the device-built sieves against Sieve::Generate at every unit width up to 30 bits and
# against the compiled-in fingerprints (gpu_sieve_test; Generate at 30 bits is the slow part).
# known: the known-answer suite in the production configuration (gpu_known_answer_test);
# mutation: the same suite built with COLLATZ_GPU_MUTATION=1 and =2
# (gpu_known_answer_test_m1, _m2 beside it), which must fail.
set -o pipefail
mode=${1:-all}
cd .carry/gpu || exit 1
export LD_LIBRARY_PATH=$PWD COLLATZ_SHARED_DATA=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used --format=csv | tee "$OUT/smi.txt"
summary=()
if [[ $mode == test || $mode == all ]]; then
  timeout 400 ./gpu_engine_test --gtest_filter=-*WholeRange* 2>&1 | tee "$OUT/test.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|Expected|Which is|gpu:|cpu:" | cut -c1-400 | tail -60
  summary+=("test rc=$?")
fi
if [[ $mode == sieve || $mode == all ]]; then
  timeout 500 ./gpu_sieve_test 2>&1 | tee "$OUT/sieve.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|^k [0-9]+:" | tail -30
  summary+=("sieve rc=$?")
fi
if [[ $mode == stats || $mode == all ]]; then
  timeout 300 ./gpu_stats_test 2>&1 | tee "$OUT/stats.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure" | tail -30
  summary+=("stats rc=$?")
fi
if [[ $mode == known || $mode == all ]]; then
  timeout 500 ./gpu_known_answer_test 2>&1 | tee "$OUT/known.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure" | tail -20
  summary+=("known-answer rc=$?")
fi
if [[ $mode == mutation || $mode == all ]]; then
  for m in 1 2; do
    timeout 300 ./gpu_known_answer_test_m$m --gtest_filter='*PublishedRecordWindow/0:*Constructed*' > "$OUT/mutation$m.log" 2>&1
    rc=$?
    # A mutant that passes means the suite cannot see that mistake.
    summary+=("mutation $m: $([[ $rc != 0 ]] && echo caught || echo MISSED) ($(grep -c Failure "$OUT/mutation$m.log") failures)")
  done
fi
if [[ $mode == full || $mode == all ]]; then
  COLLATZ_GPU_FULL=1 timeout 500 ./gpu_engine_test --gtest_filter=*WholeRange* 2>&1 | tee "$OUT/full.log" | tail -8
fi
if [[ $mode == bench || $mode == all ]]; then
  shift
  B=(./gpu_bench "$@")
  for args in "--at 2^60 --kinds delay" "--at 2^60 --kinds delay,class" "--at 2^66 --kinds delay" "--at 2^66 --kinds delay,class"; do
    timeout 200 "${B[@]}" $args 2>&1 | tee -a "$OUT/bench.log" | grep -E "SUMMARY|verify|gpu_bench:|unit \[|baseline|launches"
  done
fi
echo "${summary[@]}"
