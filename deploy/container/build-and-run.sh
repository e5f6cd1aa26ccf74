#!/usr/bin/env bash
# Builds the CPU image of deploy/container/Containerfile from a Debian 12 base made here (no
# container registry needed) and runs it as a deployment would: collatz-server and
# collatz-worker in their own containers (read-only root, every capability dropped, no new
# privileges, uid 10001, a network namespace of their own with only the loopback), collatzctl
# submitting a range, waiting for the units to finish and comparing the delay records with
# ../shared/data. Exit 0 only when all of that holds.
#   nice -n 19 deploy/container/build-and-run.sh          (run before a release; not in CI)
# The build compiles the project inside the container: about 15 minutes on 2 cores
# (BUILD_JOBS, default 2). The base is deploy/container/debian-root.sh's root
# (COLLATZ_DEBIAN_ROOT, default /var/cache/collatz-systemd-root) imported as
# localhost/collatz-debian-base:bookworm. The image is tagged localhost/collatz:cpu (IMAGE).
# Needs root, podman and runc (deploy/install-deps.sh), and the network to the Debian mirror
# for apt inside the build. GPU images: docs/OPERATIONS.md, "The container image".
set -euo pipefail
cd "$(dirname "$0")/../.."

root=${COLLATZ_DEBIAN_ROOT:-/var/cache/collatz-systemd-root}
base=localhost/collatz-debian-base:bookworm
image=${IMAGE:-localhost/collatz:cpu}
jobs=${BUILD_JOBS:-2}
range_bits=${RANGE_BITS:-30}
podman=(podman --runtime runc)
tag=collatz-image-test-$$
start=$(date +%s)

say() { echo "build-and-run: $*"; }
for tool in podman runc git; do
  command -v "$tool" >/dev/null || { say "$tool not installed (deploy/install-deps.sh)"; exit 3; }
done
[ "$(id -u)" -eq 0 ] || { say "not root: run it as root (rootful podman, like the tests)"; exit 3; }
data=$(cd .. && pwd)/shared/data
[ -f "$data/delay_records.csv" ] || { say "reference data not found at $data"; exit 1; }

tmp=$(mktemp -d /tmp/collatz-image-XXXXXX)
chmod 755 "$tmp"
cleanup() {
  # One at a time: podman 4.3's `rm -f A B` stops at a missing A and leaves B.
  for c in "$tag-worker" "$tag-server"; do "${podman[@]}" rm -f -t 10 "$c" >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The Debian base image, from the debootstrap root (made once, cached).
deploy/container/debian-root.sh "$root"
stamp=$(cat "$root/.collatz-root-complete")
if [ "$("${podman[@]}" image inspect -f '{{index .Labels "collatz.root"}}' "$base" 2>/dev/null || true)" != "$stamp" ]; then
  say "importing $root as $base"
  tar -C "$root" --exclude=./.collatz-root-complete -cf - . \
    | "${podman[@]}" import --change "LABEL collatz.root=$stamp" --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
fi

# runc, or runc without the resource limits where runc cannot set them (deploy/container/runc-no-rlimits).
if ! out=$("${podman[@]}" run --rm --network none --rootfs "$root:O" /bin/true 2>&1); then
  if echo "$out" | grep -q 'error setting rlimit'; then
    say "runc cannot set resource limits here; using deploy/container/runc-no-rlimits"
    podman=(podman --runtime "$(pwd)/deploy/container/runc-no-rlimits")
  else
    say "podman with runc cannot run a container here: $out"; exit 3
  fi
fi

# 2. The image, from the files git knows (tracked and untracked-not-ignored: no build trees).
mkdir "$tmp/context"
git ls-files -z --cached --others --exclude-standard | xargs -0 -r tar -cf - --no-recursion 2>/dev/null \
  | tar -C "$tmp/context" -xf -
say "building $image from $base (BUILD_JOBS=$jobs; about 15 minutes on 2 cores)"
build_start=$(date +%s)
nice -n 19 "${podman[@]}" build --network host -f deploy/container/Containerfile \
  --build-arg BUILD_IMAGE="$base" --build-arg RUNTIME_IMAGE="$base" --build-arg BUILD_JOBS="$jobs" \
  -t "$image" "$tmp/context"
say "built in $(( $(date +%s) - build_start )) s: $("${podman[@]}" image inspect -f '{{.Size}}' "$image") bytes"

# 3. Run it: server and worker, read-only, no capabilities, non-root, loopback only.
printf 'image-test-token-%s\n' "$$" > "$tmp/token"
chmod 0444 "$tmp/token"   # the container user (10001) reads it; nobody else is on this tmp dir's path
mkdir -p "$tmp/server" "$tmp/worker"
chown 10001:10001 "$tmp/server" "$tmp/worker"
secure=(--read-only --cap-drop=all --security-opt=no-new-privileges --user 10001:10001)
dc=()
if "${podman[@]}" run --rm "$image" collatz-server --help 2>/dev/null | grep -q -- '--double-check'; then
  dc=(--double-check none)   # one worker host: results final without a second one
fi
"${podman[@]}" run -d --name "$tag-server" --network none "${secure[@]}" \
  -v "$tmp/token:/run/secrets/collatz/token:ro" -v "$tmp/server:/var/lib/collatz-server" \
  "$image" collatz-server --listen 127.0.0.1:50051 --db /var/lib/collatz-server/collatz.db \
  --token-file /run/secrets/collatz/token "${dc[@]}" >/dev/null
ctl() {
  "${podman[@]}" run --rm --network "container:$tag-server" "${secure[@]}" \
    -v "$tmp/token:/run/secrets/collatz/token:ro" "$image" \
    collatzctl "$@" --server 127.0.0.1:50051 --token-file /run/secrets/collatz/token
}
for _ in $(seq 60); do
  if "${podman[@]}" logs "$tag-server" 2>&1 | grep -q '(port '; then break; fi
  sleep 1
done
ctl submit --from 1 --to "2^$range_bits" --kinds delay --unit-size "2^$(( range_bits - 4 ))"
"${podman[@]}" run -d --name "$tag-worker" --network "container:$tag-server" "${secure[@]}" \
  -v "$tmp/token:/run/secrets/collatz/token:ro" -v "$tmp/worker:/var/lib/collatz-worker" \
  "$image" collatz-worker --server 127.0.0.1:50051 --backend cpu --threads "$jobs" \
  --spool /var/lib/collatz-worker/spool --token-file /run/secrets/collatz/token --max-idle-seconds 10 >/dev/null

fail=0
status=$(ctl status --wait 900) || { say "FAIL: the units did not finish"; fail=1; }
echo "$status"
echo "$status" | grep -Eq ' 0 pending, 0 leased, [1-9][0-9]* finished' || { say "FAIL: units left"; fail=1; }
ctl server-records --kind delay --format csv | grep -v '^n,' > "$tmp/got.csv" || true
awk -F, -v b="$(( 1 << range_bits ))" 'NR > 1 && $1 < b' "$data/delay_records.csv" > "$tmp/want.csv"
if cmp -s "$tmp/got.csv" "$tmp/want.csv"; then
  say "$(wc -l < "$tmp/got.csv") final delay records below 2^$range_bits equal the reference"
else
  say "FAIL: delay records differ from $data/delay_records.csv:"; diff "$tmp/got.csv" "$tmp/want.csv" | head; fail=1
fi
for c in server worker; do
  info=$("${podman[@]}" inspect -f '{{.Config.User}} readonly={{.HostConfig.ReadonlyRootfs}} caps=[{{range .EffectiveCaps}}{{.}} {{end}}]' "$tag-$c")
  uid=$("${podman[@]}" exec "$tag-$c" id -u 2>/dev/null || echo '?')
  say "$c container: user $info, id -u $uid"
  case "$info" in "10001:10001 readonly=true caps=[]") ;; *) say "FAIL: $c is not read-only/non-root/capability-free"; fail=1 ;; esac
  [ "$uid" = 10001 ] || { say "FAIL: $c runs as uid $uid"; fail=1; }
done
# The worker exits 0 by itself after 10 s without work; the server stops cleanly on TERM.
wexit=$("${podman[@]}" wait "$tag-worker")
"${podman[@]}" stop -t 60 "$tag-server" >/dev/null
sexit=$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$tag-server")
say "worker exit $wexit, server exit $sexit (after SIGTERM)"
[ "$wexit" = 0 ] && [ "$sexit" = 0 ] || fail=1
if [ "$fail" != 0 ]; then
  "${podman[@]}" logs --tail 20 "$tag-server" 2>&1 | sed 's/^/server: /'
  "${podman[@]}" logs --tail 20 "$tag-worker" 2>&1 | sed 's/^/worker: /'
  say "FAILED after $(( $(date +%s) - start )) s"; exit 1
fi
say "passed in $(( $(date +%s) - start )) s"
