#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages.
# Idempotent and non-interactive: safe to run again; installs only what is missing.
set -euo pipefail

# COLLATZ_DEPS=build (the container image's build stage): only what building needs.
PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 libstxxl-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libgmp-dev libxxhash-dev
  prometheus-cpp-dev libsystemd-dev libcpp-httplib-dev
)
if [ "${COLLATZ_DEPS:-all}" != build ]; then
  PACKAGES+=(
    gnuplot-nox
    systemd python3-yaml
    chromium chromium-driver python3-selenium
    # deploy_slurm_real: a one-node Slurm (auth/none, no munge needed)
    slurmctld slurmd slurm-client
    # deploy_systemd_real: systemd booted in a podman container (runc) on a debootstrap root
    podman runc debootstrap
  )
  # deploy_kubernetes_schema validates offline with pinned npm packages
  # (deploy/kubernetes/validate): Debian's npm where no Node.js with npm is installed already.
  if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
