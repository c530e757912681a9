#!/usr/bin/env bash
# Pari against ark-groth16 and `snarkjs groth16 prove` on a circom circuit: a chain of 48
# circomlib Poseidon(2) hashes (24,816 constraints, 13,152 of them linear). Compiles it with
# circom2, computes the witness and a Groth16 zkey with snarkjs (a fresh powers-of-tau of size
# 2^15, a few minutes in node), then runs crates/circom/examples/circom_bench.rs.
# Needs node and npm (the npm registry); the work directory is printed and kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
work="${CIRCOM_BENCH_DIR:-$(mktemp -d)}"
echo "working in $work"
cp "$here/chain.circom" "$work/"
cd "$work"
echo '{"x": "7"}' > input.json
[ -d node_modules/snarkjs ] || npm install --silent circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5
mkdir -p chain
npx circom2 chain.circom --r1cs --wasm -o chain
npx snarkjs wtns calculate chain/chain_js/chain.wasm input.json chain/witness.wtns
if [ ! -f c1.zkey ]; then
  npx snarkjs powersoftau new bn128 15 pot0.ptau
  npx snarkjs powersoftau contribute pot0.ptau pot1.ptau --name=bench -e="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  npx snarkjs powersoftau prepare phase2 pot1.ptau pot.ptau
  npx snarkjs groth16 setup chain/chain.r1cs pot.ptau c0.zkey
  npx snarkjs zkey contribute c0.zkey c1.zkey --name=bench -e="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
fi
cd "$repo"
cargo run --release -p circom --example circom_bench -- "$work/chain/chain.r1cs" "$work/chain/witness.wtns" --zkey "$work/c1.zkey" --reps 3
