#!/usr/bin/env bash
# Compiles crates/circom/tests/fixtures/example.circom with circom2 (npm, circom's compiler as
# WebAssembly) for BN254 (--prime bn128) and BLS12-381, and computes three witnesses of each
# with snarkjs: OUT/<curve>/example.r1cs and OUT/<curve>/w<i>.wtns (inputs in OUT/inputs/).
# Usage: scripts/circom-fixtures.sh OUT. Needs node and npm (the npm registry, or its cache).
set -euo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)/crates/circom/tests/fixtures"
cd "$out"
cp "$here/example.circom" .
[ -d node_modules/snarkjs ] || npm install --silent --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5 >/dev/null
mkdir -p inputs
i=0
for ab in "3 11" "5 7" "2 13"; do
  set -- $ab
  echo "{\"a\": \"$1\", \"b\": \"$2\"}" > "inputs/w$i.json"
  i=$((i + 1))
done
for pair in bn128:bn254 bls12381:bls12381; do
  prime="${pair%%:*}" name="${pair##*:}"
  mkdir -p "$name"
  npx circom2 example.circom --r1cs --wasm --prime "$prime" -o "$name" >/dev/null
  for j in 0 1 2; do
    npx snarkjs wtns calculate "$name/example_js/example.wasm" "inputs/w$j.json" "$name/w$j.wtns" >/dev/null
  done
done
echo "circom fixtures in $out"
