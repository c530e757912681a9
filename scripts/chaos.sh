#!/usr/bin/env bash
# The chaos suite (issue 11): a multi-process cluster on loopback — 2 planners, 2 executors,
# 5 workers (4 in --short), 1 aggregator, Redis with AOF (appendfsync always) and MinIO — runs
# mixed jobs (Pari, Hekaton, Reckle) while faults are injected:
#
#   long (default)  ≥ 50 worker SIGKILLs (a random worker every 3 s, restarted at once as a pod
#                   would be), executor-0 and planner-0 restarted twice each, Redis SIGKILLed
#                   and restarted once, MinIO stopped for 60 s, worker-4 frozen with SIGSTOP for
#                   longer than its tasks' deadlines (45 s) and then resumed, both executors
#                   SIGKILLed at once and back after 20 s; 24 jobs
#   --short         ≥ 10 worker SIGKILLs, one Redis restart, a 15 s MinIO outage, both
#                   executors down for 10 s; 8 jobs (the test command runs this)
#
# Then it waits for every job to end, fetches every done job's proof through the API and
# verifies it offline (prover reckle verify / pari verify-bundles / hekaton verify), and prints
# jobs done / failed (with the reason) / lost (never ended) / invalid proofs / duplicated
# outputs (a Pari job with more bundles than it has, a job counting more tasks done than it
# has). Exit status 0 only with nothing lost, no invalid proof and no duplicate.
#
#   bash scripts/chaos.sh [--short]
#
# Needs redis-server and minio (scripts/test.d/10-services.sh installs them) and the `prover`
# binary: $PROVER_BIN, or the test profile's build in $CARGO_TARGET_DIR/debug.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/go/bin:$PATH"
MODE=long
[ "${1:-}" = "--short" ] && MODE=short
TARGET="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
PROVER="${PROVER_BIN:-$TARGET/debug/prover}"
[ -x "$PROVER" ] || { echo "chaos: no prover binary at $PROVER (cargo build -p prover-cli --bin prover)"; exit 2; }

if [ "$MODE" = long ]; then
  WORKERS=5 KILLS=50 KILL_EVERY=3 JOBS=24 S3_OUTAGE=60 END_WAIT=1500
else
  WORKERS=4 KILLS=10 KILL_EVERY=2 JOBS=8 S3_OUTAGE=15 END_WAIT=900
fi
TMP="$(mktemp -d)"
REDIS_PORT=6395
MINIO_PORT=9185
GRPC=(50391 50392)
START=$(date +%s)
say() { echo "[chaos $(($(date +%s) - START))s] $*"; }

# --- servers ---------------------------------------------------------------------------------
mkdir -p "$TMP/redis" "$TMP/minio"
start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TMP/redis" --appendonly yes \
    --appendfsync always --save "" --maxmemory-policy noeviction --daemonize yes \
    --pidfile "$TMP/redis.pid" --logfile "$TMP/redis.log"
  for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "chaos: Redis did not start"; cat "$TMP/redis.log"; exit 2
}
export AWS_ACCESS_KEY_ID=chaos-key AWS_SECRET_ACCESS_KEY=chaos-secret-key
MINIO_PID=
start_minio() {
  MINIO_ROOT_USER="$AWS_ACCESS_KEY_ID" MINIO_ROOT_PASSWORD="$AWS_SECRET_ACCESS_KEY" \
    minio server "$TMP/minio" --address "127.0.0.1:$MINIO_PORT" \
    --console-address "127.0.0.1:$((MINIO_PORT + 1))" >>"$TMP/minio.log" 2>&1 &
  MINIO_PID=$!
  for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$MINIO_PORT/minio/health/live" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "chaos: MinIO did not start"; tail "$TMP/minio.log"; exit 2
}

# --- services --------------------------------------------------------------------------------
# Current pid of each service, in files: the killer runs in a subshell.
mkdir -p "$TMP/pids"
pid() { cat "$TMP/pids/$1"; }
# --no-auth: the clients here carry no token (platform_e2e tests authentication).
common=(--redis "redis://127.0.0.1:$REDIS_PORT/" --s3-endpoint "http://127.0.0.1:$MINIO_PORT" --bucket chaos --no-auth
  --visibility-timeout-secs 5 --reconcile-grace-secs 30 --s3-timeout-secs 10 --drain-timeout-secs 5)
# Worker task deadlines the frozen worker outlives (the tasks here take seconds).
deadlines="pari.setup=45,pari.prove=45,hekaton.setup=45,hekaton.commit=45,hekaton.challenge=45,hekaton.subproof=45,reckle.prepare=45,reckle.tree=45,reckle.bands=45,reckle.leaf=45,reckle.node=45"
start() { # NAME ROLE [extra...]
  local name=$1 role=$2
  shift 2
  # Started from a subshell, so this shell does not report each SIGKILL as a job's death.
  ("$PROVER" serve "$role" "${common[@]}" --task-deadline "$deadlines" --metrics-listen 127.0.0.1:0 \
    --name "$name" "$@" >/dev/null 2>>"$TMP/$name.log" &
    echo $! >"$TMP/pids/$name")
}
restart() { # NAME ROLE [extra...]
  kill -9 "$(pid "$1")" 2>/dev/null
  start "$@"
}
cleanup() {
  for f in "$TMP"/pids/*; do kill -CONT "$(cat "$f")" 2>/dev/null; kill -9 "$(cat "$f")" 2>/dev/null; done
  [ -n "$MINIO_PID" ] && kill "$MINIO_PID" 2>/dev/null
  [ -n "${KILLER:-}" ] && kill "$KILLER" 2>/dev/null
  [ -f "$TMP/redis.pid" ] && kill -9 "$(cat "$TMP/redis.pid")" 2>/dev/null
  [ -n "${KEEP_CHAOS_LOGS:-}" ] && echo "chaos: logs in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

start_redis
start_minio
start planner-0 planner --listen "127.0.0.1:${GRPC[0]}"
start planner-1 planner --listen "127.0.0.1:${GRPC[1]}"
start executor-0 executor
start executor-1 executor
for i in $(seq 0 $((WORKERS - 1))); do start "worker-$i" worker; done
start aggregator-0 aggregator
sleep 3

# A client call that tries each planner in turn (one may be restarting), a few times.
client() {
  local out
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    for port in "${GRPC[@]}"; do
      if out=$("$PROVER" "$@" --endpoint "http://127.0.0.1:$port" 2>>"$TMP/client.log"); then
        printf '%s\n' "$out"
        return 0
      fi
    done
    sleep 1
  done
  return 1
}

# --- jobs ------------------------------------------------------------------------------------
: >"$TMP/jobs"
submit_job() { # N
  local n=$1 id kind
  case $((n % 4)) in
    0 | 1) kind=pari; id=$(client submit pari --circuit chain --size 16 --count 8 --proofs-per-task 2 --bundle-size 4 --seed-start "$((n * 100))") ;;
    2) kind=hekaton; id=$(client submit hekaton --circuit synthetic --subcircuits 2 --steps 4 --wires 1 --seed "$n") ;;
    3) kind=reckle; id=$(client submit reckle --random-leaves 16 --random-batch 3 --log-bucket 2 --seed "$n") ;;
  esac
  if [ -n "$id" ]; then echo "$id $kind" >>"$TMP/jobs"; else say "submission $n failed"; fi
}

# Worker kills in the background: a random worker (not the one kept for freezing) every
# KILL_EVERY seconds, restarted at once.
killer() {
  local kills=0 victims=$((WORKERS > 4 ? 4 : WORKERS)) w
  while [ "$kills" -lt "$KILLS" ]; do
    sleep "$KILL_EVERY"
    w="worker-$((RANDOM % victims))"
    restart "$w" worker
    kills=$((kills + 1))
    echo "$kills" >"$TMP/kills"
  done
}

say "$MODE run: $WORKERS workers, $JOBS jobs, $KILLS worker kills, ${S3_OUTAGE}s S3 outage"
for n in $(seq 0 $((JOBS / 2 - 1))); do submit_job "$n"; done
killer &
KILLER=$!

# The fault timeline (the killer runs beside it).
outage_s3() {
  say "MinIO stopped for ${S3_OUTAGE}s"
  kill "$MINIO_PID" 2>/dev/null; wait "$MINIO_PID" 2>/dev/null
  sleep "$S3_OUTAGE"
  start_minio
  say "MinIO back"
}
restart_redis() {
  say "Redis SIGKILLed and restarted (AOF)"
  kill -9 "$(cat "$TMP/redis.pid")"
  sleep 2
  start_redis
}
# No executor at all for a while (both pods evicted at once): reports and plan tasks wait in
# their queues, leases held by the dead executors expire, and the jobs go on when they are back.
executors_down() {
  say "both executors SIGKILLed, back after ${1}s"
  kill -9 "$(pid executor-0)" "$(pid executor-1)" 2>/dev/null
  sleep "$1"
  start executor-0 executor
  start executor-1 executor
}
if [ "$MODE" = long ]; then
  sleep 10; say "executor-0 restarted"; restart executor-0 executor
  sleep 5; say "planner-0 restarted"; restart planner-0 planner --listen "127.0.0.1:${GRPC[0]}"
  for n in $(seq $((JOBS / 2)) $((JOBS - 1))); do submit_job "$n"; done
  sleep 5; restart_redis
  sleep 10; say "worker-4 frozen (SIGSTOP) for 55s"; kill -STOP "$(pid worker-4)"
  (sleep 55; kill -CONT "$(pid worker-4)" 2>/dev/null) &
  sleep 5; outage_s3
  sleep 10; say "executor-0 restarted again"; restart executor-0 executor
  sleep 5; say "planner-0 restarted again"; restart planner-0 planner --listen "127.0.0.1:${GRPC[0]}"
  sleep 5; executors_down 20
else
  sleep 4
  for n in $(seq $((JOBS / 2)) $((JOBS - 1))); do submit_job "$n"; done
  restart_redis
  sleep 4; outage_s3
  sleep 2; executors_down 10
fi
wait "$KILLER"
say "$(cat "$TMP/kills" 2>/dev/null || echo 0) worker kills done; waiting for the jobs to end"

# --- the outcome -----------------------------------------------------------------------------
deadline=$(($(date +%s) + END_WAIT))
while :; do
  open=0
  while read -r id kind; do
    line=$(client status "$id") || { open=$((open + 1)); continue; }
    case "$line" in *"  done  "* | *"  failed  "* | *"  cancelled  "*) ;; *) open=$((open + 1)) ;; esac
  done <"$TMP/jobs"
  [ "$open" -eq 0 ] && break
  [ "$(date +%s)" -ge "$deadline" ] && break
  sleep 3
done

done_n=0 failed_n=0 lost_n=0 invalid_n=0 dup_n=0 verified_n=0
declare -A reasons=()
while read -r id kind; do
  line=$(client status "$id") || line="$id ? unreachable"
  # Progress: "kind d/t" pairs; more done than total is a duplicate.
  inner=${line#*[}
  inner=${inner%%]*}
  if echo "$inner" | grep -oE '[a-z.]+ [0-9]+/[0-9]+' | awk '{split($2, a, "/"); if (a[1] > a[2]) bad = 1} END {exit !bad}'; then
    dup_n=$((dup_n + 1)); say "duplicate progress: $line"
  fi
  case "$line" in
    *"  done  "*)
      done_n=$((done_n + 1))
      dir="$TMP/proofs/$id"
      if ! fetched=$(client fetch "$id" --out "$dir"); then
        invalid_n=$((invalid_n + 1)); say "$id: fetch failed"; continue
      fi
      case $kind in
        reckle)
          c=$(echo "$fetched" | sed -n 's/^commitment C = \([0-9a-f]*\).*/\1/p')
          "$PROVER" reckle verify "$dir" --root "$c" >/dev/null 2>>"$TMP/verify.log" || { invalid_n=$((invalid_n + 1)); say "$id: INVALID reckle proof"; continue; } ;;
        pari)
          d=$(echo "$fetched" | sed -n 's/^vk digest = \([0-9a-f]*\).*/\1/p')
          "$PROVER" pari verify-bundles "$dir" --vk-digest "$d" >/dev/null 2>>"$TMP/verify.log" || { invalid_n=$((invalid_n + 1)); say "$id: INVALID pari bundles"; continue; }
          # 8 proofs in bundles of 4: exactly 2 bundles.
          b=$(find "$dir" -name 'bundle-*.bin' | wc -l)
          [ "$b" -eq 2 ] || { dup_n=$((dup_n + 1)); say "$id: $b bundles, expected 2"; } ;;
        hekaton)
          d=$(echo "$fetched" | sed -n 's/^vk digest = \([0-9a-f]*\).*/\1/p')
          # An aggregated proof (issue 30) is checked against its aggregate key too.
          a=$(echo "$fetched" | sed -n 's/^aggregate key digest = \([0-9a-f]*\).*/\1/p')
          "$PROVER" hekaton verify "$dir" --vk-digest "$d" ${a:+--agg-vk-digest "$a"} >/dev/null 2>>"$TMP/verify.log" || { invalid_n=$((invalid_n + 1)); say "$id: INVALID hekaton proof"; continue; } ;;
      esac
      verified_n=$((verified_n + 1)) ;;
    *"  failed  "* | *"  cancelled  "*)
      failed_n=$((failed_n + 1))
      reason=$(echo "$line" | sed 's/.*\]  //')
      [ "$reason" = "$line" ] && reason="(no reason given)"
      reasons[$kind]+="    $id: $reason"$'\n' ;;
    *) lost_n=$((lost_n + 1)); say "LOST (not ended): $line" ;;
  esac
done <"$TMP/jobs"

total=$(wc -l <"$TMP/jobs")
echo
echo "| chaos ($MODE) | jobs | done | proofs verified offline | failed (with reason) | lost | invalid proofs | duplicated outputs | worker kills | wall |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "| $MODE | $total | $done_n | $verified_n | $failed_n | $lost_n | $invalid_n | $dup_n | $(cat "$TMP/kills" 2>/dev/null || echo 0) | $(($(date +%s) - START)) s |"
for k in "${!reasons[@]}"; do printf 'failed %s jobs:\n%s' "$k" "${reasons[$k]}"; done
if [ "$lost_n" -gt 0 ] || [ "$invalid_n" -gt 0 ] || [ "$dup_n" -gt 0 ] || [ "$total" -lt "$JOBS" ]; then
  echo "chaos: FAILED"
  for f in "$TMP"/*.log; do echo "== $f"; tail -5 "$f"; done
  exit 1
fi
echo "chaos: ok"
