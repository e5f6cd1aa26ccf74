#!/usr/bin/env bash
# End to end with the real binaries only: collatz-server, two collatz-worker CPU workers and
# collatzctl search [1, 2^32) while one worker is killed with SIGKILL mid-unit and the server
# is killed with SIGKILL and restarted; the final delay records must equal the published
# ones below 2^32, the class records with n < 2^28 the reference, 66 units finished once
# each, and PRAGMA integrity_check ok. About a minute on 2 cores.
#   server/e2e_real_binaries.sh BUILD_DIR [SHARED_DATA]
set -euo pipefail
B=$(cd "${1:?usage: $0 BUILD_DIR [SHARED_DATA]}" && pwd)
DATA=${2:-$(cd "$(dirname "$0")/../../shared/data" && pwd)}
W=$(mktemp -d)
trap 'kill -KILL $(cat "$W"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$W"' EXIT
cd "$W"
echo "e2e-token" > tok
PORT=$((20000 + RANDOM % 20000))
export COLLATZ_SERVER=127.0.0.1:$PORT
start_server() {
  "$B/server/collatz-server" --listen "$COLLATZ_SERVER" --db e2e.db --token-file tok --unit-size 2^26 \
    --lease-seconds 5 --double-check none --audit-fraction 0.1 2>>server.log &
  echo $! > server.pid
  for _ in $(seq 100); do "$B/cli/collatzctl" status >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "server did not start"; cat server.log; exit 1
}
worker() {  # name
  "$B/worker/collatz-worker" --server "$COLLATZ_SERVER" --token-file tok --backend cpu --threads 1 \
    --host-name "e2e-$1" --spool "spool-$1" --max-idle-seconds 30 --log-level warn 2>"$1.log" &
  echo $! > "$1.pid"
}
start_server
"$B/cli/collatzctl" submit --token-file tok --to 2^32 --kinds delay,class
worker w1
worker w2
sleep 8
kill -KILL "$(cat w1.pid)" && rm w1.pid && echo "worker w1 killed with SIGKILL"
sleep 5
kill -KILL "$(cat server.pid)" && rm server.pid && echo "server killed with SIGKILL"
sleep 2
start_server && echo "server restarted"
worker w3
for _ in $(seq 200); do
  s=$("$B/cli/collatzctl" status --format json)
  grep -q '"covered_prefix": "4294967296"' <<<"$s" && grep -q '"pending": 0,' <<<"$s" && break
  sleep 2
done
"$B/cli/collatzctl" status
"$B/cli/collatzctl" server-records --kind delay --format csv > delay.csv
"$B/cli/collatzctl" server-records --kind class --format csv > class.csv
awk -F, 'NR == 1 || $1 < 4294967296' "$DATA/delay_records.csv" | cmp - delay.csv
echo "delay records below 2^32 equal the published ones ($(($(wc -l < delay.csv) - 1)) records)"
awk -F, 'NR == 1 || $2 < 268435456' class.csv | cmp - "$DATA/class_records_below_2p28.csv"
echo "class records with n < 2^28 equal the reference"
kill -TERM "$(cat server.pid)"; wait "$(cat server.pid)" 2>/dev/null || true; rm server.pid
test "$(sqlite3 e2e.db 'PRAGMA integrity_check')" = ok
test "$(sqlite3 e2e.db "SELECT count(*) || ' ' || count(DISTINCT u.begin_n) FROM units u JOIN unit_results r ON r.unit_id = u.id WHERE u.state = 'finished'")" = "66 66"
echo "integrity_check ok; 66 units ([1, 2^20), [2^20, 2^24), [2^24, 2^26), then 63 of 2^26), each finished once"
