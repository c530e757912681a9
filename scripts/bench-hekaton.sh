#!/usr/bin/env bash
# One Hekaton job of k subcircuits on a multi-process cluster on loopback (planner, executor,
# aggregator and W workers, each its own `prover serve` process, over real Redis and MinIO), as
# issue 30 asks for k = 64: the job's wall time (submit to done), the aggregated proof's size,
# the time `prover hekaton verify` takes to check it against the pinned keys, the aggregator's
# aggregation time, and each role's peak resident memory (VmHWM).
#
#   scripts/bench-hekaton.sh [k] [steps] [wires] [workers]     (default: 64 1024 16 2)
#   HEKATON_FINAL=1 scripts/bench-hekaton.sh 4 64 4 2             (--final jobs: the wrap too)
#
# With HEKATON_FINAL=1 the job asks for the final proof: the workers (which serve every kind,
# hekaton.wrap included) also make the wrap keys (in the setup task) and the wrap, and the
# table adds the wrap setup's and the wrap's CPU time, final.bin's size and the time
# `prover hekaton verify-final` takes. A second job (seed 2) then reuses the wrap keys; both
# final proofs are checked in one batch, and verify-final must refuse a flipped bit, job 1's
# proof for job 2's x, job 1's Pari proof spliced with job 2's rt and path, and another digest.
#
# Needs redis-server and minio on PATH (scripts/test.d/10-services.sh installs them) and the
# `prover` binary: $PROVER_BIN, or the test profile's build in $CARGO_TARGET_DIR/debug.
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-64}"
STEPS="${2:-1024}"
WIRES="${3:-16}"
WORKERS="${4:-2}"
REDIS_PORT=6387
MINIO_PORT=9187
GRPC=50393
# shellcheck source=scripts/lib/bench-backends.sh
source scripts/lib/bench-backends.sh

start_cluster 50400 "$WORKERS"

EP="http://127.0.0.1:$GRPC"
start=$(date +%s.%N)
FINAL=()
[ "${HEKATON_FINAL:-0}" = 1 ] && FINAL=(--final)
JOB=$("$PROVER" submit hekaton --circuit synthetic --subcircuits "$K" --steps "$STEPS" --wires "$WIRES" --seed 1 "${FINAL[@]}" --endpoint "$EP")
"$PROVER" watch "$JOB" --endpoint "$EP" >/dev/null || { "$PROVER" status "$JOB" --endpoint "$EP"; tail -20 "$TMP"/aggregator.log; exit 1; }
end=$(date +%s.%N)
FETCHED=$("$PROVER" fetch "$JOB" --out "$TMP/proof" --endpoint "$EP")
CMD=$(echo "$FETCHED" | sed -n 's/^verify with: prover //p' | sed -n 1p)
# shellcheck disable=SC2086  # the command's words
"$PROVER" $CMD >"$TMP/verify.out" 2>"$TMP/verify.err" || { cat "$TMP/verify.err"; exit 1; }
agg=$(curl -sf "http://127.0.0.1:${METRICS[aggregator]}/metrics" | sed -n 's/^prover_hekaton_cpu_seconds_sum{step="aggregate"} \(.*\)/\1/p')

echo "job $JOB: k = $K, $STEPS steps, $WIRES wires, $WORKERS workers"
echo "verify command: prover $CMD"
sed -n 1p "$TMP/verify.out"
printf '| k | wall time (submit to done) | aggregation (aggregator) | proof.bin | verify | planner | executor | aggregator |'
for i in $(seq 0 $((WORKERS - 1))); do printf ' worker-%s |' "$i"; done
printf '\n|---|---|---|---|---|---|---|---|'
for _ in $(seq 1 "$WORKERS"); do printf -- '---|'; done
printf '\n| %s | %.1f s | %s s | %s bytes | %s | %s MiB | %s MiB | %s MiB |' "$K" "$(awk "BEGIN {print $end - $start}")" "${agg:-?}" \
  "$(stat -c %s "$TMP/proof/proof.bin")" "$(sed -n 's/^checked in //p' "$TMP/verify.err")" \
  "$(hwm "${PID[planner]}")" "$(hwm "${PID[executor]}")" "$(hwm "${PID[aggregator]}")"
for i in $(seq 0 $((WORKERS - 1))); do printf ' %s MiB |' "$(hwm "${PID[worker-$i]}")"; done
printf '\n'
if [ "${#FINAL[@]}" -gt 0 ]; then
  FCMD=$(echo "$FETCHED" | sed -n 's/^verify with: prover //p' | grep verify-final)
  # shellcheck disable=SC2086  # the command's words
  "$PROVER" $FCMD >"$TMP/final.out" 2>"$TMP/final.err" || { cat "$TMP/final.err"; exit 1; }
  # The wrap setup and the wrap ran on whichever workers took them: sum over the workers.
  cpu() {
    local total=0 v
    for i in $(seq 0 $((WORKERS - 1))); do
      v=$(curl -sf "http://127.0.0.1:${METRICS[worker-$i]}/metrics" | sed -n "s/^prover_hekaton_cpu_seconds_sum{step=\"$1\"} \(.*\)/\1/p")
      total=$(awk "BEGIN {print $total + ${v:-0}}")
    done
    echo "$total"
  }
  printf '| k | wrap setup (worker) | wrap (worker) | final.bin | verify-final |\n|---|---|---|---|---|\n'
  printf '| %s | %s s | %s s | %s bytes | %s |\n' "$K" "$(cpu "wrap setup")" "$(cpu wrap)" "$(stat -c %s "$TMP/proof/final.bin")" \
    "$(sed -n 's/^checked in //p' "$TMP/final.err" | head -1)"

  # A second job of the same circuit and k with another seed (another x, another rt): it reuses
  # the wrap keys, so its wall time is the Hekaton proof and one wrap. Then both final proofs
  # are checked in one batch, and every lie below must be refused by verify-final.
  start2=$(date +%s.%N)
  JOB2=$("$PROVER" submit hekaton --circuit synthetic --subcircuits "$K" --steps "$STEPS" --wires "$WIRES" --seed 2 --final --endpoint "$EP")
  "$PROVER" watch "$JOB2" --endpoint "$EP" >/dev/null || { "$PROVER" status "$JOB2" --endpoint "$EP"; exit 1; }
  end2=$(date +%s.%N)
  "$PROVER" fetch "$JOB2" --out "$TMP/proof2" --endpoint "$EP" >/dev/null
  DIGEST=$(echo "$FCMD" | sed -n 's/.*--key-digest \([0-9a-f]*\).*/\1/p')
  cmp -s "$TMP/proof/final-key.bin" "$TMP/proof2/final-key.bin" || { echo "the second job did not reuse the final key"; exit 1; }
  "$PROVER" hekaton verify-final "$TMP/proof" "$TMP/proof2" --key-digest "$DIGEST" >"$TMP/batch.out" 2>"$TMP/batch.err" \
    || { cat "$TMP/batch.err"; exit 1; }
  printf '\nsecond job %s (seed 2, keys reused): %.1f s submit to done; both final proofs in one batch: %s\n' "$JOB2" \
    "$(awk "BEGIN {print $end2 - $start2}")" \
    "$(sed -n 's/^checked in //p' "$TMP/batch.err")"
  lie() { # NAME DIR: verify-final must refuse DIR
    if "$PROVER" hekaton verify-final "$2" --key-digest "$DIGEST" >/dev/null 2>"$TMP/lie.err"; then
      echo "ACCEPTED a lie: $1"; exit 1
    fi
    printf -- '- refused, %s: %s\n' "$1" "$(tail -1 "$TMP/lie.err")"
  }
  mk() { rm -rf "$TMP/$1" && mkdir "$TMP/$1" && cp "$TMP/proof/final-key.bin" "$TMP/$1/"; }
  # final.bin is "HKFP" ‖ version ‖ Pari proof ‖ rt ‖ leaf-0 path (u64 length, then 32-byte
  # elements): the tail's length comes from the path's length prefix.
  tail_len() { python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
for d in range(1, 64):
    at = len(b) - 32 * d - 8
    if int.from_bytes(b[at:at + 8], "little") == d:
        print(32 + 8 + 32 * d); break
else:
    sys.exit("no path length found")' "$1"; }
  mk tampered; cp "$TMP/proof/public.json" "$TMP/tampered/"
  python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 3] ^= 1; open(sys.argv[2], "wb").write(b)' \
    "$TMP/proof/final.bin" "$TMP/tampered/final.bin"
  lie "one bit of the Pari proof flipped" "$TMP/tampered"
  # A flipped bit in a point's encoding is refused by the parser; flip bits backwards from the
  # Pari proof's end (its scalars) until one still parses, so the pairing check refuses it.
  T=$(tail_len "$TMP/proof/final.bin")
  SIZE=$(stat -c %s "$TMP/proof/final.bin")
  for back in $(seq $((T + 1)) $((T + 200))); do
    python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-int(sys.argv[3])] ^= 1; open(sys.argv[2], "wb").write(b)' \
      "$TMP/proof/final.bin" "$TMP/tampered/final.bin" "$back"
    "$PROVER" hekaton verify-final "$TMP/tampered" --key-digest "$DIGEST" >/dev/null 2>"$TMP/lie.err" && { echo "ACCEPTED a flipped bit at byte $((SIZE - back))"; exit 1; }
    grep -q serialization "$TMP/lie.err" || break
  done
  printf -- '- refused, a flipped bit that still parses (byte %s of %s): %s\n' "$((SIZE - back))" "$SIZE" "$(tail -1 "$TMP/lie.err")"
  mk otherx; cp "$TMP/proof/final.bin" "$TMP/otherx/"; cp "$TMP/proof2/public.json" "$TMP/otherx/"
  lie "job 1's final proof for job 2's x" "$TMP/otherx"
  mk otherrt; cp "$TMP/proof2/public.json" "$TMP/otherrt/"
  { head -c -"$T" "$TMP/proof/final.bin"; tail -c "$T" "$TMP/proof2/final.bin"; } >"$TMP/otherrt/final.bin"
  lie "job 1's Pari proof with job 2's rt, path and x" "$TMP/otherrt"
  if "$PROVER" hekaton verify-final "$TMP/proof" --key-digest "$(echo "$DIGEST" | tr 0-9a-f 1-9a-f0)" >/dev/null 2>&1; then
    echo "ACCEPTED a final key that is not the pinned one"; exit 1
  fi
  echo "- refused: a final key whose digest is not the pinned one"
fi
