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
# With PROFILE_S=T set, each run is a memory profile instead: every PROFILE_EVERY seconds (default
# 60) a second table prints each role's resident memory now (VmRSS) and the job's tasks done,
# and after T seconds the job is cancelled and its row shows the peaks so far (issue 31: |I| =
# 1,024 at ℓ = 27 over its first 30 minutes, PROFILE_S=1800).
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
PROFILE=()
rss() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
for RUN in "${SIZES[@]}"; do
  IFS=: read -r L BATCH Q U <<<"$RUN"
  BATCH=${BATCH:-4}
  Q=${Q:-3}
  U=${U:-0}
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
  GRPC=$((50300 + L))
  PIDS=()
  PORT=$((50400 + 10 * L))
  start_role planner planner "$PORT" --listen "127.0.0.1:$GRPC"
  start_role executor executor $((PORT + 1))
  start_role aggregator aggregator $((PORT + 2))
  start_role worker worker $((PORT + 3))
  wait_ready planner executor aggregator worker
  STARTED=$(date +%s)
  JOB=$("$PROVER" submit reckle --random-leaves $((1 << L)) --random-batch "$BATCH" --log-bucket "$Q" --seed "$L" \
    --endpoint "http://127.0.0.1:$GRPC")
  if [ -n "${PROFILE_S:-}" ]; then
    EVERY=${PROFILE_EVERY:-60}
    NEXT=$STARTED
    until [ $(($(date +%s) - STARTED)) -ge "$PROFILE_S" ]; do
      if [ "$(date +%s)" -ge "$NEXT" ]; then
        PROFILE+=("$(printf '| %s | %s | %s s | %s | %s MiB | %s MiB | %s MiB | %s MiB |' "$L" "$BATCH" "$(($(date +%s) - STARTED))" \
          "$("$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC" | sed -e 's/^[^ ]*  [^ ]*  //')" \
          "$(rss "${PID[executor]}")" "$(rss "${PID[worker]}")" "$(rss "${PID[aggregator]}")" "$(rss "${PID[planner]}")")")
        NEXT=$((NEXT + EVERY))
      fi
      "$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC" | grep -Eq ' (done|failed|cancelled)' && break
      sleep 1
    done
    STATE=$("$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC")
    echo "$STATE" | grep -Eq ' (failed|cancelled)' && { echo "job ended early: $STATE"; tail -20 "$TMP"/*.log; exit 1; }
    # A job that ended within T has nothing to cancel: its row says so.
    if echo "$STATE" | grep -q ' done'; then
      ENDED="profile, done"
    else
      "$PROVER" cancel "$JOB" --endpoint "http://127.0.0.1:$GRPC" >/dev/null
      ENDED="profile, cancelled"
    fi
  else
    until "$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC" | grep -Eq ' (done|failed|cancelled)'; do sleep 1; done
    STATE=$("$PROVER" status "$JOB" --endpoint "http://127.0.0.1:$GRPC")
    echo "$STATE" | grep -q ' done' || { echo "job did not finish: $STATE"; tail -20 "$TMP"/*.log; exit 1; }
  fi
  printf '| %s | %s | %s | %s | %s s%s | %s MiB | %s MiB | %s MiB | %s MiB |\n' "$L" "$Q" "$((1 << L))" "$BATCH" "$(($(date +%s) - STARTED))" \
    "${PROFILE_S:+ ($ENDED)}" \
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
    echo "$USTATE" | grep -q ' done' || { echo "update did not finish: $USTATE"; tail -20 "$TMP"/*.log; exit 1; }
    UPDATES+=("$(printf '| %s | %s | %s | %s | %s s | %s s | %s |' "$L" "$Q" "$BATCH" "$U" \
      "$(awk -v a="$STARTED_MS" -v b="$PLANNED_MS" 'BEGIN {printf "%.1f", (b - a) / 1000}')" \
      "$(awk -v a="$STARTED_MS" -v b="$(date +%s%3N)" 'BEGIN {printf "%.1f", (b - a) / 1000}')" \
      "$(echo "$USTATE" | sed -e 's/.*\[//' -e 's/\].*//')")")
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
done
if [ ${#PROFILE[@]} -gt 0 ]; then
  printf '\n| ℓ | batch | since submit | job | executor RSS | worker RSS | aggregator RSS | planner RSS |\n|---|---|---|---|---|---|---|---|\n'
  printf '%s\n' "${PROFILE[@]}"
fi
if [ ${#UPDATES[@]} -gt 0 ]; then
  printf '\n| ℓ | q | batch | changes | plan | wall | tasks (done/total) |\n|---|---|---|---|---|---|---|\n'
  printf '%s\n' "${UPDATES[@]}"
fi
