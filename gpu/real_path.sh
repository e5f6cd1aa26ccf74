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
# FLEET_AT, FLEET_NUMBERS and FLEET_UNIT (default 2^66, 2^46 and the whole range) move the fleet
# rows, e.g. to 2^46 numbers at 2^60 in units of 2^43; with FLEET_COMPLETE_BELOW (e.g. 2^60) the
# server imports the published delay records below that bound as complete there instead of
# --published (whose bound, about 2^64.6, covers 2^60 already).
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
    at=${FLEET_AT:-2^66}; n=${FLEET_NUMBERS:-2^46}; unit=${FLEET_UNIT:-$n}
    ./collatz-server --db "$W/server_$mode.db" --listen 127.0.0.1:50071 --unit-size $unit --lease-seconds 600 > "$OUT/server_$mode.log" 2>&1 &
    srv=$!
    for _ in $(seq 100); do grep -q listening "$OUT/server_$mode.log" && break; sleep 0.1; done
    import=(--published)
    if [[ -n ${FLEET_COMPLETE_BELOW:-} ]]; then
      python3 -c "import sys; b = eval(sys.argv[1].replace('^', '**')); rows = open('data/delay_records.csv').read().split(); print('\n'.join([rows[0]] + [r for r in rows[1:] if int(r.split(',')[0]) < b]))" "$FLEET_COMPLETE_BELOW" > "$W/below.csv"
      import=(--delay-csv "$W/below.csv" --complete-below "$FLEET_COMPLETE_BELOW")
    fi
    ctl import --server 127.0.0.1:50071 "${import[@]}" > "$OUT/fleet_import.txt" 2>&1 || echo "fleet import failed: $(cat "$OUT/fleet_import.txt")"
    ctl submit --server 127.0.0.1:50071 --from $at --to $at+$n --kinds $kinds > "$OUT/submit_$mode.txt" 2>&1
    s=$(date +%s.%N)
    ./collatz-worker --server 127.0.0.1:50071 --backend gpu --spool "$W/spool_$mode" --max-idle-seconds 2 > "$OUT/worker_$mode.log" 2>&1
    e=$(date +%s.%N)
    echo "$mode: server + 1 GPU worker, [$at, $at + $n) $kinds after import ${import[*]}: worker rc $?, $(python3 -c "print(round($e - $s, 1))") s wall, $(python3 -c "print('%.3e' % (${n/^/**} / ($e - $s)))") numbers/s wall (self-test, tables and idle exit included)"
    grep -E "done in|self-test|sieve" "$OUT/worker_$mode.log" | cut -c1-240 | head -6
    ctl server-records --server 127.0.0.1:50071 --kind delay --format csv > "$OUT/${mode}_delay.csv" 2>&1
    kill $srv; wait $srv 2>/dev/null
    ctl bench --backend gpu --at $at --numbers $n --kinds $kinds --baseline-numbers 0 > "$OUT/bench_fleet_$mode.txt" 2>&1
    echo "  same call: bench $at --numbers $n --kinds $kinds trusted: $(grep -E 'numbers/s' "$OUT/bench_fleet_$mode.txt" | head -1)"
    ;;
  esac
done
rm -rf "$W"
