#!/usr/bin/env bash
# MinIO (the S3-compatible server docker-compose runs) as the test server for the S3 blob-store
# adapter. No Docker and no internet here except the package registries, so it is built from the
# Go module proxy (like FerretDB) and cached under the servers dir.
#
#   bash scripts/servers/minio.sh install            # build once into $SERVERS_DIR/bin (no-op when built)
#   eval "$(bash scripts/servers/minio.sh start)"    # sets S3_ENDPOINT=http://127.0.0.1:PORT
#   bash scripts/servers/minio.sh status
#   bash scripts/servers/minio.sh stop
#
# `start` prints exactly one line to stdout (S3_ENDPOINT=...); everything else goes to stderr.
# The credentials are fixed test values (below; the suites use them unless S3_ACCESS_KEY_ID and
# S3_SECRET_ACCESS_KEY say otherwise) and the server listens on 127.0.0.1 only.
# Timings measured on 2 cores: build 2.5 min with an empty module cache (226 modules; ~6 s when
# Go's build cache has it), nothing when built; start ~1 s; stop <1 s.
#
# Why MinIO and not moto (PyPI): moto's server does not check presigned URLs at all. A PUT to a
# presigned URL with another content type, another length, another key or after its expiry is
# stored (200), so the conformance suite could not tell a URL that binds its upload from one
# that does not. MinIO verifies SigV4 query signatures and expiry exactly as S3 does.
#
# Environment:
#   SERVERS_DIR            cache and state root (default: <repo>/.ci/servers)
#   MINIO_PORT             S3 API port on 127.0.0.1 (default: KAFKA_PORT + 3 when KAFKA_PORT is
#                          set, so the port sets given to parallel test runs stay apart; else 19095)
#   MINIO_START_TIMEOUT    seconds to wait for the server to be ready (default: 30)
set -euo pipefail

# All chatter goes to stderr; fd 3 is the real stdout, used only for the S3_ENDPOINT line.
exec 3>&1 1>&2

# A pseudo-version: MinIO tags releases as RELEASE.<date>, which Go does not read as semver.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_MODULE=github.com/minio/minio
ROOT_USER=notes-test
ROOT_PASSWORD=notes-test-secret

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_DIR=${SERVERS_DIR:-$REPO_DIR/.ci/servers}
if [ -n "${MINIO_PORT:-}" ]; then PORT=$MINIO_PORT
elif [ -n "${KAFKA_PORT:-}" ]; then PORT=$((KAFKA_PORT + 3))
else PORT=19095; fi
START_TIMEOUT=${MINIO_START_TIMEOUT:-30}

BIN_DIR=$SERVERS_DIR/bin
BIN=$BIN_DIR/minio
BUILT_STAMP=$BIN_DIR/.minio.version
SRC_DIR=$SERVERS_DIR/src/minio-$MINIO_VERSION
# State is per port, so two instances on different ports do not share data, logs or pid files.
STATE_ROOT=$SERVERS_DIR/minio-$PORT
DATA_DIR=$STATE_ROOT/data
LOG_FILE=$STATE_ROOT/minio.log
PID_FILE=$STATE_ROOT/minio.pid
SERVER_LABEL=MinIO
SERVER_TAG=minio
PROCESS_MATCH="$BIN server"
# shellcheck source=scripts/servers/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"



is_built() {
  [ -x "$BIN" ] && [ -f "$BUILT_STAMP" ] && [ "$(cat "$BUILT_STAMP")" = "$MINIO_VERSION" ]
}

install_minio() {
  if is_built; then return 0; fi
  mkdir -p "$BIN_DIR" "$SERVERS_DIR/src"
  # Serialise concurrent installs (two test runs starting at once).
  exec 9>"$SERVERS_DIR/.minio-install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if is_built; then exec 9>&-; return 0; fi

  local go started dl dir commit
  go=$(find_go)
  started=$(date +%s)
  log "building MinIO $MINIO_VERSION into $BIN (first run only; ~3 min on 2 cores with a cold module cache)"
  # `go mod download` of the exact version: no version-list lookup (the proxy here refuses those).
  dl=$("$go" mod download -json "$MINIO_MODULE@$MINIO_VERSION") \
    || die "go mod download $MINIO_MODULE@$MINIO_VERSION failed (is the Go module proxy reachable?)"
  dir=$(printf '%s\n' "$dl" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1)
  [ -n "$dir" ] && [ -d "$dir" ] || die "could not locate the downloaded module source (go mod download output: $dl)"
  commit=${MINIO_VERSION##*-}

  rm -rf "$SRC_DIR"
  cp -R "$dir" "$SRC_DIR"
  chmod -R u+w "$SRC_DIR" # the module cache is read-only
  rm -f "$BUILT_STAMP"
  (cd "$SRC_DIR" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$go" build -trimpath \
    -ldflags "-s -w -X github.com/minio/minio/cmd.CommitID=$commit -X github.com/minio/minio/cmd.ShortCommitID=$commit" \
    -o "$BIN.tmp" .) || die "go build of MinIO $MINIO_VERSION failed"
  mv "$BIN.tmp" "$BIN"
  "$BIN" --version >/dev/null 2>&1 || die "the built $BIN does not run: $("$BIN" --version 2>&1 | head -n 5)"
  printf '%s\n' "$MINIO_VERSION" >"$BUILT_STAMP"
  # The copied source is only needed for the build.
  rm -rf "$SRC_DIR"
  log "built MinIO $MINIO_VERSION in $(($(date +%s) - started))s"
  exec 9>&-
}


# MinIO answers its liveness probe once it serves the S3 API (plain bash: no curl needed).
healthy() {
  timeout 2 bash -c 'exec 5<>"/dev/tcp/127.0.0.1/$1" && printf "GET /minio/health/live HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&5 && head -n 1 <&5 | grep -q " 200 "' _ "$PORT" 2>/dev/null
}



# wait_ready PID [ours]: with "ours", a server that misses the deadline is killed (we started it).
wait_ready() {
  local pid=$1 ours=${2:-} deadline=$(($(date +%s) + START_TIMEOUT))
  until port_open && healthy; do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; fail_with_log "MinIO (pid $pid) exited before it was ready on 127.0.0.1:$PORT"; }
    if [ "$(date +%s)" -ge "$deadline" ]; then
      if [ -n "$ours" ]; then
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$PID_FILE"
      fi
      fail_with_log "MinIO (pid $pid) was not ready on 127.0.0.1:$PORT within ${START_TIMEOUT}s${ours:+; killed it}"
    fi
    sleep 0.2
  done
}

print_endpoint() { printf 'S3_ENDPOINT=http://127.0.0.1:%s\n' "$PORT" >&3; }

start_minio() {
  install_minio
  mkdir -p "$DATA_DIR"

  local pid
  if pid=$(running_pid); then
    log "already running (pid $pid) on 127.0.0.1:$PORT"
    wait_ready "$pid"
    print_endpoint
    return 0
  fi
  rm -f "$PID_FILE"
  if port_open; then
    die "127.0.0.1:$PORT is already in use by another process (not the MinIO in $STATE_ROOT); stop it or set MINIO_PORT"
  fi

  log "starting MinIO on 127.0.0.1:$PORT (data: $DATA_DIR, log: $LOG_FILE, user: $ROOT_USER)"
  printf '\n=== %s start on 127.0.0.1:%s ===\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$PORT" >>"$LOG_FILE"
  # setsid + nohup: the server outlives the shell that started it (the test runner's `$(...)`).
  # It must not inherit fd 3 (our real stdout): a caller's `$(...)` would wait for it to exit.
  # No web console, no update checks; the console port is on loopback only (MinIO always binds one).
  MINIO_ROOT_USER=$ROOT_USER MINIO_ROOT_PASSWORD=$ROOT_PASSWORD MINIO_BROWSER=off MINIO_UPDATE=off \
    setsid nohup "$BIN" server --quiet --anonymous \
    --address "127.0.0.1:$PORT" \
    --console-address "127.0.0.1:0" \
    "$DATA_DIR" \
    >>"$LOG_FILE" 2>&1 </dev/null 3>&- 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_ready "$pid" ours
  log "ready (pid $pid)"
  print_endpoint
}



case "${1:-}" in
  install) install_minio ;;
  start) start_minio ;;
  stop) stop_server 10 ;;
  status) status_server print_endpoint ;;
  *) die "usage: $0 install|start|stop|status" ;;
esac
