#!/usr/bin/env bash
# From a fresh Debian 12 machine to a running search, in one command:
# installs the dependencies, builds Release into ./build, and searches [1, 2^32) for delay
# and class records ([1, 2^36) when nvidia-smi finds a GPU), storing them in ./collatz.db.
# It ends with a short summary (records found, the last delay record, time, numbers/s, the
# database and the next commands). Extra arguments go to `collatzctl run` (e.g. --db PATH,
# --threads N, --print-records to list every record).
# QUICKSTART_TO=2^24 searches a smaller range; QUICKSTART_BUILD_DIR=DIR uses an existing build
# holding cli/collatzctl instead of installing and building (CI reuses its build this way).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
if [ -n "${QUICKSTART_BUILD_DIR:-}" ]; then
  build=$QUICKSTART_BUILD_DIR
  if [ ! -x "$build/cli/collatzctl" ]; then
    echo "quickstart: QUICKSTART_BUILD_DIR=$build holds no cli/collatzctl" >&2
    exit 1
  fi
else
  ./deploy/install-deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j2 --target collatzctl
fi

to='2^32'
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  to='2^36'
fi
to=${QUICKSTART_TO:-$to}
echo "quickstart: collatzctl run --from 1 --to $to --backend auto $*"
exec "$build/cli/collatzctl" run --from 1 --to "$to" --backend auto "$@"
