#!/bin/bash
# gpu/stats_sweep.sh STEP...: batch-statistics measurements of docs/PERFORMANCE.md, run on the GPU
# machine from the repository root with the binaries built on the dev host and carried in
# .carry/statsgpu (stats_bench, gpu_stats_test, libgmp; old/ holds the previous version) and
# .carry/statscli (collatzctl and the shared libraries it needs, from `ldd`).
# Steps: tests | bench ARGS... | oldbench ARGS... | ncu NAME ARGS... | sass | cli. Logs under $OUT.
set -o pipefail
D=$PWD/.carry/statsgpu
export LD_LIBRARY_PATH=$D
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used --format=csv,noheader
case "$1" in
  tests)
    # Both versions at once (correctness only; no timings are taken meanwhile).
    for v in old new; do
      bin=$D/gpu_stats_test; [[ $v == old ]] && bin=$D/old/gpu_stats_test
      [[ -x $bin ]] && timeout 200 "$bin" > "$OUT/test_$v.log" 2>&1 &
    done
    wait
    for v in old new; do
      echo "## gpu_stats_test ($v)"; grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|tests ran" "$OUT/test_$v.log"
    done ;;
  bench)
    shift; echo "## stats_bench $*"
    timeout 280 "$D/stats_bench" "$@" 2>&1 | tee -a "$OUT/bench.log" ;;
  oldbench)
    shift; echo "## old stats_bench $*"
    timeout 200 "$D/old/stats_bench" "$@" 2>&1 | tee -a "$OUT/bench_old.log" ;;
  ncu)
    name=$2; shift 2; echo "## ncu $name: $*"
    timeout 200 ncu --clock-control none -k regex:StatsKernel -c 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --section MemoryWorkloadAnalysis \
      --metrics lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,dram__sectors_read.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg,lts__t_requests_op_read.sum \
      "$@" > "$OUT/ncu_$name.txt" 2>&1
    grep -E "Duration|Throughput|Issue Slots Busy|Executed Ipc|Achieved Occupancy|Stall|sectors|hit_rate|inst_executed|Hit Rate|L2 .*Throughput|Mem Busy|Max Bandwidth|No Eligible|Warp Cycles Per Issued" "$OUT/ncu_$name.txt" | head -40 ;;
  cli)
    # collatzctl stats end to end (tables built in the process, file written), and its CSV
    # against the CPU backend on small ranges.
    C=$PWD/.carry/statscli
    TIMEFORMAT="%R s wall"
    for n in 34 36; do
      echo "## collatzctl stats --from 2^40 --to 2^40+2^$n --backend gpu --out /tmp/s$n.bin"
      time (LD_LIBRARY_PATH=$C "$C/collatzctl" stats --from 2^40 --to 2^40+2^$n --backend gpu --out /tmp/s$n.bin 2>&1 | tail -2)
      ls -l /tmp/s$n.bin | awk '{print $5 " bytes"}'
    done
    for r in "0 2^20" "2^64 2^64+2^20" "2^100 2^100+2^16"; do
      set -- $r
      for b in gpu cpu; do
        LD_LIBRARY_PATH=$C "$C/collatzctl" stats --from $1 --to $2 --backend $b --format csv --out /tmp/$b.csv > /dev/null 2>&1
      done
      cmp /tmp/gpu.csv /tmp/cpu.csv && echo "csv [$1, $2): gpu == cpu ($(wc -l < /tmp/gpu.csv) lines)"
    done ;;
  sass)
    cuobjdump -sass -arch sm_90 "$D/stats_bench" > "$OUT/sass_all.txt" 2>&1; ls -la "$OUT/sass_all.txt" ;;
esac
