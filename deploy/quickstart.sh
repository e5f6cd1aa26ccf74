#!/usr/bin/env bash
# From a fresh Debian 12 machine to a running search, in one command:
# installs the dependencies, builds Release into ./build, and searches [1, 2^32) for delay
# and class records ([1, 2^36) when nvidia-smi finds a GPU), storing them in ./collatz.db.
# Extra arguments go to `collatzctl run` (e.g. --db PATH, --threads N).
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2 --target collatzctl

to='2^32'
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  to='2^36'
fi
echo "quickstart: collatzctl run --from 1 --to $to --backend auto $*"
exec ./build/cli/collatzctl run --from 1 --to "$to" --backend auto "$@"
