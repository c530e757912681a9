#!/usr/bin/env bash
# Issue 29's done-when on a multi-process cluster on loopback (planner, executor, aggregator, a
# plain worker and a wrap worker, each its own `prover serve` process, over real Redis and
# MinIO): a wrap key made offline with OS randomness (`prover reckle wrap-setup`, minutes and
# ~10 GB) and imported; Reckle jobs submitted with --final end with a final.bin that
# `prover reckle verify-final --root C --wrap-vk-digest D` accepts, and that it rejects for
# another C, tampered, with another job's statement (same C, another batch), and without a pin;
# an update job with --final gives a final proof for its new C; the three verified in one batch.
# Prints timings and each process's peak resident memory (VmHWM).
#
#   scripts/bench-reckle-final.sh            (WRAP_KEY_DIR=DIR reuses a key wrap-setup wrote)
#
# Needs redis-server and minio on PATH (scripts/test.d/10-services.sh installs them) and the
# `prover` binary: $PROVER_BIN, or the test profile's build in $CARGO_TARGET_DIR/debug (the
# proof crates are optimised in that profile too). One run at a time: it needs ~10 GB free.
set -euo pipefail
cd "$(dirname "$0")/.."
REDIS_PORT="${REDIS_PORT:-6411}"
MINIO_PORT="${MINIO_PORT:-9211}"
GRPC="${GRPC_PORT:-50493}"
# shellcheck source=scripts/lib/bench-backends.sh
source scripts/lib/bench-backends.sh

fail() { echo "FAILED: $*"; for f in "$TMP"/*.log; do echo "== $f"; tail -15 "$f"; done; exit 1; }

# 1. The wrap key: made offline, imported under its digest.
KEYDIR="${WRAP_KEY_DIR:-$TMP/wrap-key}"
if [ ! -f "$KEYDIR/vk.bin" ]; then
  s=$(date +%s.%N)
  /usr/bin/time -v "$PROVER" reckle wrap-setup --out "$KEYDIR" >"$TMP/setup.out" 2>"$TMP/setup.err" || { cat "$TMP/setup.err"; exit 1; }
  echo "wrap-setup: $(awk "BEGIN {printf \"%.0f\", $(date +%s.%N) - $s}") s, peak $(awk '/Maximum resident/ {printf "%.0f", $6/1024}' "$TMP/setup.err") MiB"
fi
"$PROVER" reckle wrap-key import "$KEYDIR" "${common[@]}" >"$TMP/import.out" 2>&1 || { cat "$TMP/import.out"; exit 1; }
DIGEST=$(sed -n 's/^imported wrap key //p; s/^wrap key \([0-9a-f]*\) is already imported/\1/p' "$TMP/import.out")
[ ${#DIGEST} = 128 ] || { cat "$TMP/import.out"; exit 1; }
echo "wrap key $DIGEST ($(stat -c %s "$KEYDIR/pk.bin") bytes of proving key)"

# 2. The cluster: every role pins the key; only wrap-0 serves reckle.wrap.
ROLES=(planner executor aggregator worker-0 wrap-0)
port=50500
for name in "${ROLES[@]}"; do
  role="${name%%-*}"
  extra=()
  [ "$role" = planner ] && extra=(--listen "127.0.0.1:$GRPC")
  [ "$role" = wrap ] && { role=worker; extra=(--reckle-wrap-worker --kinds reckle.wrap); }
  port=$((port + 1))
  start_role "$name" "$role" "$port" --reckle-wrap-vk-digest "$DIGEST" "${extra[@]}"
done
wait_ready "${ROLES[@]}"
EP=(--endpoint "http://127.0.0.1:$GRPC")

# 3. Jobs: A and B commit to the same leaves (same C), other batches; U updates A.
run() {  # run NAME SUBMIT-ARGS…: submits, waits, fetches into $TMP/NAME; prints the wall time
  local name=$1 s job
  shift
  s=$(date +%s.%N)
  job=$("$PROVER" submit "$@" "${EP[@]}")
  "$PROVER" watch "$job" "${EP[@]}" >/dev/null || { "$PROVER" status "$job" "${EP[@]}"; fail "job $name"; }
  echo "$job" >"$TMP/$name.job"
  "$PROVER" fetch "$job" --out "$TMP/$name" "${EP[@]}" >"$TMP/$name.fetch"
  awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $s}" >"$TMP/$name.secs"
}
root() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["root"])' "$TMP/$1/statement.json"; }
run A reckle --random-leaves 4 --log-bucket 1 --seed 1 --batch 1,2 --final
run B reckle --random-leaves 4 --log-bucket 1 --seed 1 --batch 0,3 --final
run U reckle-update --base "$(cat "$TMP/A.job")" --set 0=99 --final
CA=$(root A) CB=$(root B) CU=$(root U)
[ "$CA" = "$CB" ] && [ "$CA" != "$CU" ] || fail "expected C_A = C_B != C_U"
grep -q "verify-final" "$TMP/A.fetch" || fail "the manifest names no verify-final command"

# 4. The verdicts.
accept() { "$PROVER" reckle verify-final "$@" >"$TMP/v.out" 2>"$TMP/v.err" || { cat "$TMP/v.err"; fail "rejected: $*"; }; }
reject() { if "$PROVER" reckle verify-final "$@" >"$TMP/v.out" 2>"$TMP/v.err"; then fail "accepted: $*"; fi; echo "  rejected, ${WHY}: $(grep -v 'final proofs rejected\|in one batch in' "$TMP/v.err" | tail -1)"; }
PIN=(--wrap-vk-digest "$DIGEST")
accept "$TMP/A" --root "$CA" "${PIN[@]}"
echo "A accepted against C_A: $(grep -o 'in one batch in .*' "$TMP/v.err")"
accept "$TMP/U" --root "$CU" "${PIN[@]}"
echo "U (update) accepted against its new C_U"
WHY="A against C_U" reject "$TMP/A" --root "$CU" "${PIN[@]}"
WHY="U against the old C_A" reject "$TMP/U" --root "$CA" "${PIN[@]}"
WHY="no --wrap-vk-digest" reject "$TMP/A" --root "$CA"
mkdir "$TMP/T" && cp "$TMP"/A/* "$TMP/T/"
python3 - "$TMP/T/final.bin" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[-32] ^= 1  # the low bit of v_b (still canonical: the pairing check must catch it)
open(sys.argv[1], 'wb').write(b)
EOF
WHY="tampered final.bin" reject "$TMP/T" --root "$CA" "${PIN[@]}"
mkdir "$TMP/X" && cp "$TMP"/A/* "$TMP/X/" && cp "$TMP/B/statement.json" "$TMP/B/proof.bin" "$TMP/X/"
WHY="A's final.bin with B's statement (same C, another batch)" reject "$TMP/X" --root "$CA" "${PIN[@]}"
WHY="another wrap key pinned" reject "$TMP/A" --root "$CA" --wrap-vk-digest "$(printf '%0128d' 1)"
accept "$TMP/A" "$TMP/B" "$TMP/U" --root "$CA" --root "$CB" --root "$CU" "${PIN[@]}"
echo "A, B, U accepted in one batch: $(grep -o 'in one batch in .*' "$TMP/v.err")"

# 5. The table.
wrap_s=$(curl -sf "http://127.0.0.1:${METRICS[wrap-0]}/metrics" | sed -n 's/^prover_reckle_wrap_seconds_sum \(.*\)/\1/p')
key_b=$(curl -sf "http://127.0.0.1:${METRICS[wrap-0]}/metrics" | sed -n 's/^prover_wrap_key_bytes \(.*\)/\1/p')
echo
echo "| job | submit to done | final.bin |"
echo "|---|---|---|"
for j in A B U; do echo "| $j | $(cat "$TMP/$j.secs") s | $(stat -c %s "$TMP/$j/final.bin") B |"; done
echo
echo "wraps (normalize + shrink + Pari, 3 jobs): ${wrap_s:-?} s in all; wrap key resident: $(awk "BEGIN {printf \"%.0f\", ${key_b:-0}/1048576}") MiB"
grep -h "wrap proving key loaded" "$TMP/wrap-0.log" | tail -1
printf '| planner | executor | aggregator | worker-0 | wrap-0 |\n|---|---|---|---|---|\n| %s MiB | %s MiB | %s MiB | %s MiB | %s MiB |\n' \
  "$(hwm "${PID[planner]}")" "$(hwm "${PID[executor]}")" "$(hwm "${PID[aggregator]}")" "$(hwm "${PID[worker-0]}")" "$(hwm "${PID[wrap-0]}")"
echo "all checks passed"
