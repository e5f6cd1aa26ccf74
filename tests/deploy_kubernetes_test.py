#!/usr/bin/env python3
"""Parses deploy/kubernetes/*.yaml (PyYAML) and checks what the deployment relies on: the
server as a one-replica StatefulSet with a PVC for SQLite mounted where --db points, a
Service selecting it, a gRPC readiness probe on the health port, the token from a Secret;
the worker as a Deployment with nvidia.com/gpu limits pointed at that Service; flags that
the binaries know (checked against their --help)."""
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: PyYAML missing (Debian package python3-yaml; deploy/install-deps.sh installs it)")
    sys.exit(77)

from deploy_checks import fail, finish, parse_args


def flag_value(args, name):
    for a in args:
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def check_flags(binary, args, who):
    """Every --flag in the manifest must be one the binary's --help lists."""
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    known = set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))
    for a in args:
        flag = a.split("=", 1)[0]
        if flag not in known:
            fail(f"{who}: {flag} is not a flag of {os.path.basename(binary)}")


def main():
    a = parse_args("server", "worker")
    kdir = os.path.join(a.source, "deploy/kubernetes")
    docs = []
    for name in sorted(os.listdir(kdir)):
        if name.endswith(".yaml"):
            with open(os.path.join(kdir, name), encoding="utf-8") as f:
                loaded = [d for d in yaml.safe_load_all(f) if d]
            print(f"{name}: {[d.get('kind') for d in loaded]}")
            docs += loaded
    by_kind = {}
    for d in docs:
        for key in ("apiVersion", "kind", "metadata"):
            if key not in d and not (key == "metadata" and d.get("kind") == "Kustomization"):
                fail(f"a document lacks {key}: {d}")
        by_kind.setdefault(d.get("kind"), []).append(d)

    kust = [d for d in by_kind.get("Kustomization", [])]
    if kust:
        listed = set(kust[0].get("resources", []))
        files = {n for n in os.listdir(kdir) if n.endswith(".yaml") and n != "kustomization.yaml"}
        if listed != files:
            fail(f"kustomization.yaml lists {sorted(listed)}, the folder has {sorted(files)}")

    secrets = {d["metadata"]["name"]: d for d in by_kind.get("Secret", [])}
    sts = [d for d in by_kind.get("StatefulSet", []) if d["metadata"]["name"] == "collatz-server"]
    if not sts:
        fail("no StatefulSet collatz-server")
        return
    sts = sts[0]
    spec = sts["spec"]
    if spec.get("replicas") != 1:
        fail("the server StatefulSet must have replicas: 1 (one SQLite writer)")
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    if spec["selector"]["matchLabels"].items() - labels.items():
        fail("StatefulSet selector does not match its pod labels")
    server = pod["containers"][0]
    sargs = server["args"]
    check_flags(a.server, sargs, "server")
    claims = {c["metadata"]["name"]: c for c in spec.get("volumeClaimTemplates", [])}
    if not claims:
        fail("server: no volumeClaimTemplates (PVC for SQLite)")
    for c in claims.values():
        if "storage" not in c["spec"]["resources"]["requests"]:
            fail("server PVC requests no storage")
    db = flag_value(sargs, "--db") or ""
    mounts = {m["name"]: m["mountPath"] for m in server.get("volumeMounts", [])}
    if not any(n in claims and db.startswith(p.rstrip("/") + "/") for n, p in mounts.items()):
        fail(f"server --db={db} is not on the PVC")
    port = next((p["containerPort"] for p in server["ports"] if p.get("name") == "grpc"), None)
    listen = flag_value(sargs, "--listen") or ""
    if port is None or not listen.endswith(f":{port}") or listen.startswith("127."):
        fail(f"server listens on {listen}, container port {port}")
    probe = server.get("readinessProbe", {})
    if probe.get("grpc", {}).get("port") != port:
        fail(f"server readinessProbe is not a grpc probe on port {port}: {probe}")
    token_file = flag_value(sargs, "--token-file") or ""

    def from_secret(pod_spec, container, path):
        for m in container.get("volumeMounts", []):
            if path.startswith(m["mountPath"].rstrip("/") + "/"):
                vol = next(v for v in pod_spec["volumes"] if v["name"] == m["name"])
                name = vol.get("secret", {}).get("secretName")
                key = path[len(m["mountPath"].rstrip("/")) + 1:]
                return name in secrets and key in secrets[name].get("stringData", secrets[name].get("data", {}))
        return False

    if not from_secret(pod, server, token_file):
        fail(f"server --token-file={token_file} is not a key of a Secret")

    services = [s for s in by_kind.get("Service", []) if s["metadata"]["name"] == "collatz-server"]
    if not services:
        fail("no Service collatz-server")
    else:
        svc = services[0]["spec"]
        if svc["selector"].items() - labels.items():
            fail("Service selector does not select the server pods")
        if not any(p["port"] == port or p.get("targetPort") in (port, "grpc") for p in svc["ports"]):
            fail("Service does not expose the gRPC port")
        if spec.get("serviceName") != "collatz-server":
            fail("StatefulSet serviceName is not collatz-server")

    deps = [d for d in by_kind.get("Deployment", []) if d["metadata"]["name"] == "collatz-worker"]
    if not deps:
        fail("no Deployment collatz-worker")
        return
    wspec = deps[0]["spec"]
    wpod = wspec["template"]["spec"]
    if wspec["selector"]["matchLabels"].items() - wspec["template"]["metadata"]["labels"].items():
        fail("worker Deployment selector does not match its pod labels")
    worker = wpod["containers"][0]
    wargs = worker["args"]
    check_flags(a.worker, wargs, "worker")
    gpus = worker.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    if not gpus or int(gpus) < 1:
        fail("worker has no nvidia.com/gpu limit")
    if flag_value(wargs, "--server") != f"collatz-server:{port}":
        fail(f"worker --server={flag_value(wargs, '--server')}, want collatz-server:{port}")
    if flag_value(wargs, "--sieve-bits") != flag_value(sargs, "--sieve-bits"):
        fail("worker and server sieve widths differ")
    if not from_secret(wpod, worker, flag_value(wargs, "--token-file") or ""):
        fail("worker token is not from the Secret")
    grace = float(flag_value(wargs, "--grace-seconds") or 60)
    if wpod.get("terminationGracePeriodSeconds", 30) < grace + 20:
        fail("worker terminationGracePeriodSeconds leaves no time to send results after --grace-seconds")
    print(f"server: {' '.join(sargs)}\nworker: {' '.join(wargs)} (nvidia.com/gpu: {gpus})")


if __name__ == "__main__":
    main()
    finish("deploy_kubernetes_test")
