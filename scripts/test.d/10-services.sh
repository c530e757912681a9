# Real Redis and a real S3-compatible server (MinIO) for the queue, blob-store and platform
# tests. Installs what is missing, starts both on loopback ports of their own, exports their
# addresses, and stops them when the test command exits. PROVER_TEST_REDIS_PORT and
# PROVER_TEST_MINIO_PORT move them (two checkouts testing at once on one machine).

export PATH="$HOME/go/bin:/usr/local/go/bin:$PATH"
if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing redis-server (apt)"
  (apt-get update -qq && apt-get install -y -qq redis-server) >/dev/null
fi
if ! command -v minio >/dev/null 2>&1; then
  echo "installing MinIO (go install, about 3 minutes the first time)"
  (cd /tmp && GOFLAGS=-mod=mod go install github.com/minio/minio@latest)
fi
# The MinIO client, for the test of the chart's bucket-scoped services user
# (helm/prover/files/minio-services-user.sh).
# ~/go/bin/mc itself: another `mc` on the PATH may be Midnight Commander.
if [ ! -x "$HOME/go/bin/mc" ]; then
  echo "installing the MinIO client mc (go install, about a minute the first time)"
  (cd /tmp && GOFLAGS=-mod=mod GOBIN="$HOME/go/bin" go install github.com/minio/mc@latest)
fi
export PROVER_TEST_MC="$HOME/go/bin/mc"
# A Redis-compatible server with WAITAOF (Valkey 8, from Debian's bookworm-backports; the apt
# Redis is 7.0, which has none), for the durable-acknowledgement tests. Unpacked from the .deb
# into a cache, not installed: the binary is multi-call and runs as the server under that name.
VALKEY_DIR="$HOME/.cache/prover-tools/valkey-8.0.1"
if [ ! -x "$VALKEY_DIR/valkey-server" ]; then
  echo "fetching valkey-server 8.0.1 (Debian bookworm-backports)"
  deb="valkey-tools_8.0.1+dfsg1-1~bpo12+1_amd64.deb"
  mkdir -p "$VALKEY_DIR"
  curl -sSf -o "$VALKEY_DIR/$deb" "http://deb.debian.org/debian/pool/main/v/valkey/$deb"
  echo "d2c2ea67642fa9571a07138b80ae52ebe566311c952aef25a39c1d5050697853  $VALKEY_DIR/$deb" | sha256sum -c --quiet
  dpkg -x "$VALKEY_DIR/$deb" "$VALKEY_DIR/root"
  ln -sf "$VALKEY_DIR/root/usr/bin/valkey-check-aof" "$VALKEY_DIR/valkey-server"
  rm -f "$VALKEY_DIR/$deb"
fi
export PROVER_TEST_VALKEY_SERVER="$VALKEY_DIR/valkey-server"
# Toxiproxy (a TCP proxy that injects latency and cuts), for the Redis latency test.
TOXIPROXY_DIR="$HOME/.cache/prover-tools/toxiproxy-2.5.0"
if [ ! -x "$TOXIPROXY_DIR/server" ]; then
  echo "installing toxiproxy 2.5.0 (go install, about a minute the first time)"
  (cd /tmp && GOFLAGS=-mod=mod GOBIN="$TOXIPROXY_DIR" go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0)
fi
export PROVER_TEST_TOXIPROXY="$TOXIPROXY_DIR/server"

PROVER_TEST_TMP="$(mktemp -d)"
REDIS_PORT="${PROVER_TEST_REDIS_PORT:-6391}"
MINIO_PORT="${PROVER_TEST_MINIO_PORT:-9191}"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --maxmemory-policy noeviction --daemonize yes --pidfile "$PROVER_TEST_TMP/redis.pid" \
  --logfile "$PROVER_TEST_TMP/redis.log"
export AWS_ACCESS_KEY_ID=prover-test-key
export AWS_SECRET_ACCESS_KEY=prover-test-secret-key
MINIO_ROOT_USER="$AWS_ACCESS_KEY_ID" MINIO_ROOT_PASSWORD="$AWS_SECRET_ACCESS_KEY" \
  minio server "$PROVER_TEST_TMP/minio" --address "127.0.0.1:$MINIO_PORT" \
  --console-address "127.0.0.1:$((MINIO_PORT + 1))" >"$PROVER_TEST_TMP/minio.log" 2>&1 &
MINIO_PID=$!
cleanup_services() {
  kill "$MINIO_PID" 2>/dev/null || true
  [ -f "$PROVER_TEST_TMP/redis.pid" ] && kill "$(cat "$PROVER_TEST_TMP/redis.pid")" 2>/dev/null || true
}
# Chained to an EXIT trap set before (test.sh stops its background build there).
services_prev_trap="$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")"
# shellcheck disable=SC2064
trap "cleanup_services; ${services_prev_trap:-true}" EXIT

for _ in $(seq 1 100); do
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 \
     && curl -sf "http://127.0.0.1:$MINIO_PORT/minio/health/live" >/dev/null 2>&1; then
    break
  fi
  sleep 0.2
done
redis-cli -p "$REDIS_PORT" ping >/dev/null
curl -sf "http://127.0.0.1:$MINIO_PORT/minio/health/live" >/dev/null || { cat "$PROVER_TEST_TMP/minio.log"; false; }

export PROVER_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/"
export PROVER_TEST_S3_ENDPOINT="http://127.0.0.1:$MINIO_PORT"
export PROVER_TEST_S3_BUCKET=prover-test
export PROVER_TEST_REQUIRE_SERVICES=1
echo "Redis at $PROVER_TEST_REDIS_URL, MinIO at $PROVER_TEST_S3_ENDPOINT"
