#!/usr/bin/env bash
# The project on a real single-node Kubernetes cluster on this machine: the image from
# docker/Dockerfile, `helm install` of helm/prover with the bundled Redis and MinIO and the
# operator, then jobs as the README and docs/kubernetes.md submit them, their proofs fetched
# and verified offline. Not part of the test command (70 minutes for every step after a `reset`,
# the Go builds kept; see docs/kubernetes.md);
# run it by hand, as root:
#
#   bash scripts/cluster.sh [STEP...]      (no step: all of the steps below, in order)
#     cluster    the machine's cluster (scripts/lib/real-cluster.sh): apt packages, containerd
#                and dockerd, locally made base images, Kubernetes built from the Go module proxy
#                (~/.cache/prover-cluster/bin), the node up, CoreDNS; Redis/MinIO/mc images
#     binaries   cargo build of prover, planner, executor, worker, aggregator and operator in
#                $CARGO_TARGET_DIR (default ~/.cache/prover-target), profile $CLUSTER_PROFILE
#     image      docker build -f docker/Dockerfile --build-arg BINARIES=prebuilt (those binaries),
#                imported into containerd for the kubelet
#     install    helm upgrade --install (namespace prover, bundled Redis and MinIO, operator on,
#                the chart's default resources); waits for every pod and the MinIO setup Job
#     jobs       a token by kubectl exec, a port-forward to the planner, then a Reckle batch, a
#                Pari batch and a Hekaton job with the prover CLI: watch, fetch, verify offline
#     proofjob   a ProofJob resource (pari-batch) until phase Done; its proof fetched, verified
#     kill-worker   a Reckle job; a busy worker pod deleted with --force mid-job; the job must
#                still finish, and its proof verify
#     kinds      the kinds `jobs` leaves out: a Reckle update (C' computed here), a circom circuit
#                registered and proved for three witnesses, Hekaton with --final (verify-final,
#                and a flipped bit refused); then a ProofJob of every kind until Done, verified
#                with a token of the namespace's tenant (the operator submits as that tenant)
#     scale      a ProverPool (helm upgrade: pari.prove on a pool of its own, 1..3 pods) taken
#                from 1 to 3 real pods by a 48-task job and back to 1 once the queue drains
#     prometheus Prometheus on the host (built once from the Go module proxy: Debian's has no
#                Kubernetes discovery), scraping the pods it discovers through the API server (as
#                the chart's ServiceMonitor selects them), with the chart's alert rules
#     metrics    every PromQL expression of the Grafana dashboards returns series over the run;
#                the rules are healthy; ProverJobOverdue fires (a noop job with no worker) and
#                resolves (prometheus-stop: stops it and deletes its data)
#     faults     while jobs of three kinds run: the aggregator pod deleted with --force, the
#                Redis pod deleted (AOF on its volume), helm upgrade to a rebuilt image; every
#                job ends done and verifies, no job is lost
#   bash scripts/cluster.sh status | down | uninstall | reset
#     status     the cluster's processes, node and pods
#     down       stops the cluster (keeps its state and images: the next run starts it again)
#     uninstall  helm uninstall and the namespace
#     reset      (RC_RESET_YES=1) down, then deletes the cluster's state and all Docker and
#                containerd data; keeps apt packages and the Go builds
#
# Every step skips what is already there. Environment:
#   CLUSTER_PROFILE   dev (default: the test command's profile, dependencies optimised, so the
#                     build is shared with it) or release
#   CLUSTER_PORT      local port of the planner's port-forward (default 15051)
#   RC_STATE, RC_BIN  the cluster's state (/var/lib/prover-cluster) and Go builds
#                     (~/.cache/prover-cluster/bin); see scripts/lib/real-cluster.sh
# Use the cluster afterwards:
#   export KUBECONFIG=/var/lib/prover-cluster/admin.kubeconfig PATH=~/.cache/prover-cluster/bin:$PATH
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export RC_STATE="${RC_STATE:-/var/lib/prover-cluster}"
export RC_BIN="${RC_BIN:-$HOME/.cache/prover-cluster/bin}"
export PROJECT_DIR="$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
PROFILE="${CLUSTER_PROFILE:-dev}"
PORT="${CLUSTER_PORT:-15051}"
NS=prover
RELEASE=prover
DOCKER=/usr/bin/docker   # Debian's CLI: BuildKit built in (see scripts/lib/real-cluster.sh)
export DOCKER_BUILDKIT=1
LIB="$ROOT/scripts/lib/real-cluster.sh"
WORK="$RC_STATE/cluster-test"
LOGS="$RC_STATE/log"
BINS="prover planner executor worker aggregator operator"
case "$PROFILE" in
  dev) BIN_DIR="$CARGO_TARGET_DIR/debug" ;;
  release) BIN_DIR="$CARGO_TARGET_DIR/release" ;;
  *) echo "CLUSTER_PROFILE must be dev or release, not $PROFILE" >&2; exit 2 ;;
esac
PROVER="$BIN_DIR/prover"

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
kc() { "$RC_BIN/kubectl" --kubeconfig "$RC_STATE/admin.kubeconfig" "$@"; }
helm_() { "$RC_BIN/helm" --kubeconfig "$RC_STATE/admin.kubeconfig" "$@"; }

# Polls CMD every 2 s until it succeeds, for at most SECONDS; dies with DESCRIPTION.
wait_until() { # SECONDS DESCRIPTION CMD...
  local limit="$1" what="$2" t0=$SECONDS; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt "$limit" ] || die "timed out after ${limit}s waiting for $what"
    sleep 2
  done
}

# ---------------------------------------------------------------------------------------------
step_cluster() {
  bash "$LIB" deps runtime images build up service-images
}

step_binaries() {
  local flags=() b missing=""
  [ "$PROFILE" = release ] && flags=(--release)
  command -v cargo >/dev/null || die "cargo not found (rustup; see README.md Prerequisites)"
  log "cargo build (${PROFILE}) of $BINS in $CARGO_TARGET_DIR (up to date: seconds; cold: 15-30 min on 2 cores)"
  cargo build "${flags[@]}" --locked -p prover-cli --bin prover \
    -p prover-services --bin planner --bin executor --bin worker --bin aggregator \
    -p prover-operator --bin operator >"$LOGS/cluster-cargo.log" 2>&1 \
    || { tail -20 "$LOGS/cluster-cargo.log" >&2; die "cargo build (log: $LOGS/cluster-cargo.log)"; }
  for b in $BINS; do [ -x "$BIN_DIR/$b" ] || missing="$missing $b"; done
  [ -z "$missing" ] || die "not built:$missing"
}

# The runtime base: the public distroless image where a registry answers, else the local
# stand-in (scripts/lib/real-cluster.sh `images`: Debian 12 packages, uid 65532, no shell).
runtime_base() {
  local public
  public="$(sed -n 's/^ARG RUNTIME_IMAGE=//p' docker/Dockerfile | head -1)"
  if $DOCKER image inspect "$public" >/dev/null 2>&1 || timeout 60 $DOCKER pull -q "$public" >/dev/null 2>&1; then
    echo "$public"
  else
    echo local/cc-debian12:nonroot
  fi
}

image_tag() {
  local b
  for b in $BINS; do [ -x "$BIN_DIR/$b" ] || die "no $BIN_DIR/$b (step: binaries)"; done
  # shellcheck disable=SC2086
  echo "local-$(cd "$BIN_DIR" && cat $BINS | sha256sum | cut -c1-12)"
}

step_image() {
  local tag base b
  tag="$(image_tag)"
  if ! $DOCKER image inspect "prover:$tag" >/dev/null 2>&1; then
    base="$(runtime_base)"
    rm -rf docker/prebuilt && mkdir -p docker/prebuilt
    for b in $BINS; do ln -f "$BIN_DIR/$b" docker/prebuilt/ 2>/dev/null || cp "$BIN_DIR/$b" docker/prebuilt/; done
    log "docker build prover:$tag (BINARIES=prebuilt from $BIN_DIR, runtime base $base)"
    # With BINARIES=prebuilt BuildKit skips the builder stage and never resolves its image.
    $DOCKER build -f docker/Dockerfile --build-arg BINARIES=prebuilt --build-arg RUNTIME_IMAGE="$base" \
      -t "prover:$tag" . >"$LOGS/cluster-docker-build.log" 2>&1 \
      || { rm -rf docker/prebuilt; tail -20 "$LOGS/cluster-docker-build.log" >&2; die "docker build"; }
    rm -rf docker/prebuilt
  fi
  local v
  v="$($DOCKER run --rm "prover:$tag" --version)" || die "docker run prover:$tag --version"
  for b in planner executor worker aggregator operator; do
    $DOCKER run --rm --entrypoint "/usr/local/bin/$b" "prover:$tag" --help >/dev/null \
      || die "prover:$tag has no working /usr/local/bin/$b"
  done
  log "image prover:$tag: $v, runs as $($DOCKER image inspect -f '{{.Config.User}}' "prover:$tag")"
  bash "$LIB" import "prover:$tag"
}

# ---------------------------------------------------------------------------------------------
step_install() {
  local tag i t0=$SECONDS
  tag="$(image_tag)"
  # The chart's Redis and MinIO claims have no storage class and this cluster has no
  # provisioner: two hostPath PersistentVolumes without a class bind to them.
  for i in 1 2; do
    mkdir -p "$RC_STATE/pv/pv$i" && chmod 0777 "$RC_STATE/pv/pv$i"
    kc get pv "local-pv$i" >/dev/null 2>&1 && continue
    kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-pv$i}
spec:
  capacity: {storage: 64Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: $RC_STATE/pv/pv$i, type: DirectoryOrCreate}
YAML
  done
  mkdir -p "$WORK"
  # Only what this cluster needs: images made here (no registry), no redis_exporter (its module
  # is refused by the Go module proxy, so no image), and the operator. Resources are the
  # chart's defaults: they must fit this 2-core node.
  cat >"$WORK/values.yaml" <<YAML
image: {repository: prover, tag: "$tag", pullPolicy: Never}
redis:
  image: {repository: local/redis, tag: "7.0", pullPolicy: Never}
  metrics: {enabled: false}
minio:
  image: {repository: local/minio, tag: dev, pullPolicy: Never}
  mcImage: {repository: local/mc, tag: dev, pullPolicy: Never}
operator: {enabled: true}
YAML
  # An upgrade cut off (the script stopped, the machine restarted) leaves the release pending,
  # and every later upgrade is refused ("another operation is in progress"): roll it back first.
  local state
  state="$(helm_ -n "$NS" status "$RELEASE" -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["status"])' 2>/dev/null || true)"
  case "$state" in
    pending-*)
      log "release $RELEASE is $state (an operation was cut off): helm rollback first"
      helm_ -n "$NS" rollback "$RELEASE" >"$LOGS/cluster-helm-rollback.log" 2>&1 || { cat "$LOGS/cluster-helm-rollback.log" >&2; die "helm rollback"; }
      ;;
  esac
  log "helm upgrade --install $RELEASE helm/prover (namespace $NS)"
  helm_ upgrade --install "$RELEASE" helm/prover -n "$NS" --create-namespace -f "$WORK/values.yaml" \
    --wait --timeout 10m >"$LOGS/cluster-helm.log" 2>&1 \
    || { cat "$LOGS/cluster-helm.log" >&2; kc -n "$NS" get pods -o wide >&2; die "helm install"; }
  local rev job
  rev="$(helm_ -n "$NS" status "$RELEASE" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')"
  job="$RELEASE-minio-setup-$rev"
  kc -n "$NS" wait --for=condition=complete "job/$job" --timeout=300s >/dev/null \
    || { kc -n "$NS" logs "job/$job" --tail=20 >&2 || true; die "the MinIO setup Job $job did not complete"; }
  # Its memory limit must hold mc: no OOM kill (its retries used to hide one on every install).
  if kc -n "$NS" get pods -l "job-name=$job" -o jsonpath='{range .items[*]}{.status.containerStatuses[*].lastState.terminated.reason}{" "}{.status.containerStatuses[*].state.terminated.reason}{"\n"}{end}' \
      | grep -q OOMKilled; then
    die "the MinIO setup Job's mc was OOM-killed"
  fi
  log "helm install: all pods ready, $job complete (no OOM kill), in $((SECONDS - t0)) s"
  kc -n "$NS" get pods -o wide
  kc describe node | sed -n '/^Allocated resources:/,/^Events:/p' | sed '$d'
}

# ---------------------------------------------------------------------------------------------
# The client side: a token for a tenant, and a port-forward to the planner Service.
PF_PID=""
stop_port_forward() { if [ -n "$PF_PID" ]; then kill "$PF_PID" 2>/dev/null || true; wait "$PF_PID" 2>/dev/null || true; PF_PID=""; fi; }
trap stop_port_forward EXIT

client() { PROVER_TOKEN="$TOKEN" "$PROVER" "$@" --endpoint "http://127.0.0.1:$PORT"; }

connect() {
  [ -x "$PROVER" ] || die "no $PROVER (step: binaries)"
  if [ -z "${TOKEN:-}" ]; then
    TOKEN="$(kc -n "$NS" exec "deploy/$RELEASE-planner" -- prover admin token create --tenant cluster-test \
      2>"$LOGS/cluster-token.log" | grep -o 'prv_[A-Za-z0-9_-]*' | head -1)"
    [ -n "$TOKEN" ] || die "no API token from prover admin token create"
  fi
  if [ -n "$PF_PID" ] && kill -0 "$PF_PID" 2>/dev/null && client jobs >/dev/null 2>&1; then return 0; fi
  stop_port_forward
  "$RC_BIN/kubectl" --kubeconfig "$RC_STATE/admin.kubeconfig" -n "$NS" port-forward \
    "service/$RELEASE-planner" "$PORT:50051" >"$LOGS/cluster-port-forward.log" 2>&1 &
  PF_PID=$!
  wait_until 60 "the port-forward to service/$RELEASE-planner" client jobs
}

# C of a Reckle vector, computed here: the local `prover reckle prove` with the same leaves
# prints C once it has committed to them (after building its circuits); it is stopped there,
# before proving. ARGS are `--random-leaves N --seed S` (the leaves `prover submit reckle`
# draws from the same seed) or `--leaves-file F`.
reckle_c() { # LOG_BUCKET ARGS...
  local q="$1" out pid c="" t0=$SECONDS
  shift
  out="$(mktemp -u "$WORK/reckle-root-XXXXXX")"
  : >"$out.log" # exists before the first look, whenever the background process opens it
  "$PROVER" reckle prove "$@" --random-batch 2 --log-bucket "$q" --out "$out" >/dev/null 2>"$out.log" &
  pid=$!
  while [ -z "$c" ]; do
    c="$(sed -n 's/^committed .*: C = \([0-9a-f]\{64\}\).*/\1/p' "$out.log")"
    [ -n "$c" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$out.log" >&2; die "prover reckle prove ended without printing C"; }
    [ $((SECONDS - t0)) -lt 600 ] || { kill "$pid"; die "no C from prover reckle prove in 600 s"; }
    sleep 1
  done
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  rm -rf "$out" "$out.log"
  echo "$c"
}
reckle_root() { reckle_c "$3" --random-leaves "$1" --seed "$2"; } # N SEED LOG_BUCKET

# Waits for JOB to end done (prover watch; the port-forward is renewed if it drops).
watch_job() { # JOB LIMIT_SECONDS
  local job="$1" limit="$2" t0=$SECONDS s
  while :; do
    connect
    if timeout "$((limit + 5 - (SECONDS - t0)))" env PROVER_TOKEN="$TOKEN" "$PROVER" watch "$job" \
        --endpoint "http://127.0.0.1:$PORT" >"$LOGS/cluster-watch-$job.log" 2>&1; then
      return 0
    fi
    s="$(client status "$job" 2>&1 || true)"
    case "$s" in
      *"  done  "*) return 0 ;;
      *"  failed  "* | *"  cancelled  "*) die "job $job: $s" ;;
    esac
    [ $((SECONDS - t0)) -lt "$limit" ] || die "job $job not done after ${limit}s: $s"
    log "prover watch $job ended early ($(tail -1 "$LOGS/cluster-watch-$job.log")); again"
    sleep 2
  done
}

fetch_job() { # JOB DIR: prints what fetch prints
  rm -rf "$2"
  client fetch "$1" --out "$2" || die "prover fetch $1"
}

verify_reckle() { # JOB C
  local dir="$WORK/proof-$1" out c
  out="$(fetch_job "$1" "$dir")"
  c="$(echo "$out" | sed -n 's/^commitment C = \([0-9a-f]*\).*/\1/p')"
  [ "$c" = "$2" ] || die "job $1: the platform's C $c is not the C computed here $2"
  out="$("$PROVER" reckle verify "$dir" --root "$2" 2>&1)" || die "prover reckle verify $dir --root $2: $out"
  log "reckle job $1: $(echo "$out" | tail -1) (prover reckle verify --root $2, C computed here)"
}

verify_pari() { # JOB EXPECTED_BUNDLES
  local dir="$WORK/proof-$1" out d n
  out="$(fetch_job "$1" "$dir")"
  d="$(echo "$out" | sed -n 's/^vk digest = \([0-9a-f]*\).*/\1/p')"
  [ -n "$d" ] || die "job $1: no vk digest from prover fetch: $out"
  n="$(find "$dir" -name 'bundle-*.bin' | wc -l)"
  [ "$n" -eq "$2" ] || die "job $1: $n bundles, expected $2"
  out="$("$PROVER" pari verify-bundles "$dir" --vk-digest "$d" 2>&1)" || die "prover pari verify-bundles $dir --vk-digest $d: $out"
  log "pari job $1: $(echo "$out" | tail -1) ($n bundles, --vk-digest $d)"
}

verify_hekaton() { # JOB
  local dir="$WORK/proof-$1" out d a
  out="$(fetch_job "$1" "$dir")"
  d="$(echo "$out" | sed -n 's/^vk digest = \([0-9a-f]*\).*/\1/p')"
  a="$(echo "$out" | sed -n 's/^aggregate key digest = \([0-9a-f]*\).*/\1/p')"
  [ -n "$d" ] || die "job $1: no vk digest from prover fetch: $out"
  # A job that aggregates publishes its aggregate key's digest; a --final job publishes the
  # k-proof form (what its wrap proves), without one.
  local pins=(--vk-digest "$d")
  [ -n "$a" ] && pins+=(--agg-vk-digest "$a")
  out="$("$PROVER" hekaton verify "$dir" "${pins[@]}" 2>&1)" || die "prover hekaton verify $dir ${pins[*]}: $out"
  log "hekaton job $1: $(echo "$out" | tail -1) (${pins[*]})"
}

step_jobs() {
  local t0=$SECONDS reckle pari hekaton c
  mkdir -p "$WORK"
  connect
  reckle="$(client submit reckle --random-leaves 1024 --random-batch 8 --log-bucket 3 --seed 7 | tail -1)" \
    || die "prover submit reckle"
  pari="$(client submit pari --circuit chain --size 64 --count 16 --proofs-per-task 4 --bundle-size 8 | tail -1)" \
    || die "prover submit pari"
  hekaton="$(client submit hekaton --circuit synthetic --subcircuits 2 --steps 64 --wires 4 --seed 7 | tail -1)" \
    || die "prover submit hekaton"
  log "submitted reckle $reckle, pari $pari, hekaton $hekaton"
  c="$(reckle_root 1024 7 3)"
  log "C of the submitted Reckle vector, computed here: $c"
  watch_job "$pari" 1800 && log "pari job $pari done after $((SECONDS - t0)) s"
  verify_pari "$pari" 2
  watch_job "$hekaton" 1800 && log "hekaton job $hekaton done after $((SECONDS - t0)) s"
  verify_hekaton "$hekaton"
  watch_job "$reckle" 1800 && log "reckle job $reckle done after $((SECONDS - t0)) s"
  verify_reckle "$reckle" "$c"
  client jobs | head -5 >&2 || true
}

step_proofjob() {
  local name=cluster-test-pari job
  job="$(proofjob_done "$name" "  kind: pari-batch
  pariBatch: {circuit: chain, size: 64, count: 8, proofsPerTask: 4, bundleSize: 8}")"
  log "ProofJob $name: tasks $(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.tasks}')"
  kc -n "$NS" get proofjobs
  # The job belongs to the namespace's tenant: fetch it with a token of that tenant.
  local saved="${TOKEN:-}"
  TOKEN="$(ns_token)"
  connect
  verify_pari "$job" 1
  TOKEN="$saved"
}

# A busy worker (its /metrics says prover_worker_busy 1) deleted with --force mid-job: its
# task's lease expires (config.visibilityTimeoutSecs) and another worker takes it.
step_kill_worker() {
  local t0=$SECONDS job c s pod ip victim="" pods
  mkdir -p "$WORK"
  connect
  job="$(client submit reckle --random-leaves 1024 --random-batch 8 --log-bucket 3 --seed 11 | tail -1)" \
    || die "prover submit reckle"
  log "submitted reckle $job"
  c="$(reckle_root 1024 11 3)"
  log "C of the submitted Reckle vector, computed here: $c"
  while [ -z "$victim" ]; do
    s="$(client status "$job" 2>&1 || true)"
    case "$s" in *"  done  "* | *"  failed  "* | *"  cancelled  "*) die "job $job ended before a worker was killed: $s" ;; esac
    # Mid-job: some task done, and a worker busy with another.
    if echo "$s" | grep -qE ' [1-9][0-9]*/[0-9]+'; then
      pods="$(kc -n "$NS" get pods -l app.kubernetes.io/component=worker-cpu --field-selector=status.phase=Running \
        -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP}{"\n"}{end}')"
      while read -r pod ip; do
        [ -n "$ip" ] || continue
        if curl -sf --max-time 5 "http://$ip:9090/metrics" | grep -q '^prover_worker_busy 1'; then victim="$pod"; break; fi
      done <<<"$pods"
    fi
    [ $((SECONDS - t0)) -lt 1200 ] || die "no busy worker mid-job within 1200 s: $s"
    [ -n "$victim" ] || sleep 2
  done
  log "mid-job ($s); kubectl delete pod --force $victim (busy)"
  kc -n "$NS" delete pod "$victim" --force --grace-period=0 2>&1 | grep -v '^Warning' >&2 || true
  kc -n "$NS" rollout status "deploy/$RELEASE-worker-cpu" --timeout=300s >/dev/null \
    || die "the worker Deployment did not come back"
  log "worker Deployment back to full strength: $(kc -n "$NS" get pods -l app.kubernetes.io/component=worker-cpu -o name | tr '\n' ' ')"
  watch_job "$job" 1800 && log "reckle job $job done after $((SECONDS - t0)) s despite the killed worker"
  # Evidence of the redelivery: the workers log each task's attempt (a second attempt of a task
  # of this job is the killed worker's). Informational: a worker that still finished its task
  # in the moment SIGTERM gave it leaves none.
  local again=0 p
  for p in $(kc -n "$NS" get pods -l app.kubernetes.io/component=worker-cpu -o name); do
    again=$((again + $(kc -n "$NS" logs "$p" | grep "\"job\":\"$job\"" | grep -c '"attempt":[2-9]' || true)))
  done
  log "log lines of this job's tasks at attempt 2 or more on the surviving workers: $again"
  verify_reckle "$job" "$c"
  kc -n "$NS" get pods -l app.kubernetes.io/component=worker-cpu
}

# ---------------------------------------------------------------------------------------------
# The kinds `jobs` leaves out, through the CLI as docs/cli.md gives them: a Reckle update of a
# done batch, a circom circuit registered then proved for three witnesses, a Hekaton job with
# its final proof; then a ProofJob of every kind, as the namespace's tenant.
leaves_text() { # leaves.bin [INDEX=VALUE...]: one value per line, with the changes applied
  python3 - "$@" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
v = [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b), 8)]
for ch in sys.argv[2:]:
    i, x = ch.split("=")
    v[int(i)] = int(x)
print("\n".join(map(str, v)))
PY
}

verify_circom() { # JOB VK_DIGEST EXPECTED_PROOFS
  local dir="$WORK/proof-$1" out n
  fetch_job "$1" "$dir" >/dev/null
  out="$("$PROVER" pari verify-bundles "$dir" --vk-digest "$2" --public 2>&1)" || die "prover pari verify-bundles $dir --vk-digest $2 --public: $out"
  n="$(find "$dir" -name 'public-*.json' -exec cat {} + | grep -o '"witness"' | wc -l)"
  log "circom job $1: $(echo "$out" | grep -m1 -i 'verified\|checked') (--vk-digest $2 pinned at registration; $n witness entries)"
  [ "$n" -eq "$3" ] || log "note: $n witness entries in public-*.json, expected $3"
}

verify_hekaton_final() { # JOB
  local dir="$WORK/proof-$1" out k
  verify_hekaton "$1"
  out="$(client fetch "$1" --out "$dir.f")" || die "prover fetch $1"
  k="$(echo "$out" | sed -n 's/.*verify-final .* --key-digest \([0-9a-f]*\).*/\1/p' | head -1)"
  [ -n "$k" ] || die "job $1: no final key digest from prover fetch: $out"
  out="$("$PROVER" hekaton verify-final "$dir.f" --key-digest "$k" 2>&1)" || die "prover hekaton verify-final $dir.f --key-digest $k: $out"
  log "hekaton job $1, final proof: $(echo "$out" | tail -1) (--key-digest $k)"
  python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-60] ^= 1; open(sys.argv[1], "wb").write(b)' "$dir.f/final.bin"
  if "$PROVER" hekaton verify-final "$dir.f" --key-digest "$k" >/dev/null 2>&1; then die "job $1: a tampered final.bin verified"; fi
  log "hekaton job $1: the final proof with one bit flipped is refused"
}

# Applies a ProofJob and waits for phase Done; prints its job id.
proofjob_done() { # NAME SPEC_YAML (indented under spec:)
  local name="$1" phase="" t0=$SECONDS
  kc -n "$NS" delete proofjob "$name" --ignore-not-found --wait --timeout=120s >/dev/null
  printf 'apiVersion: prover.dev/v1alpha1\nkind: ProofJob\nmetadata: {name: %s}\nspec:\n%s\n' "$name" "$2" | kc -n "$NS" apply -f - >/dev/null \
    || die "kubectl apply ProofJob $name"
  while :; do
    phase="$(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.phase}')"
    case "$phase" in
      Done) break ;;
      Failed | Cancelled) die "ProofJob $name: $phase: $(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.message}')" ;;
    esac
    [ $((SECONDS - t0)) -lt 1800 ] || die "ProofJob $name not Done after 1800 s (phase '$phase')"
    sleep 3
  done
  log "ProofJob $name: Done after $((SECONDS - t0)) s, job $(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.jobId}')" >&2
  kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.jobId}'
}

# A token of the namespace's tenant. The operator submits each ProofJob as the namespace's
# tenant, ns-<namespace> (docs/security.md: the planner's delegating tenant), so the ProofJobs'
# jobs, the circuits they prove and the witnesses they name are that tenant's.
ns_token() {
  local t
  t="$(kc -n "$NS" exec "deploy/$RELEASE-planner" -- prover admin token create --tenant "ns-$NS" \
    2>>"$LOGS/cluster-token.log" | grep -o 'prv_[A-Za-z0-9_-]*' | head -1)"
  [ -n "$t" ] || die "no API token for tenant ns-$NS from prover admin token create"
  echo "$t"
}

step_kinds() {
  local t0=$SECONDS base upd add c c2 out cid vd job hk w fx=crates/circom/tests/fixtures keys=() saved
  mkdir -p "$WORK"
  connect
  # A Reckle batch, then an update of it: C' computed here from the base job's published leaves.
  base="$(client submit reckle --random-leaves 1024 --random-batch 8 --log-bucket 3 --seed 21 | tail -1)" || die "prover submit reckle"
  hk="$(client submit hekaton --circuit synthetic --subcircuits 1 --steps 16 --wires 2 --seed 7 --final | tail -1)" \
    || die "prover submit hekaton --final"
  log "submitted reckle $base, hekaton --final $hk"
  c="$(reckle_root 1024 21 3)"
  watch_job "$base" 1800 && verify_reckle "$base" "$c"
  add="$(python3 -c 'import json,sys; b={e["index"] for e in json.load(open(sys.argv[1]))["batch"]}; print(min(set(range(700, 1024)) - b))' \
    "$WORK/proof-$base/statement.json")"
  upd="$(client submit reckle-update --base "$base" --set 5=123456789 --add "$add" | tail -1)" || die "prover submit reckle-update"
  leaves_text "$WORK/proof-$base/leaves.bin" 5=123456789 >"$WORK/leaves-$upd.txt"
  c2="$(reckle_c 3 --leaves-file "$WORK/leaves-$upd.txt")"
  [ "$c2" != "$c" ] || die "the update did not change C"
  watch_job "$upd" 1800 && log "reckle update $upd done after $((SECONDS - t0)) s"
  verify_reckle "$upd" "$c2"
  if "$PROVER" reckle verify "$WORK/proof-$upd" --root "$c" >/dev/null 2>&1; then die "the updated proof verified against the old C"; fi
  log "reckle update $upd: refused against the old C, as it must be"

  # A circom circuit: registered (its setup runs once, on a worker), then three witnesses.
  out="$(client circuit register --r1cs "$fx/example-bls12381.r1cs" 2>&1)" || die "prover circuit register: $out"
  cid="$(echo "$out" | sed -n 's/^circuit_id //p')"; vd="$(echo "$out" | sed -n 's/^vk_digest //p')"
  [ -n "$cid" ] && [ -n "$vd" ] || die "no circuit_id/vk_digest from prover circuit register: $out"
  log "circuit $cid registered after $((SECONDS - t0)) s, vk_digest $vd"
  job="$(client submit pari --circuit-id "$cid" --witness "$fx/example-bls12381.wtns" --witness "$fx/example-bls12381-w1.wtns" \
    --witness "$fx/example-bls12381-w2.wtns" | tail -1)" || die "prover submit pari --circuit-id"
  watch_job "$job" 1800 && verify_circom "$job" "$vd" 3

  watch_job "$hk" 1800 && log "hekaton --final job $hk done after $((SECONDS - t0)) s"
  verify_hekaton_final "$hk"
  log "CLI kinds done after $((SECONDS - t0)) s"

  # A ProofJob of every kind (pari-batch is the proofjob step's), as the namespace's tenant:
  # its circuit registered and its witnesses uploaded with a token of that tenant.
  saved="$TOKEN"
  TOKEN="$(ns_token)"
  connect
  job="$(proofjob_done cluster-test-reckle "  kind: reckle-batch
  reckleBatch: {logN: 6, logBucket: 2, batch: [3, 17, 40], leaves: [$(seq -s ', ' 101 164)]}")"
  seq 101 164 >"$WORK/leaves-pj.txt"
  c="$(reckle_c 2 --leaves-file "$WORK/leaves-pj.txt")"
  verify_reckle "$job" "$c"
  job="$(proofjob_done cluster-test-reckle-update "  kind: reckle-update
  reckleUpdate: {baseJobId: $job, changes: [{set: {index: 17, value: 5}}]}")"
  sed -i '18s/.*/5/' "$WORK/leaves-pj.txt"
  c="$(reckle_c 2 --leaves-file "$WORK/leaves-pj.txt")"
  verify_reckle "$job" "$c"
  job="$(proofjob_done cluster-test-hekaton "  kind: hekaton
  hekaton: {circuit: synthetic, subcircuits: 2, steps: 16, wires: 2, seed: 3}")"
  verify_hekaton "$job"
  out="$(client circuit register --r1cs "$fx/example-bls12381.r1cs" 2>&1)" || die "prover circuit register (tenant $NS): $out"
  cid="$(echo "$out" | sed -n 's/^circuit_id //p')"; vd="$(echo "$out" | sed -n 's/^vk_digest //p')"
  for w in example-bls12381.wtns example-bls12381-w1.wtns; do
    keys+=("$(client upload "$fx/$w" 2>/dev/null)") || die "prover upload $w"
  done
  job="$(proofjob_done cluster-test-circom "  kind: pari-circom
  pariCircom: {circuitId: $cid, witnessObjectKeys: [${keys[0]}, ${keys[1]}]}")"
  verify_circom "$job" "$vd" 2
  TOKEN="$saved"
  connect
  kc -n "$NS" get proofjobs
  log "kinds: every kind done and verified in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------------------------------------
# A ProverPool scaling real pods: `helm upgrade` gives pari.prove a pool of its own ("burst",
# queueScaling 1..3, 10 s of backlog per worker, 30 s scale-down delay, the operator deciding
# every 5 s) and the default pool every other worker kind. A Pari job of 48 one-proof tasks
# must take the pool from 1 to 3 pods and, once the queue drains, back to 1; at every look the
# pool's desired replicas are at least its busy workers. Then the release is upgraded back.
step_scale() {
  local t0=$SECONDS kinds job line replicas ready desired busy pending max=0 up_at="" down_at="" done_at="" viol=0
  kinds="$("$PROVER" kinds | awk '$2 == "worker" && $1 != "pari.prove" && $1 != "reckle.wrap" {printf "%s\"%s\"", sep, $1; sep=", "}')"
  cat >"$WORK/scale.yaml" <<YAML
operator: {scaleIntervalSeconds: 5}
workerPools:
  - {name: cpu, replicas: 1, kinds: [$kinds], resources: {requests: {cpu: 250m, memory: 1Gi}, limits: {memory: 8Gi}}}
  - name: burst
    kinds: [pari.prove]
    resources: {requests: {cpu: 100m, memory: 512Mi}, limits: {memory: 4Gi}}
    queueScaling: {enabled: true, minReplicas: 1, maxReplicas: 3, targetBacklogSeconds: 10, defaultSecondsPerTask: 10, scaleDownDelaySeconds: 30}
YAML
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" -f "$WORK/scale.yaml" --wait --timeout 10m \
    >"$LOGS/cluster-helm-scale.log" 2>&1 || { cat "$LOGS/cluster-helm-scale.log" >&2; die "helm upgrade (scale)"; }
  wait_until 300 "the ProverPool to settle at 1 replica" \
    bash -c "[ \"\$($RC_BIN/kubectl --kubeconfig $RC_STATE/admin.kubeconfig -n $NS get deploy $RELEASE-worker-burst -o jsonpath='{.status.readyReplicas}')\" = 1 ]"
  log "pool burst at 1 ready pod after $((SECONDS - t0)) s; submitting 48 one-proof tasks"
  connect
  t0=$SECONDS
  job="$(client submit pari --circuit chain --size 4096 --count 48 --proofs-per-task 1 --bundle-size 16 | tail -1)" || die "prover submit pari"
  : >"$WORK/scale.tsv"
  while :; do
    line="$(kc -n "$NS" get proverpool "$RELEASE-worker-burst" -o jsonpath='{.status.desiredReplicas} {.status.busyWorkers} {.status.pending}')"
    read -r desired busy pending <<<"$line"
    replicas="$(kc -n "$NS" get deploy "$RELEASE-worker-burst" -o jsonpath='{.spec.replicas}')"
    ready="$(kc -n "$NS" get deploy "$RELEASE-worker-burst" -o jsonpath='{.status.readyReplicas}')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$((SECONDS - t0))" "$replicas" "${ready:-0}" "${desired:-?}" "${busy:-?}" "${pending:-?}" >>"$WORK/scale.tsv"
    if [ -n "$desired" ] && [ -n "$busy" ] && [ "$desired" -lt "$busy" ]; then viol=$((viol + 1)); fi
    [ "${ready:-0}" -gt "$max" ] && max="${ready:-0}"
    [ -z "$up_at" ] && [ "${ready:-0}" -ge 3 ] && up_at=$((SECONDS - t0)) && log "3 burst pods ready after ${up_at} s"
    if [ -z "$done_at" ] && client status "$job" 2>/dev/null | grep -q '  done  '; then done_at=$((SECONDS - t0)); log "job $job done after ${done_at} s"; fi
    if [ -n "$done_at" ] && [ "$replicas" = 1 ] && [ "${ready:-0}" = 1 ]; then down_at=$((SECONDS - t0)); break; fi
    [ $((SECONDS - t0)) -lt 1800 ] || die "pool burst did not scale up and back within 1800 s (see $WORK/scale.tsv)"
    sleep 2
  done
  log "pool burst back at 1 pod after ${down_at} s ($((down_at - done_at)) s after the job ended; scale-down delay 30 s)"
  [ "$max" -ge 3 ] || die "pool burst never reached 3 ready pods (max $max; $WORK/scale.tsv)"
  [ "$viol" = 0 ] || die "$viol looks saw desired replicas below the busy workers ($WORK/scale.tsv)"
  verify_pari "$job" 3
  awk -F'\t' 'BEGIN {print "  t(s) replicas ready desired busy pending"} $2 != p || $3 != q {printf "  %4d %8s %5s %7s %4s %7s\n", $1, $2, $3, $4, $5, $6; p = $2; q = $3}' "$WORK/scale.tsv" >&2
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" --wait --timeout 10m >"$LOGS/cluster-helm-unscale.log" 2>&1 \
    || { cat "$LOGS/cluster-helm-unscale.log" >&2; die "helm upgrade (back)"; }
  log "scale: up to $max pods in ${up_at} s, back to 1 in ${down_at} s; release upgraded back to its pools"
}

# ---------------------------------------------------------------------------------------------
# Faults while jobs run: the aggregator pod deleted with --force, the Redis pod deleted (its
# AOF on the volume keeps every acknowledged write), and `helm upgrade` to another image (the
# same binaries under a rebuilt image with another label: every pod rolls). Every job must end
# done and verify, and the jobs listed before the faults must still be listed after them.
step_faults() {
  local t0=$SECONDS pari reckle hk c before after tag tag2 t pod
  connect
  before="$(client jobs | wc -l)"
  pari="$(client submit pari --circuit chain --size 16384 --count 24 --proofs-per-task 2 --bundle-size 4 | tail -1)" || die "prover submit pari"
  reckle="$(client submit reckle --random-leaves 1024 --random-batch 8 --log-bucket 3 --seed 31 | tail -1)" || die "prover submit reckle"
  hk="$(client submit hekaton --circuit synthetic --subcircuits 4 --steps 64 --wires 4 --seed 31 | tail -1)" || die "prover submit hekaton"
  log "submitted pari $pari, reckle $reckle, hekaton $hk"
  c="$(reckle_root 1024 31 3)"
  wait_until 900 "some of pari job $pari's tasks done" bash -c "PROVER_TOKEN=$TOKEN $PROVER status $pari --endpoint http://127.0.0.1:$PORT | grep -qE ' [1-9][0-9]*/[0-9]+'"
  t=$SECONDS
  pod="$(kc -n "$NS" get pods -l app.kubernetes.io/component=aggregator -o jsonpath='{.items[0].metadata.name}')"
  kc -n "$NS" delete pod "$pod" --force --grace-period=0 2>&1 | grep -v '^Warning' >&2 || true
  kc -n "$NS" rollout status "deploy/$RELEASE-aggregator" --timeout=300s >/dev/null || die "the aggregator did not come back"
  log "aggregator $pod deleted with --force; a new one ready in $((SECONDS - t)) s"
  t=$SECONDS
  kc -n "$NS" delete pod "$RELEASE-redis-0" --wait=true >/dev/null || die "kubectl delete pod $RELEASE-redis-0"
  kc -n "$NS" rollout status "statefulset/$RELEASE-redis" --timeout=300s >/dev/null || die "Redis did not come back"
  log "Redis pod deleted; back and ready in $((SECONDS - t)) s"
  stop_port_forward
  connect
  tag="$(image_tag)"; tag2="$tag-rebuilt"
  if ! $DOCKER image inspect "prover:$tag2" >/dev/null 2>&1; then
    rm -rf docker/prebuilt && mkdir -p docker/prebuilt
    for b in $BINS; do ln -f "$BIN_DIR/$b" docker/prebuilt/ 2>/dev/null || cp "$BIN_DIR/$b" docker/prebuilt/; done
    $DOCKER build -f docker/Dockerfile --build-arg BINARIES=prebuilt --build-arg RUNTIME_IMAGE="$(runtime_base)" \
      --label "prover.dev/rebuilt=$(date +%s)" -t "prover:$tag2" . >"$LOGS/cluster-docker-build2.log" 2>&1 \
      || { rm -rf docker/prebuilt; tail -20 "$LOGS/cluster-docker-build2.log" >&2; die "docker build (rebuilt)"; }
    rm -rf docker/prebuilt
    bash "$LIB" import "prover:$tag2"
  fi
  [ "$($DOCKER image inspect -f '{{.Id}}' "prover:$tag")" != "$($DOCKER image inspect -f '{{.Id}}' "prover:$tag2")" ] \
    || die "prover:$tag2 is the same image as prover:$tag"
  t=$SECONDS
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" --set image.tag="$tag2" --wait --timeout 15m \
    >"$LOGS/cluster-helm-upgrade.log" 2>&1 || { cat "$LOGS/cluster-helm-upgrade.log" >&2; die "helm upgrade to prover:$tag2"; }
  log "helm upgrade to prover:$tag2 (another image id) while the jobs ran: rolled out in $((SECONDS - t)) s"
  stop_port_forward
  watch_job "$pari" 1800 && verify_pari "$pari" 6
  watch_job "$hk" 1800 && verify_hekaton "$hk"
  watch_job "$reckle" 1800 && verify_reckle "$reckle" "$c"
  after="$(client jobs | wc -l)"
  [ "$after" -ge "$((before + 3))" ] || die "jobs listed: $before before the faults, $after after (expected at least $((before + 3)))"
  log "faults: all three jobs done and verified; $before jobs listed before, $after after; in $((SECONDS - t0)) s"
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" --wait --timeout 15m >"$LOGS/cluster-helm-back.log" 2>&1 \
    || { cat "$LOGS/cluster-helm-back.log" >&2; die "helm upgrade back to prover:$tag"; }
}

# ---------------------------------------------------------------------------------------------
# Observability: Prometheus on the host, discovering the pods behind the chart's metrics
# Service through the Kubernetes API (what the chart's ServiceMonitor selects, with the same
# `component` relabelling, and `namespace` as the Prometheus Operator adds it) and loading the
# chart's alert rules. Debian's package (2.42) is built without kubernetes_sd_configs, so
# Prometheus is built once from the Go module proxy into $RC_BIN, like Kubernetes. Started
# before the jobs (`prometheus`), read after them (`metrics`).
PROM_VERSION=v0.316.0   # the Go module version of Prometheus 3.16
PROM_PORT="${CLUSTER_PROM_PORT:-19090}"
PROM="http://127.0.0.1:$PROM_PORT"
prom_up() { curl -sf "$PROM/-/ready" >/dev/null 2>&1; }

step_prometheus() {
  local d="$RC_STATE/prometheus" n
  if [ ! -x "$RC_BIN/prometheus" ]; then
    log "go install prometheus $PROM_VERSION into $RC_BIN (once: about 15 min on 2 cores)"
    GOBIN="$RC_BIN" go install "github.com/prometheus/prometheus/cmd/prometheus@$PROM_VERSION" >"$LOGS/prometheus-build.log" 2>&1 \
      || { tail -20 "$LOGS/prometheus-build.log" >&2; die "go install prometheus"; }
  fi
  if ! prom_up; then
    mkdir -p "$d"
    cp helm/prover/files/prometheus-alerts.yaml "$d/alerts.yaml"
    cat >"$d/prometheus.yml" <<YAML
global: {scrape_interval: 5s, evaluation_interval: 5s}
rule_files: [alerts.yaml]
scrape_configs:
  - job_name: prover
    kubernetes_sd_configs:
      - role: endpointslice
        kubeconfig_file: $RC_STATE/admin.kubeconfig
        namespaces: {names: [$NS]}
    relabel_configs:
      - {source_labels: [__meta_kubernetes_service_label_app_kubernetes_io_component], regex: metrics, action: keep}
      - {source_labels: [__meta_kubernetes_endpointslice_port_name], regex: metrics, action: keep}
      - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
      - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
      - {source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_component], target_label: component}
YAML
    nohup "$RC_BIN/prometheus" --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/data" \
      --web.listen-address="127.0.0.1:$PROM_PORT" >"$LOGS/prometheus.log" 2>&1 &
    echo $! >"$d/pid"
    wait_until 60 "Prometheus on $PROM" prom_up
  fi
  # Every prover pod (planner, executor, aggregator, workers, operator) a target, and up.
  n="$(kc -n "$NS" get endpointslices -l "kubernetes.io/service-name=$RELEASE-metrics" \
    -o jsonpath='{range .items[*].endpoints[*]}{.addresses[0]}{"\n"}{end}' | sort -u | grep -c .)"
  wait_until 120 "$n Prometheus targets up" bash -c "[ \"\$(curl -sf '$PROM/api/v1/query?query=count(up%3D%3D1)' | python3 -c 'import json,sys; r=json.load(sys.stdin)[\"data\"][\"result\"]; print(r[0][\"value\"][1] if r else 0)')\" -ge $n ]"
  log "Prometheus (Go module $PROM_VERSION) on $PROM: $n pods discovered through the API server, all up; rules $(curl -sf "$PROM/api/v1/rules" | python3 -c 'import json,sys; g=json.load(sys.stdin)["data"]["groups"]; print(sum(len(x["rules"]) for x in g), "loaded,", sum(r["health"] != "ok" for x in g for r in x["rules"]), "unhealthy")')"
}

# Every PromQL expression of the Grafana dashboards (deploy/grafana/*.json, $namespace = the
# release's, $__rate_interval = 1m) over the time Prometheus has run: the series each returned.
# Redis memory panels need redis_exporter, which this cluster cannot run (no image); the error
# panels have no series when nothing failed. Every other expression must return series.
# Then the alert rules: all loaded and healthy, and ProverJobOverdue made to fire (no worker,
# a noop job expected to take 5 s; it fires after the rule's 5 minutes) and to resolve.
step_metrics() {
  local t0=$SECONDS start job out
  prom_up || die "Prometheus is not running (step: prometheus)"
  start="$(curl -sf "$PROM/api/v1/status/runtimeinfo" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["startTime"])')"
  out="$(python3 - "$PROM" "$start" "$NS" deploy/grafana/*.json <<'PY'
import json, sys, urllib.parse, urllib.request, datetime, time
prom, start, ns, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t0 = datetime.datetime.strptime(start[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
exprs = []
def walk(panels, f):
    for p in panels:
        walk(p.get("panels", []), f)
        for t in p.get("targets", []):
            if "expr" in t:
                exprs.append((f.split("/")[-1], p.get("title", "?"), t["expr"]))
for f in files:
    walk(json.load(open(f)).get("panels", []), f)
allowed_empty = ("redis_memory", "errors_total", 'outcome!="ok"', "prover_queue_dead", "redeliveries_total", 'outcome="failed"')
bad = 0
for f, title, e in exprs:
    q = e.replace("$namespace", ns).replace("$__rate_interval", "1m").replace("$__interval", "1m")
    url = prom + "/api/v1/query_range?" + urllib.parse.urlencode({"query": q, "start": t0, "end": time.time(), "step": 15})
    r = json.load(urllib.request.urlopen(url))
    n = len(r["data"]["result"]) if r["status"] == "success" else -1
    why = ""
    if n <= 0:
        if any(a in e for a in allowed_empty):
            why = " (allowed: needs redis_exporter or a failure)"
        else:
            bad += 1
            why = " (EMPTY)"
    print(f"{n:4d} series  {f}: {title}{why}")
print(f"{len(exprs)} expressions, {bad} unexpectedly empty")
sys.exit(1 if bad else 0)
PY
)" || { echo "$out" >&2; die "dashboard expressions without series"; }
  echo "$out" >&2
  log "dashboards: $(echo "$out" | tail -1)"

  # ProverJobOverdue: the executors expect noop jobs to take 5 s; with no worker a noop job
  # waits, and the alert must fire once it has been overdue for the rule's 5 minutes.
  cat >"$WORK/overdue.yaml" <<'YAML'
config:
  extraEnv: [{name: PROVER_JOB_EXPECTED, value: "noop=5"}]
workerPools:
  - {name: cpu, replicas: 0}
YAML
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" -f "$WORK/overdue.yaml" --wait --timeout 10m \
    >"$LOGS/cluster-helm-overdue.log" 2>&1 || { cat "$LOGS/cluster-helm-overdue.log" >&2; die "helm upgrade (overdue)"; }
  stop_port_forward
  connect
  job="$(client submit noop --tasks 2 | tail -1)" || die "prover submit noop"
  t0=$SECONDS
  log "noop job $job submitted with no worker; waiting for ProverJobOverdue to fire"
  wait_until 900 "ProverJobOverdue firing" bash -c "curl -sf '$PROM/api/v1/alerts' | grep -q '\"alertname\":\"ProverJobOverdue\".*\"state\":\"firing\"\|\"state\":\"firing\".*\"alertname\":\"ProverJobOverdue\"'"
  log "ProverJobOverdue firing $((SECONDS - t0)) s after the submit (5 s expected + the rule's 5 min)"
  helm_ upgrade "$RELEASE" helm/prover -n "$NS" -f "$WORK/values.yaml" --wait --timeout 10m >"$LOGS/cluster-helm-back2.log" 2>&1 \
    || { cat "$LOGS/cluster-helm-back2.log" >&2; die "helm upgrade (back)"; }
  stop_port_forward
  watch_job "$job" 600
  t0=$SECONDS
  wait_until 600 "ProverJobOverdue to resolve" bash -c "! curl -sf '$PROM/api/v1/alerts' | grep -q 'ProverJobOverdue'"
  log "noop job $job done once workers were back; ProverJobOverdue resolved $((SECONDS - t0)) s later"
  curl -sf "$PROM/api/v1/rules" | python3 -c 'import json,sys; g=json.load(sys.stdin)["data"]["groups"]; bad=[r["name"] for x in g for r in x["rules"] if r["health"]!="ok"]; print(len(bad), "unhealthy rules", bad)' >&2
}

step_prometheus_stop() {
  local pid
  pid="$(cat "$RC_STATE/prometheus/pid" 2>/dev/null || true)"
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$RC_STATE/prometheus"
}

# Removes the release, its namespace (with the Redis and MinIO claims) and the two hostPath
# volumes with their data (they would stay Released, and the next install's claims Pending).
step_uninstall() {
  # ProofJobs first, while the operator runs: it removes their finalizer (prover.dev/cancel-job);
  # without the operator they would hold the namespace in Terminating.
  if kc get namespace "$NS" >/dev/null 2>&1; then
    kc -n "$NS" delete proofjobs --all --wait --timeout=120s >/dev/null 2>&1 || true
  fi
  helm_ -n "$NS" uninstall "$RELEASE" --wait >/dev/null 2>&1 || true
  kc delete namespace "$NS" --ignore-not-found --wait --timeout=300s >/dev/null
  kc delete pv local-pv1 local-pv2 --ignore-not-found --wait --timeout=120s >/dev/null
  rm -rf "$RC_STATE/pv"
  log "uninstalled $RELEASE, deleted namespace $NS and the volumes' data"
}

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and runs the cluster's daemons)"
mkdir -p "$LOGS" "$WORK"
[ $# -gt 0 ] || set -- cluster binaries image install prometheus jobs proofjob kill-worker kinds scale faults metrics prometheus-stop
T_ALL=$SECONDS
TIMES=()
for s in "$@"; do
  t=$SECONDS
  log "== $s"
  case "$s" in
    cluster) step_cluster ;;
    binaries) step_binaries ;;
    image) step_image ;;
    install) step_install ;;
    jobs) step_jobs ;;
    proofjob) step_proofjob ;;
    kill-worker) step_kill_worker ;;
    kinds) step_kinds ;;
    scale) step_scale ;;
    faults) step_faults ;;
    prometheus) step_prometheus ;;
    metrics) step_metrics ;;
    prometheus-stop) step_prometheus_stop ;;
    uninstall) step_uninstall ;;
    status) bash "$LIB" status ;;
    down) bash "$LIB" down ;;
    reset) bash "$LIB" reset ;;
    *) die "unknown step $s (see the comment at the top of $0)" ;;
  esac
  TIMES+=("$s $((SECONDS - t))")
done
stop_port_forward
printf '%s\n' "${TIMES[@]}" | awk '{printf "  %-12s %5d s\n", $1, $2}' >&2
log "cluster.sh $*: ok in $((SECONDS - T_ALL)) s"
