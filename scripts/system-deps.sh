#!/usr/bin/env bash
# System tools the test suites use. From Debian's archive: espeak-ng makes the speech of the
# voice and pipeline tests; Apertium and its language pairs are the local translation engine
# (`file` is its input check); chromium is the headless browser the dashboard suite drives with
# playwright-core (which downloads no browser of its own). From PyPI: yt-dlp, which the video-site adapter runs (its test
# uses the real program), and the contract tools (below). Installed when missing and running as root (CI); otherwise the missing
# ones are named and the script fails, so a suite never silently lacks its tools.
set -euo pipefail
if ! command -v yt-dlp >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore yt-dlp >&2
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi
# The contract tools, pinned, in a virtual environment of their own under .ci/: schemathesis fuzzes
# the running service against GET /v1/openapi.json (test/contract.schemathesis.test.ts) and
# openapi-spec-validator checks that document (test/api.openapi.test.ts).
contract_tools=(schemathesis==4.32.5 openapi-spec-validator==0.9.0)
venv=.ci/schemathesis
if ! "$venv/bin/python" -m pip freeze 2>/dev/null | grep -qxF -e "${contract_tools[0]}" \
  || ! "$venv/bin/python" -m pip freeze 2>/dev/null | grep -qxF -e "${contract_tools[1]}"; then
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${contract_tools[@]}" >&2
fi
# sox, flite and festival (with the voices of two more real people: ked, English; lp and pc, Italian)
# build the voices of bench/speech-quality.ts (pitch and tempo changes, real speakers).
# docker-compose: test/compose.test.ts validates docker-compose.yml with `docker-compose config`,
# and haproxy (the version line of the stack's load balancer image) checks and runs deploy/haproxy.cfg.
packages=(espeak-ng file apertium apertium-eng-spa apertium-es-pt apertium-fr-es apertium-spa-ita chromium sox flite festival festvox-kdlpc16k festvox-italp16k festvox-itapc16k docker-compose haproxy)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${missing[*]} (install them: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
