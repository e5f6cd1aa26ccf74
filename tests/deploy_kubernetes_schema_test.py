#!/usr/bin/env python3
"""Validates deploy/kubernetes/*.yaml strictly and offline against the Kubernetes API schema.

deploy/kubernetes/validate/install.sh puts the pinned npm packages (kubernetes-models: the API's
OpenAPI definitions compiled to JSON-schema validators and TypeScript interfaces; typescript)
into --work; validate.mjs then checks every document without the network: the JSON schema
(types, required fields, formats) and no unknown fields (tsc's excess property checks).
The shipped manifests must pass; copies with an unknown field, a misspelt field, a wrong type
and a missing required field must each be refused, so the check can fail.
Exit 77 (skipped) when PyYAML, node/npm or the npm registry (first run only) is missing.
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: PyYAML missing (Debian package python3-yaml; deploy/install-deps.sh installs it)")
    sys.exit(77)

from deploy_checks import fail, finish


def validate(validator, modules, docs, tmp, label):
    path = os.path.join(tmp, label + ".json")
    with open(path, "w") as f:
        json.dump(docs, f)
    r = subprocess.run(["node", validator, path], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, COLLATZ_K8S_VALIDATE_MODULES=modules))
    return r.returncode, (r.stdout + r.stderr).strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True, help="where the npm packages are installed (kept between runs)")
    a = ap.parse_args()
    vdir = os.path.join(a.source, "deploy/kubernetes/validate")
    r = subprocess.run([os.path.join(vdir, "install.sh"), a.work], capture_output=True, text=True, timeout=600)
    if r.returncode == 3:
        print("SKIP: " + r.stderr.strip())
        sys.exit(77)
    if r.returncode != 0:
        fail(f"install.sh: exit {r.returncode}: {r.stdout}{r.stderr}")
        return
    modules = os.path.join(os.path.abspath(a.work), "node_modules")
    validator = os.path.join(vdir, "validate.mjs")

    kdir = os.path.join(a.source, "deploy/kubernetes")
    docs = []
    for name in sorted(os.listdir(kdir)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(kdir, name), encoding="utf-8") as f:
            for i, d in enumerate(x for x in yaml.safe_load_all(f) if x):
                if d.get("kind") == "Kustomization":
                    continue  # kustomize's own file, not an API object (deploy_kubernetes_manifests checks it)
                docs.append({"name": f"{name}#{i}", "doc": d})
    with tempfile.TemporaryDirectory(prefix="collatz-k8s-schema-") as tmp:
        code, out = validate(validator, modules, docs, tmp, "shipped")
        print(f"shipped manifests: exit {code}\n{out}")
        if code != 0:
            fail("the shipped manifests do not validate against the Kubernetes API schema")
        kinds = sorted(f"{d['doc']['apiVersion']} {d['doc']['kind']}" for d in docs)
        for want in ("apps/v1 Deployment", "apps/v1 StatefulSet", "v1 Service", "v1 Secret"):
            if want not in kinds:
                fail(f"no {want} among the manifests: {kinds}")

        def mutated(label, change):
            ds = copy.deepcopy(docs)
            target = next(d for d in ds if d["doc"]["kind"] in ("StatefulSet", "Deployment"))
            change(target["doc"])
            code, out = validate(validator, modules, ds, tmp, label)
            print(f"{label}: exit {code}: {' | '.join(l for l in out.splitlines() if l.startswith(('FAIL', '  ')))}")
            if code == 0:
                fail(f"{label}: the validator accepted it")

        def container(d):
            return d["spec"]["template"]["spec"]["containers"][0]
        mutated("unknown top-level field", lambda d: d["spec"].__setitem__("replica", 1))
        mutated("misspelt container field", lambda d: container(d).__setitem__("imagePullPolcy", "Always"))
        mutated("wrong type", lambda d: container(d).__setitem__("args", "--listen=0.0.0.0:50051"))
        mutated("missing required field", lambda d: d["spec"].pop("selector"))
        mutated("unknown kind", lambda d: d.__setitem__("kind", "StatefulSets"))


if __name__ == "__main__":
    main()
    finish("deploy_kubernetes_schema_test")
