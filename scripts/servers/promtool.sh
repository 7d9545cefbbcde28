#!/usr/bin/env bash
# promtool (Prometheus v3.5.0's rule and config checker), for test/ops.monitoring.test.ts, which
# runs `promtool check rules`, the rules' unit tests and `promtool check config` when it finds it.
# No Docker and no internet here except the package registries, so it is built from the Go module
# proxy and cached under the servers dir.
#
#   eval "$(bash scripts/servers/promtool.sh install)"   # sets PROMTOOL=<path> (no-op when built)
#
# `install` prints exactly one line to stdout (PROMTOOL=...); everything else goes to stderr.
# Why not `go install github.com/prometheus/prometheus/cmd/promtool@v0.305.0`: the module's
# go.mod has replace directives, which `go install pkg@version` refuses. So: `go mod download`
# the exact version, copy the source, `go build ./cmd/promtool` in it. The first build compiles
# ~1,400 packages: ~10 min on 2 idle cores, much longer on a busy machine.
#
# Environment:
#   SERVERS_DIR   cache root (default: <repo>/.ci/servers)
set -euo pipefail
exec 3>&1 1>&2

PROMETHEUS_MODULE_VERSION=v0.305.0 # Prometheus 3.5.0
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_DIR=${SERVERS_DIR:-$REPO_DIR/.ci/servers}
BIN=$SERVERS_DIR/bin/promtool-$PROMETHEUS_MODULE_VERSION

die() { echo "promtool: ERROR: $*"; exit 1; }

case "${1:-}" in
  install)
    if [[ ! -x $BIN ]]; then
      go=$(command -v go || echo /usr/local/go/bin/go)
      [[ -x $go ]] || die "no Go toolchain (scripts/system-deps.sh installs one)"
      dir=$("$go" mod download -json "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') \
        || die "go mod download of prometheus $PROMETHEUS_MODULE_VERSION failed"
      src=$SERVERS_DIR/src/prometheus-$PROMETHEUS_MODULE_VERSION
      rm -rf "$src" && mkdir -p "$(dirname "$src")" "$(dirname "$BIN")"
      cp -r "$dir" "$src" && chmod -R u+w "$src"
      echo "promtool: building Prometheus $PROMETHEUS_MODULE_VERSION's promtool (first time: many minutes)"
      (cd "$src" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 "$go" build -trimpath -o "$BIN.tmp" ./cmd/promtool) || die "go build of promtool failed"
      mv "$BIN.tmp" "$BIN"
      rm -rf "$src"
    fi
    echo "PROMTOOL=$BIN" >&3
    ;;
  *)
    echo "usage: bash scripts/servers/promtool.sh install"
    exit 2
    ;;
esac
