#!/usr/bin/env bash
# Runs every fuzzer for SECONDS (two at a time), seeded from fuzz/seeds.sh, and fails if any
# finds a crash or a broken invariant. Usage: bash fuzz/run.sh SECONDS [BUILD_DIR]
# Findings are written to BUILD_DIR/fuzz-findings/.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
build=${2:-build-fuzz}
seeds=$build/fuzz-seeds
[ -d "$seeds/filter" ] || bash fuzz/seeds.sh "$seeds"
mkdir -p "$build/fuzz-findings" "$build/fuzz-work"
run() { # name, seed folder, max_len
  local name=$1 work=$build/fuzz-work/$1
  mkdir -p "$work"
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    "$build/fuzz/$name" -max_total_time="$secs" -max_len="$3" -dict=fuzz/mime.dict -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/fuzz-findings/$name-" -print_final_stats=1 "$work" "$2" > "$build/fuzz-work/$name.log" 2>&1
  local rc=$?
  local execs; execs=$(grep -m1 'stat::number_of_executed_units' "$build/fuzz-work/$name.log" | awk '{ print $2 }')
  if [ $rc -eq 0 ]; then echo "ok - $name: ${secs}s, ${execs:-?} runs, no finding"; else echo "FAIL - $name: see $build/fuzz-work/$name.log"; fi
  return $rc
}
status=0
# First, every input that once found a bug (testdata/fuzz-regressions/<harness>-<what>).
for f in testdata/fuzz-regressions/*; do
  [ -e "$f" ] || continue
  name=$(basename "$f"); name=fuzz_${name#fuzz_}; name=${name%%-*}
  if ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/$name" "$f" > "$build/fuzz-work/replay.log" 2>&1; then
    echo "ok - replay $(basename "$f")"
  else
    echo "FAIL - replay $(basename "$f")"; status=1
  fi
done
run fuzz_filter "$seeds/filter" 65536 & a=$!
run fuzz_html "$seeds/html" 65536 & b=$!
wait $a || status=1; wait $b || status=1
run fuzz_cturi "$seeds/cturi" 4096 & a=$!
run fuzz_rfc2017 "$seeds/rfc2017" 4096 & b=$!
wait $a || status=1; wait $b || status=1
exit $status
