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

        # Each broken copy must be refused (one validator run for all of them: each is a
        # document of its own, named by what is wrong with it).
        def container(d):
            return d["spec"]["template"]["spec"]["containers"][0]
        changes = {
            "unknown-field": lambda d: d["spec"].__setitem__("replica", 1),
            "misspelt-container-field": lambda d: container(d).__setitem__("imagePullPolcy", "Always"),
            "wrong-type": lambda d: container(d).__setitem__("args", "--listen=0.0.0.0:50051"),
            "missing-required-field": lambda d: d["spec"].pop("selector"),
            "unknown-kind": lambda d: d.__setitem__("kind", "StatefulSets"),
            "unknown-metadata-field": lambda d: d["metadata"].__setitem__("label", {"a": "b"}),
        }
        broken = []
        for label, change in changes.items():
            for d in docs:
                if d["doc"]["kind"] in ("StatefulSet", "Deployment"):
                    doc = copy.deepcopy(d["doc"])
                    change(doc)
                    broken.append({"name": f"{label}:{d['name']}", "doc": doc})
        code, out = validate(validator, modules, broken, tmp, "broken")
        refused = {l.split()[1].rstrip(":") for l in out.splitlines() if l.startswith("FAIL ")}
        for b in broken:
            line = next((l for l in out.splitlines() if l.startswith(f"FAIL {b['name']}:")), None)
            print(f"{b['name']}: {line or 'ACCEPTED'}")
            if b["name"] not in refused:
                fail(f"{b['name']}: the validator accepted it")
        if code == 0:
            fail("the validator exited 0 on broken manifests")

if __name__ == "__main__":
    main()
    finish("deploy_kubernetes_schema_test")
