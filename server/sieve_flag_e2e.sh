#!/usr/bin/env bash
# collatz-server --sieve FILE: the join sieve of a collatz-sieve file, whose width wins over
# --sieve-bits (the width every worker must then use), beside a generated class width; a
# damaged or missing file stops the server at start with exit 1 before it listens, and a class
# width no unit may have (--class-sieve-bits 31) with exit 2. The delay-only units' wide width
# (--delay-sieve-bits) is built only by a server whose --unit-size reaches
# --delay-sieve-min-numbers; --class-unit-size caps its delay+class units. A few seconds.
#   server/sieve_flag_e2e.sh COLLATZ_SERVER COLLATZ_SIEVE
set -euo pipefail
SERVER=${1:?usage: $0 COLLATZ_SERVER COLLATZ_SIEVE}
SIEVE=${2:?usage: $0 COLLATZ_SERVER COLLATZ_SIEVE}
W=$(mktemp -d)
trap 'kill -KILL $(cat "$W"/server.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$W"' EXIT
cd "$W"
"$SIEVE" generate --bits 12 --out sieve-12.bin --threads 1 --quiet

"$SERVER" --listen 127.0.0.1:0 --db good.db --double-check none --sieve sieve-12.bin --sieve-bits 19 --class-sieve-bits 14 \
  --delay-sieve-bits 13 2>good.log &
echo $! > server.pid
for _ in $(seq 100); do grep -q "listening on" good.log && break; sleep 0.1; done
grep -q "sieve 12 bits" good.log || { echo "FAIL: the server did not take the file's width"; cat good.log; exit 1; }
grep -q "sieve widths 12 and 14 bits" good.log || { echo "FAIL: no class width beside the file's"; cat good.log; exit 1; }
grep -q "delay-only units of 281474976710656+: 12 bits" good.log || { echo "FAIL: units of 2^46 built the delay width"; cat good.log; exit 1; }
kill -TERM "$(cat server.pid)"
wait "$(cat server.pid)" || true
rm server.pid
# A campaign server (units of 2^49 and more) builds the delay width too; its delay+class
# submissions take units of at most --class-unit-size (2^52 by default).
"$SERVER" --listen 127.0.0.1:0 --db campaign.db --double-check none --sieve sieve-12.bin --class-sieve-bits 14 \
  --delay-sieve-bits 13 --unit-size 2^54 2>campaign.log &
echo $! > server.pid
for _ in $(seq 100); do grep -q "listening on" campaign.log && break; sleep 0.1; done
grep -q "sieve widths 12, 13 and 14 bits" campaign.log || { echo "FAIL: no delay width"; cat campaign.log; exit 1; }
grep -q "delay-only units of 281474976710656+: 13 bits" campaign.log || { echo "FAIL: delay width not used"; cat campaign.log; exit 1; }
grep -q "unit size 18014398509481984 (delay+class units 4503599627370496)" campaign.log ||
  { echo "FAIL: the class units' size is not the smaller of --unit-size and --class-unit-size"; cat campaign.log; exit 1; }
kill -TERM "$(cat server.pid)"
wait "$(cat server.pid)" || true
rm server.pid

head -c 100 sieve-12.bin > damaged.bin
for f in damaged.bin missing.bin; do
  rc=0
  timeout 30 "$SERVER" --listen 127.0.0.1:0 --db bad.db --sieve "$f" 2>bad.log || rc=$?
  [ "$rc" = 1 ] || { echo "FAIL: --sieve $f exited $rc, want 1"; cat bad.log; exit 1; }
  grep -q "building tables" bad.log || { echo "FAIL: --sieve $f: no clear error"; cat bad.log; exit 1; }
  ! grep -q "listening on" bad.log || { echo "FAIL: --sieve $f: the server listened"; exit 1; }
done
rc=0
timeout 30 "$SERVER" --listen 127.0.0.1:0 --db bad.db --class-sieve-bits 31 2>bad.log || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --class-sieve-bits 31 exited $rc, want 2"; cat bad.log; exit 1; }
grep -q "class-sieve-bits must be" bad.log || { echo "FAIL: --class-sieve-bits 31: no clear error"; cat bad.log; exit 1; }
rc=0
timeout 30 "$SERVER" --listen 127.0.0.1:0 --db bad.db --delay-sieve-bits 31 2>bad.log || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --delay-sieve-bits 31 exited $rc, want 2"; cat bad.log; exit 1; }
grep -q "delay-sieve-bits must be" bad.log || { echo "FAIL: --delay-sieve-bits 31: no clear error"; cat bad.log; exit 1; }
rc=0
timeout 30 "$SERVER" --listen 127.0.0.1:0 --db bad.db --class-unit-size 0 2>bad.log || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --class-unit-size 0 exited $rc, want 2"; cat bad.log; exit 1; }
grep -q "bad --class-unit-size" bad.log || { echo "FAIL: --class-unit-size 0: no clear error"; cat bad.log; exit 1; }
echo "ok: the file's width wins beside the class and delay widths; damaged and missing files exit 1 before listening; bad widths and class unit sizes exit 2"
