// Validates Kubernetes manifests offline against the API's schema, strictly:
//   node validate.mjs DOCS.json
// DOCS.json: [{"name": "server.yaml#0", "doc": {...}}, ...] (tests/deploy_kubernetes_schema_test.py
// converts the YAML). Two checks per document, both generated from the Kubernetes OpenAPI
// specification by the kubernetes-models package (version pinned in package.json):
//  1. JSON schema: the model's compiled ajv validator (types, required fields, int32/int64
//     and other formats, nested objects);
//  2. unknown fields refused: the document as a TypeScript object literal typed with the
//     model's interface, checked by tsc --strict (excess properties are errors; so are wrong
//     types), the way `kubectl apply --validate=strict` refuses unknown fields.
// Prints one line per document and every problem; exit 0 only when every document passes.
// Runs without the network: only node_modules beside this file (deploy/kubernetes/validate/install.sh).
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.COLLATZ_K8S_VALIDATE_MODULES || join(here, "node_modules");
const require = createRequire(join(modules, "x.js"));
const docs = JSON.parse(readFileSync(process.argv[2], "utf8"));

// apiVersion "apps/v1" -> "apps/v1", "v1" -> "v1" (the core group); kind -> module file.
function modelPath(doc) {
  if (typeof doc.apiVersion !== "string" || typeof doc.kind !== "string") return null;
  return `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
}

let failed = 0;
const typed = [];
for (const { name, doc } of docs) {
  const path = modelPath(doc);
  if (!path) {
    console.log(`FAIL ${name}: no apiVersion/kind`);
    failed++;
    continue;
  }
  let mod;
  try {
    mod = await import(require.resolve(path).replace(/\.js$/, ".mjs"));
  } catch (e) {
    console.log(`FAIL ${name}: ${doc.apiVersion} ${doc.kind} is not a Kubernetes API type (${e.code || e.message})`);
    failed++;
    continue;
  }
  const Model = mod[doc.kind];
  try {
    new Model(doc).validate();
    console.log(`schema ok ${name}: ${doc.apiVersion} ${doc.kind}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${doc.apiVersion} ${doc.kind} does not match the schema:`);
    for (const err of e.errors || [e]) {
      console.log(`  ${err.instancePath || "/"} ${err.message}${err.params ? " " + JSON.stringify(err.params) : ""}`);
    }
  }
  typed.push({ name, path, kind: doc.kind, doc });
}

// Strict: unknown fields, through tsc's excess property checks on object literals.
const dir = mkdtempSync(join(tmpdir(), "collatz-k8s-validate-"));
try {
  let src = "";
  typed.forEach((t, i) => {
    src += `import type { I${t.kind} as T${i} } from ${JSON.stringify(t.path)};\n`;
  });
  const lines = {};
  typed.forEach((t, i) => {
    lines[src.split("\n").length] = t.name;
    src += `// ${t.name}\nexport const d${i}: T${i} = ${JSON.stringify(t.doc, null, 1)};\n`;
  });
  writeFileSync(join(dir, "manifests.ts"), src);
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: "node16", moduleResolution: "node16", target: "es2020",
                       types: [], typeRoots: [], baseUrl: ".", paths: { "kubernetes-models/*": [join(modules, "kubernetes-models/*")] } },
    files: ["manifests.ts"],
  }));
  // node_modules next to the file, so that module resolution finds the packages offline.
  execFileSync("ln", ["-s", modules, join(dir, "node_modules")]);
  let out = "";
  try {
    execFileSync(process.execPath, [join(modules, "typescript/bin/tsc"), "-p", dir], { encoding: "utf8" });
  } catch (e) {
    out = (e.stdout || "") + (e.stderr || "");
  }
  const starts = Object.keys(lines).map(Number).sort((a, b) => a - b);
  const owner = (line) => lines[starts.filter((s) => s <= line).pop()] || "?";
  const errors = out.split("\n").filter((l) => /error TS\d+/.test(l));
  for (const l of errors) {
    const m = l.match(/manifests\.ts\((\d+),\d+\): (error TS\d+: .*)/);
    console.log(`FAIL ${m ? owner(Number(m[1])) : "?"}: ${m ? m[2] : l}`);
    failed++;
  }
  if (out && !errors.length) {
    console.log(`FAIL tsc: ${out}`);
    failed++;
  }
  if (!out) console.log(`strict ok: ${typed.length} documents, no unknown fields`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? `${failed} problem(s)` : `all ${docs.length} documents valid`);
process.exit(failed ? 1 : 0);
