#!/usr/bin/env bash
# Issue 36's done-when: a compressed `testudo` job of a registered circom circuit on a
# multi-process cluster on loopback (planner, executor, aggregator and W workers, each its own
# `prover serve` process, over real Redis and MinIO). The circuit is the checked-in example
# (crates/circom/tests/fixtures, BLS12-381); the job proves N of its witnesses and compresses
# each proof into a final Pari proof on BW6-767. Prints the job's wall time, each step's task
# time (summed over the processes that ran it), the file sizes, the time `prover testudo
# verify` takes (inner proofs one by one, final proofs in one batch) pinned to the manifest's
# digests, and each role's peak resident memory (VmHWM). A second job of the third witness then
# reuses both keys (its wall time is one proof and one compression). Every lie at the end must
# be refused by the offline verifier.
#
#   scripts/bench-testudo.sh [witnesses] [workers]     (default: 2 2; witnesses 1 to 2)
#
# The first job makes the final key of the circuit's shape (the compression circuit's Pari
# setup, about 5 minutes on 2 cores) and each compression takes about 4; the whole run about
# 20 minutes here.
#
# Needs redis-server and minio on PATH (scripts/test.d/10-services.sh installs them) and the
# `prover` binary: $PROVER_BIN, or the test profile's build in $CARGO_TARGET_DIR/debug.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-2}"
WORKERS="${2:-2}"
[ "$N" -ge 1 ] && [ "$N" -le 2 ] || { echo "witnesses: 1 or 2 (the third is the second job's)"; exit 2; }
REDIS_PORT=6386
MINIO_PORT=9186
GRPC=50383
FIX="$PWD/crates/circom/tests/fixtures"
R1CS="$FIX/example-bls12381.r1cs"
W=("$FIX/example-bls12381.wtns" "$FIX/example-bls12381-w1.wtns" "$FIX/example-bls12381-w2.wtns")
# shellcheck source=scripts/lib/bench-backends.sh
source scripts/lib/bench-backends.sh

start_cluster 50420 "$WORKERS"

EP="http://127.0.0.1:$GRPC"
ID=$("$PROVER" circuit register --r1cs "$R1CS" --endpoint "$EP" | sed -n 's/^circuit_id //p')
[ -n "$ID" ] || { echo "registration printed no circuit_id"; exit 1; }
job() { # WITNESS…: submits a compressed job, waits for it; prints its id and wall seconds
  local start end args=() j
  for w in "$@"; do args+=(--witness "$w"); done
  start=$(date +%s.%N)
  j=$("$PROVER" submit testudo --circuit-id "$ID" "${args[@]}" --compress --endpoint "$EP")
  "$PROVER" watch "$j" --endpoint "$EP" >/dev/null \
    || { "$PROVER" status "$j" --endpoint "$EP"; tail -20 "$TMP"/aggregator.log "$TMP"/worker-0.log; exit 1; } >&2
  end=$(date +%s.%N)
  echo "$j $(awk "BEGIN {print $end - $start}")"
}
R=$(job "${W[@]:0:$N}")
read -r JOB WALL <<<"$R"
FETCHED=$("$PROVER" fetch "$JOB" --out "$TMP/proof" --endpoint "$EP")
TC=$(echo "$FETCHED" | sed -n 's/^tc_vk_digest = //p')
FD=$(echo "$FETCHED" | sed -n 's/^final key digest = //p')
[ -n "$TC" ] && [ -n "$FD" ] || { echo "the manifest pins no tc_vk_digest or final_key_digest:"; echo "$FETCHED"; exit 1; }
CMD=$(echo "$FETCHED" | sed -n 's/^verify with: prover //p' | sed -n 1p | sed "s|<the circuit's .r1cs>|$R1CS|")
# shellcheck disable=SC2086  # the command's words
"$PROVER" $CMD >"$TMP/verify.out" 2>"$TMP/verify.err" || { cat "$TMP/verify.err"; exit 1; }
grep -q "$N final proofs against final key $FD" "$TMP/verify.out" || { cat "$TMP/verify.out"; exit 1; }

# A task kind's time, summed over the processes (prover_task_duration_seconds).
task() {
  local total=0 v name
  for name in "${ROLES[@]}"; do
    v=$(curl -sf "http://127.0.0.1:${METRICS[$name]}/metrics" | sed -n "s/^prover_task_duration_seconds_sum{kind=\"$1\"} \(.*\)/\1/p")
    total=$(awk "BEGIN {print $total + ${v:-0}}")
  done
  printf '%.1f' "$total"
}
size() { stat -c %s "$TMP/proof/$1"; }
echo "job $JOB: circuit $ID, $N witness(es), compressed, $WORKERS workers"
echo "verify command: prover $CMD"
cat "$TMP/verify.out"
printf '| witnesses | wall (submit to done) | testudo.setup | testudo.prove | testudo.compress | testudo.publish | inner-0.bin | final-0.bin | tc-vk.bin | final-key.bin | verify (offline) | planner | executor | aggregator |'
for i in $(seq 0 $((WORKERS - 1))); do printf ' worker-%s |' "$i"; done
printf '\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
for _ in $(seq 1 "$WORKERS"); do printf -- '---|'; done
printf '\n| %s | %.1f s | %s s | %s s | %s s | %s s | %s B | %s B | %s B | %s B | %s | %s MiB | %s MiB | %s MiB |' "$N" "$WALL" \
  "$(task testudo.setup)" "$(task testudo.prove)" "$(task testudo.compress)" "$(task testudo.publish)" \
  "$(size inner-0.bin)" "$(size final-0.bin)" "$(size tc-vk.bin)" "$(size final-key.bin)" \
  "$(sed -n 's/^checked in //p' "$TMP/verify.err")" "$(hwm "${PID[planner]}")" "$(hwm "${PID[executor]}")" "$(hwm "${PID[aggregator]}")"
for i in $(seq 0 $((WORKERS - 1))); do printf ' %s MiB |' "$(hwm "${PID[worker-$i]}")"; done
printf '\n'

# The second job: the keys are found by digest, not made again.
R=$(job "${W[2]}")
read -r JOB2 WALL2 <<<"$R"
"$PROVER" fetch "$JOB2" --out "$TMP/proof2" --endpoint "$EP" >"$TMP/fetch2.out"
grep -q "^final key digest = $FD\$" "$TMP/fetch2.out" || { echo "the second job did not reuse the final key:"; cat "$TMP/fetch2.out"; exit 1; }
"$PROVER" testudo verify "$TMP/proof2" --r1cs "$R1CS" --final-key-digest "$FD" >/dev/null 2>"$TMP/verify2.err" \
  || { cat "$TMP/verify2.err"; exit 1; }
printf '\nsecond job %s (the third witness, both keys reused): %.1f s submit to done; testudo.setup total now %s s\n' \
  "$JOB2" "$WALL2" "$(task testudo.setup)"

lie() { # NAME DIR: the pinned verifier must refuse DIR
  if "$PROVER" testudo verify "$2" --r1cs "$R1CS" --final-key-digest "$FD" >/dev/null 2>"$TMP/lie.err"; then
    echo "ACCEPTED a lie: $1"; exit 1
  fi
  printf -- '- refused, %s: %s\n' "$1" "$(tail -1 "$TMP/lie.err" | cut -c1-300)"
}
mk() { rm -rf "$TMP/$1" && cp -r "$TMP/proof" "$TMP/$1"; }
flip() { # FILE OFFSET (negative: from the end): flips the low bit of that byte
  python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[int(sys.argv[2])] ^= 1; open(p, "wb").write(b)' "$1" "$2"
}
echo
echo "lies, each checked by \`prover testudo verify DIR --r1cs $R1CS --final-key-digest $FD\`:"
# final-<i>.bin is "TSFP" ‖ version ‖ Pari proof ‖ r_x ‖ ρ ‖ r_y ‖ v_M: v_M is the last 32 bytes
# (little-endian), so its low bit is byte −32, and the value stays canonical.
mk vm; flip "$TMP/vm/final-0.bin" -32
lie "v_M + 1 in final-0.bin (the claimed matrix evaluation)" "$TMP/vm"
mk pari; flip "$TMP/pari/final-0.bin" 8
lie "a bit of final-0.bin's Pari proof flipped" "$TMP/pari"
mk io; python3 - "$TMP/io/public.json" <<'PY'
import json, sys
p = sys.argv[1]; v = json.load(open(p)); v[0]["public"][0] = str(int(v[0]["public"][0]) + 1); json.dump(v, open(p, "w"))
PY
lie "witness 0's proofs under another public output" "$TMP/io"
if [ "$N" -ge 2 ]; then
  mk swapped; cp "$TMP/proof/final-1.bin" "$TMP/swapped/final-0.bin"; cp "$TMP/proof/final-0.bin" "$TMP/swapped/final-1.bin"
  lie "witness 0's and witness 1's final proofs swapped" "$TMP/swapped"
fi
mk other; cp "$TMP/proof2/final-0.bin" "$TMP/other/final-0.bin"
lie "the second job's final proof (another witness) in place of final-0.bin" "$TMP/other"
mk dropped; rm "$TMP/dropped/final-0.bin"
lie "final-0.bin missing" "$TMP/dropped"
if "$PROVER" testudo verify "$TMP/proof" --r1cs "$R1CS" --final-key-digest "$(echo "$FD" | tr 0-9a-f 1-9a-f0)" >/dev/null 2>"$TMP/lie.err"; then
  echo "ACCEPTED a final key that is not the pinned one"; exit 1
fi
printf -- '- refused, a final key whose digest is not the pinned one: %s\n' "$(tail -1 "$TMP/lie.err" | cut -c1-300)"
