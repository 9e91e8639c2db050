#!/usr/bin/env bash
# Runs every test suite (unit, golden, corpus, ...) and ends with one "N passed, N failed"
# line. Builds first if needed (the tests too, when the set-up built only the binary).
# The real-agent integration suite installs and reconfigures procmail, Dovecot, Postfix and
# Exim on this machine: it runs only with MIMEURI_INTEGRATION=1 (as CI sets it).
# Usage: bash tests/run.sh [BUILD_DIR [MESON TEST ARGS...]] (e.g. --suite unit). Without
# MESON TEST ARGS the fast suites run first and the rest only once they pass.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
# Each stage says its name as it starts (a failure then says which one broke), and the
# build shows its progress: built cold, the tests take minutes.
stage() { echo "== tests: $*"; }
if [ ! -f "$build/build.ninja" ]; then
  stage "configuring the build in $build/ (meson setup)"
  meson setup "$build" >/dev/null
fi
# The test suites must build: a missing doctest (Debian 12 finds it through cmake) is an
# error here, not suites silently left out.
stage "enabling the test suites in $build/ (meson configure -Dtests=enabled)"
meson configure "$build" -Dtests=enabled >/dev/null
stage "building the program and the test suites (ninja: [steps done/steps to do] per step)"
ninja -C "$build"
args=("$@")
if [ "${MIMEURI_INTEGRATION:-}" != 1 ]; then
  echo "The integration suite is left out: it installs and reconfigures procmail, Dovecot, Postfix and"
  echo "Exim on this machine. MIMEURI_INTEGRATION=1 bash tests/run.sh runs it (as root)."
  args+=(--no-suite integration)
fi
passed=0 failed=0 skipped=0 status=0
# One meson test run, its results added to the counts (meson rewrites testlog.json each run).
suites() {
  stage "running the test suites (meson test${*:+ $*})"
  meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=1
  read -r p f s < <(python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): passed += 1
    elif r == "SKIP": skipped += 1
    else: failed += 1
print(passed, failed, skipped)
PY
  )
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}
# Without suites named: the fast ones first (unit, golden, hostile: about five minutes), so
# that a broken build or a broken case fails in minutes; the rest (corpus, browser, readers,
# archive, signed, service, ...) only when they pass.
if [ $# -eq 0 ]; then
  suites --suite unit --suite golden --suite hostile "${args[@]}"
  if [ $status = 0 ]; then suites --no-suite unit --no-suite golden --no-suite hostile "${args[@]}"; fi
else
  suites "${args[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
