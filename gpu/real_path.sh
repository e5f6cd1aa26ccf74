#!/usr/bin/env bash
# The real path beside the bench, on the GPU machine (docs/PERFORMANCE.md, session 14): run
# from the folder gpu/pack_real_path.sh made (collatzctl, collatz-server, collatz-worker,
# gpu_bench, roofline.sh, lib/, data/). Each row prints the command's own summary line; logs
# go to $OUT.
#   bench   collatzctl bench at 2^66 (trusted, floor) with --check, and at a record window
#           (below the published bound: a check, not a search)
#   run     collatzctl run on an empty database at 2^66 (delay), after import --published,
#           and [1, 2^44) both kinds
#   unit    collatzctl run of one campaign unit (UNIT_NUMBERS, 2^52, as --unit-size: 2^53 and
#           2^54 stay one unit) at B, the first multiple of it above the published bound, with
#           --log-level debug (where its time goes beyond the search), beside collatzctl bench --check
#           of the same numbers (UNIT_BENCH=0: without); UNIT_AT (another start, e.g. 2^66) and
#           UNIT_KINDS (delay; delay,class) move it
#   fleet   collatz-server + one GPU worker at 2^66 (2^46 numbers, one default unit) after
#           import --published, next to collatzctl bench --numbers 2^46 in the same call
#   fleet-class  the same with --kinds delay,class (the server cuts such units at its
#           --class-sieve-bits, 25 by default, and from 2^48 numbers at --delay-sieve-bits, 30,
#           when its --unit-size reaches that; the bench picks the same width)
#   campaign  the frontier campaign (issue 43): import --published into a fresh server, submit
#           the range above the published bound P = 28019077177231758496 in units of 2^46, one
#           collatz-worker process per GPU (G = 1, then every GPU), under each trust policy;
#           numbers/s per GPU and for the fleet from the server's log (first lease to last
#           result), the covered and checked prefixes, units searched and checked, and
#           collatzctl bench of one such unit in the same call. One line per configuration.
# FLEET_AT, FLEET_NUMBERS and FLEET_UNIT (default 2^66, 2^46 and the whole range) move the fleet
# rows, e.g. to 2^46 numbers at 2^60 in units of 2^43; with FLEET_COMPLETE_BELOW (e.g. 2^60) the
# server imports the published delay records below that bound as complete there instead of
# --published (whose bound, about 2^64.6, covers 2^60 already). FLEET_POLICY (none) is the fleet
# server's --double-check where it has one. FLEET_SIEVE_BITS sets the width of the fleet's units
# (collatz-server --delay-sieve-bits for fleet, --class-sieve-bits for fleet-class) and the
# bench's --sieve-bits: delay-only units take it from 2^48 numbers on, delay+class from 2^46.
# FLEET_BENCH=0 leaves the bench of the same numbers out (a unit too long for both in one call).
# The campaign's settings (environment):
#   CAMPAIGN_GPUS     the worker counts G to run, "all" = every GPU (default "1 all")
#   CAMPAIGN_POLICY   trust policies, each passed as collatz-server --double-check POLICY:
#                     "none adaptive all"; "default" (the default) passes none, so the
#                     server's own default applies. A server without --double-check runs
#                     "all" as --audit-fraction 1 and skips "adaptive".
#   CAMPAIGN_SECONDS  the work to submit, in seconds at CAMPAIGN_RATE numbers/s per GPU (150:
#                     1.3 units of 2^52 a GPU); with G >= 2, under "all" every unit is searched
#                     twice (half the units), under "adaptive" 2/3 of them
#   CAMPAIGN_RATE     numbers/s per GPU assumed for that (4e13: an H200 in units of 2^52,
#                     docs/PERFORMANCE.md session 29)
#   CAMPAIGN_UNITS    whole units of CAMPAIGN_UNIT to submit above the first (partial) unit
#                     [P, B), instead of the above
#   CAMPAIGN_UNIT     unit size (2^52, about 105 s on an H200, so that a call holds several;
#                     docs/OPERATIONS.md section 13 starts a campaign at 2^54, 400 s a unit and
#                     5% faster: delay-only units of 2^48 and more take the 30-bit sieve, and each
#                     doubling deepens their groups; 2^46 is the server's own default)
#   CAMPAIGN_IDLE     each worker exits after this many seconds without work (a unit's search
#                     at CAMPAIGN_RATE + 4, at least 8: more than a unit's search, so that a
#                     GPU waiting for the last unit to check stays; 8 where nothing is checked:
#                     one worker, or policy none)
#   CAMPAIGN_TIMEOUT  seconds each worker may run at most (2 * CAMPAIGN_SECONDS + 60)
#   CAMPAIGN_BACKEND  gpu (default), or cpu to try the script without a GPU (with small
#                     CAMPAIGN_UNIT and CAMPAIGN_UNITS; CAMPAIGN_NGPUS stands for "all", 2)
#   CAMPAIGN_BENCH    0 leaves out the collatzctl bench of one campaign unit
#   CAMPAIGN_SIEVE_BITS  the delay-only units' sieve width (collatz-server --delay-sieve-bits,
#                     the bench's --sieve-bits); empty: the server's default (30 bits)
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=$(mktemp -d)
modes=${*:-bench run fleet}
ctl() { ./collatzctl "$@"; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,clocks.sm,memory.used --format=csv,noheader
A=73786976294838206464  # 2^66
P=28019077177231758496  # the published bound: the published delay records are complete below it
py() { python3 -c "$@"; }
# " (below the published bound: not a real search)" when [AT, AT + N) lies below P, else "".
below() { py "a, n = ${1//^/**}, ${2//^/**}; print(' (below the published bound: not a real search)' if a + n <= $P else '')"; }
# --- campaign (issue 43) ---------------------------------------------------------------------
# The server's view of one configuration, from its log (every line carries a millisecond
# timestamp): leases granted ("worker=W unit=U lease=L search|audit: [A, B) ..."), searches
# accepted ("... finished: ..."), checks agreeing ("... audit matched ..."); and from the
# workers' logs the search time of each unit ("done in S s"). Prints the configuration's
# summary line (first) and detail lines.
write_campaign_report() {
  cat > "$W/campaign_report.py" <<'PYEOF'
import datetime, glob, json, os, re, sys
d, tag, P, B, E, U, wall, note = sys.argv[1:9]
P, B, E, U = int(P), int(B), int(E), int(U)
ts_re = re.compile(r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\]')
grant_re = re.compile(r'worker=(\d+) unit=(\d+) lease=(\w+) (\w+): \[(\d+), (\d+)\)')
done_re = re.compile(r'worker=(\d+) unit=(\d+) lease=(\w+) finished:')
match_re = re.compile(r'worker=(\d+) unit=(\d+) lease=(\w+) (?:audit|check) matched')
reg_re = re.compile(r'worker=(\d+) registered: host (\S+)')
def ts(line):
    m = ts_re.match(line)
    return datetime.datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S.%f').timestamp() if m else None
units, grants, searched, checked, hosts = {}, [], {}, {}, {}
mismatches = expired = released = rejected = 0
for line in open(os.path.join(d, 'server.log'), errors='replace'):
    t = ts(line)
    if t is None:
        continue
    m = grant_re.search(line)
    if m:
        w, u, purpose = int(m.group(1)), int(m.group(2)), m.group(4)
        units[u] = (int(m.group(5)), int(m.group(6)))
        grants.append((t, w, u, purpose))
        continue
    m = done_re.search(line)
    if m:
        searched[int(m.group(2))] = (t, int(m.group(1)))
        continue
    m = match_re.search(line)
    if m:
        checked[int(m.group(2))] = (t, int(m.group(1)))
        continue
    m = reg_re.search(line)
    if m:
        hosts[int(m.group(1))] = m.group(2)
    mismatches += 'MISMATCH' in line
    expired += line.rstrip().endswith(' expired')
    released += ' released' in line
    rejected += 'REJECTED' in line
def size(u):
    a, b = units[u]
    return b - a
def rate(n, s):
    return n / s if s > 0 else 0.0
def fmt(x):
    return '%.3e' % x
t0 = min((g[0] for g in grants), default=None)
status = {}
try:
    status = json.load(open(os.path.join(d, 'status.json')))
except Exception:
    pass
def rel(x):  # a prefix as P + x
    try:
        x = int(x)
    except Exception:
        return str(x)
    return 'P + %s (%.4f units)' % (fmt(x - P), (x - P) / U) if x >= P else str(x)
n_s = sum(size(u) for u in searched)
n_c = sum(size(u) for u in checked)
t_s = max((v[0] for v in searched.values()), default=t0 or 0) - (t0 or 0)
t_c = max((v[0] for v in checked.values()), default=t0 or 0) - (t0 or 0)
t_all = max(t_s, t_c)
workers = sorted(set(g[1] for g in grants))
per, last_end = [], {}
for w in workers:
    first = min(g[0] for g in grants if g[1] == w)
    ends = [v[0] for v in searched.values() if v[1] == w] + [v[0] for v in checked.values() if v[1] == w]
    n = sum(size(u) for u, v in searched.items() if v[1] == w) + sum(size(u) for u, v in checked.items() if v[1] == w)
    last_end[w] = max(ends, default=first)
    per.append((w, hosts.get(w, '?'), n, last_end[w] - first))
# The workers' own search times (their "done in S s" lines), per worker log, and the engines
# each built at its first unit of a width ("self-test passed on the K-bit sieve engine ... in S s
# with the build"): once a worker process, inside the span of its first lease.
unit_seconds, unit_numbers, builds = [], 0, []
for f in sorted(glob.glob(os.path.join(d, 'worker*.log'))):
    for line in open(f, errors='replace'):
        m = re.search(r'unit \d+(?: \(audit\))? \[(\d+), (\d+)\) done in ([\d.]+) s', line)
        if m:
            unit_seconds.append(float(m.group(3)))
            unit_numbers += int(m.group(2)) - int(m.group(1))
        m = re.search(r'self-test passed on the (\d+)-bit sieve engine .* in ([\d.]+) s with the build', line)
        if m:
            builds.append((int(m.group(1)), float(m.group(2))))
total_units = len(units)
g = len(workers)
fleet = rate(n_s, t_s)
line = ('campaign %s: %d units submitted [P, P + %s), %d searched, %d checked%s; fleet %s numbers/s searched '
        '(first lease to last search %.1f s), %s per GPU [each worker\'s searches and checks: %s]' % (
            tag, (E - P + U - 1) // U, fmt(E - P), len(searched), len(checked),
            ', %d check MISMATCHES' % mismatches if mismatches else '', fmt(fleet), t_s,
            fmt(fleet / max(g, 1)), ', '.join('worker %d@%s %s' % (w, h, fmt(rate(n, s))) for w, h, n, s in per)))
if checked:
    line += '; checked %s numbers/s (to the last check %.1f s); GPU work %s numbers/s' % (
        fmt(rate(n_c, t_c)), t_c, fmt(rate(n_s + n_c, t_all)))
line += '; covered prefix %s, checked prefix %s' % (rel(status.get('covered_prefix', '?')),
                                                   rel(status.get('checked_prefix', 'n/a (server without it)')))
line += '; workers\' wall %s s%s' % (wall, note)
print(line)
if unit_seconds:
    busy = sum(unit_seconds)
    print('  %s: the workers\' searches took %.2f s a unit on average (%d units, %.1f GPU-s; a GPU at that pace: %s '
          'numbers/s), %.1f%% of the GPU-seconds from first lease to last result' % (
              tag, busy / len(unit_seconds), len(unit_seconds), busy, fmt(unit_numbers / max(busy, 1e-9)),
              100.0 * busy / max(t_all * max(g, 1), 1e-9)))
if builds:
    # The span less the engine builds (G in parallel: their sum over G), what a worker that runs
    # for months pays once: the rate that remains is the campaign's steady one.
    build_s = sum(b for _, b in builds)
    rest = t_s - build_s / max(g, 1)
    print('  %s: engines built at the first units: %s (%.2f s in all); first lease to last search less them %.1f s: '
          'fleet %s numbers/s, %s per GPU' % (
              tag, ', '.join('%d bits %.2f s' % b for b in builds), build_s, rest, fmt(rate(n_s, rest)),
              fmt(rate(n_s, rest) / max(g, 1))))
if g >= 2 and per:
    # Whole units end a short run unevenly: the GPU without a last unit waits while another
    # searches its own (the server cuts from P, so the last unit is partial: with [P, B) half a
    # unit of 2^52, it waits about half a unit). A campaign of months has no such end; each
    # worker's own rate, summed, is the fleet's rate without it.
    summed = sum(rate(n, s) for _, _, n, s in per)
    print('  %s: the fleet without its uneven end: the workers\' own rates (numbers over first lease to last '
          'result) summed %s numbers/s, %s per GPU; the first GPU to run out of units waited %.1f s for the last result' % (
              tag, fmt(summed), fmt(summed / g), (t0 + t_all) - min(last_end.values())))
print('  %s: status: units %s, audits %s, double check %s; expired %d, released %d, rejected %d' % (
    tag, json.dumps(status.get('units', {})), json.dumps(status.get('audits', {})), status.get('double_check', 'n/a'),
    expired, released, rejected))
try:
    import sqlite3
    c = sqlite3.connect('file:%s?mode=ro' % os.path.join(d, 'server.db'), uri=True)
    first, = c.execute('select min(issued_ms) from leases').fetchone()
    last, = c.execute("select max(finished_at) from units where state = 'finished'").fetchone()
    if first and last:
        last = datetime.datetime.fromisoformat(last.replace('Z', '+00:00')).timestamp() * 1000
        print('  %s: database: first lease to last finished unit %.3f s (the log: %.3f s)' % (tag, (last - first) / 1000, t_s))
except Exception as e:
    print('  %s: database not read (%s)' % (tag, e))
PYEOF
}

# wait_listening LOG PID: until the server writing LOG listens, or exits; a 30-bit sieve's tables
# take it tens of seconds to build on its host (at most 3 minutes here).
wait_listening() {
  for _ in $(seq 1800); do grep -q listening "$1" && return; kill -0 "$2" 2>/dev/null || return; sleep 0.1; done
}

# campaign_one G POLICY INDEX: one configuration (G worker processes, one per GPU).
campaign_one() {
  local g=$1 pol=$2 idx=$3
  local tag="G=$g policy=$pol unit=$c_unit${CAMPAIGN_SIEVE_BITS:+ sieve=$CAMPAIGN_SIEVE_BITS}"
  local d="$W/campaign_g${g}_$pol"
  rm -rf "$d"; mkdir -p "$d"
  local addr="127.0.0.1:$((50100 + idx))"
  # Units for about CAMPAIGN_SECONDS of GPU work: under "all" every unit is searched twice;
  # under "adaptive" new workers are checked often at first (1.5: a sizing guess, not a figure);
  # one host of one GPU checks nothing.
  local f=1; [[ $g -ge 2 && $pol == all ]] && f=2; [[ $g -ge 2 && $pol == adaptive ]] && f=1.5
  # With the partial unit [P, B) the count of units is a multiple of G, so that every GPU gets
  # as many: otherwise the fleet's span waits for the one GPU with a unit more (38 units on 4
  # GPUs: 3.80x one GPU's rate, each GPU at its full rate; session 26).
  local units=${CAMPAIGN_UNITS:-$(py "import math; u = max(2 * $g, math.ceil($c_seconds * $c_rate * $g / $f / $c_unit_n)); print(-(-(u + 1) // $g) * $g - 1)")}
  local B E
  B=$(py "print(-(-$P // $c_unit_n) * $c_unit_n)")
  E=$(py "print($B + $units * $c_unit_n)")
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$d/admin.token"
  local sargs=(--db "$d/server.db" --listen "$addr" --unit-size "$c_unit" --lease-seconds 600 --token-file "$d/admin.token")
  [[ -n ${CAMPAIGN_SIEVE_BITS:-} ]] && sargs+=(--delay-sieve-bits "$CAMPAIGN_SIEVE_BITS")
  local note=""
  if [[ $pol != default ]]; then
    if ./collatz-server --help 2>&1 | grep -q -- --double-check; then
      sargs+=(--double-check "$pol")
    elif [[ $pol == all ]]; then
      sargs+=(--audit-fraction 1); note="$note; this server has no --double-check: all as --audit-fraction 1"
    elif [[ $pol == adaptive ]]; then
      echo "campaign $tag: skipped (this collatz-server has no --double-check)"; return
    fi
  fi
  ./collatz-server "${sargs[@]}" > "$d/server.log" 2>&1 &
  local srv=$!
  wait_listening "$d/server.log" $srv
  if ! grep -q listening "$d/server.log"; then
    echo "campaign $tag: the server did not start: $(tail -2 "$d/server.log" | tr '\n' ' ' | cut -c1-300)"; kill $srv 2>/dev/null; wait $srv 2>/dev/null; return
  fi
  local c=(--server "$addr" --token-file "$d/admin.token")
  ./collatzctl import "${c[@]}" --published > "$d/import.txt" 2>&1 || echo "campaign $tag: import failed: $(tail -1 "$d/import.txt")"
  ./collatzctl submit "${c[@]}" --from $P --to "$E" --kinds delay --unit-size "$c_unit" > "$d/submit.txt" 2>&1 ||
    echo "campaign $tag: submit failed: $(tail -1 "$d/submit.txt")"
  # Per-worker tokens where the server issues them (collatzctl tokens add), else the shared one.
  local tokens=shared i
  if ./collatzctl tokens --help > /dev/null 2>&1; then
    tokens=per-worker
    for ((i = 0; i < g; i++)); do
      if ! ./collatzctl tokens add "${c[@]}" --name "campaign-w$i" --role worker > "$d/w$i.token" 2>> "$d/tokens.err" ||
         [[ $(wc -w < "$d/w$i.token") != 1 ]]; then
        tokens="shared (tokens add failed: $(tail -1 "$d/tokens.err" | cut -c1-120))"
        break
      fi
    done
  fi
  [[ $tokens == per-worker ]] || for ((i = 0; i < g; i++)); do cp "$d/admin.token" "$d/w$i.token"; done
  # A host name per worker, so that checks of one GPU's results can come from another.
  local hosts=same has_host_name=0
  ./collatz-worker --help 2>&1 | grep -q -- --host-name && has_host_name=1 && hosts="distinct (--host-name)"
  # A lone worker, or one under "none", has no second search to wait for: it exits after 8 s
  # idle instead of a unit's search time (session 33: 116 s of device time after the last unit).
  local idle=$c_idle; [[ -z ${CAMPAIGN_IDLE:-} && ($g == 1 || $pol == none) ]] && idle=8
  local wargs=(--backend "$c_backend" --max-idle-seconds "$idle")
  [[ $c_backend == cpu ]] && wargs+=(--threads "${CAMPAIGN_CPU_THREADS:-1}")
  local s e pids=()
  s=$(date +%s.%N)
  for ((i = 0; i < g; i++)); do
    local dev=(); [[ $c_backend == gpu ]] && dev=(--gpus "$i")
    local name=(); [[ $has_host_name == 1 ]] && name=(--host-name "campaign-gpu$i")
    timeout --foreground "$c_timeout" ./collatz-worker --server "$addr" --token-file "$d/w$i.token" "${dev[@]}" "${name[@]}" \
        --spool "$d/spool$i" "${wargs[@]}" > "$d/worker$i.log" 2>&1 &
    pids+=($!)
  done
  local rcs=""
  for p in "${pids[@]}"; do wait "$p"; rcs="$rcs $?"; done
  e=$(date +%s.%N)
  ./collatzctl status "${c[@]}" --format json > "$d/status.json" 2>&1
  ./collatzctl workers "${c[@]}" > "$d/workers.txt" 2>&1
  kill $srv; wait $srv 2>/dev/null
  python3 "$W/campaign_report.py" "$d" "$tag" $P "$B" "$E" "$c_unit_n" "$(py "print(round($e - $s, 1))")" \
    "; worker rc$rcs; tokens $tokens; hosts $hosts$note" | tee -a "$W/campaign_summary.txt"
}

campaign() {
  c_backend=${CAMPAIGN_BACKEND:-gpu}
  c_unit=${CAMPAIGN_UNIT:-2^52}; c_unit_n=$(py "print(${c_unit/^/**})")
  c_rate=${CAMPAIGN_RATE:-4e13}; c_seconds=${CAMPAIGN_SECONDS:-150}
  c_idle=${CAMPAIGN_IDLE:-$(py "import math; print(max(8, math.ceil($c_unit_n / $c_rate) + 4))")}
  c_timeout=${CAMPAIGN_TIMEOUT:-$(py "print(int(2 * $c_seconds + 60))")}
  local all
  if [[ $c_backend == gpu ]]; then all=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU'); else all=${CAMPAIGN_NGPUS:-2}; fi
  write_campaign_report
  : > "$W/campaign_summary.txt"
  local idx=0 g pol counts=()
  for g in ${CAMPAIGN_GPUS:-1 all}; do
    [[ $g == all ]] && g=$all
    [[ $g -ge 1 ]] || { echo "campaign: no GPU found for G=all (nvidia-smi -L)"; continue; }
    [[ " ${counts[*]} " == *" $g "* ]] || counts+=("$g")
  done
  for g in "${counts[@]}"; do
    for pol in ${CAMPAIGN_POLICY:-default}; do
      campaign_one "$g" "$pol" $idx
      idx=$((idx + 1))
    done
  done
  if [[ ${CAMPAIGN_BENCH:-1} == 1 ]]; then
    # One whole unit of the campaign, B = the first multiple of the unit above P, as the bench
    # measures it (trusted context: the published records complete below P), with --check.
    local B; B=$(py "print(-(-$P // $c_unit_n) * $c_unit_n)")
    local bargs=(); [[ -n ${CAMPAIGN_SIEVE_BITS:-} ]] && bargs=(--sieve-bits "$CAMPAIGN_SIEVE_BITS")
    ./collatzctl bench --backend "$c_backend" --at "$B" --numbers "$c_unit" --kinds delay --check --check-numbers 2^30 \
      --baseline-numbers 0 "${bargs[@]}" > "$W/campaign_bench.txt" 2>&1
    local brc=$?
    echo "campaign bench (same call): collatzctl bench --at B = P + $(py "print($B - $P)") --numbers $c_unit --kinds delay --check (rc $brc): $(grep -E 'numbers/s' "$W/campaign_bench.txt" | head -1); $(grep -q '^check: .*IDENTICAL' "$W/campaign_bench.txt" && echo 'check: IDENTICAL to the CPU engine' || echo "check: FAILED or not run ($(grep -m1 -E 'error|differ' "$W/campaign_bench.txt" | cut -c1-160))")" | tee -a "$W/campaign_summary.txt"
  fi
  mkdir -p "$W/campaign_logs"
  cp "$W/campaign_summary.txt" "$OUT/campaign_summary.txt"
  cp "$W/campaign_bench.txt" "$W/campaign_logs/" 2>/dev/null
  for d in "$W"/campaign_g*; do
    [[ -d $d ]] || continue
    mkdir -p "$W/campaign_logs/$(basename "$d")"
    cp "$d"/*.log "$d"/*.txt "$d"/*.json "$W/campaign_logs/$(basename "$d")/" 2>/dev/null
  done
  tar -czf "$OUT/campaign_logs.tar.gz" -C "$W" campaign_logs
}

for mode in $modes; do
  case $mode in
  bench)
    for ctx in trusted floor; do
      ctl bench --backend gpu --at 2^66 --kinds delay --context $ctx --check --check-numbers 2^30 > "$OUT/bench_$ctx.txt" 2>&1
      echo "bench 2^66 delay --context $ctx (rc $?): $(grep -E 'numbers/s' "$OUT/bench_$ctx.txt" | head -1)"
      grep -E "^check|^baseline" "$OUT/bench_$ctx.txt" | cut -c1-200
    done
    ctl bench --backend gpu --at 2^64 --kinds delay --record-window --check --baseline-numbers 0 > "$OUT/bench_window.txt" 2>&1
    echo "bench record window above 2^64 (below the published bound: a check, not a search) (rc $?): $(grep -E 'record window|numbers/s' "$OUT/bench_window.txt" | tr '\n' ' ' | cut -c1-300)"
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
    echo "run [1, 2^44) both kinds, empty db (below the published bound: the path from 1, not a frontier search) (rc $?, $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s): $(grep -E '^# searched' "$OUT/run_from1.txt")"
    grep -E "^# " "$OUT/run_from1.txt" | head -8
    ;;
  fleet|fleet-class)
    kinds=delay; [[ $mode == fleet-class ]] && kinds=delay,class
    at=${FLEET_AT:-2^66}; n=${FLEET_NUMBERS:-2^46}; unit=${FLEET_UNIT:-$n}
    # One worker checks nothing: under a server whose default trust policy is "all", the
    # leases' record tables would stop at the import; FLEET_POLICY (none) keeps the rows
    # comparable with the sessions before it.
    policy=(); ./collatz-server --help 2>&1 | grep -q -- --double-check && policy=(--double-check "${FLEET_POLICY:-none}")
    widths=(); bench_width=()
    if [[ -n ${FLEET_SIEVE_BITS:-} ]]; then
      widths=(--delay-sieve-bits "$FLEET_SIEVE_BITS"); [[ $mode == fleet-class ]] && widths=(--class-sieve-bits "$FLEET_SIEVE_BITS")
      bench_width=(--sieve-bits "$FLEET_SIEVE_BITS")
    fi
    ./collatz-server --db "$W/server_$mode.db" --listen 127.0.0.1:50071 --unit-size $unit --lease-seconds 600 "${policy[@]}" "${widths[@]}" > "$OUT/server_$mode.log" 2>&1 &
    srv=$!
    wait_listening "$OUT/server_$mode.log" $srv
    import=(--published)
    if [[ -n ${FLEET_COMPLETE_BELOW:-} ]]; then
      python3 -c "import sys; b = eval(sys.argv[1].replace('^', '**')); rows = open('data/delay_records.csv').read().split(); print('\n'.join([rows[0]] + [r for r in rows[1:] if int(r.split(',')[0]) < b]))" "$FLEET_COMPLETE_BELOW" > "$W/below.csv"
      import=(--delay-csv "$W/below.csv" --complete-below "$FLEET_COMPLETE_BELOW")
    fi
    ctl import --server 127.0.0.1:50071 "${import[@]}" > "$OUT/fleet_import.txt" 2>&1 || echo "fleet import failed: $(cat "$OUT/fleet_import.txt")"
    ctl submit --server 127.0.0.1:50071 --from $at --to $at+$n --kinds $kinds > "$OUT/submit_$mode.txt" 2>&1
    s=$(date +%s.%N)
    ./collatz-worker --server 127.0.0.1:50071 --backend gpu --spool "$W/spool_$mode" --max-idle-seconds 2 > "$OUT/worker_$mode.log" 2>&1
    wrc=$?
    e=$(date +%s.%N)
    echo "$mode: server + 1 GPU worker, [$at, $at + $n) $kinds${widths[*]:+ ${widths[*]}}$(below "$at" "$n") after import ${import[*]}: worker rc $wrc, $(python3 -c "print(round($e - $s, 1))") s wall, $(python3 -c "print('%.3e' % (${n/^/**} / ($e - $s)))") numbers/s wall (self-test, tables and idle exit included)"
    grep -E "done in|self-test|sieve" "$OUT/worker_$mode.log" | cut -c1-240 | head -6
    ctl server-records --server 127.0.0.1:50071 --kind delay --format csv > "$OUT/${mode}_delay.csv" 2>&1
    kill $srv; wait $srv 2>/dev/null
    if [[ ${FLEET_BENCH:-1} == 1 ]]; then
      ctl bench --backend gpu --at $at --numbers $n --kinds $kinds --baseline-numbers 0 "${bench_width[@]}" > "$OUT/bench_fleet_$mode.txt" 2>&1
      echo "  same call: bench $at --numbers $n --kinds $kinds ${bench_width[*]} trusted$(below "$at" "$n"): $(grep -E 'numbers/s' "$OUT/bench_fleet_$mode.txt" | head -1)"
    fi
    ;;
  campaign)
    campaign
    ;;
  unit)
    # One campaign unit through collatzctl run (debug log: the tables' set-up, the unit's
    # spec, search, verification and store, the engine's own set-up and kernel seconds) and
    # collatzctl bench of the same numbers, one after the other on the same GPU.
    n=${UNIT_NUMBERS:-2^52}; B=${UNIT_AT:-$(py "print(-(-$P // ${n/^/**}) * ${n/^/**})")}; kinds=${UNIT_KINDS:-delay}
    ctl import --db "$W/unit.db" --published > "$OUT/unit_import.txt" 2>&1
    s=$(date +%s.%N)
    ctl --log-level debug run --db "$W/unit.db" --from $B --to $B+$n --kinds $kinds --backend gpu --unit-size "$n" > "$OUT/unit_run.txt" 2> "$OUT/unit_run.err"
    echo "unit: run [$B, $B + $n) $kinds after import --published (rc $?, $(py "print(round($(date +%s.%N) - $s, 2))") s wall): $(grep -E '^# searched' "$OUT/unit_run.txt")"
    grep -E "tables built|stored:|backend|CUDA" "$OUT/unit_run.err" | sed -e 's/^\[[^]]*\] //' | cut -c1-600
    if [[ ${UNIT_BENCH:-1} == 1 ]]; then
      ctl bench --backend gpu --at $B --numbers $n --kinds $kinds --baseline-numbers 0 --check > "$OUT/unit_bench.txt" 2>&1
      echo "  same call: bench $B --numbers $n $kinds --check: $(grep -E 'numbers/s' "$OUT/unit_bench.txt" | head -1) $(grep -E -o 'check[^|]*(IDENTICAL|DIFFER)[^|]*' "$OUT/unit_bench.txt" | head -1 | cut -c1-160)"
      grep -E "warm|set-up|sieve" "$OUT/unit_bench.txt" | head -4 | cut -c1-300
    fi
    ;;
  *)
    echo "real_path.sh: unknown mode $mode (bench, run, unit, fleet, fleet-class, campaign)"
    ;;
  esac
done
rm -rf "$W"
