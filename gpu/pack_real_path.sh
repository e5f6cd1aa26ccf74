#!/usr/bin/env bash
# Packs collatzctl, collatz-server and collatz-worker of a build (with the CUDA engine, e.g.
# -DCMAKE_CUDA_ARCHITECTURES=90) and the shared libraries they need beyond glibc into
# .carry/real.tar.xz, for gpu/real_path.sh on the GPU machine (which has no gRPC, SQLite or
# spdlog). Usage: gpu/pack_real_path.sh BUILD_DIR
set -euo pipefail
build=${1:?build dir}
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
mkdir -p "$stage/real/lib" "$stage/real/data" .carry
cp "$build/cli/collatzctl" "$build/server/collatz-server" "$build/worker/collatz-worker" "$stage/real/"
strip "$stage/real/"collatz*
for b in "$stage/real/"collatz*; do
  ldd "$b" | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux)[.-]' || true
done | sort -u | while read -r lib; do cp -L "$lib" "$stage/real/lib/"; done
cp ../shared/data/*.csv "$stage/real/data/"
cp gpu/real_path.sh "$stage/real/"
tar -cJf .carry/real.tar.xz -C "$stage" real
rm -rf "$stage"
ls -la .carry/real.tar.xz
