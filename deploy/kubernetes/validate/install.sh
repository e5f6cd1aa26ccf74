#!/usr/bin/env bash
# Installs the pinned validator packages (package.json, package-lock.json) into DIR with
# `npm ci` from the npm registry; a DIR already holding this lock file's install is kept.
#   deploy/kubernetes/validate/install.sh DIR
# Then: COLLATZ_K8S_VALIDATE_MODULES=DIR/node_modules node deploy/kubernetes/validate/validate.mjs DOCS.json
# (tests/deploy_kubernetes_schema_test.py does both). Exit 3 when npm is missing or the
# registry cannot be reached (the reason on stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install.sh DIR}
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "install.sh: node/npm not installed (deploy/install-deps.sh installs Debian's nodejs and npm)" >&2
  exit 3
fi
mkdir -p "$dir"
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ] && [ -d "$dir/node_modules/kubernetes-models" ]; then
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dir/"
rm -f "$dir/.installed"
if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error); then
  echo "install.sh: npm ci failed in $dir (no access to the npm registry?)" >&2
  exit 3
fi
echo "$stamp" > "$dir/.installed"
