# The chart's default memory limits against what each role needs at the platform's limits
# (`prover limits --local` with the chart's cacheBytes and circuitBytes; issue 31 item 6), for
# the chart's defaults and each helm/prover/ci values file. Uses helm (30-k8s.sh installs it)
# and the `prover` binary the cargo step built.
#
# Sourced by scripts/test.sh (set -euo pipefail, repository root); also runs on its own:
#   bash scripts/test.d/55-limits.sh

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/../.."
fi
export PATH="$HOME/go/bin:/usr/local/go/bin:$PATH"
limits_prover="${PROVER_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/prover-target}/debug/prover}"
limits_out="$(mktemp)"
for limits_f in "" helm/prover/ci/*.yaml; do
  helm template prover helm/prover --namespace prover --kube-version 1.31.0 ${limits_f:+-f "$limits_f"} >"$limits_out"
  python3 helm/check_memory.py "$limits_out" "$limits_prover" >/dev/null \
    || { echo "FAILED: memory limits of helm template ${limits_f:-(defaults)}" >&2; exit 1; }
  echo "ok   memory limits hold each role's need: helm template ${limits_f:-(defaults)}"
done
rm -f "$limits_out"
