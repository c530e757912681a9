#!/usr/bin/env bash
# Peak resident memory (VmHWM) of each role, one fresh set of processes per tree size, for a
# Reckle batch job over 2^ℓ leaves (issue 11: an executor's memory must not grow with ℓ).
#
#   scripts/bench-memory.sh [ℓ ...]            (default: 10 16 20)
#
# Needs redis-server and minio on PATH (scripts/test.d/10-services.sh installs them) and the
# `prover` binary: $PROVER_BIN, or the test profile's build in $CARGO_TARGET_DIR/debug.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10 16 20)
REDIS_PORT=6397
MINIO_PORT=9197
# shellcheck source=scripts/lib/bench-backends.sh
source scripts/lib/bench-backends.sh

printf '| ℓ | leaves | batch | executor peak RSS | worker peak RSS | aggregator peak RSS | planner peak RSS |\n'
printf '|---|---|---|---|---|---|---|\n'
for L in "${SIZES[@]}"; do
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
  GRPC=$((50300 + L))
  PIDS=()
  declare -A PID=()
  for role in planner executor aggregator worker; do
    extra=()
    [ "$role" = planner ] && extra=(--listen "127.0.0.1:$GRPC")
    PROVER_NO_AUTH=1 "$PROVER" serve "$role" "${common[@]}" --metrics-listen "127.0.0.1:0" --name "$role-$L" "${extra[@]}" \
      >/dev/null 2>"$TMP/$role-$L.log" &
    PID[$role]=$!
    PIDS+=($!)
  done
  sleep 2
  JOB=$("$PROVER" submit reckle --random-leaves $((1 << L)) --random-batch 4 --log-bucket 3 --seed "$L" \
    --endpoint "http://127.0.0.1:$GRPC")
  until "$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC" | grep -Eq ' (done|failed|cancelled)'; do sleep 1; done
  STATE=$("$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC")
  echo "$STATE" | grep -q ' done' || { echo "job did not finish: $STATE"; tail -20 "$TMP"/*-"$L".log; exit 1; }
  printf '| %s | %s | 4 | %s MiB | %s MiB | %s MiB | %s MiB |\n' "$L" "$((1 << L))" \
    "$(hwm "${PID[executor]}")" "$(hwm "${PID[worker]}")" "$(hwm "${PID[aggregator]}")" "$(hwm "${PID[planner]}")"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
done
