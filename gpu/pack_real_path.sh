#!/usr/bin/env bash
# Packs collatzctl, collatz-server, collatz-worker and gpu_bench of a build (with the CUDA
# engine, e.g. -DCMAKE_CUDA_ARCHITECTURES=90) and the shared libraries they need beyond glibc
# into .carry/real.tar.xz, with gpu/real_path.sh (its bench, run, fleet and campaign modes),
# gpu/roofline.sh (ncu is on the GPU machine) and BUILD_SETTINGS (the build's settings,
# gpu/build_settings.sh), for the GPU machine (which has no gRPC,
# SQLite or spdlog). Usage: gpu/pack_real_path.sh BUILD_DIR; on the GPU machine:
#   tar -xJf .carry/real.tar.xz -C /tmp && cd /tmp/real && ./real_path.sh campaign
set -euo pipefail
build=${1:?build dir}
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
mkdir -p "$stage/real/lib" "$stage/real/data" .carry
cp "$build/cli/collatzctl" "$build/server/collatz-server" "$build/worker/collatz-worker" "$build/gpu/gpu_bench" "$stage/real/"
strip "$stage/real/"collatz* "$stage/real/gpu_bench"
for b in "$stage/real/"collatz* "$stage/real/gpu_bench"; do
  ldd "$b" | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux)[.-]' || true
done | sort -u | while read -r lib; do cp -L "$lib" "$stage/real/lib/"; done
cp ../shared/data/*.csv "$stage/real/data/"
cp gpu/real_path.sh gpu/roofline.sh "$stage/real/"
# What the binaries were built with travels beside them (and is shown here).
bash gpu/build_settings.sh "$build" | tee "$stage/real/BUILD_SETTINGS"
tar -cJf .carry/real.tar.xz -C "$stage" real
rm -rf "$stage"
ls -la .carry/real.tar.xz
