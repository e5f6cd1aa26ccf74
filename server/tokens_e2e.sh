#!/usr/bin/env bash
# Tokens per host and role end to end with the real binaries (issue 41, item 4):
# collatz-server with a shared token; collatzctl tokens add issues a worker token and an
# admin token (printed once, never stored in the database); the worker token cannot
# submit; a CPU collatz-worker with the worker token finishes the admin's submission and
# is listed with its token; after collatzctl tokens revoke the same worker is refused
# and the new units stay unfinished. Then the refusal to listen beyond loopback without
# any token (--insecure), tested on 192.0.2.1 (TEST-NET-1: never bound, so nothing here
# listens beyond loopback; a start that passes the check fails to bind, exit 1, instead
# of being refused, exit 2). About 20 seconds on 2 cores.
#   server/tokens_e2e.sh COLLATZ_SERVER COLLATZ_WORKER COLLATZCTL
set -euo pipefail
source "$(dirname "$(realpath "$0")")/e2e_server_start.sh"
SERVER=$(realpath "${1:?usage: $0 COLLATZ_SERVER COLLATZ_WORKER COLLATZCTL}")
WORKER=$(realpath "${2:?}")
CTL=$(realpath "${3:?}")
W=$(mktemp -d)
trap 'kill -KILL $(cat "$W"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$W"' EXIT
cd "$W"
echo "tokens-e2e-shared-token" > shared.tok
unset COLLATZ_TOKEN
fail() { echo "FAILED: $*"; for f in *.log *.txt; do [ -e "$f" ] && { echo "--- $f"; tail -30 "$f"; }; done; exit 1; }

start_server_on_free_port "$SERVER" --db t.db --token-file shared.tok --unit-size 2^20 --lease-seconds 10 || fail "the server did not start"

# 1. Tokens issued with the shared token; each printed once, alone on stdout.
"$CTL" tokens add --name box-a --token-file shared.tok > a.tok 2>add.txt || fail "tokens add box-a"
grep -q "shown this once" add.txt || fail "no note that the token is shown once"
"$CTL" tokens add --name ops --role admin --token-file shared.tok > ops.tok || fail "tokens add ops"
[ "$(wc -l < a.tok)" = 1 ] && [ "$(wc -c < a.tok)" = 65 ] || fail "the worker token is not one line of 64 digits"
rc=0; "$CTL" tokens add --name box-a --token-file shared.tok >/dev/null 2>dup.txt || rc=$?
[ "$rc" = 2 ] && grep -q "exists" dup.txt || fail "a name issued twice: exit $rc"
rc=0; "$CTL" tokens add --name box-b --token-file a.tok >/dev/null 2>denied.txt || rc=$?
[ "$rc" = 1 ] && grep -q "worker role" denied.txt || fail "a worker token issued a token: exit $rc"
"$CTL" tokens list --token-file ops.tok > list.txt || fail "tokens list"
grep -Eq "^box-a +worker " list.txt && grep -Eq "^ops +admin " list.txt || fail "tokens list: $(cat list.txt)"

# 2. The worker token cannot submit; the admin token can.
rc=0; "$CTL" submit --to 2^22 --kinds delay --token-file a.tok >/dev/null 2>submit.txt || rc=$?
[ "$rc" = 1 ] && grep -q "permission denied" submit.txt || fail "the worker token submitted: exit $rc"
"$CTL" submit --to 2^22 --kinds delay --token-file ops.tok | grep -q "submission 1: 4 units" || fail "admin submit"

worker() {  # name, token file, seconds: a CPU worker, ended by --max-idle-seconds or by timeout
  local rc=0
  timeout "$3" "$WORKER" --server "$COLLATZ_SERVER" --token-file "$2" --backend cpu --threads 1 \
    --max-idle-seconds 2 --heartbeat-seconds 1 --spool "spool-$1" --backoff-cap-seconds 1 2>"$1.log" || rc=$?
  echo "$rc"
}
rc=$(worker honest a.tok 120)
[ "$rc" = 0 ] || fail "the worker with the worker token exited with $rc"
"$CTL" status > status.txt
grep -Eq "^units +0 pending, 0 leased, 4 finished, 0 quarantined" status.txt || fail "the units did not finish"
"$CTL" workers > workers.txt
grep -Eq " box-a +ok" workers.txt || fail "the worker is not listed with its token: $(cat workers.txt)"

# 3. Revoked: refused from the next call on; new work stays unfinished.
"$CTL" tokens revoke box-a --token-file ops.tok | grep -q "revoked" || fail "tokens revoke"
rc=0; "$CTL" tokens revoke box-a --token-file ops.tok 2>again.txt || rc=$?
[ "$rc" = 2 ] && grep -q "already revoked" again.txt || fail "revoking twice: exit $rc"
"$CTL" submit --from 2^22 --to 2^23 --kinds delay --token-file shared.tok | grep -q "submission 2: 4 units" ||
  fail "second submit"
rc=$(worker revoked a.tok 6)
[ "$rc" = 124 ] || fail "the revoked worker exited with $rc instead of retrying until killed"
grep -q "was revoked" revoked.log || fail "the revoked worker was not told why"
"$CTL" status > status2.txt
grep -Eq "^units +4 pending, 0 leased, 4 finished, 0 quarantined" status2.txt || fail "a revoked token's worker got work"
"$CTL" tokens list --token-file shared.tok > list2.txt
grep -Eq "^box-a +worker +[0-9T:-]+Z +[0-9T:-]+Z +[0-9T:-]+Z" list2.txt || fail "revoked/last used: $(cat list2.txt)"

# 4. Tokens are stored as digests only.
kill -TERM "$(cat server.pid)"; wait "$(cat server.pid)" || true; rm server.pid
for t in a.tok ops.tok; do
  ! grep -qaF "$(cat $t)" t.db t.db-wal 2>/dev/null || fail "token $t is in the database"
done
sqlite3 t.db "SELECT name, role FROM v_tokens" | grep -q "box-a|worker" || fail "v_tokens"
sqlite3 t.db "SELECT token_name FROM v_workers" | grep -q "box-a" || fail "v_workers"

# 5. Beyond loopback without any token: refused (exit 2, with the reason), unless --insecure.
refused() {  # expected exit, then server flags: runs a server on a fresh database
  local want=$1; shift
  rm -f fresh.db*
  local rc=0
  timeout 60 "$SERVER" --db fresh.db "$@" 2>refused.log || rc=$?
  [ "$rc" = "$want" ] || fail "collatz-server $*: exit $rc, expected $want"
}
refused 2 --listen 192.0.2.1:0
grep -q "refusing to listen on 192.0.2.1:0 without a token: anyone who can reach" refused.log || fail "no reason given"
refused 2 --listen 127.0.0.1:0 --http-listen 192.0.2.1:0
grep -q "refusing to listen on 192.0.2.1:0" refused.log || fail "the dashboard was not refused"
refused 1 --listen 192.0.2.1:0 --insecure
grep -q "cannot listen on 192.0.2.1:0" refused.log || fail "--insecure did not pass the check"
refused 1 --listen 192.0.2.1:0 --token-file shared.tok
# A database with stored tokens (and no shared token) passes too.
rc=0; timeout 60 "$SERVER" --db t.db --listen 192.0.2.1:0 2>stored.log || rc=$?
[ "$rc" = 1 ] && grep -q "cannot listen on 192.0.2.1:0" stored.log || fail "stored tokens did not count: exit $rc"
echo "tokens e2e: ok"
