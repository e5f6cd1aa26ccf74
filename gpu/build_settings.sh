#!/usr/bin/env bash
# Prints the settings a build was configured with that change what its GPU binaries compute or
# how fast (CMake cache: build type, CUDA architectures, the walk's build settings, a mutation),
# one "NAME=VALUE" a line, and warns on stderr where one is not the default, so that a pack
# (gpu/pack_real_path.sh, gpu/pack_gpu_tests.sh) says what it carries: session 38 found a main
# build left at COLLATZ_PAIR_STEP_BITS=14 by an experiment. Usage: gpu/build_settings.sh BUILD_DIR
set -euo pipefail
cache=${1:?build dir}/CMakeCache.txt
[[ -f $cache ]] || { echo "build_settings.sh: $cache not found" >&2; exit 1; }
declare -A defaults=([COLLATZ_PAIR_STEP_BITS]=12 [COLLATZ_WALK_CHECK_SHIFT]=3 [COLLATZ_GPU_MUTATION]=0 [CMAKE_BUILD_TYPE]=Release)
for name in CMAKE_BUILD_TYPE CMAKE_CUDA_ARCHITECTURES COLLATZ_CUDA_ONLY COLLATZ_PAIR_STEP_BITS COLLATZ_WALK_CHECK_SHIFT COLLATZ_GPU_MUTATION; do
  value=$(sed -n "s/^$name:[A-Z]*=//p" "$cache" | head -1)
  echo "$name=${value:-unset}"
  want=${defaults[$name]:-}
  if [[ -n $want && -n $value && $value != "$want" ]]; then
    echo "build_settings.sh: $name=$value in $1 (the default is $want)" >&2
  fi
done
