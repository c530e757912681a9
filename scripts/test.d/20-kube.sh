# A real Kubernetes API server on loopback for the operator's tests: etcd (apt: etcd-server)
# and kube-apiserver built from the Go module proxy (once, about 5 minutes; cached under
# ~/.cache/prover-k8s-tools/kube-apiserver-<version>). No controller-manager or scheduler:
# Deployments create no Pods, which the operator tests do not need (they check the
# Deployment's spec.replicas and the custom resources' status).
#
# Exports PROVER_TEST_KUBE_URL, PROVER_TEST_KUBE_TOKEN and PROVER_TEST_KUBECONFIG, and sets
# PROVER_TEST_REQUIRE_KUBE=1 so the operator's tests fail rather than skip without them.
# Stops both servers when the test command exits (chained after any EXIT trap set before).
#
# Sourced by scripts/test.sh (set -euo pipefail, repository root). Also:
#   bash scripts/test.d/20-kube.sh build   # only build/install the binaries
#   bash scripts/test.d/20-kube.sh shell   # start the servers and open a shell with the env

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/../.."
fi

export PATH="$HOME/go/bin:/usr/local/go/bin:$PATH"
KUBE_TOOLS="${PROVER_K8S_TOOLS:-$HOME/.cache/prover-k8s-tools}"
KUBE_VERSION=1.35.4
KUBE_APISERVER="$KUBE_TOOLS/kube-apiserver-v$KUBE_VERSION"

kube_fail() {
  echo "FAILED: $*" >&2
  exit 1
}

kube_build() {
  if ! command -v etcd >/dev/null 2>&1; then
    echo "installing etcd (apt: etcd-server)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server) >/dev/null \
      || kube_fail "apt-get install etcd-server"
  fi
  command -v openssl >/dev/null 2>&1 || kube_fail "openssl is needed for the service-account key"
  if [ -x "$KUBE_APISERVER" ]; then
    return 0
  fi
  echo "building kube-apiserver v$KUBE_VERSION from the Go module proxy (about 5 minutes, once)"
  local mod staging s
  mod="$(mktemp -d)"
  staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
    cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
    cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
    kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
    mount-utils pod-security-admission sample-apiserver"
  {
    echo "module prover.dev/kubeapiserver"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes v$KUBE_VERSION"
    echo
    echo "replace ("
    for s in $staging; do
      echo "  k8s.io/$s => k8s.io/$s v0.${KUBE_VERSION#1.}"
    done
    echo ")"
  } >"$mod/go.mod"
  printf 'package main\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n\nfunc main() {}\n' >"$mod/main.go"
  local minor="${KUBE_VERSION#1.}"
  minor="${minor%%.*}"
  (
    cd "$mod" \
      && GOFLAGS=-mod=mod go mod tidy \
      && GOFLAGS=-mod=mod go build -o "$mod/kube-apiserver" \
        -ldflags "-X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
        k8s.io/kubernetes/cmd/kube-apiserver
  ) || kube_fail "building kube-apiserver v$KUBE_VERSION (module in $mod)"
  mkdir -p "$KUBE_TOOLS"
  mv "$mod/kube-apiserver" "$KUBE_APISERVER.tmp" && mv "$KUBE_APISERVER.tmp" "$KUBE_APISERVER"
  rm -rf "$mod"
}

kube_start() {
  KUBE_TMP="$(mktemp -d)"
  # Stop the servers on every exit from here on, a failed start included.
  kube_chain_exit_trap
  # Ports of their own, away from a developer's etcd (2379) or API server (6443).
  local etcd_port=23791 peer_port=23801 api_port=16443
  etcd --name prover-test --data-dir "$KUBE_TMP/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "prover-test=http://127.0.0.1:$peer_port" >"$KUBE_TMP/etcd.log" 2>&1 &
  KUBE_ETCD_PID=$!
  openssl genrsa -out "$KUBE_TMP/sa.key" 2048 2>/dev/null
  PROVER_TEST_KUBE_TOKEN="prover-test-$(openssl rand -hex 16)"
  echo "$PROVER_TEST_KUBE_TOKEN,admin,admin,system:masters" >"$KUBE_TMP/tokens.csv"
  "$KUBE_APISERVER" --etcd-servers="http://127.0.0.1:$etcd_port" \
    --service-account-key-file="$KUBE_TMP/sa.key" --service-account-signing-key-file="$KUBE_TMP/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --token-auth-file="$KUBE_TMP/tokens.csv" \
    --authorization-mode=RBAC --secure-port="$api_port" --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 --cert-dir="$KUBE_TMP/certs" --service-cluster-ip-range=10.96.0.0/16 \
    --endpoint-reconciler-type=none >"$KUBE_TMP/kube-apiserver.log" 2>&1 &
  KUBE_APISERVER_PID=$!
  PROVER_TEST_KUBE_URL="https://127.0.0.1:$api_port"
  local i
  for i in $(seq 1 300); do
    if curl -skf -H "Authorization: Bearer $PROVER_TEST_KUBE_TOKEN" "$PROVER_TEST_KUBE_URL/readyz" >/dev/null 2>&1; then
      break
    fi
    if ! kill -0 "$KUBE_APISERVER_PID" 2>/dev/null; then
      tail -n 30 "$KUBE_TMP/etcd.log" "$KUBE_TMP/kube-apiserver.log" >&2
      kube_fail "kube-apiserver exited"
    fi
    sleep 0.2
  done
  curl -skf -H "Authorization: Bearer $PROVER_TEST_KUBE_TOKEN" "$PROVER_TEST_KUBE_URL/readyz" >/dev/null \
    || { tail -n 30 "$KUBE_TMP/kube-apiserver.log" >&2; kube_fail "kube-apiserver not ready after 60 s"; }
  cat >"$KUBE_TMP/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: prover-test
  cluster:
    server: $PROVER_TEST_KUBE_URL
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $PROVER_TEST_KUBE_TOKEN
contexts:
- name: prover-test
  context:
    cluster: prover-test
    user: admin
current-context: prover-test
EOF
  # The chart's operator RBAC (ServiceAccount, ClusterRole, binding), so the operator tests
  # run their controllers as that ServiceAccount (impersonated) and fail if the chart's rules
  # miss a request the operator makes. Needs helm (installed by 30-k8s.sh; here if missing).
  if ! command -v helm >/dev/null 2>&1; then
    echo "installing helm v3.16.4 (go install, about 2 minutes the first time)"
    (cd /tmp && go install "helm.sh/helm/v3/cmd/helm@v3.16.4") || kube_fail "go install helm"
  fi
  local sa_ns=prover-operator-test kubectl_cmd
  kubectl_cmd=(kubectl --kubeconfig "$KUBE_TMP/kubeconfig")
  if command -v kubectl >/dev/null 2>&1; then
    helm template prover helm/prover --namespace "$sa_ns" --kube-version "$KUBE_VERSION" --set operator.enabled=true \
      --set operator.watchAllNamespaces=true --show-only templates/operator.yaml >"$KUBE_TMP/operator.yaml" \
      || kube_fail "helm template (operator RBAC)"
    { "${kubectl_cmd[@]}" create namespace "$sa_ns" \
        && "${kubectl_cmd[@]}" apply -f "$KUBE_TMP/operator.yaml"; } >"$KUBE_TMP/kubectl.log" 2>&1 \
      || { cat "$KUBE_TMP/kubectl.log" >&2; kube_fail "kubectl apply (operator RBAC)"; }
    export PROVER_TEST_OPERATOR_SA="$sa_ns:prover-operator"
  else
    echo "no kubectl: the operator tests run as admin, not as the chart's ServiceAccount"
  fi
  export PROVER_TEST_KUBE_URL PROVER_TEST_KUBE_TOKEN
  export PROVER_TEST_KUBECONFIG="$KUBE_TMP/kubeconfig"
  export PROVER_TEST_REQUIRE_KUBE=1
  echo "kube-apiserver v$KUBE_VERSION at $PROVER_TEST_KUBE_URL (etcd on 127.0.0.1:$etcd_port)"
}

kube_stop() {
  kill "${KUBE_APISERVER_PID:-}" 2>/dev/null || true
  kill "${KUBE_ETCD_PID:-}" 2>/dev/null || true
  wait "${KUBE_APISERVER_PID:-}" "${KUBE_ETCD_PID:-}" 2>/dev/null || true
  rm -rf "${KUBE_TMP:-/nonexistent}"
}

# Chain to an EXIT trap set by an earlier step (10-services.sh stops Redis and MinIO there).
kube_chain_exit_trap() {
  local prev
  prev="$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")"
  if [ -n "$prev" ]; then
    # shellcheck disable=SC2064
    trap "kube_stop; $prev" EXIT
  else
    trap kube_stop EXIT
  fi
}

kube_mode=""
[ "${BASH_SOURCE[0]}" = "$0" ] && kube_mode="${1:-}"
case "$kube_mode" in
  build)
    kube_build
    ;;
  shell)
    kube_build
    kube_start
    echo "PROVER_TEST_KUBE_URL=$PROVER_TEST_KUBE_URL PROVER_TEST_KUBECONFIG=$PROVER_TEST_KUBECONFIG"
    "${SHELL:-bash}" -i
    ;;
  *)
    kube_build
    kube_start
    ;;
esac
