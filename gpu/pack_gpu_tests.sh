#!/usr/bin/env bash
# Packs the GPU suites of a build (gpu_engine_test, gpu_known_answer_test, gpu_sieve_test,
# gpu_stats_test, gpu_bench, stats_bench), libgmp, libxxhash and the reference CSVs into
# .carry/gpu.tar.xz for the GPU machine, with the mutant builds of the exactness suites that
# gpu/device_run.sh mutation runs (each must FAIL its target test there), and builds of other
# two-step walk widths to measure beside the build's own.
#   gpu/pack_gpu_tests.sh BUILD_DIR [MUTATION ... | pW ...]
# Each MUTATION N (1 2 3 4 6 7 8 9 10: see the COLLATZ_GPU_MUTATION blocks in gpu/kernels) is built
# here, CUDA-only for sm_90, in build-mutN (kept: a later pack rebuilds only what changed), and
# its gpu_engine_test and gpu_known_answer_test travel as gpu_engine_test_mN and
# gpu_known_answer_test_mN. Each pW (p13) is built the same way in build-pW with
# COLLATZ_PAIR_STEP_BITS=W (gpu/pair_step_bits.h), and its gpu_bench, gpu_engine_test and
# gpu_known_answer_test travel with the suffix _pW. On the GPU machine (carry .carry):
#   tar -xJf .carry/gpu.tar.xz -C .carry && bash gpu/device_run.sh test|known|mutation|...
#   (SUITE_SUFFIX=_p13 bash gpu/device_run.sh test|known runs a width's suites;
#   bash gpu/ab.sh ".carry/gpu/gpu_bench .carry/gpu/gpu_bench_p13" ARGS... measures them side by side)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
shift
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
mkdir -p "$stage/gpu" .carry
for b in gpu_engine_test gpu_known_answer_test gpu_sieve_test gpu_stats_test gpu_bench stats_bench; do
  if [[ -x $build/gpu/$b ]]; then cp "$build/gpu/$b" "$stage/gpu/"; else echo "pack_gpu_tests.sh: $build/gpu/$b not built" >&2; fi
done
for m in "$@"; do
  if [[ $m == p* ]]; then  # a two-step walk width
    dir=build-$m; setting=(-DCOLLATZ_PAIR_STEP_BITS="${m#p}"); targets=(gpu_bench gpu_engine_test gpu_known_answer_test)
  else
    dir=build-mut$m; setting=(-DCOLLATZ_GPU_MUTATION="$m"); targets=(gpu_engine_test gpu_known_answer_test)
  fi
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCOLLATZ_CUDA_ONLY=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${setting[@]}" > "$dir/pack-configure.log" 2>&1 || { cat "$dir/pack-configure.log"; exit 1; }
  cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}" > "$dir/pack-build.log" 2>&1 ||
    { tail -30 "$dir/pack-build.log"; exit 1; }
  suffix=_$m; [[ $m == p* ]] || suffix=_m$m
  for t in "${targets[@]}"; do cp "$dir/gpu/$t" "$stage/gpu/$t$suffix"; done
done
strip "$stage"/gpu/*
for b in "$stage"/gpu/*; do
  ldd "$b" | awk '/=> \// {print $3}' | grep -E '/lib(gmp|xxhash)\.' || true
done | sort -u | while read -r lib; do cp -L "$lib" "$stage/gpu/"; done
cp ../shared/data/*.csv "$stage/gpu/"
# What the build's own binaries were built with travels beside them (and is shown here).
bash gpu/build_settings.sh "$build" | tee "$stage/gpu/BUILD_SETTINGS"
tar -cJf .carry/gpu.tar.xz -C "$stage" gpu
rm -rf "$stage"
ls -la .carry/gpu.tar.xz
