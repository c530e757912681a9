#!/usr/bin/env bash
# Peak resident memory (VmHWM) of each role and the job's wall time, one fresh set of
# processes per run, for a Reckle batch job over 2^ℓ leaves with a random batch of |I| indices
# and buckets of 2^q leaves (issue 11: an executor's memory must not grow with ℓ; issue 31:
# no role's with ℓ or |I|).
#
#   scripts/bench-memory.sh [ℓ[:|I|[:q]] ...]     (default: 10 16 20; |I| = 4, q = 3)
#
# For ℓ = 27 use a release build (PROVER_BIN=…/release/prover): the leaves are 1 GiB and the
# tree 2^28 hashes.
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

printf '| ℓ | q | leaves | batch | wall | executor peak RSS | worker peak RSS | aggregator peak RSS | planner peak RSS |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for RUN in "${SIZES[@]}"; do
  IFS=: read -r L BATCH Q <<<"$RUN"
  BATCH=${BATCH:-4}
  Q=${Q:-3}
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
  STARTED=$(date +%s)
  JOB=$("$PROVER" submit reckle --random-leaves $((1 << L)) --random-batch "$BATCH" --log-bucket "$Q" --seed "$L" \
    --endpoint "http://127.0.0.1:$GRPC")
  until "$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC" | grep -Eq ' (done|failed|cancelled)'; do sleep 1; done
  STATE=$("$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC")
  echo "$STATE" | grep -q ' done' || { echo "job did not finish: $STATE"; tail -20 "$TMP"/*-"$L".log; exit 1; }
  printf '| %s | %s | %s | %s | %s s | %s MiB | %s MiB | %s MiB | %s MiB |\n' "$L" "$Q" "$((1 << L))" "$BATCH" "$(($(date +%s) - STARTED))" \
    "$(hwm "${PID[executor]}")" "$(hwm "${PID[worker]}")" "$(hwm "${PID[aggregator]}")" "$(hwm "${PID[planner]}")"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
done
