#!/usr/bin/env bash
# `npm test`: starts the real servers the integration suites need (FerretDB for the MongoDB
# read-model adapter, Apache Kafka for the analytics topics; both installed from the package
# registries on first use and cached under .ci/servers), runs every test with tap, stops the
# servers it started, and prints "N passed, N failed" last.
# Extra arguments go to tap (e.g. a test file).
set -uo pipefail
cd "$(dirname "$0")/.."

started=()
cleanup() {
  for s in "${started[@]}"; do bash "scripts/servers/$s.sh" stop >&2 || true; done
}
trap cleanup EXIT

start_server() {
  local name=$1 line
  if ! line=$(bash "scripts/servers/$name.sh" start); then
    echo "failed to start $name: its suite cannot run" >&2
    exit 1
  fi
  started+=("$name")
  export "${line?}"
  echo "started $name: $line" >&2
}

[ -n "${MONGO_URL:-}" ] || start_server ferretdb
[ -n "${KAFKA_BROKERS:-}" ] || start_server kafka

out=$(mktemp)
npx tap --reporter=tap "$@" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
# tap's TAP reporter: one "ok"/"not ok" line per test file at the top level, and totals of all
# assertions in the final "# { total, pass, fail }" comment.
summary=$(grep -E '^# \{ total: ' "$out" | tail -1)
total=$(sed -nE 's/.*total: ([0-9]+).*/\1/p' <<<"$summary")
pass=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
files_failed=$(grep -cE '^not ok ' "$out")
rm -f "$out"
total=${total:-0}
pass=${pass:-0}
failed=$((total - pass))
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=$((files_failed > 0 ? files_failed : 1))
echo "${pass} passed, ${failed} failed"
exit "$status"
