#!/usr/bin/env bash
# gpu_bench's host model of the walk (--model-only, no GPU) on a delay+class unit at 2^66:
# counting the open classes below D closed (--model-closed-below, a what-if) must leave fewer
# classes open and less walk work a number than the unit's own holes, and the what-if must be
# refused outside --model-only, so that no measured figure rests on it.
#   gpu/step_model_test.sh path/to/gpu_bench
set -uo pipefail
bench=${1:?gpu_bench}
common=(--at 2^66 --numbers 2^46 --kinds delay,class --sieve-bits 19 --step-model 2^12 --model-group-bits 13 --model-only)
work() {  # the model's "walk T-steps beyond k + G per examined number"
  sed -nE 's/.*walk T-steps beyond k \+ G per examined number ([0-9.]+).*/\1/p' <<< "$1"
}
own=$("$bench" "${common[@]}" 2>&1) || { echo "FAIL: the model of the unit's own holes: $own"; exit 1; }
closed=$("$bench" "${common[@]}" --model-closed-below 2456 2>&1) || { echo "FAIL: the what-if: $closed"; exit 1; }
w_own=$(work "$own"); w_closed=$(work "$closed")
echo "unit's own holes: $(grep -m1 'open classes' <<< "$own"), walk work $w_own"
echo "what-if:          $(grep -m1 'open classes' <<< "$closed"), walk work $w_closed"
[[ -n $w_own && -n $w_closed ]] || { echo "FAIL: no walk work in the model's output"; exit 1; }
grep -qE 'open classes in the unit \(smallest [0-9]+\)$' <<< "$own" || { echo "FAIL: the unit has no open classes to close"; exit 1; }
grep -q 'what-if: the 0 at or above 2456 stay open' <<< "$closed" || { echo "FAIL: the what-if left classes below 2456 open"; exit 1; }
python3 -c "import sys; sys.exit(0 if float('$w_closed') < 0.9 * float('$w_own') else 1)" ||
  { echo "FAIL: closing every class did not cut the walk work by 10% ($w_own -> $w_closed)"; exit 1; }
if out=$("$bench" --at 2^66 --numbers 2^30 --kinds delay,class --model-closed-below 2456 2>&1); then
  echo "FAIL: --model-closed-below was accepted without --model-only: $out"; exit 1
fi
grep -q 'needs --model-only' <<< "$out" || { echo "FAIL: the refusal does not say why: $out"; exit 1; }
echo "PASS"
