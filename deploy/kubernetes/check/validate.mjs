// Validates Kubernetes manifests (multi-document YAML on stdin, e.g. the
// output of `kubectl kustomize`) against the API schemas of Kubernetes,
// the Prometheus Operator and cert-manager (npm kubernetes-models, pinned
// in package-lock.json; offline once installed). Exits 1 naming the object
// and the schema error; 0 with a count when every object validates.
import { parseAllDocuments } from "yaml";

const PACKAGES = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
  "cert-manager.io": "@kubernetes-models/cert-manager",
};

// The module of an apiVersion/kind: core "v1" -> kubernetes-models/v1/Kind,
// "apps/v1" -> kubernetes-models/apps/v1/Kind, CRD groups -> their package.
function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/")
    ? apiVersion.split("/")
    : [null, apiVersion];
  if (group === null) return `kubernetes-models/${version}/${kind}`;
  const pkg = PACKAGES[group] ?? "kubernetes-models";
  return `${pkg}/${group}/${version}/${kind}`;
}

async function validate(doc) {
  const { apiVersion, kind, metadata } = doc;
  const name = `${kind}/${metadata?.name}`;
  let Model;
  try {
    Model = (await import(modulePath(apiVersion, kind)))[kind];
  } catch (e) {
    throw new Error(`${name}: no schema for ${apiVersion} ${kind}`);
  }
  try {
    new Model(doc).validate();
  } catch (e) {
    throw new Error(`${name}: ${e.message}`);
  }
  return name;
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const docs = parseAllDocuments(Buffer.concat(chunks).toString("utf8"));
let count = 0;
try {
  for (const d of docs) {
    if (d.errors.length) throw new Error(`YAML: ${d.errors[0].message}`);
    const obj = d.toJS();
    if (obj === null) continue;
    await validate(obj);
    ++count;
  }
} catch (e) {
  console.error(`validate: ${e.message}`);
  process.exit(1);
}
console.log(`validate: ${count} objects match their API schemas`);
