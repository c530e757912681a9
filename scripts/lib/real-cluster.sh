#!/usr/bin/env bash
# A real single-node Kubernetes cluster, and image builds, on a machine of the project's kind
# (Debian 12, 2 cores, cgroup v1, root, no container registry reachable; Debian apt and the
# Go module proxy reachable). The team's real-cluster recipe, kept here for scripts/cluster.sh
# (which runs the project's chart and jobs on it); docs/kubernetes.md has the pitfalls.
#
#   Docker engine 20.10 + containerd 1.6 + runc from Debian apt, started by hand (no systemd).
#   Base images made here: Debian 12 minbase (debootstrap + docker import), a distroless-like
#   glibc runtime base, a pause image built from C, CoreDNS built from the Go module proxy.
#   Kubernetes v1.35.4 (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#   kube-proxy, kubectl) built from the Go module proxy; etcd 3.4 from apt; bridge CNI from apt.
#
# usage: scripts/lib/real-cluster.sh [STEP...]   (no step: deps runtime images build up)
#   deps      apt packages
#   runtime   containerd (CRI config, local pause image) and dockerd, in the background
#   images    local/debian:bookworm, local/cc-debian12:nonroot, local/pause:3.10
#   build     Kubernetes binaries, helm, crictl, CoreDNS (+ its image) into $RC_BIN
#   up        PKI, kubeconfigs, etcd, control plane, kubelet, kube-proxy, CoreDNS; waits for Ready
#   service-images   local/redis:7.0, local/minio:dev, local/mc:dev for the chart's bundled
#             Redis and MinIO (MinIO and mc from the Go module proxy), imported into containerd
#   builder   local/rust:VERSION-bookworm (the host's toolchain) for an in-image cargo build
#             (docker/Dockerfile --build-arg RUST_IMAGE=...); checks a small Rust build
#   demo      a tiny image, `helm install` of a one-Deployment chart, checks pods and Service
#   status    processes, node, pods
#   down      stops the cluster (kubelet first, then pods, then the rest), keeps state and images
#   runtime-down   stops dockerd and containerd started by `runtime`
#   reset     (RC_RESET_YES=1) down, runtime-down, then deletes $RC_STATE, /var/lib/{kubelet,
#             docker,containerd,cni} and the CNI/containerd configs; keeps apt packages, $RC_BIN
#   import IMAGE...   (first argument only) copies Docker images into containerd's k8s.io
#
# Every step skips what is already there, so re-running is cheap. Environment:
#   RC_STATE (default /var/lib/prover-cluster): PKI, configs, logs, PID files, etcd data
#   RC_BIN   (default ~/.cache/prover-cluster/bin): built binaries (kept across runs); helm,
#            minio and mc are taken from ~/go/bin when the test command installed them there
#   KUBE_VERSION (default 1.35.4), PROJECT_DIR (default: the current directory, only read)
# Use the cluster: export KUBECONFIG=$RC_STATE/admin.kubeconfig PATH=$RC_BIN:$PATH
set -euo pipefail

RC_STATE="${RC_STATE:-/var/lib/prover-cluster}"
RC_BIN="${RC_BIN:-$HOME/.cache/prover-cluster/bin}"
KUBE_VERSION="${KUBE_VERSION:-1.35.4}"
HELM_VERSION="${HELM_VERSION:-v3.16.4}"
CRICTL_VERSION="${CRICTL_VERSION:-v1.34.0}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.12.4}"
POD_CIDR=10.244.0.0/16
NODE_POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
KUBE_SVC_IP=10.96.0.1
DNS_IP=10.96.0.10
NODE_NAME="$(hostname | tr '[:upper:]' '[:lower:]')"
CONTAINERD_SOCK=/run/containerd/containerd.sock
# The Docker CLI from apt (20.10) has BuildKit built in; a newer CLI elsewhere on PATH without
# the buildx plugin falls back to the legacy builder, which rejects `RUN --mount`.
DOCKER=/usr/bin/docker
export PATH="$RC_BIN:/usr/local/go/bin:$HOME/go/bin:/usr/sbin:/sbin:$PATH"
export DOCKER_BUILDKIT=1

# Writes stdin to FILE only when the content differs: kube-proxy exits when its configuration
# file changes on disk, even to the same content.
write_if_changed() {
  local f="$1" tmp
  tmp="$(mktemp "$f.XXXXXX")"
  cat >"$tmp"
  if cmp -s "$tmp" "$f"; then rm -f "$tmp"; else mv "$tmp" "$f"; fi
}

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

node_ip() {
  local dev
  dev="$(ip -4 route show default | awk '{print $5; exit}')"
  [ -n "$dev" ] || dev=eth0
  ip -4 -o addr show dev "$dev" | awk '{print $4}' | cut -d/ -f1 | head -1
}

# ---------------------------------------------------------------------------------------------
# deps
step_deps() {
  local pkgs="docker.io containerd runc debootstrap iptables containernetworking-plugins etcd-server
    socat conntrack ebtables ethtool openssl curl"
  local missing="" p
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    log "apt-get install$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
  command -v go >/dev/null || die "Go toolchain (go) not found; it is preinstalled in /usr/local/go here"
}

# ---------------------------------------------------------------------------------------------
# runtime: containerd with CRI configured for the local pause image, and dockerd
running() { [ -f "$RC_STATE/run/$1.pid" ] && kill -0 "$(cat "$RC_STATE/run/$1.pid")" 2>/dev/null; }

start_bg() { # NAME CMD...
  local name="$1"; shift
  mkdir -p "$RC_STATE/run" "$RC_STATE/log"
  if running "$name"; then return 0; fi
  nohup "$@" >"$RC_STATE/log/$name.log" 2>&1 &
  echo $! >"$RC_STATE/run/$name.pid"
  log "started $name (pid $!, log $RC_STATE/log/$name.log)"
}

stop_bg() { # NAME
  local f="$RC_STATE/run/$1.pid" pid i
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

write_runtime_config() {
  mkdir -p /etc/containerd /etc/cni/net.d
  [ -f /etc/containerd/config.toml.dist ] || cp /etc/containerd/config.toml /etc/containerd/config.toml.dist 2>/dev/null || true
  cat >/etc/containerd/config.toml.new <<'EOF'
version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    # Locally built pause image (no registry is reachable); imported into the k8s.io namespace.
    sandbox_image = "local/pause:3.10"
    # The VM's root lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj below
    # the parent's (0). The kubelet asks -998 for pod sandboxes and -997 for Guaranteed pods,
    # and runc then fails with "can't get final child's PID from pipe: EOF". This clamps the
    # requested value to containerd's own instead.
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
EOF
  if ! cmp -s /etc/containerd/config.toml.new /etc/containerd/config.toml; then
    mv /etc/containerd/config.toml.new /etc/containerd/config.toml
    RUNTIME_CONFIG_CHANGED=1
  else
    rm -f /etc/containerd/config.toml.new
  fi
  # Bridge CNI for the node's pod range. No `firewall` plugin: it puts ACCEPT rules for pod
  # addresses at the top of FORWARD, ahead of kube-proxy's REJECT for Services without
  # endpoints, and such packets then leave by the default route (see allow_pod_forwarding).
  cat >/etc/cni/net.d/10-k8s-bridge.conflist <<EOF
{
  "cniVersion": "0.4.0",
  "name": "k8s-pod-network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# dockerd sets the FORWARD policy to DROP, which blocks pod traffic (bridged traffic goes
# through iptables: bridge-nf-call-iptables is on). Accept traffic from and to the pod bridge at
# the END of FORWARD, after kube-proxy's chains (it prepends its jumps), so that kube-proxy's
# REJECT of a Service without endpoints still comes first. Without that REJECT, a connection to
# such a Service IP leaves by the default route, and this network's egress proxy answers it
# with HTTP (the services then fail with Redis parse errors instead of "connection refused").
allow_pod_forwarding() {
  local dir
  for dir in -i -o; do
    iptables -C FORWARD "$dir" cni0 -m comment --comment "real-cluster pod traffic" -j ACCEPT 2>/dev/null \
      || iptables -A FORWARD "$dir" cni0 -m comment --comment "real-cluster pod traffic" -j ACCEPT
  done
}

containerd_up() { ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; }
docker_up() { $DOCKER info >/dev/null 2>&1; }

step_runtime() {
  RUNTIME_CONFIG_CHANGED=0
  write_runtime_config
  sysctl -qw net.ipv4.ip_forward=1
  sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
  allow_pod_forwarding
  if containerd_up && [ "$RUNTIME_CONFIG_CHANGED" = 1 ]; then
    running containerd || die "containerd runs but was not started by this script; restart it with /etc/containerd/config.toml"
    stop_bg containerd
  fi
  if ! containerd_up; then
    start_bg containerd containerd --config /etc/containerd/config.toml
    local i; for i in $(seq 1 50); do containerd_up && break; sleep 0.2; done
    containerd_up || die "containerd did not start (see $RC_STATE/log/containerd.log)"
  fi
  if ! docker_up; then
    # overlay2, iptables and the docker0 bridge all work here; no --storage-driver or
    # --iptables=false needed.
    start_bg dockerd dockerd --containerd="$CONTAINERD_SOCK"
    local i; for i in $(seq 1 100); do docker_up && break; sleep 0.2; done
    docker_up || die "dockerd did not start (see $RC_STATE/log/dockerd.log)"
  fi
  allow_pod_forwarding
  if $DOCKER image inspect local/pause:3.10 >/dev/null 2>&1; then import_to_k8s local/pause:3.10; fi
}

step_runtime_down() {
  stop_bg dockerd
  stop_bg containerd
}

# Images built with Docker live in containerd's "moby" namespace; the kubelet (CRI) uses "k8s.io".
import_to_k8s() {
  local img id ref
  for img in "$@"; do
    $DOCKER image inspect "$img" >/dev/null 2>&1 || die "no image $img in Docker"
    id="$($DOCKER image inspect -f '{{.Id}}' "$img")"
    case "${img##*/}" in *:*) ;; *) img="$img:latest" ;; esac
    # Already there when containerd has an image of that name (containerd prefixes a default
    # registry and path) carrying the Docker image id in a label set below.
    if ctr -n k8s.io images ls -q "labels.\"docker-id\"==$id" 2>/dev/null \
        | awk -v s="/$img" 'substr($0, length($0) - length(s) + 1) == s {found = 1} END {exit !found}'; then
      continue
    fi
    ref="$($DOCKER save "$img" | ctr -n k8s.io images import - | awk '/^unpacking /{print $2; exit}')"
    [ -n "$ref" ] || die "ctr images import of $img"
    ctr -n k8s.io images label "$ref" "docker-id=$id" >/dev/null
    log "imported $img into containerd (k8s.io)"
  done
}

# ---------------------------------------------------------------------------------------------
# images
image_exists() { $DOCKER image inspect "$1" >/dev/null 2>&1; }

step_images() {
  local w="$RC_STATE/images"
  mkdir -p "$w"
  if ! image_exists local/debian:bookworm; then
    local mirror
    mirror="$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    [ -n "$mirror" ] || mirror="$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)"
    log "debootstrap bookworm (minbase) from the apt mirror (about 1 minute)"
    rm -rf "$w/rootfs"
    debootstrap --variant=minbase bookworm "$w/rootfs" "$mirror" >"$w/debootstrap.log" 2>&1 \
      || die "debootstrap (see $w/debootstrap.log)"
    rm -rf "$w"/rootfs/var/cache/apt/archives/*.deb "$w"/rootfs/var/lib/apt/lists/* \
      "$w"/rootfs/usr/share/doc/* "$w"/rootfs/usr/share/man/* "$w"/rootfs/usr/share/locale/*
    tar -C "$w/rootfs" -c . | $DOCKER import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["/bin/bash"]' - local/debian:bookworm >/dev/null
    rm -rf "$w/rootfs"
    log "image local/debian:bookworm"
  fi
  if ! image_exists local/cc-debian12:nonroot; then
    mkdir -p "$w/cc"
    cat >"$w/cc/Dockerfile" <<'EOF'
# A local stand-in for a distroless "cc" Debian 12 base: glibc, libgcc, libstdc++, libgomp,
# libssl, CA certificates, tzdata, a non-root user 65532, and no shell.
FROM local/debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && mkdir -p /debs /rootfs && cd /debs \
 && apt-get download base-files netbase tzdata libc6 libgcc-s1 libgomp1 libstdc++6 libssl3 \
 && for d in *.deb; do dpkg-deb -x "$d" /rootfs; done \
 && rm -rf /rootfs/usr/share/doc /rootfs/usr/share/man /rootfs/usr/share/lintian /rootfs/usr/share/info \
 && mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp /rootfs/home/nonroot /rootfs/root \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
 && chmod 1777 /rootfs/tmp && chown 65532:65532 /rootfs/home/nonroot \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd \
 && printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > /rootfs/etc/group

FROM scratch
COPY --from=build /rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
WORKDIR /home/nonroot
EOF
    $DOCKER build -q -t local/cc-debian12:nonroot "$w/cc" >/dev/null || die "build local/cc-debian12"
    log "image local/cc-debian12:nonroot"
  fi
  if ! image_exists local/pause:3.10; then
    mkdir -p "$w/pause"
    cat >"$w/pause/pause.c" <<'EOF'
/* Minimal pod sandbox process: sleeps until SIGINT/SIGTERM, reaps any children it inherits
   (it is PID 1 of the pod's namespaces). */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static void on_stop(int sig) { (void)sig; _exit(0); }
static void on_child(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction stop = {0}, child = {0};
  stop.sa_handler = on_stop;
  child.sa_handler = on_child;
  child.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
EOF
    cat >"$w/pause/Dockerfile" <<'EOF'
FROM local/debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
COPY pause.c /pause.c
RUN gcc -Os -static -o /pause /pause.c && strip /pause

FROM scratch
COPY --from=build /pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
EOF
    $DOCKER build -q -t local/pause:3.10 "$w/pause" >/dev/null || die "build local/pause"
    log "image local/pause:3.10"
  fi
  import_to_k8s local/pause:3.10
}

# ---------------------------------------------------------------------------------------------
# build: Kubernetes from the Go module proxy. `go install k8s.io/kubernetes/cmd/...@v` is refused
# (its go.mod has replace directives for the staging modules), so build from a small module that
# requires k8s.io/kubernetes and repeats those replaces with published versions.
step_build() {
  mkdir -p "$RC_BIN"
  local b need=""
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    [ -x "$RC_BIN/$b" ] || need="$need $b"
  done
  if [ -n "$need" ]; then
    log "building Kubernetes v$KUBE_VERSION:$need (about 10-15 minutes on 2 cores, once)"
    local mod minor staging s pkgs="" ver="k8s.io/component-base/version" cver="k8s.io/client-go/pkg/version"
    mod="$(mktemp -d)"
    minor="${KUBE_VERSION#1.}"; minor="${minor%%.*}"
    staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
      cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
      cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
      kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
      mount-utils pod-security-admission sample-apiserver"
    {
      printf 'module local/k8sbuild\n\ngo 1.24\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$KUBE_VERSION"
      for s in $staging; do printf '  k8s.io/%s => k8s.io/%s v0.%s\n' "$s" "$s" "${KUBE_VERSION#1.}"; done
      printf ')\n'
    } >"$mod/go.mod"
    printf 'package main\n\nimport (\n' >"$mod/main.go"
    for b in $need; do
      printf '\t_ "k8s.io/kubernetes/cmd/%s/app"\n' "$b" >>"$mod/main.go"
      pkgs="$pkgs k8s.io/kubernetes/cmd/$b"
    done
    printf ')\n\nfunc main() {}\n' >>"$mod/main.go"
    sed -i 's#k8s.io/kubernetes/cmd/kubectl/app#k8s.io/kubectl/pkg/cmd#' "$mod/main.go"
    local ld=""
    for s in $ver $cver; do
      ld="$ld -X $s.gitVersion=v$KUBE_VERSION -X $s.gitMajor=1 -X $s.gitMinor=$minor -X $s.gitTreeState=clean"
    done
    ( cd "$mod" && GOFLAGS=-mod=mod go mod tidy >"$mod/tidy.log" 2>&1 ) \
      || { tail -20 "$mod/tidy.log" >&2; die "go mod tidy (module in $mod)"; }
    ( cd "$mod" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ld" -o "$RC_BIN/" $pkgs ) \
      || die "go build (module in $mod)"
    rm -rf "$mod"
  fi
  # helm where the test command installs it (scripts/test.d/30-k8s.sh: ~/go/bin).
  if [ ! -x "$RC_BIN/helm" ]; then
    if [ ! -x "$HOME/go/bin/helm" ]; then
      log "go install helm $HELM_VERSION into ~/go/bin (about 2 minutes)"
      ( cd /tmp && GOBIN="$HOME/go/bin" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" ) || die "go install helm"
    fi
    ln -sf "$HOME/go/bin/helm" "$RC_BIN/helm"
  fi
  if [ ! -x "$RC_BIN/crictl" ]; then
    log "go install crictl $CRICTL_VERSION"
    ( cd /tmp && GOBIN="$RC_BIN" go install "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" ) \
      || log "crictl did not build (optional; ctr works instead)"
  fi
  if [ ! -x "$RC_BIN/coredns" ]; then
    log "go install CoreDNS $COREDNS_VERSION (a few minutes)"
    ( cd /tmp && CGO_ENABLED=0 GOBIN="$RC_BIN" go install -trimpath -ldflags "-s -w" \
        "github.com/coredns/coredns@$COREDNS_VERSION" ) || die "go install coredns"
  fi
  if ! image_exists "local/coredns:$COREDNS_VERSION"; then
    local w="$RC_STATE/images/coredns"
    mkdir -p "$w"
    cp "$RC_BIN/coredns" "$w/coredns"
    printf 'FROM scratch\nCOPY coredns /coredns\nEXPOSE 53 53/udp\nENTRYPOINT ["/coredns"]\n' >"$w/Dockerfile"
    $DOCKER build -q -t "local/coredns:$COREDNS_VERSION" "$w" >/dev/null || die "build coredns image"
    rm -f "$w/coredns"
    log "image local/coredns:$COREDNS_VERSION"
  fi
}

# ---------------------------------------------------------------------------------------------
# up
kubeconfig() { # FILE USER TOKEN
  write_if_changed "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real-cluster
  cluster:
    server: https://$(node_ip):6443
    certificate-authority: $RC_STATE/pki/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: real-cluster
  context:
    cluster: real-cluster
    user: $2
current-context: real-cluster
EOF
}

write_pki() {
  local p="$RC_STATE/pki" ip
  ip="$(node_ip)"
  mkdir -p "$p"
  (
    cd "$p"
    umask 077
    if [ ! -f ca.crt ]; then
      openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
        -subj "/CN=real-cluster-ca" 2>/dev/null
    fi
    if [ ! -f apiserver.crt ] || ! openssl x509 -in apiserver.crt -noout -text | grep -q "IP Address:$ip"; then
      printf 'subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:%s,IP:%s,IP:127.0.0.1,IP:%s\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' \
        "$NODE_NAME" "$KUBE_SVC_IP" "$ip" >apiserver.ext
      openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
      openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
        -days 3650 -extfile apiserver.ext 2>/dev/null
    fi
    if [ ! -f apiserver-kubelet-client.crt ]; then
      printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' >client.ext
      openssl req -newkey rsa:2048 -nodes -keyout apiserver-kubelet-client.key -out apiserver-kubelet-client.csr \
        -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
      openssl x509 -req -in apiserver-kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
        -out apiserver-kubelet-client.crt -days 3650 -extfile client.ext 2>/dev/null
    fi
    if [ ! -f sa.key ]; then
      openssl genrsa -out sa.key 2048 2>/dev/null
      openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    fi
    if [ ! -f tokens.csv ]; then
      t() { openssl rand -hex 16; }
      {
        echo "$(t),admin,admin,system:masters"
        echo "$(t),system:kube-controller-manager,system:kube-controller-manager"
        echo "$(t),system:kube-scheduler,system:kube-scheduler"
        echo "$(t),system:kube-proxy,system:kube-proxy"
        echo "$(t),system:node:$NODE_NAME,system:node:$NODE_NAME,system:nodes"
      } >tokens.csv
    fi
  )
  tok() { awk -F, -v u="$1" '$2==u{print $1}' "$p/tokens.csv"; }
  kubeconfig "$RC_STATE/admin.kubeconfig" admin "$(tok admin)"
  kubeconfig "$RC_STATE/controller-manager.kubeconfig" system:kube-controller-manager "$(tok system:kube-controller-manager)"
  kubeconfig "$RC_STATE/scheduler.kubeconfig" system:kube-scheduler "$(tok system:kube-scheduler)"
  kubeconfig "$RC_STATE/kube-proxy.kubeconfig" system:kube-proxy "$(tok system:kube-proxy)"
  kubeconfig "$RC_STATE/kubelet.kubeconfig" "system:node:$NODE_NAME" "$(tok "system:node:$NODE_NAME")"
  chmod 600 "$RC_STATE"/*.kubeconfig
}

write_node_configs() {
  mkdir -p "$RC_STATE/kubelet"
  write_if_changed "$RC_STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $RC_STATE/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
# Kubernetes 1.35 refuses cgroup v1 unless told otherwise; this machine mounts cgroup v1.
failCgroupV1: false
failSwapOn: false
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
podCIDR: $NODE_POD_CIDR
# The disk is small and shared with builds: evict only when it is really full, and keep
# images (they cannot be pulled again: there is no registry).
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
maxPods: 110
EOF
  write_if_changed "$RC_STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $RC_STATE/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE_NAME
conntrack: {maxPerCore: 0}
EOF
}

kc() { "$RC_BIN/kubectl" --kubeconfig "$RC_STATE/admin.kubeconfig" "$@"; }

wait_for() { # SECONDS DESCRIPTION CMD...
  local n="$1" what="$2" i; shift 2
  for i in $(seq 1 $((n * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  die "timed out after ${n}s waiting for $what"
}

step_up() {
  containerd_up || die "containerd is not running (step: runtime)"
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    [ -x "$RC_BIN/$b" ] || die "$RC_BIN/$b missing (step: build)"
  done
  local ip p="$RC_STATE/pki"
  ip="$(node_ip)"
  write_pki
  write_node_configs
  start_bg etcd etcd --name real-cluster --data-dir "$RC_STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster real-cluster=http://127.0.0.1:2380
  wait_for 30 etcd curl -sf http://127.0.0.1:2379/health
  start_bg kube-apiserver "$RC_BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$ip" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --token-auth-file="$p/tokens.csv" --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true \
    --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key"
  wait_for 120 kube-apiserver kc get --raw /readyz
  start_bg kube-controller-manager "$RC_BIN/kube-controller-manager" \
    --kubeconfig="$RC_STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$RC_STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$RC_STATE/controller-manager.kubeconfig" \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --use-service-account-credentials=true --leader-elect=false \
    --allocate-node-cidrs=true --cluster-cidr="$POD_CIDR" --node-cidr-mask-size=24 \
    --service-cluster-ip-range="$SERVICE_CIDR" --bind-address=127.0.0.1
  start_bg kube-scheduler "$RC_BIN/kube-scheduler" --kubeconfig="$RC_STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig="$RC_STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig="$RC_STATE/scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1
  start_bg kubelet "$RC_BIN/kubelet" --config="$RC_STATE/kubelet/config.yaml" \
    --kubeconfig="$RC_STATE/kubelet.kubeconfig" --node-ip="$ip" --hostname-override="$NODE_NAME"
  start_bg kube-proxy "$RC_BIN/kube-proxy" --config="$RC_STATE/kube-proxy.yaml"
  wait_for 180 "node $NODE_NAME Ready" kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
  log "node $NODE_NAME is Ready"
  dns_up
}

dns_up() {
  import_to_k8s "local/coredns:$COREDNS_VERSION"
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        forward . /etc/resolv.conf
        cache 30
        loop
        reload
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      priorityClassName: system-cluster-critical
      containers:
      - name: coredns
        image: local/coredns:$COREDNS_VERSION
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 10}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
  kc -n kube-system rollout status deploy/coredns --timeout=120s >/dev/null || die "CoreDNS did not become ready"
  log "CoreDNS ready at $DNS_IP"
}

# ---------------------------------------------------------------------------------------------
# demo: a tiny multi-stage image and a one-Deployment chart
step_demo() {
  local w="$RC_STATE/demo"
  mkdir -p "$w/image" "$w/chart/templates"
  cat >"$w/image/hello.c" <<'EOF'
/* `hello serve`: answers every HTTP request on :8080 with one line. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "serve") == 0) {
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    char host[64] = "?", resp[256], buf[1024];
    gethostname(host, sizeof host);
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(8080);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16)) { perror("listen"); return 1; }
    for (;;) {
      int c = accept(s, 0, 0); if (c < 0) continue;
      (void)!read(c, buf, sizeof buf);
      int n = snprintf(resp, sizeof resp, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello from %s\n", host);
      (void)!write(c, resp, n); close(c);
    }
  }
  puts("hello from a locally built image"); return 0;
}
EOF
  cat >"$w/image/Dockerfile" <<'EOF'
FROM local/debian:bookworm AS builder
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY hello.c .
RUN --mount=type=cache,target=/root/.cache gcc -O2 -o /hello hello.c

FROM local/cc-debian12:nonroot
COPY --from=builder /hello /usr/local/bin/hello
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/hello"]
CMD ["serve"]
EOF
  $DOCKER build -q -t local/hello:1 "$w/image" >/dev/null || die "docker build local/hello:1"
  [ "$($DOCKER run --rm local/hello:1 once)" = "hello from a locally built image" ] || die "docker run local/hello:1"
  log "docker build + run of local/hello:1: ok"
  import_to_k8s local/hello:1
  cat >"$w/chart/Chart.yaml" <<'EOF'
apiVersion: v2
name: hello
version: 0.1.0
appVersion: "1"
EOF
  cat >"$w/chart/values.yaml" <<'EOF'
replicas: 2
image: {repository: local/hello, tag: "1", pullPolicy: Never}
EOF
  cat >"$w/chart/templates/all.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}, labels: {app: {{ .Release.Name }}}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: hello
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        args: ["serve"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /, port: http}}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 64Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{name: http, port: 80, targetPort: http}]
EOF
  local t0=$SECONDS
  if "$RC_BIN/helm" --kubeconfig "$RC_STATE/admin.kubeconfig" status hello >/dev/null 2>&1; then
    "$RC_BIN/helm" --kubeconfig "$RC_STATE/admin.kubeconfig" upgrade hello "$w/chart" --wait --timeout 3m >/dev/null
  else
    "$RC_BIN/helm" --kubeconfig "$RC_STATE/admin.kubeconfig" install hello "$w/chart" --wait --timeout 3m >/dev/null
  fi
  log "helm install hello: pods ready after $((SECONDS - t0)) s"
  kc get pods -l app=hello -o wide
  local pod_ip svc_ip out
  pod_ip="$(kc get pods -l app=hello -o jsonpath='{.items[0].status.podIP}')"
  svc_ip="$(kc get svc hello -o jsonpath='{.spec.clusterIP}')"
  out="$(curl -sf "http://$pod_ip:8080/")" || die "curl pod IP $pod_ip"
  log "pod IP $pod_ip:8080 -> $out"
  # kube-proxy writes the Service's rules a moment after the endpoints are ready.
  wait_for 20 "ClusterIP $svc_ip (kube-proxy)" curl -sf "http://$svc_ip/"
  out="$(curl -sf "http://$svc_ip/")"
  log "ClusterIP $svc_ip:80 -> $out"
  # kubectl itself in the background (not the kc function: $! would be a subshell)
  "$RC_BIN/kubectl" --kubeconfig "$RC_STATE/admin.kubeconfig" port-forward svc/hello 18080:80 >"$RC_STATE/log/port-forward.log" 2>&1 &
  local pf=$!
  wait_for 20 port-forward curl -sf http://127.0.0.1:18080/
  out="$(curl -sf http://127.0.0.1:18080/)"
  kill "$pf" 2>/dev/null; wait "$pf" 2>/dev/null || true
  log "kubectl port-forward svc/hello -> $out"
  import_to_k8s local/debian:bookworm
  # Right after `up` restarted the node, CoreDNS's pod may still show the Ready state of its
  # previous sandbox: try a few times. (`kubectl run -i` may warn that it could not attach to a
  # container that already exited; it then prints the logs.)
  local try
  for try in 1 2 3 4 5; do
    kc delete pod dnscheck --ignore-not-found --wait >/dev/null
    out="$(kc run dnscheck --image=local/debian:bookworm --image-pull-policy=Never --restart=Never \
      --rm -i --quiet -- sh -c 'getent hosts hello.default.svc.cluster.local && getent hosts kubernetes.default' 2>&1)" \
      && echo "$out" | grep -q hello.default && break
    sleep 3
  done
  echo "$out" | grep -q hello.default || die "DNS check pod: $out"
  log "DNS from a pod: $(echo "$out" | grep -v '^warning' | tr '\n' ' ')"
}

# ---------------------------------------------------------------------------------------------
# builder: a Rust image for an in-image cargo build of docker/Dockerfile where no registry is
# reachable: the host's toolchain on the local Debian base, trusting the host's extra CAs
# (/usr/local/share/ca-certificates), because HTTPS from containers (crates.io) goes through a
# TLS-intercepting egress proxy that only the host trusts; apt works without them (plain HTTP).
# Pass it to the build as --build-arg RUST_IMAGE=local/rust:VERSION-bookworm.
step_builder() {
  local w="$RC_STATE/builder" rv sysroot ver
  mkdir -p "$w/rust/host-cas"
  rv="$(sed -n 's/^ARG RUST_IMAGE=rust:\([0-9.]*\)-.*/\1/p' "$PROJECT_DIR/docker/Dockerfile" | head -1)"
  [ -n "$rv" ] || die "no 'ARG RUST_IMAGE=rust:VERSION-...' in $PROJECT_DIR/docker/Dockerfile"
  if ! image_exists "local/rust:$rv-bookworm"; then
    command -v rustc >/dev/null || die "no Rust toolchain on the host to put into local/rust"
    sysroot="$(rustc "+$rv" --print sysroot 2>/dev/null || rustc --print sysroot)"
    ver="$("$sysroot/bin/rustc" --version | awk '{print $2}')"
    case "$ver" in "$rv"|"$rv".*) ;; *) die "host rustc is $ver, the Dockerfile wants $rv" ;; esac
    log "local/rust:$rv-bookworm from the host toolchain $ver (about 1 minute)"
    tar -C "$sysroot" --exclude=./share/doc -cf "$w/rust/toolchain.tar" .
    rm -f "$w/rust/host-cas/"*; cp /usr/local/share/ca-certificates/*.crt "$w/rust/host-cas/" 2>/dev/null || true
    cat >"$w/rust/Dockerfile" <<DOCKERFILE
# A local stand-in for the official Rust bookworm image: the host's toolchain (no rustup, no
# docs) on the local Debian 12 base, a C toolchain for build scripts, the host's extra CAs.
FROM local/debian:bookworm
RUN apt-get update \\
 && apt-get install -y --no-install-recommends ca-certificates curl git gcc g++ libc6-dev make pkg-config \\
 && rm -rf /var/lib/apt/lists/*
COPY host-cas/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo \\
    PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    RUST_VERSION=$ver
ADD toolchain.tar /usr/local/rustup/toolchains/$ver-x86_64-unknown-linux-gnu/
RUN mkdir -p /usr/local/cargo/bin \\
 && for b in cargo rustc rustdoc rustfmt cargo-fmt cargo-clippy clippy-driver; do \\
      ln -s /usr/local/rustup/toolchains/$ver-x86_64-unknown-linux-gnu/bin/\$b /usr/local/cargo/bin/\$b; done \\
 && chmod -R a+w /usr/local/cargo && cargo --version
DOCKERFILE
    $DOCKER build -q -t "local/rust:$rv-bookworm" "$w/rust" >/dev/null || die "build local/rust"
    rm -f "$w/rust/toolchain.tar"
    log "image local/rust:$rv-bookworm"
  fi
}

# ---------------------------------------------------------------------------------------------
# service-images: the chart's bundled Redis and MinIO (and the MinIO client of its setup Job),
# made here: Redis from Debian apt, MinIO and mc from the Go module proxy (or the copies the
# test command installed in ~/go/bin).
PROJECT_DIR="${PROJECT_DIR:-$PWD}"
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
MC_VERSION="${MC_VERSION:-v0.0.0-20250313080218-cf909e1063a9}"

go_tool() { # NAME MODULE VERSION: $RC_BIN/NAME, from ~/go/bin or go install
  local name="$1" module="$2" version="$3"
  [ -x "$RC_BIN/$name" ] && return 0
  if [ -x "$HOME/go/bin/$name" ]; then ln -sf "$HOME/go/bin/$name" "$RC_BIN/$name"; return 0; fi
  log "go install $module@$version (a few minutes, once)"
  ( cd /tmp && GOFLAGS=-mod=mod GOBIN="$RC_BIN" go install "$module@$version" ) || die "go install $module"
}

step_service_images() {
  local w="$RC_STATE/service-images"
  mkdir -p "$w/redis" "$w/minio" "$w/mc" "$RC_BIN"
  if ! image_exists local/redis:7.0; then
    cat >"$w/redis/Dockerfile" <<'DOCKERFILE'
# Redis from Debian 12 (7.0.15) with redis-cli and a shell for the chart's exec probe.
FROM local/debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown 999:1000 /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server"]
DOCKERFILE
    $DOCKER build -q -t local/redis:7.0 "$w/redis" >/dev/null || die "build local/redis"
    log "image local/redis:7.0"
  fi
  if ! image_exists local/minio:dev; then
    go_tool minio github.com/minio/minio "$MINIO_VERSION"
    cp -L "$RC_BIN/minio" "$w/minio/minio"
    printf 'FROM local/cc-debian12:nonroot\nCOPY minio /usr/bin/minio\nEXPOSE 9000 9001\nENTRYPOINT ["/usr/bin/minio"]\n' >"$w/minio/Dockerfile"
    $DOCKER build -q -t local/minio:dev "$w/minio" >/dev/null || die "build local/minio"
    rm -f "$w/minio/minio"
    log "image local/minio:dev"
  fi
  if ! image_exists local/mc:dev; then
    go_tool mc github.com/minio/mc "$MC_VERSION"
    cp -L "$RC_BIN/mc" "$w/mc/mc"
    # A shell is needed: the chart runs a /bin/sh script with mc.
    printf 'FROM local/debian:bookworm\nCOPY mc /usr/bin/mc\nUSER 1000:1000\nENTRYPOINT ["/usr/bin/mc"]\n' >"$w/mc/Dockerfile"
    $DOCKER build -q -t local/mc:dev "$w/mc" >/dev/null || die "build local/mc"
    rm -f "$w/mc/mc"
    log "image local/mc:dev"
  fi
  import_to_k8s local/redis:7.0 local/minio:dev local/mc:dev
}
# ---------------------------------------------------------------------------------------------
step_status() {
  local n
  for n in containerd dockerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if running "$n"; then echo "$n: running (pid $(cat "$RC_STATE/run/$n.pid"))"; else echo "$n: -"; fi
  done
  if [ -f "$RC_STATE/admin.kubeconfig" ] && kc get --raw /readyz >/dev/null 2>&1; then
    kc get nodes -o wide
    kc get pods -A -o wide
  fi
}

step_down() {
  stop_bg kubelet
  if [ -x "$RC_BIN/crictl" ] && containerd_up; then
    "$RC_BIN/crictl" --runtime-endpoint "unix://$CONTAINERD_SOCK" rmp -fa >/dev/null 2>&1 || true
  fi
  stop_bg kube-proxy
  [ -x "$RC_BIN/kube-proxy" ] && "$RC_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  stop_bg kube-scheduler
  stop_bg kube-controller-manager
  stop_bg kube-apiserver
  stop_bg etcd
}

# Everything this script made except the apt packages and $RC_BIN: the cluster's state, every
# Docker and containerd image, the runtime configuration. For a from-scratch rerun.
step_reset() {
  [ "${RC_RESET_YES:-}" = 1 ] || die "reset deletes all Docker/containerd images and $RC_STATE: set RC_RESET_YES=1"
  step_down
  step_runtime_down
  local m
  for m in $(awk '$2 ~ "^/var/lib/kubelet/" {print $2}' /proc/mounts | sort -r); do umount "$m" || true; done
  while mountpoint -q /var/lib/kubelet; do umount /var/lib/kubelet || break; done
  ip link del cni0 2>/dev/null || true
  # A directory may be a mount point of its own (some machines mount /var/lib/docker): empty it.
  local d
  for d in "$RC_STATE" /var/lib/kubelet /var/lib/docker /var/lib/containerd /var/lib/cni; do
    if mountpoint -q "$d"; then find "$d" -mindepth 1 -delete; else rm -rf "$d"; fi
  done
  rm -f /etc/cni/net.d/10-k8s-bridge.conflist
  [ -f /etc/containerd/config.toml.dist ] && mv /etc/containerd/config.toml.dist /etc/containerd/config.toml
  log "reset done (kept: apt packages, $RC_BIN)"
}

[ "$(id -u)" = 0 ] || die "run as root"
mkdir -p "$RC_STATE"
[ $# -gt 0 ] || set -- deps runtime images build up
for s in "$@"; do
  case "$s" in
    deps) step_deps ;;
    runtime) step_runtime ;;
    images) step_images ;;
    build) step_build ;;
    up) step_up ;;
    demo) step_demo ;;
    builder) step_builder ;;
    service-images) step_service_images ;;
    status) step_status ;;
    down) step_down ;;
    runtime-down) step_runtime_down ;;
    reset) step_reset ;;
    import) shift; import_to_k8s "$@"; break ;;
    *) die "unknown step $s" ;;
  esac
done

