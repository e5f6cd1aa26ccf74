#!/usr/bin/env bash
# The real path beside the bench, on the GPU machine (docs/PERFORMANCE.md, session 14): run
# from the folder gpu/pack_real_path.sh made (collatzctl, collatz-server, collatz-worker,
# lib/, data/). Each row prints the command's own summary line; logs go to $OUT.
#   bench   collatzctl bench at 2^66 (trusted, floor) with --check, and at a record window
#   run     collatzctl run on an empty database at 2^66 (delay), after import --published,
#           and [1, 2^44) both kinds
#   fleet   collatz-server + one GPU worker at 2^66 (2^46 numbers, one default unit) after
#           import --published, next to collatzctl bench --numbers 2^46 in the same call
#   fleet-class  the same with --kinds delay,class (the server cuts such units at its
#           --class-sieve-bits, 25 by default; the bench picks the same width)
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=$(mktemp -d)
modes=${*:-bench run fleet}
ctl() { ./collatzctl "$@"; }
nvidia-smi --query-gpu=name,clocks.sm,memory.used --format=csv,noheader
A=73786976294838206464  # 2^66
for mode in $modes; do
  case $mode in
  bench)
    for ctx in trusted floor; do
      ctl bench --backend gpu --at 2^66 --kinds delay --context $ctx --check --check-numbers 2^30 > "$OUT/bench_$ctx.txt" 2>&1
      echo "bench 2^66 delay --context $ctx (rc $?): $(grep -E 'numbers/s' "$OUT/bench_$ctx.txt" | head -1)"
      grep -E "^check|^baseline" "$OUT/bench_$ctx.txt" | cut -c1-200
    done
    ctl bench --backend gpu --at 2^64 --kinds delay --record-window --check --baseline-numbers 0 > "$OUT/bench_window.txt" 2>&1
    echo "bench record window above 2^64 (rc $?): $(grep -E 'record window|numbers/s' "$OUT/bench_window.txt" | tr '\n' ' ' | cut -c1-300)"
    ;;
  run)
    s=$(date +%s.%N)
    ctl run --db "$W/empty.db" --from 2^66 --to 2^66+2^44 --kinds delay --backend gpu > "$OUT/run_empty.txt" 2> "$OUT/run_empty.err"
    echo "run 2^66 +2^44 delay, empty db (rc $?, $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s): $(grep -E '^# searched' "$OUT/run_empty.txt")"
    ctl import --db "$W/published.db" --published > "$OUT/import.txt" 2>&1; echo "import --published rc $?"
    s=$(date +%s.%N)
    ctl run --db "$W/published.db" --from 2^66 --to 2^66+2^44 --kinds delay --backend gpu > "$OUT/run_published.txt" 2> "$OUT/run_published.err"
    echo "run 2^66 +2^44 delay, after import --published (rc $?, $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s): $(grep -E '^# searched' "$OUT/run_published.txt")"
    ctl bench --backend gpu --at 2^66 --numbers 2^44 --kinds delay --baseline-numbers 0 > "$OUT/bench_2p44.txt" 2>&1
    echo "  same call: bench 2^66 --numbers 2^44 trusted: $(grep -E 'numbers/s' "$OUT/bench_2p44.txt" | head -1)"
    s=$(date +%s.%N)
    ctl run --db "$W/from1.db" --from 1 --to 2^44 --backend gpu > "$OUT/run_from1.txt" 2> "$OUT/run_from1.err"
    echo "run [1, 2^44) both kinds, empty db (rc $?, $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s): $(grep -E '^# searched' "$OUT/run_from1.txt")"
    grep -E "^# " "$OUT/run_from1.txt" | head -8
    ;;
  fleet|fleet-class)
    kinds=delay; [[ $mode == fleet-class ]] && kinds=delay,class
    ./collatz-server --db "$W/server_$mode.db" --listen 127.0.0.1:50071 --unit-size 2^46 --lease-seconds 600 > "$OUT/server_$mode.log" 2>&1 &
    srv=$!
    for _ in $(seq 100); do grep -q listening "$OUT/server_$mode.log" && break; sleep 0.1; done
    ctl import --server 127.0.0.1:50071 --published > "$OUT/fleet_import.txt" 2>&1 || echo "fleet import failed: $(cat "$OUT/fleet_import.txt")"
    ctl submit --server 127.0.0.1:50071 --from 2^66 --to 2^66+2^46 --kinds $kinds > "$OUT/submit_$mode.txt" 2>&1
    s=$(date +%s.%N)
    ./collatz-worker --server 127.0.0.1:50071 --backend gpu --spool "$W/spool_$mode" --max-idle-seconds 2 > "$OUT/worker_$mode.log" 2>&1
    e=$(date +%s.%N)
    echo "$mode: server + 1 GPU worker, [2^66, 2^66 + 2^46) $kinds after import --published: worker rc $?, $(python3 -c "print(round($e - $s, 1))") s wall, $(python3 -c "print('%.3e' % (2**46 / ($e - $s)))") numbers/s wall (self-test, tables and idle exit included)"
    grep -E "done in|self-test|sieve" "$OUT/worker_$mode.log" | cut -c1-240 | head -6
    ctl server-records --server 127.0.0.1:50071 --kind delay --format csv > "$OUT/${mode}_delay.csv" 2>&1
    kill $srv; wait $srv 2>/dev/null
    ctl bench --backend gpu --at 2^66 --numbers 2^46 --kinds $kinds --baseline-numbers 0 > "$OUT/bench_2p46_$mode.txt" 2>&1
    echo "  same call: bench 2^66 --numbers 2^46 --kinds $kinds trusted: $(grep -E 'numbers/s' "$OUT/bench_2p46_$mode.txt" | head -1)"
    ;;
  esac
done
rm -rf "$W"
