#!/usr/bin/env bash
# Installs the dependencies, configures and builds everything into ./build-test, and runs
# every test (unit tests beside the code, end-to-end tests of collatzctl in tests/).
# Exits non-zero when anything fails. The reference data must be in ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh

if [ ! -f ../shared/data/delay_records_below_2p28.csv ]; then
  echo "test.sh: reference data not found at $(cd .. && pwd)/shared/data (the tests compare against it)" >&2
  exit 1
fi

start=$(date +%s)
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release
cmake --build build-test -j2
cd build-test
ctest --output-on-failure -j2 --timeout 1800
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
