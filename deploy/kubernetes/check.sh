#!/bin/sh
# Checks deploy/kubernetes: the generated files are up to date, every
# manifest validates against its API schema (Kubernetes, Prometheus
# Operator, cert-manager: npm kubernetes-models, pinned, `npm ci` once),
# and where a kubectl with Kustomize v4+ is installed, the base and every
# overlay render and validate as a whole.
set -eu
cd "$(dirname "$0")"
/usr/bin/python3 generate.py --check
if [ ! -d check/node_modules/kubernetes-models ]; then
  (cd check && npm ci --no-audit --no-fund --loglevel=error)
fi
for f in base/*.yaml overlays/*/*.yaml; do
  case "$f" in */kustomization.yaml) continue ;; esac
  printf '%s: ' "$f"
  node check/validate.mjs <"$f"
done
if command -v kubectl >/dev/null 2>&1 &&
  kubectl version --client 2>/dev/null | grep -q 'Kustomize Version: v[4-9]'; then
  for k in base overlays/*; do
    printf 'kubectl kustomize %s: ' "$k"
    kubectl kustomize "$k" | node check/validate.mjs
  done
else
  echo "SKIP: rendering: no kubectl with Kustomize v4+ here (the files were" \
    "validated one by one)"
fi
echo "deploy/kubernetes: ok"
