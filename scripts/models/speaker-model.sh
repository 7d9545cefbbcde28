#!/usr/bin/env bash
# Fetches a speaker-embedding model for SPEAKER_EMBEDDING_MODEL and the voice tests: the GE2E
# speaker-encoder weights (`pretrained.pt`, 17 MB) that the Resemblyzer package ships on PyPI.
# Downloaded once with pip (no other network), checked against a pinned SHA-256 and cached under
# .ci/models. Prints the file's absolute path.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.ci/models
file=$dir/resemblyzer-0.1.4-pretrained.pt
sha=39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e
if [ ! -s "$file" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" resemblyzer==0.1.4 >&2
  python3 - "$tmp" "$file.part" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + '/*.whl')[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], 'wb') as out:
    out.write(z.read('resemblyzer/pretrained.pt'))
PY
  echo "$sha  $file.part" | sha256sum -c --quiet - >&2
  mv "$file.part" "$file"
fi
echo "$PWD/$file"
