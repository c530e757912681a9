#!/usr/bin/env bash
# The project on a real single-node Kubernetes cluster on this machine: the image from
# docker/Dockerfile, `helm install` of helm/prover with the bundled Redis and MinIO and the
# operator, then jobs as the README and docs/kubernetes.md submit them, their proofs fetched
# and verified offline. Not part of the test command (about 35 minutes from a fresh machine);
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

# C of the vector `prover submit reckle --random-leaves N --seed S` sends, computed here: the
# local `prover reckle prove` draws the same leaves from the same seed and prints C once it has
# committed to them (after building its circuits); it is stopped there, before proving.
reckle_root() { # N SEED LOG_BUCKET
  local out="$WORK/reckle-root-$1-$2-$3" pid c="" t0=$SECONDS
  rm -rf "$out" "$out.log"
  "$PROVER" reckle prove --random-leaves "$1" --seed "$2" --random-batch 2 --log-bucket "$3" --out "$out" >/dev/null 2>"$out.log" &
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
  [ -n "$d" ] && [ -n "$a" ] || die "job $1: no vk digest or aggregate key digest from prover fetch: $out"
  out="$("$PROVER" hekaton verify "$dir" --vk-digest "$d" --agg-vk-digest "$a" 2>&1)" \
    || die "prover hekaton verify $dir --vk-digest $d --agg-vk-digest $a: $out"
  log "hekaton job $1: $(echo "$out" | tail -1) (--vk-digest $d --agg-vk-digest $a)"
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
  local name=cluster-test-pari phase="" job msg t0=$SECONDS
  kc -n "$NS" delete proofjob "$name" --ignore-not-found --wait --timeout=120s >/dev/null
  kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: prover.dev/v1alpha1
kind: ProofJob
metadata: {name: $name}
spec:
  kind: pari-batch
  pariBatch: {circuit: chain, size: 64, count: 8, proofsPerTask: 4, bundleSize: 8}
YAML
  log "ProofJob $name applied; waiting for phase Done"
  while :; do
    phase="$(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.phase}')"
    case "$phase" in
      Done) break ;;
      Failed | Cancelled) die "ProofJob $name: $phase: $(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.message}')" ;;
    esac
    [ $((SECONDS - t0)) -lt 1800 ] || die "ProofJob $name not Done after 1800 s (phase '$phase')"
    sleep 3
  done
  job="$(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.jobId}')"
  msg="$(kc -n "$NS" get proofjob "$name" -o jsonpath='{.status.tasks}')"
  log "ProofJob $name: Done after $((SECONDS - t0)) s, job $job, tasks $msg"
  kc -n "$NS" get proofjobs
  # The job belongs to the operator's tenant: fetch it with the operator's token.
  local saved="${TOKEN:-}"
  TOKEN="$(kc -n "$NS" get secret "$RELEASE-operator-token" -o jsonpath='{.data.operator}' | base64 -d)"
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
[ $# -gt 0 ] || set -- cluster binaries image install jobs proofjob kill-worker
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
