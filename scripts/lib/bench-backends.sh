# Sourced by the benchmark scripts: real Redis and MinIO on loopback for one run, on the ports
# in REDIS_PORT and MINIO_PORT (set by the caller), the `prover` binary in PROVER, the process
# ids the caller starts in PIDS (killed on exit with the servers), the run's files in TMP
# (removed on exit), and `hwm PID` (a process's peak resident memory, MiB). Returns once MinIO
# answers.
export PATH="$HOME/go/bin:$PATH"
TARGET="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
PROVER="${PROVER_BIN:-$TARGET/debug/prover}"
[ -x "$PROVER" ] || { echo "no prover binary at $PROVER (cargo build -p prover-cli --bin prover)"; exit 2; }

TMP="$(mktemp -d)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --maxmemory-policy noeviction --daemonize yes --pidfile "$TMP/redis.pid" --logfile "$TMP/redis.log"
export AWS_ACCESS_KEY_ID=bench-key AWS_SECRET_ACCESS_KEY=bench-secret-key
MINIO_ROOT_USER="$AWS_ACCESS_KEY_ID" MINIO_ROOT_PASSWORD="$AWS_SECRET_ACCESS_KEY" \
  minio server "$TMP/minio" --address "127.0.0.1:$MINIO_PORT" \
  --console-address "127.0.0.1:$((MINIO_PORT + 1))" >"$TMP/minio.log" 2>&1 &
MINIO_PID=$!
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$MINIO_PID" 2>/dev/null || true
  kill "$(cat "$TMP/redis.pid")" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
until curl -sf "http://127.0.0.1:$MINIO_PORT/minio/health/live" >/dev/null 2>&1; do
  kill -0 "$MINIO_PID" 2>/dev/null || { cat "$TMP/minio.log"; exit 1; }
  sleep 0.2
done

hwm() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
common=(--redis "redis://127.0.0.1:$REDIS_PORT/" --s3-endpoint "http://127.0.0.1:$MINIO_PORT" --bucket bench)

# The roles, each a `prover serve` process with authentication off, its stderr in $TMP/NAME.log:
# `start_role NAME ROLE PORT FLAG…` starts one (metrics and probes on 127.0.0.1:PORT),
# `wait_ready NAME…` returns once each answers /readyz (and exits with the log of one that
# exited first), `start_cluster PORT WORKERS` starts a planner (gRPC on 127.0.0.1:$GRPC), an
# executor, an aggregator and WORKERS workers (metrics from PORT + 1 on; names in ROLES) and
# waits for them. PID and METRICS map each name to its process id and metrics port.
declare -A PID=() METRICS=()
start_role() {
  local name=$1 role=$2 port=$3
  shift 3
  PROVER_NO_AUTH=1 "$PROVER" serve "$role" "${common[@]}" --metrics-listen "127.0.0.1:$port" --name "$name" "$@" \
    >/dev/null 2>"$TMP/$name.log" &
  PID[$name]=$!
  METRICS[$name]=$port
  PIDS+=($!)
}
wait_ready() {
  local name
  for name in "$@"; do
    until curl -sf "http://127.0.0.1:${METRICS[$name]}/readyz" >/dev/null 2>&1; do
      kill -0 "${PID[$name]}" 2>/dev/null || { echo "$name exited:"; tail -20 "$TMP/$name.log"; exit 1; }
      sleep 0.2
    done
  done
}
start_cluster() {
  local port=$1 i name
  ROLES=(planner executor aggregator)
  for i in $(seq 0 $(($2 - 1))); do ROLES+=("worker-$i"); done
  for name in "${ROLES[@]}"; do
    port=$((port + 1))
    if [ "$name" = planner ]; then
      start_role planner planner "$port" --listen "127.0.0.1:$GRPC"
    else
      start_role "$name" "${name%%-*}" "$port"
    fi
  done
  wait_ready "${ROLES[@]}"
}
