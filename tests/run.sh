#!/usr/bin/env bash
# Runs every test suite (unit, golden, corpus, ...) and ends with one "N passed, N failed"
# line. Builds first if needed (the tests too, when the set-up built only the binary).
# The real-agent integration suite installs and reconfigures procmail, Dovecot, Postfix and
# Exim on this machine: it runs only with MIMEURI_INTEGRATION=1 (as CI sets it).
# Usage: bash tests/run.sh [BUILD_DIR [MESON TEST ARGS...]] (e.g. --suite unit)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
# The test suites must build: a missing doctest (Debian 12 finds it through cmake) is an
# error here, not suites silently left out.
meson configure "$build" -Dtests=enabled >/dev/null
ninja -C "$build" >/dev/null
args=("$@")
if [ "${MIMEURI_INTEGRATION:-}" != 1 ]; then
  echo "The integration suite is left out: it installs and reconfigures procmail, Dovecot, Postfix and"
  echo "Exim on this machine. MIMEURI_INTEGRATION=1 bash tests/run.sh runs it (as root)."
  args+=(--no-suite integration)
fi
status=0
meson test -C "$build" --print-errorlogs --num-processes 2 "${args[@]}" || status=$?
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): passed += 1
    elif r == "SKIP": skipped += 1
    else: failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
