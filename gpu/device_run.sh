#!/bin/bash
# Runs on the GPU machine from the repository root (see docs/PERFORMANCE.md, GPU section):
# the binaries, libgmp and the reference CSVs travel in .carry/gpu (built on the dev host).
#   gpu/device_run.sh test|sieve|stats|known|mutation|bench|full|all   (logs under $OUT)
# sieve: the device-built sieves against Sieve::Generate at every unit width up to 30 bits and
# against the compiled-in fingerprints (gpu_sieve_test; Generate at 30 bits is the slow part).
# known: the known-answer suite in the production configuration (gpu_known_answer_test);
# SUITE_SUFFIX (e.g. _p13: a two-step walk width that gpu/pack_gpu_tests.sh packed) runs that
# build's gpu_engine_test and gpu_known_answer_test in test and known;
# mutation: each mutant build packed beside the suites (gpu/pack_gpu_tests.sh BUILD 1 2 3 4 6 7 8 9 10:
# gpu_known_answer_test_mN, gpu_engine_test_mN) against the test written to see its mistake,
# with seeds 1-3 (MUTATION_SEEDS) where the test draws its units; every mutant must fail ("caught").
set -o pipefail
mode=${1:-all}
[[ -d .carry/gpu || ! -f .carry/gpu.tar.xz ]] || tar -xJf .carry/gpu.tar.xz -C .carry || exit 1
cd .carry/gpu || exit 1
export LD_LIBRARY_PATH=$PWD COLLATZ_SHARED_DATA=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used --format=csv | tee "$OUT/smi.txt"
summary=()
if [[ $mode == test || $mode == all ]]; then
  # About 520 s on an H100 (session 43): a call of its own (TEST_TIMEOUT, at most 590: one call's limit is 600 s).
  timeout "${TEST_TIMEOUT:-580}" ./gpu_engine_test${SUITE_SUFFIX:-} --gtest_filter=-*WholeRange* 2>&1 | tee "$OUT/test.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|Expected|Which is|gpu:|cpu:" | cut -c1-400 | tail -60
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
  timeout 500 ./gpu_known_answer_test${SUITE_SUFFIX:-} 2>&1 | tee "$OUT/known.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure" | tail -20
  summary+=("known-answer rc=$?")
fi
if [[ $mode == mutation || $mode == all ]]; then
  # mutation -> the binary and the tests written to see it (gpu/kernels: COLLATZ_GPU_MUTATION).
  declare -A target=(
    [1]="gpu_known_answer_test *PublishedRecordWindow/0:*Constructed*"   # the walk ends a step early
    [2]="gpu_known_answer_test *PublishedRecordWindow/0:*Constructed*"   # a carry is lost
    [3]="gpu_engine_test *StepStoppedGroupsMatchHostCount*"               # the group's first member decides
    [4]="gpu_engine_test *StepStoppedGroupsMatchHostCount*"               # one residue's bound for every value
    [6]="gpu_engine_test *StepStoppedGroupsMatchHostCount*"               # each half's first member decides
    [7]="gpu_engine_test *TailSplitsMatchCpu*"                            # a split half starts a member early
    [8]="gpu_engine_test *ShallowWalkGroupsMatchCpu*"                     # a group walked from k counts a step too many
    [9]="gpu_engine_test *SharedCheckRowsNeverStopMore*"                  # the check reads a row shared by too many step counts
    [10]="gpu_engine_test *NarrowCheckEndsEveryIdleLane*")                 # an idle lane stops by its stale value alone
  for m in 1 2 3 4 6 7 8 9 10; do
    read -r suite filter <<< "${target[$m]}"
    [[ -x ./${suite}_m$m ]] || { summary+=("mutation $m: not packed"); continue; }
    seeds=1; [[ $suite == gpu_engine_test ]] && seeds=${MUTATION_SEEDS:-1 2 3}
    for seed in $seeds; do
      COLLATZ_TEST_SEED=$seed timeout 300 "./${suite}_m$m" --gtest_filter="$filter" > "$OUT/mutation${m}_$seed.log" 2>&1
      rc=$?
      # A mutant that passes means the suite cannot see that mistake.
      verdict=$([[ $rc != 0 ]] && echo caught || echo MISSED)
      grep -q '^\[  SKIPPED' "$OUT/mutation${m}_$seed.log" && [[ $rc == 0 ]] && verdict="not run (skipped: no GPU?)"
      summary+=("mutation $m seed $seed: $verdict ($(grep -c Failure "$OUT/mutation${m}_$seed.log") failures)")
    done
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
