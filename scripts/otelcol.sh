#!/usr/bin/env bash
# Builds an OpenTelemetry Collector (OTLP receiver, debug exporter) with the collector's own
# builder (ocb), from the Go module proxy, and prints the binary's path. Cached: a second run
# with the same manifest only prints the path.
#
#   bash scripts/otelcol.sh [CACHE_DIR]     (default ~/.cache/prover-otelcol)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
manifest="$here/otelcol/builder-config.yaml"
cache="${1:-$HOME/.cache/prover-otelcol}"
version=v0.165.0
sum=$(sha256sum "$manifest" | cut -c1-16)
bin="$cache/prover-otelcol-$sum"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "otelcol: go is not installed (https://go.dev/dl; Debian: apt-get install golang)" >&2
  exit 1
fi
mkdir -p "$cache"
if [ ! -x "$cache/builder-$version" ]; then
  GOBIN="$cache/gobin" go install "go.opentelemetry.io/collector/cmd/builder@$version" >&2
  mv "$cache/gobin/builder" "$cache/builder-$version"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$manifest" "$work/builder-config.yaml"
(cd "$work" && "$cache/builder-$version" --config builder-config.yaml >&2)
mv "$work/build/prover-otelcol" "$bin"
echo "$bin"
