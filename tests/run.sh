#!/usr/bin/env bash
# Runs every test suite (unit, golden, corpus, integration as they exist) and ends with one
# "N passed, N failed" line. Builds first if needed.
# Usage: bash tests/run.sh [BUILD_DIR [MESON TEST ARGS...]] (e.g. --no-suite integration)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null
status=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
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
