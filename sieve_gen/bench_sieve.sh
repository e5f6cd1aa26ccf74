#!/usr/bin/env bash
# Benchmark of `collatz-sieve generate`: wall time, CPU time, peak memory (/usr/bin/time -v),
# peak scratch disk (STXXL's largest allocation) and output size, one K at a time.
# Usage: bench_sieve.sh BUILD_DIR SCRATCH_DIR MEMORY K [K ...]
#   e.g. sieve_gen/bench_sieve.sh build-sieve /work/sieve-bench 4GiB 24 26 28 30 32
# Prints one markdown table row per K; keeps each run's JSON and time log in SCRATCH_DIR.
set -euo pipefail
build=$1 scratch=$2 memory=$3
shift 3
bin="$build/sieve_gen/collatz-sieve"
mkdir -p "$scratch"
echo "| K | memory budget | wall s | CPU s (user+sys) | peak RSS MiB | peak scratch MiB | output MiB | odd survivors | levels out of core |"
echo "|---|---|---|---|---|---|---|---|---|"
for k in "$@"; do
  out="$scratch/sieve$k.bin"
  /usr/bin/time -v -o "$scratch/time$k.log" "$bin" generate -q --bits "$k" --memory "$memory" \
      --tmpdir "$scratch" --out "$out" > "$scratch/run$k.json"
  wall=$(python3 -c "import json;print('%.1f'%json.load(open('$scratch/run$k.json'))['seconds'])")
  user=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{printf "%.1f", u+s}' "$scratch/time$k.log")
  rss=$(awk -F': ' '/Maximum resident/{printf "%.0f", $2/1024}' "$scratch/time$k.log")
  read -r scr count ext < <(python3 -c "import json;j=json.load(open('$scratch/run$k.json'));print(j['peak_scratch_bytes']//2**20, j['count'], j['external_levels'])")
  size=$(( $(stat -c %s "$out") / 1048576 ))
  echo "| $k | $memory | $wall | $user | $rss | $scr | $size | $count | $ext |"
  rm -f "$out"
done
