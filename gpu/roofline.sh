#!/bin/bash
# gpu/roofline.sh [POINT ...]: the roofline of the delay-only walk (docs/PERFORMANCE.md,
# "Roofline (session 25)"), on the GPU machine, from a folder holding gpu_bench, its shared
# libraries and data/*.csv (the folder gpu/pack_real_path.sh makes; ROOFLINE_DIR, default the
# script's own folder). POINTs are --at values (default: 2^66 and the campaign point B, the
# first multiple of 2^46 above the published bound P = 28019077177231758496). For each:
#   1. gpu_bench --at X --numbers 2^46 --kinds delay --baseline-numbers 0 --repeat 1
#      --step-model 2^20: numbers/s of the unit, its launches, the examined numbers, and the
#      host model of the walk (T-steps each examined number needs; gpu/gpu_bench.cc)
#   2. the same command under ncu --clock-control none, profiling ROOFLINE_COUNT (3)
#      GroupKernel launches from the middle of the timed search (-k regex:GroupKernel
#      --launch-skip: half the unit's group launches, from step 1): instructions executed in
#      all and by pipe, cycles, IPC, issue slots, occupancy, pipe and memory utilisation
#   3. one table row: walks/s, T-steps a walk, instructions a walked T-step, IPC per SM
#      against the 4 warp-instructions a clock an SM can issue, and the ceilings in numbers/s
#      that the issue slots and each integer pipe put on the unit at its instruction count.
# Output: the table on stdout and in $OUT/roofline.txt; gpu_bench logs, ncu reports and raw
# CSVs in $OUT/roofline_logs.tar.gz. Settings: ROOFLINE_NUMBERS (2^46), ROOFLINE_MODEL (2^20
# sampled numbers, 0: none), ROOFLINE_GROUP_BITS (16: the group depth the model assumes, the
# engine's default for delay-only units of 2^46 near their table), ROOFLINE_COUNT (3),
# ROOFLINE_SKIP (launches to skip; default half of step 1's group launches), ROOFLINE_STALLS
# (1: also ncu's WarpStateStats and SchedulerStats sections, the stall reasons), ROOFLINE_ARGS
# (more gpu_bench arguments, e.g. "--sieve-bits 28" for the campaign's 2^49 units),
# ROOFLINE_KINDS (delay; delay,class: the class walk, whose host model stops a member only
# when it cannot reach the smallest open class).
set -u
cd "${ROOFLINE_DIR:-$(dirname "$0")}" || exit 1
export LD_LIBRARY_PATH=$PWD/lib:$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export COLLATZ_SHARED_DATA=${COLLATZ_SHARED_DATA:-$PWD/data}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
R=$(mktemp -d)
P=28019077177231758496
B=$(python3 -c "print(-(-$P // 2**46) * 2**46)")
points=${*:-2^66 $B}
numbers=${ROOFLINE_NUMBERS:-2^46}
count=${ROOFLINE_COUNT:-3}
[[ -x ./gpu_bench ]] || { echo "roofline.sh: no gpu_bench in $PWD"; exit 1; }
command -v ncu > /dev/null || echo "roofline.sh: ncu is not on the PATH: the rows get no counters"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$R/smi.txt"

# The metrics, kept to those this ncu knows (an unknown name makes ncu refuse the run).
wanted="gpu__time_duration.sum
sm__cycles_elapsed.avg
sm__cycles_elapsed.avg.per_second
sm__cycles_active.avg
sm__inst_executed.sum
sm__inst_executed.avg.per_cycle_active
sm__inst_executed.avg.per_cycle_elapsed
smsp__thread_inst_executed.sum
smsp__issue_active.avg.pct_of_peak_sustained_active
sm__warps_active.avg.pct_of_peak_sustained_active
sm__maximum_warps_per_active_cycle_pct
sm__throughput.avg.pct_of_peak_sustained_elapsed
l1tex__throughput.avg.pct_of_peak_sustained_active
lts__throughput.avg.pct_of_peak_sustained_elapsed
dram__throughput.avg.pct_of_peak_sustained_elapsed
launch__registers_per_thread
launch__block_size
launch__grid_size
device__attribute_multiprocessor_count"
for pipe in alu fma fmaheavy fmalite lsu adu cbu uniform xu; do
  wanted="$wanted
smsp__inst_executed_pipe_$pipe.sum
sm__inst_executed_pipe_$pipe.avg.pct_of_peak_sustained_active"
done
for pipe in alu fma fmaheavy shared; do
  wanted="$wanted
sm__pipe_${pipe}_cycles_active.avg.pct_of_peak_sustained_active"
done
metrics=""
if command -v ncu > /dev/null; then
  { ncu --query-metrics --chip gh100 2>/dev/null || ncu --query-metrics 2>/dev/null; } | awk '{print $1}' > "$R/known.txt"
  for m in $wanted; do
    if [[ ! -s $R/known.txt ]] || grep -qx "${m%%.*}" "$R/known.txt"; then metrics="$metrics,$m"; else echo "${m}" >> "$R/dropped.txt"; fi
  done
  metrics=${metrics#,}
  if [[ $(echo "$metrics" | tr ',' '\n' | grep -c .) -lt 10 ]]; then
    echo "roofline.sh: ncu --query-metrics left few of the metrics (its list in the logs): asking for all of them"
    metrics=$(echo "$wanted" | paste -sd, -)
  fi
  [[ -s $R/dropped.txt ]] && echo "roofline.sh: metrics this ncu does not know, left out: $(tr '\n' ' ' < "$R/dropped.txt")"
fi
sections=()
[[ ${ROOFLINE_STALLS:-1} == 1 ]] && sections=(--section WarpStateStats --section SchedulerStats)

: > "$R/rows.txt"
for at in $points; do
  name=$(echo "$at" | tr -c 'A-Za-z0-9\n' '_')
  args=(--at "$at" --numbers "$numbers" --kinds "${ROOFLINE_KINDS:-delay}" --baseline-numbers 0 --repeat 1 ${ROOFLINE_ARGS:-})
  timeout 200 ./gpu_bench "${args[@]}" --step-model "${ROOFLINE_MODEL:-2^20}" --model-group-bits "${ROOFLINE_GROUP_BITS:-16}" \
    > "$R/bench_$name.txt" 2>&1
  echo "roofline $at: gpu_bench rc $?: $(grep -E '^SUMMARY' "$R/bench_$name.txt" | sed -e 's/.*: \([0-9.e+]* numbers\/s\).*(median wall \([0-9.]* s\).*/\1 (\2)/')"
  glaunches=$(sed -n 's/^launches [0-9]* (groups \([0-9]*\),.*/\1/p' "$R/bench_$name.txt")
  skip=${ROOFLINE_SKIP:-$(( ${glaunches:-20} / 2 ))}
  if [[ -n $metrics ]]; then
    timeout 400 ncu --clock-control none -k regex:GroupKernel --launch-skip "$skip" --launch-count "$count" \
      --metrics "$metrics" "${sections[@]}" -o "$R/ncu_$name" -f ./gpu_bench "${args[@]}" > "$R/ncu_$name.run.txt" 2>&1
    echo "roofline $at: ncu rc $? ($count GroupKernel launches after $skip)"
    ncu -i "$R/ncu_$name.ncu-rep" --page raw --csv --print-units base > "$R/raw_$name.csv" 2> "$R/raw_$name.err"
    [[ ${ROOFLINE_STALLS:-1} == 1 ]] && ncu -i "$R/ncu_$name.ncu-rep" --page details --section WarpStateStats \
      --section SchedulerStats > "$R/stalls_$name.txt" 2>&1
  fi
  echo "$at $name" >> "$R/rows.txt"
done

python3 - "$R" <<'PYEOF' | tee "$OUT/roofline.txt"
import csv, os, re, sys
R = sys.argv[1]
P = 28019077177231758496
def num(x):
    try:
        return float(str(x).replace(',', ''))
    except ValueError:
        return None
PREFIX = {'p': 1e-12, 'n': 1e-9, 'u': 1e-6, 'm': 1e-3, 'K': 1e3, 'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12}
BASE = ('second', 's', 'B', 'cycle', 'inst', 'byte', 'warp', 'thread', 'request', 'sector', 'Hz', 'hz', 'block', 'register')
def term(t):  # 'msecond' -> 1e-3, 'GHz' -> 1e9, 'inst' -> 1
    t = t.strip()
    if not t or t in BASE or t == '%':
        return 1.0
    if t[0] in PREFIX and t[1:] in BASE:
        return PREFIX[t[0]]
    return 1.0
def factor(unit):  # a unit string of ncu's CSV to the factor to its base units
    parts = str(unit).split('/')
    f = term(parts[0])
    for d in parts[1:]:
        f /= term(d)
    return f
def bench(name):
    t = open(os.path.join(R, 'bench_%s.txt' % name), errors='replace').read()
    b = {}
    m = re.search(r'^SUMMARY .*?: ([0-9.e+]+) numbers/s \(median wall ([0-9.]+) s', t, re.M)
    if m: b['rate'], b['wall'] = float(m.group(1)), float(m.group(2))
    m = re.search(r'^launches (\d+) \(groups (\d+),.*computed (\d+) \(([0-9.]+)% of N\)', t, re.M)
    if m: b['launches'], b['glaunches'], b['computed'], b['examined'] = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4)) / 100
    m = re.search(r'^unit \[(\d+), (\d+)\)', t, re.M)
    if m: b['begin'], b['numbers'] = int(m.group(1)), int(m.group(2)) - int(m.group(1))
    m = re.search(r'walks \(beyond k \+ G\) ([0-9.]+)%: mean ([0-9.]+) T-steps from N, ([0-9.]+) rounds.*?walk T-steps beyond k \+ G per examined number ([0-9.]+)', t)
    if m: b['walk_frac'], b['walk_steps'], b['walk_rounds'], b['walk_t_per_exam'] = float(m.group(1)) / 100, float(m.group(2)), float(m.group(3)), float(m.group(4))
    m = re.search(r'T-steps to the first exact stop \(or v < 2\^24\) mean ([0-9.]+)', t)
    if m: b['t_per_exam'] = float(m.group(1))
    return b
def ncu(name):
    p = os.path.join(R, 'raw_%s.csv' % name)
    if not os.path.exists(p): return {}
    rows = list(csv.reader(open(p, errors='replace')))
    head = None
    for i, r in enumerate(rows):
        if 'Kernel Name' in r or 'ID' in r[:1]:
            head = i; break
    if head is None: return {}
    names, units = rows[head], rows[head + 1] if head + 1 < len(rows) else []
    data = [r for r in rows[head + 2:] if len(r) == len(names)]
    out = {'launches': len(data)}
    for j, n in enumerate(names):
        scale = factor(units[j]) if j < len(units) else 1.0
        vals = [num(r[j]) for r in data]
        vals = [v * scale for v in vals if v is not None]
        if vals: out[n] = sum(vals) / len(vals)  # the mean over the profiled launches, in base units (s, Hz, ...)
    return out
def f(x, fmt='%.3e'):
    return '-' if x is None else fmt % x
kinds = os.environ.get('ROOFLINE_KINDS', 'delay')
print('Roofline of the %s walk: gpu_bench of %s numbers a point (median of 1, after a warm-up), ncu of GroupKernel'
      ' launches from the middle of its timed search (--clock-control none); "thread" = lane-level instructions, '
      '"warp" = warp-level' % ('delay-only' if kinds == 'delay' else kinds, os.environ.get('ROOFLINE_NUMBERS', '2^46')))
cols = ['point', 'numbers/s', 'examined', 'walks/s (model)', 'T-steps/walk (model)', 'walk T/exam (model)',
        'warp-inst/number', 'thread-inst/walk T-step', 'lanes/inst', 'IPC/SM (of 4)', 'issue %', 'occupancy %',
        'ALU %', 'FMA %', 'FMAheavy %', 'LSU %', 'L1 %', 'L2 %', 'clock GHz', 'kernel-only numbers/s',
        'ceiling issue', 'ceiling ALU', 'ceiling FMA', 'ceiling FMAheavy', 'bound', 'measured/ceiling']
print('| ' + ' | '.join(cols) + ' |')
print('|' + '---|' * len(cols))
notes = []
for line in open(os.path.join(R, 'rows.txt')):
    at, name = line.split()
    b, n = bench(name), ncu(name)
    begin = b.get('begin') or int(eval(at.replace('^', '**'), {'__builtins__': {}}))
    label = at if begin >= P else at + ' (below the published bound: not a real search)'
    rate, ex = b.get('rate'), b.get('examined')
    walks = rate * ex * b['walk_frac'] if rate and ex and 'walk_frac' in b else None
    sms = n.get('device__attribute_multiprocessor_count', 132.0)
    clk = n.get('sm__cycles_elapsed.avg.per_second')
    inst = n.get('sm__inst_executed.sum')
    thr = n.get('smsp__thread_inst_executed.sum')
    dur = n.get('gpu__time_duration.sum')  # seconds
    per_launch = b['numbers'] / b['glaunches'] if b.get('glaunches') else None
    wpn = inst / per_launch if inst and per_launch else None
    walk_t = per_launch * ex * b['walk_t_per_exam'] if per_launch and ex and 'walk_t_per_exam' in b else None
    tps = thr / walk_t if thr and walk_t else None
    lanes = thr / inst if thr and inst else None
    ipc = n.get('sm__inst_executed.avg.per_cycle_active')
    kern_rate = per_launch / dur if per_launch and dur else None
    active = n.get('sm__cycles_active.avg')
    ceilings = {}
    if wpn and clk:
        ceilings['issue'] = sms * clk * 4 / wpn
        for pipe, key in (('ALU', 'alu'), ('FMA', 'fma'), ('FMAheavy', 'fmaheavy')):
            pi = n.get('smsp__inst_executed_pipe_%s.sum' % key)
            pct = n.get('sm__inst_executed_pipe_%s.avg.pct_of_peak_sustained_active' % key)
            if pi and pct and active:
                peak = pi / sms / active / (pct / 100)  # warp-instructions a cycle an SM at 100%
                ceilings[pipe] = sms * clk * peak / (pi / per_launch)
                notes.append('%s: the %s pipe executed %.3e warp-instructions a launch (%.2f a number), %.1f%% of its peak, '
                             'which ncu puts at %.2f warp-instructions a cycle an SM' % (at, pipe, pi, pi / per_launch, pct, peak))
    bound = min(ceilings, key=ceilings.get) if ceilings else None
    row = [label, f(rate), f(ex, '%.4f'), f(walks), f(b.get('walk_steps'), '%.1f'), f(b.get('walk_t_per_exam'), '%.2f'),
           f(wpn, '%.3f'), f(tps, '%.2f'), f(lanes, '%.1f'), f(ipc, '%.2f'),
           f(n.get('smsp__issue_active.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('sm__warps_active.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('l1tex__throughput.avg.pct_of_peak_sustained_active'), '%.1f'),
           f(n.get('lts__throughput.avg.pct_of_peak_sustained_elapsed'), '%.1f'),
           f(clk / 1e9 if clk else None, '%.3f'), f(kern_rate), f(ceilings.get('issue')), f(ceilings.get('ALU')),
           f(ceilings.get('FMA')), f(ceilings.get('FMAheavy')), bound or '-',
           f(rate / ceilings[bound] if bound and rate else None, '%.3f')]
    print('| ' + ' | '.join(row) + ' |')
    if n:
        notes.append('%s: %d launches profiled, %.3f ms each, %.3e numbers each (the unit over its %s group launches), '
                     'registers %s, block %s, grid %s, theoretical occupancy %s%%' % (
                         at, n.get('launches', 0), (dur or 0) * 1e3, per_launch or 0, b.get('glaunches'),
                         f(n.get('launch__registers_per_thread'), '%.0f'), f(n.get('launch__block_size'), '%.0f'),
                         f(n.get('launch__grid_size'), '%.0f'), f(n.get('sm__maximum_warps_per_active_cycle_pct'), '%.1f')))
    else:
        notes.append('%s: no ncu figures (see ncu_%s.run.txt in the logs)' % (at, name))
for s in notes:
    print('  ' + s)
print('  ceiling(pipe) = SMs x SM clock x (the pipe\'s warp-instructions a cycle an SM) / (its warp-instructions a number);'
      ' issue: 4 warp-instructions a cycle an SM; numbers a launch = the unit\'s numbers / its group launches')
PYEOF
tar -czf "$OUT/roofline_logs.tar.gz" -C "$R" .
rm -rf "$R"
