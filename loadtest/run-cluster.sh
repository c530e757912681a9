#!/usr/bin/env bash
# The load test against a multi-process cluster on this machine: starts Redis and MinIO (as the
# test command does), 1 planner, 2 executors, 3 workers and 1 aggregator from the release build,
# runs a scenario, prints the report and the workers' task counters, stops everything.
#   cargo build --release -p prover-cli --bin prover -p prover-loadtest --bin loadtest
#   bash loadtest/run-cluster.sh [SCENARIO]   (default loadtest/scenarios/mixed.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}"
scenario="${1:-loadtest/scenarios/mixed.toml}"
# shellcheck source=/dev/null
source scripts/test.d/10-services.sh
BIN="$CARGO_TARGET_DIR/release"
LOGS="$(mktemp -d)"
common=(--redis "$PROVER_TEST_REDIS_URL" --s3-endpoint "$PROVER_TEST_S3_ENDPOINT" --bucket prover-load)
pids=()
"$BIN/prover" serve planner "${common[@]}" --no-auth --listen 127.0.0.1:50071 --metrics-listen 127.0.0.1:9301 2>"$LOGS/planner.log" & pids+=($!)
for i in 0 1; do "$BIN/prover" serve executor "${common[@]}" --metrics-listen "127.0.0.1:931$i" --name "ex$i" 2>"$LOGS/ex$i.log" & pids+=($!); done
for i in 0 1 2; do "$BIN/prover" serve worker "${common[@]}" --metrics-listen "127.0.0.1:932$i" --name "w$i" 2>"$LOGS/w$i.log" & pids+=($!); done
"$BIN/prover" serve aggregator "${common[@]}" --metrics-listen 127.0.0.1:9330 2>"$LOGS/ag.log" & pids+=($!)
trap 'kill "${pids[@]}" 2>/dev/null; cleanup_services' EXIT
sleep 3
"$BIN/loadtest" "$scenario" --endpoint http://127.0.0.1:50071 --out loadtest-report
for i in 0 1 2; do curl -s "127.0.0.1:932$i/metrics" | grep -E "^prover_(tasks_total|task_redeliveries_total)" || true; done
echo "service logs: $LOGS"
