#!/usr/bin/env bash
# The worker's GPU acceptance run (docs/WORKER.md), on a machine with a GPU and without
# gRPC: binaries and their shared libraries built on the Debian host are in $CARRY
# (.carry-worker: collatz-server, collatz-worker, collatzctl, lib/, data/).
#  1. [1, $RANGE_END), delay and class records: server + GPU worker, and at the same time a
#     second server + CPU worker; both record lists must be equal, and equal to the
#     published delay records below 2^36 and the exhaustive class records below 2^28.
#  2. Near 2^60: the published delay records below S = 1278775404785934855 - 2^37 imported
#     as trusted, [S, 1278775404785934855 + 2^37) searched delay-only on the GPU: the final
#     delay records at or above S must be exactly 1278775404785934855 (delay 2286).
# Prints PASS/FAIL lines; logs and CSVs go to $OUT.
set -u
CARRY=${CARRY:-.carry-worker}
# For a rehearsal without a GPU: GPU_BACKEND=cpu RANGE_END=2^26 CPU_THREADS=1.
GPU_BACKEND=${GPU_BACKEND:-gpu}
RANGE_END=${RANGE_END:-2^36}
CPU_THREADS=${CPU_THREADS:-14}
RANGE_END_DEC=$(python3 -c "print(${RANGE_END/^/**})")
OUT=${OUT:-/tmp/worker-gpu-run}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=/tmp/worker-gpu-run-state
rm -rf "$W" && mkdir -p "$W"
fail=0
ctl() { "$CARRY/collatzctl" "$@"; }
nvidia-smi -L || true

start_server() {  # name port unit_size
  "$CARRY/collatz-server" --db "$W/$1.db" --listen "127.0.0.1:$2" --unit-size "$3" --lease-seconds 120 --double-check none \
    > "$OUT/server_$1.log" 2>&1 &
  for _ in $(seq 100); do grep -q "listening" "$OUT/server_$1.log" && return 0; sleep 0.1; done
  echo "server $1 did not start"; cat "$OUT/server_$1.log"; return 1
}

# 1. [1, $RANGE_END) on the GPU and on the CPU at once; 2. near 2^60 on the GPU after 1.
R=1278775404785934855
S=$(python3 -c "print($R - 2**37)")
E=$(python3 -c "print($R + 2**37)")
start_server gpu 50061 2^32 || exit 1
start_server cpu 50062 2^32 || exit 1
start_server near60 50063 2^36 || exit 1
ctl submit --server 127.0.0.1:50061 --from 1 --to "$RANGE_END" --unit-size 2^32
ctl submit --server 127.0.0.1:50062 --from 1 --to "$RANGE_END" --unit-size 2^32
# The published records below S (import refuses rows at or above the bound).
python3 -c "import sys; rows = open(sys.argv[1]).read().split(); print(rows[0]); [print(r) for r in rows[1:] if int(r.split(',')[0]) < $S]" \
  "$CARRY/data/delay_records.csv" > "$W/delay_below_S.csv"
ctl import --server 127.0.0.1:50063 --delay-csv "$W/delay_below_S.csv" --complete-below "$S"
ctl submit --server 127.0.0.1:50063 --from "$S" --to "$E" --unit-size 2^36 --kinds delay
t0=$(date +%s.%N)
"$CARRY/collatz-worker" --server 127.0.0.1:50061 --backend "$GPU_BACKEND" --gpus all --spool "$W/spool_gpu" \
  --max-idle-seconds 3 --metrics-listen 127.0.0.1:9464 > "$OUT/worker_gpu.log" 2>&1 &
gpu_pid=$!
timeout -s TERM "${CPU_SECONDS:-330}" "$CARRY/collatz-worker" --server 127.0.0.1:50062 --backend cpu \
  --threads "$CPU_THREADS" --spool "$W/spool_cpu" --max-idle-seconds 3 > "$OUT/worker_cpu.log" 2>&1 &
cpu_pid=$!
# Scrape the metrics once while the GPU worker runs.
(sleep 8; python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9464/metrics').read().decode())" > "$OUT/metrics_gpu.txt" 2>&1) &
wait $gpu_pid; gpu_rc=$?
t1=$(date +%s.%N)
echo "GPU worker exit $gpu_rc after $(python3 -c "print(round($t1 - $t0, 1))") s"
ctl status --server 127.0.0.1:50061 --wait 30 > "$OUT/status_gpu.txt" || fail=1
ctl server-records --server 127.0.0.1:50061 --kind delay --format csv > "$OUT/gpu_delay.csv"
ctl server-records --server 127.0.0.1:50061 --kind class --format csv > "$OUT/gpu_class.csv"
grep -E "self-test|REFUSED|registered" "$OUT/worker_gpu.log" | cut -c1-300
echo "GPU units done: $(grep -c "done in" "$OUT/worker_gpu.log")"
grep "done in" "$OUT/worker_gpu.log" | head -3
grep "done in" "$OUT/worker_gpu.log" | tail -2
awk -F, 'NR == 1 || $1 + 0 < '"$RANGE_END_DEC"'' "$CARRY/data/delay_records.csv" > "$OUT/ref_delay.csv"
if [ "$gpu_rc" = 0 ] && cmp -s "$OUT/gpu_delay.csv" "$OUT/ref_delay.csv"; then echo "PASS [1, $RANGE_END): GPU delay records equal the published ones ($(($(wc -l < "$OUT/gpu_delay.csv") - 1)))"
else echo "FAIL [1, $RANGE_END): GPU delay records differ from the published ones"; diff "$OUT/gpu_delay.csv" "$OUT/ref_delay.csv" | head; fail=1; fi
L=$(python3 -c "print(min($RANGE_END_DEC, 2**28))")
awk -F, 'NR == 1 || $2 + 0 < '"$L"'' "$OUT/gpu_class.csv" > "$OUT/gpu_class_below_2p28.csv"
awk -F, 'NR == 1 || $2 + 0 < '"$L"'' "$CARRY/data/class_records_below_2p28.csv" > "$OUT/ref_class_below_2p28.csv"
if cmp -s "$OUT/gpu_class_below_2p28.csv" "$OUT/ref_class_below_2p28.csv"; then
  echo "PASS [1, $RANGE_END): GPU class records below min(end, 2^28) equal the exhaustive reference"
else echo "FAIL: GPU class records below 2^28 differ"; fail=1; fi

if [ -z "${SKIP_NEAR60:-}" ]; then
  "$CARRY/collatz-worker" --server 127.0.0.1:50063 --backend "$GPU_BACKEND" --spool "$W/spool_near60" \
    --max-idle-seconds 3 > "$OUT/worker_near60.log" 2>&1
  echo "near-2^60 worker exit $?"
  ctl status --server 127.0.0.1:50063 --wait 30 > "$OUT/status_near60.txt" || fail=1
  ctl server-records --server 127.0.0.1:50063 --kind delay --format csv > "$OUT/near60_delay.csv"
  found=$(awk -F, -v s="$S" 'NR > 1 && length($1) >= length(s) && $1 >= s' "$OUT/near60_delay.csv")
  if [ "$found" = "$R,2286" ]; then echo "PASS near 2^60: exactly $R (delay 2286) found in [$S, $E)"
  else echo "FAIL near 2^60: found [$found]"; fail=1; fi
  grep "done in" "$OUT/worker_near60.log" | head -4
fi

wait $cpu_pid; cpu_rc=$?
t2=$(date +%s.%N)
echo "CPU worker exit $cpu_rc after $(python3 -c "print(round($t2 - $t0, 1))") s, $(grep -c "done in" "$OUT/worker_cpu.log") units"
ctl status --server 127.0.0.1:50062 --wait 5 > "$OUT/status_cpu.txt" || fail=1
ctl server-records --server 127.0.0.1:50062 --kind delay --format csv > "$OUT/cpu_delay.csv"
ctl server-records --server 127.0.0.1:50062 --kind class --format csv > "$OUT/cpu_class.csv"
if cmp -s "$OUT/gpu_delay.csv" "$OUT/cpu_delay.csv" && cmp -s "$OUT/gpu_class.csv" "$OUT/cpu_class.csv"; then
  echo "PASS [1, $RANGE_END): GPU records equal CPU records ($(($(wc -l < "$OUT/gpu_delay.csv") - 1)) delay, $(($(wc -l < "$OUT/gpu_class.csv") - 1)) class)"
else
  echo "FAIL [1, $RANGE_END): GPU and CPU records differ (or the CPU search did not finish in time)"; fail=1
fi
kill %1 %2 %3 2>/dev/null
exit $fail
