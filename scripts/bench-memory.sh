#!/usr/bin/env bash
# Peak resident memory (VmHWM) of each role and the job's wall time, one fresh set of
# processes per run, for a Reckle batch job over 2^ℓ leaves with a random batch of |I| indices
# and buckets of 2^q leaves (issue 11: an executor's memory must not grow with ℓ; issue 31:
# no role's with ℓ or |I|).
#
#   scripts/bench-memory.sh [ℓ[:|I|[:q[:u]]] ...]     (default: 10 16 20; |I| = 4, q = 3)
#
# With u > 0, a `reckle.update` of the done job follows, setting u random leaves (issue 31: an
# update's cost must follow its changed paths, not n); a second table prints its plan time (from
# the submit until its plan task has released its tasks: the job leaves `queued`), its wall time,
# and the tasks it ran.
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
UPDATES=()
for RUN in "${SIZES[@]}"; do
  IFS=: read -r L BATCH Q U <<<"$RUN"
  BATCH=${BATCH:-4}
  Q=${Q:-3}
  U=${U:-0}
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
  if [ "$U" -gt 0 ]; then
    SETS=()
    for i in $(seq 1 "$U"); do SETS+=(--set "$(( (RANDOM * 32768 + RANDOM) * 4099 % (1 << L) ))=$((i * 7919))"); done
    STARTED_MS=$(date +%s%3N)
    UJOB=$("$PROVER" submit reckle-update --base "$JOB" "${SETS[@]}" --endpoint "http://127.0.0.1:$GRPC")
    until ! "$PROVER" status "$UJOB" --endpoint "http://127.0.0.1:$GRPC" | grep -q ' queued '; do sleep 0.1; done
    PLANNED_MS=$(date +%s%3N)
    until "$PROVER" status "$UJOB" --endpoint "http://127.0.0.1:$GRPC" | grep -Eq ' (done|failed|cancelled)'; do sleep 0.5; done
    USTATE=$("$PROVER" status "$UJOB" --endpoint "http://127.0.0.1:$GRPC")
    echo "$USTATE" | grep -q ' done' || { echo "update did not finish: $USTATE"; tail -20 "$TMP"/*-"$L".log; exit 1; }
    UPDATES+=("$(printf '| %s | %s | %s | %s | %s s | %s s | %s |' "$L" "$Q" "$BATCH" "$U" \
      "$(awk -v a="$STARTED_MS" -v b="$PLANNED_MS" 'BEGIN {printf "%.1f", (b - a) / 1000}')" \
      "$(awk -v a="$STARTED_MS" -v b="$(date +%s%3N)" 'BEGIN {printf "%.1f", (b - a) / 1000}')" \
      "$(echo "$USTATE" | sed -e 's/.*\[//' -e 's/\].*//')")")
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
done
if [ ${#UPDATES[@]} -gt 0 ]; then
  printf '\n| ℓ | q | batch | changes | plan | wall | tasks (done/total) |\n|---|---|---|---|---|---|---|\n'
  printf '%s\n' "${UPDATES[@]}"
fi
