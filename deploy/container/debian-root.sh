#!/usr/bin/env bash
# Makes a Debian 12 (bookworm) root file system with debootstrap, for the tests that boot
# systemd in a container (tests/deploy_systemd_real_test.py) and as the base image of
# deploy/container/build-and-run.sh: no container registry needed, only a Debian mirror.
#   deploy/container/debian-root.sh [DIR]      (default /var/cache/collatz-systemd-root)
# Cached: a DIR that holds .collatz-root-complete is left as it is (delete DIR to renew it).
# The root is built beside DIR and renamed into place once complete, so an interrupted run
# leaves no half-made root behind. Needs root, debootstrap (deploy/install-deps.sh) and the
# network to the mirror (COLLATZ_DEBIAN_MIRROR, default the first one apt uses here).
# Exit 0: DIR is ready; 3: it cannot be made on this machine (the reason on stderr).
set -euo pipefail

dir=${1:-/var/cache/collatz-systemd-root}
stamp=.collatz-root-complete
# systemd as PID 1 (systemd-sysv), dbus for systemctl's bus, procps for ps in the tests.
packages=systemd,systemd-sysv,dbus,libnss-systemd,procps,ca-certificates

if [ -f "$dir/$stamp" ]; then
  echo "debian-root: $dir is ready (cached; made $(cat "$dir/$stamp"))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then echo "debian-root: not root: debootstrap needs root" >&2; exit 3; fi
if ! command -v debootstrap >/dev/null; then
  echo "debian-root: debootstrap not installed (Debian package debootstrap; deploy/install-deps.sh installs it)" >&2
  exit 3
fi
mirror=${COLLATZ_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
             | grep -v -- '-security' | grep -oE 'https?://[^ ]*debian/?' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi
mkdir -p "$(dirname "$dir")"
work="$dir.partial.$$"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
echo "debian-root: debootstrap --variant=minbase bookworm from $mirror into $dir (a few minutes, once)"
if ! debootstrap --variant=minbase --include="$packages" bookworm "$work" "$mirror" > "$work.log" 2>&1; then
  tail -20 "$work.log" >&2
  echo "debian-root: debootstrap failed (no network to $mirror?); log above" >&2
  rm -f "$work.log"
  exit 3
fi
rm -f "$work.log"
# Lean and quiet: no apt caches; no getty or other units that wait for a console.
rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/*
date -u +%FT%TZ > "$work/$stamp"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
echo "debian-root: $dir made in $(( $(date +%s) - start )) s"
