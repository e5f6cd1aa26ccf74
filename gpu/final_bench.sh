#!/bin/bash
# The figures of docs/PERFORMANCE.md (GPU section), on the GPU machine from the repository
# root: every GPU test with COLLATZ_GPU_FULL=1 (the whole [1, 2^32) included; SKIP_FULL=1
# skips them, ONLY_TESTS=1 stops after them), then gpu_bench at 2^60 and 2^66 for both kinds, each
# with the plain baseline kernel timed in the same run. Delay-only rows at sieve 19 verify
# 2^34 numbers against the CPU engine (enough whole cycles for residue groups), and the
# --no-groups rows print the walk queue's result for the same unit; --walk-step-bits rows
# compare the group walk's step tables (0: the 19-bit table in L2; their rounds take one
# step, the default 12-bit table two: --walk-round-steps 1 rows); --class-plain and
# --no-class-members rows show the class unit on the plain kernel and with the 700 holes
# the records below 2^28 alone leave open. Rows whose unit lies below the published bound
# P = 28019077177231758496 (about 2^64.6: everything below it is searched already) say so in
# their SUMMARY line; the campaign row (issue 43) measures the first whole 2^46 unit above P,
# where the frontier search runs. Logs under $OUT.
set -o pipefail
cd .carry/gpu || exit 1
export LD_LIBRARY_PATH=$PWD COLLATZ_SHARED_DATA=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
[[ ${SKIP_FULL:-0} == 1 ]] || COLLATZ_GPU_FULL=1 timeout 500 ./gpu_engine_test 2>&1 | tee "$OUT/full.log" | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]"
[[ ${ONLY_TESTS:-0} == 1 ]] && exit 0
P=28019077177231758496  # the published bound: the published delay records are complete below it
# Where the row's unit [at, at + numbers) lies against P, for its SUMMARY line.
where() {
  local at=2^60 n=2^36
  while [[ $# -gt 0 ]]; do
    case $1 in --at) at=$2; shift ;; --numbers) n=$2; shift ;; esac
    shift
  done
  python3 -c "a, n, p = $(echo "$at" | sed 's/\^/**/g'), $(echo "$n" | sed 's/\^/**/g'), $P
print(' (below the published bound: not a real search)' if a + n <= p else ' (straddles the published bound)' if a < p else ' (above the published bound: the frontier)')"
}
run() {
  local label; label=$(where "$@")
  timeout "${RUN_TIMEOUT:-150}" ./gpu_bench --baseline-numbers 2^30 "$@" 2>&1 | tee -a "$OUT/final.log" | grep -E "SUMMARY|verify|baseline:|unit \[|gpu_bench:|^result:|join map|^step model" | sed -e 's/; candidates=.*//' -e 's/tally_count=0 tally_sum=0 //' -e 's/ class_minima=\[ \]//' -e "s/^SUMMARY /SUMMARY$label /" | cut -c1-560
}
for sieve in 19 24; do
  verify=2^24; [[ $sieve == 19 ]] && verify=2^34
  run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits $sieve --verify-numbers $verify
  run --at 2^60 --numbers 2^38 --kinds delay,class --sieve-bits $sieve --verify-numbers 2^30
  run --at 2^66 --numbers 2^40 --kinds delay --sieve-bits $sieve --verify-numbers $verify
  run --at 2^66 --numbers 2^38 --kinds delay,class --sieve-bits $sieve --verify-numbers 2^30
done
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 26 --baseline-numbers 0 --verify-numbers 2^24
# Session 9: class units on wider sieves (64-member class groups by default), and the walk's
# one-step rounds for comparison with the default two.
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 28 --baseline-numbers 0 --verify-numbers 2^24
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 19 --walk-round-steps 1 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 19 --walk-round-steps 1 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 28 --baseline-numbers 0 --verify-numbers 2^24
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 24 --no-queue --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 19 --walk-step-bits 0 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 19 --walk-step-bits 13 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 19 --walk-step-bits 11 --baseline-numbers 0
run --at 2^60 --numbers 2^38 --kinds delay,class --sieve-bits 19 --class-plain --baseline-numbers 0
run --at 2^60 --numbers 2^38 --kinds delay,class --sieve-bits 19 --no-groups --baseline-numbers 0
run --at 2^60 --numbers 2^36 --kinds delay,class --sieve-bits 19 --no-class-members --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay --sieve-bits 19 --no-groups --baseline-numbers 0
run --at 2^66 --numbers 2^40 --kinds delay --sieve-bits 19 --no-groups --baseline-numbers 0
# Session 10: the join map (the class rows above use it: 32 bits at sieve 19, 34 from 23
# bits up) against none, and the 28-bit sieve with the 32-bit map.
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 19 --join-map-bits 0 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 28 --join-map-bits 32 --baseline-numbers 0
run --at 2^66 --numbers 2^40 --kinds delay,class --sieve-bits 19 --join-map-bits 0 --baseline-numbers 0
# Session 11: launch size (2^32 positions by default now) and the 29-bit sieve's class figure.
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 19 --positions-per-launch 1073741824 --baseline-numbers 0
run --at 2^60 --numbers 2^40 --kinds delay,class --sieve-bits 29 --baseline-numbers 0 --verify-numbers 2^24
# Session 14 (issues 23, 27): units without a record table (--context floor: an empty
# database; the engine's own table below 2^42, delay-only join maps), with 2^46 numbers as the
# coordinator cuts them at 2^66, and more heights.
run --context floor --at 2^66 --numbers 2^40 --kinds delay --baseline-numbers 0 --verify-numbers 2^32
run --context floor --at 2^66 --numbers 2^40 --kinds delay --self-record-bits 0 --baseline-numbers 0
run --context floor --at 2^60 --numbers 2^40 --kinds delay --baseline-numbers 0
run --context floor --at 2^66 --numbers 2^40 --kinds delay,class --baseline-numbers 0 --verify-numbers 2^30
for at in 2^64 2^66 2^68 2^72; do
  run --at $at --numbers 2^46 --kinds delay --baseline-numbers 0 --repeat 1
  run --at $at --numbers 2^44 --kinds delay,class --baseline-numbers 0 --repeat 1
done
# Session 16 (levers 78-79): class units of the coordinator's size, and the groups of session
# 15 (13 bits at most) beside the deeper defaults.
run --at 2^66 --numbers 2^46 --kinds delay,class --baseline-numbers 0 --repeat 1
run --at 2^66 --numbers 2^46 --kinds delay --group-bits 13 --baseline-numbers 0 --repeat 1
# Session 18 (levers 81-82): the prelude's checks by residue against classes only and against
# neither, at the coordinator's delay-only unit size.
run --at 2^66 --numbers 2^46 --kinds delay --no-group-ancestor-checks --baseline-numbers 0 --repeat 1
run --at 2^66 --numbers 2^46 --kinds delay --no-group-class-checks --baseline-numbers 0 --repeat 1
# Session 19 (levers 85-86): the three-limb pair step everywhere and no halved groups, against
# the defaults above, at the coordinator's delay-only unit size.
run --at 2^66 --numbers 2^46 --kinds delay --narrow-walk-max-bits 0 --baseline-numbers 0 --repeat 1
run --at 2^66 --numbers 2^46 --kinds delay --no-group-half-checks --baseline-numbers 0 --repeat 1
# Session 20 (lever 88): units without a record table (the floor context) with 14-bit groups
# and the 33-bit delay join map, against session 19's 13-bit groups and 32-bit map.
run --context floor --at 2^66 --numbers 2^44 --kinds delay --baseline-numbers 0 --verify-numbers 2^28
run --context floor --at 2^66 --numbers 2^44 --kinds delay --shallow-group-bits 13 --join-map-bits 32 --baseline-numbers 0
# Session 21 (levers 90-91): the same unit with the 28-bit sieve that collatzctl takes for it,
# built on the device, and 5-bit groups; and delay+class units of 2^46 with a 25-bit sieve
# (measured, not a default: a fleet's sieve width is one for every kind).
run --context floor --at 2^66 --numbers 2^44 --kinds delay --sieve-bits 28 --baseline-numbers 0 --verify-numbers 2^28
run --at 2^66 --numbers 2^46 --kinds delay,class --sieve-bits 25 --baseline-numbers 0 --repeat 1
# Session 25 (issue 43): the campaign point, the first whole 2^46 unit above the published
# bound P (B = 28019145081685540864 = P + 67904453782368), where `real_path.sh campaign` leases
# its units, with the host model of the walk (gpu/roofline.sh takes its ncu counters).
run --at 28019145081685540864 --numbers 2^46 --kinds delay --baseline-numbers 0 --repeat 1 --step-model 2^20
run --at 28019145081685540864 --numbers 2^44 --kinds delay,class --baseline-numbers 0 --repeat 1
# Session 26: a campaign unit of 2^49 (B is a multiple of 2^49 too), whose residue groups are
# 19 bits deep with 227 members (lever 95; the server's --unit-size 2^49, docs/OPERATIONS.md 13).
run --at 28019145081685540864 --numbers 2^49 --kinds delay --baseline-numbers 0 --repeat 1
# Session 27: the same unit with the 28-bit sieve that collatz-server and collatzctl gave
# delay-only units of 2^48 and more until session 33 (lever 97; gpu_bench takes 19 bits unless told), and the
# launch tail split (lever 96) off for comparison.
run --at 28019145081685540864 --numbers 2^49 --kinds delay --sieve-bits 28 --baseline-numbers 0 --repeat 1
run --at 28019145081685540864 --numbers 2^49 --kinds delay --sieve-bits 28 --group-split-min 0 --baseline-numbers 0 --repeat 1
# Session 29: the campaign unit of 2^52 (lever 99: 13-bit groups over the 28-bit sieve, k + G =
# 41; the rare groups whose step between members would pass 2^64 walk from k), B' the first
# multiple of 2^52 above P; about 110 s.
run --at 28021396881499226112 --numbers 2^52 --kinds delay --sieve-bits 28 --baseline-numbers 0 --repeat 1
# Session 32: the same unit with the 30-bit sieve, the default width of such units since session
# 33 (4.25e13, about 106 s), and delay+class at 2^66 in units of 2^48 with a 30-bit
# class sieve (4.53e12, about 62 s; "Choosing the widths").
run --at 28021396881499226112 --numbers 2^52 --kinds delay --sieve-bits 30 --baseline-numbers 0 --repeat 1
run --at 2^66 --numbers 2^48 --kinds delay,class --sieve-bits 30 --baseline-numbers 0 --repeat 1
# Session 36: the campaign unit of 2^54 that docs/OPERATIONS.md 13 starts with (13-bit groups
# over the 30-bit sieve), at B54 = 28030404080753967104, the first multiple of 2^54 above P;
# 4.494e13, about 400 s (RUN_TIMEOUT: the rows' 150 s would cut it). Session 42 (H100, the
# defaults of session 41): 5.082e13 in 354.5 s, `collatzctl run` of the same unit 5.06e13.
RUN_TIMEOUT=480 run --at 28030404080753967104 --numbers 2^54 --kinds delay --sieve-bits 30 --baseline-numbers 0 --repeat 1
# Session 40: the unit of 2^53 at B52 whose `collatzctl run` gave 4.60e13 on an H100, with the
# residue groups of about 455 members (G = 11) that became the delay-only default; 4.648e13
# there, about 195 s. Session 41's check that looks six T-steps ahead: 4.93e13 (the run 4.89e13),
# about 183 s; and the same unit with the check before it (--walk-check-bits 2 is the nearest:
# v mod 4 with its odd paths too).
RUN_TIMEOUT=300 run --at 28021396881499226112 --numbers 2^53 --kinds delay --sieve-bits 30 --verify-numbers 2^30 --baseline-numbers 0 --repeat 1
RUN_TIMEOUT=300 run --at 28021396881499226112 --numbers 2^53 --kinds delay --sieve-bits 30 --baseline-numbers 0 --repeat 1 --walk-check-bits 2
