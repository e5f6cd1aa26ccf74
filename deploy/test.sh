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
# The Debian root that deploy_systemd_real boots systemd on (debootstrap; cached in
# /var/cache/collatz-systemd-root, so only a machine's first run downloads it): made during the
# build, as root. Where it cannot be made the test says why and is skipped.
root_job=""
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
  mkdir -p build-test
  ./deploy/container/debian-root.sh > build-test/debian-root.log 2>&1 &
  root_job=$!
fi
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release
cmake --build build-test -j2
if [ -n "$root_job" ]; then
  wait "$root_job" || echo "test.sh: deploy/container/debian-root.sh failed (deploy_systemd_real will say why)"
  tail -1 build-test/debian-root.log
fi
cd build-test
ctest --output-on-failure -j2 --timeout 1800
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
