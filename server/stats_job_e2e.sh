#!/usr/bin/env bash
# Stats jobs end to end with the real binaries (issue 6): collatz-server, collatz-worker on
# the CPU, and collatzctl. Two jobs, [2^40, 2^40 + 2^22) in batches of 1024 (4 units) and
# [0, 2^20) in batches of 256 (from 0: its first batch counts 255 numbers), are submitted and
# refused for fetching while incomplete. A worker SIGKILLs itself after spooling its first
# result; a lying worker (test fault) is rejected and flagged; an honest worker on the first
# worker's spool sends the spooled result and computes the rest. The fetched files (and the
# CSV) must be byte for byte what the one-shot `collatzctl stats` writes for the same range.
# About 15 seconds on 2 cores.
# The crashing and the lying worker are collatz-worker-test (the same worker with fault flags).
#   server/stats_job_e2e.sh COLLATZ_SERVER COLLATZ_WORKER COLLATZCTL COLLATZ_WORKER_TEST
set -euo pipefail
source "$(dirname "$(realpath "$0")")/e2e_server_start.sh"
SERVER=$(realpath "${1:?usage: $0 COLLATZ_SERVER COLLATZ_WORKER COLLATZCTL COLLATZ_WORKER_TEST}")
WORKER=$(realpath "${2:?}")
CTL=$(realpath "${3:?}")
FAULTY_WORKER=$(realpath "${4:?}")
W=$(mktemp -d)
trap 'kill -KILL $(cat "$W"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$W"' EXIT
cd "$W"
echo "stats-e2e-token" > tok
export COLLATZ_TOKEN=stats-e2e-token
fail() { echo "FAILED: $*"; for f in *.log; do echo "--- $f"; tail -30 "$f"; done; exit 1; }

# --allow-test-builds: the crashing and the lying worker are collatz-worker-test, a test build.
start_server_on_free_port "$SERVER" --db stats.db --double-check none --token-file tok --stats-unit-size 2^20 \
  --lease-seconds 4 --allow-test-builds || fail "the server did not start"

out=$("$CTL" submit --kind stats --from 2^40 --to 2^40+2^22 --batch 1024)
echo "$out"
grep -q "^stats job 1: 4 units" <<<"$out" || fail "job 1: $out"
# 2^18 + 100 numbers per unit: rounded down to whole batches, 2^18.
out=$("$CTL" submit --kind stats --from 0 --to 2^20 --batch 256 --unit-size 2^18+100)
echo "$out"
grep -q "^stats job 2: 4 units" <<<"$out" || fail "job 2: $out"
# Unaligned ranges are refused before anything is queued (exit 2).
rc=0; "$CTL" submit --kind stats --from 1000 --to 2^20 --batch 1024 2>refused.txt || rc=$?
[ "$rc" = 2 ] || fail "unaligned submission: exit $rc"
# Submitting needs the token (exit 1); an unknown job cannot be fetched (exit 2).
rc=0; COLLATZ_TOKEN=wrong "$CTL" submit --kind stats --from 0 --to 2^20 2>token.txt || rc=$?
[ "$rc" = 1 ] && grep -q "refused the token" token.txt || fail "submission with a wrong token: exit $rc"
rc=0; "$CTL" stats-fetch --job 99 --out nothing.bin 2>unknown.txt || rc=$?
[ "$rc" = 2 ] && grep -q "unknown stats job 99" unknown.txt || fail "fetch of an unknown job: exit $rc"
# Incomplete: a clear error that says how many units remain (exit 1).
rc=0; "$CTL" stats-fetch --job 1 --out early.bin 2>early.txt || rc=$?
cat early.txt
[ "$rc" = 1 ] && grep -q "not complete: 4 of 4 units remain" early.txt || fail "early fetch: exit $rc"
[ ! -e early.bin ] || fail "an incomplete job wrote a file"

worker() {  # name, idle seconds, extra flags...: runs a CPU worker ($BINARY, else $WORKER) to its end, prints its exit status
  local name=$1 idle=$2; shift 2
  local rc=0
  "${BINARY:-$WORKER}" --server "$COLLATZ_SERVER" --token-file tok --backend cpu --threads 1 --max-idle-seconds "$idle" \
    --heartbeat-seconds 1 "$@" 2>"$name.log" &
  echo $! > "$name.pid"
  wait "$(cat "$name.pid")" || rc=$?
  rm "$name.pid"
  echo "$rc"
}
# 1. A worker killed (SIGKILL) right after spooling its first stats result.
rc=$(BINARY=$FAULTY_WORKER worker crash 3 --spool spool --test-crash-after-spool)
[ "$rc" = 137 ] || fail "the crashing worker exited with $rc"
[ "$(ls spool/s*.result | wc -l)" = 1 ] || fail "no stats result in the spool"
# 2. A lying worker: its result is rejected, it is flagged, refused further leases (exit 1).
rc=$(BINARY=$FAULTY_WORKER worker liar 3 --spool spool-liar --test-lie-stats)
[ "$rc" = 1 ] || fail "the lying worker exited with $rc"
grep -q "stats result rejected: batch at .* is wrong" liar.log || fail "the lie was not rejected"
"$CTL" workers | tee workers.txt
grep -q "FLAGGED: stats unit .* failed verification" workers.txt || fail "the liar is not flagged"
# 3. An honest worker on the first spool: sends the spooled result first, then does the rest,
#    the liar's unit included, and any unit the killed worker had prefetched once its lease
#    (4 s) expires.
rc=$(worker honest 8 --spool spool)
[ "$rc" = 0 ] || fail "the honest worker exited with $rc"
[ "$(grep -c 'result sent: accepted' honest.log)" = 8 ] || fail "not all 8 stats results accepted"
grep -q "re-sending 1 finished result" honest.log || fail "the spooled result was not sent first"

"$CTL" status | tee status.txt
grep -q "stats job 1 .*4/4 units finished" status.txt || fail "status of job 1"
grep -q "stats job 2 .*4/4 units finished" status.txt || fail "status of job 2"

"$CTL" stats-fetch --job 1 --out job1.bin
"$CTL" stats --from 2^40 --to 2^40+2^22 --batch 1024 --threads 1 --out oneshot1.bin 2>/dev/null
cmp job1.bin oneshot1.bin || fail "job 1 differs from collatzctl stats"
echo "job 1: $(stat -c %s job1.bin) bytes, equal to collatzctl stats"

"$CTL" stats-fetch --job 2 --out job2.bin --page-batches 1000  # pages that cut units
"$CTL" stats --from 0 --to 2^20 --batch 256 --threads 1 --out oneshot2.bin 2>/dev/null
cmp job2.bin oneshot2.bin || fail "job 2 differs from collatzctl stats"
"$CTL" stats-fetch --job 2 --format csv > job2.csv
"$CTL" stats --from 0 --to 2^20 --batch 256 --threads 1 --format csv > oneshot2.csv 2>/dev/null
cmp job2.csv oneshot2.csv || fail "job 2 CSV differs from collatzctl stats"
head -2 job2.csv
echo "job 2: $(stat -c %s job2.bin) bytes and $(($(wc -l < job2.csv) - 1)) CSV rows, equal to collatzctl stats"

kill -TERM "$(cat server.pid)"; wait "$(cat server.pid)" 2>/dev/null || true; rm server.pid
echo "stats jobs end to end: ok"
