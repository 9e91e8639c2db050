#!/usr/bin/env bash
# Runs every fuzzer for SECONDS (two at a time), seeded from fuzz/seeds.sh, and fails if any
# finds a crash or a broken invariant. Usage: bash fuzz/run.sh SECONDS|ci [BUILD_DIR]
# "ci" is reproducible: a fixed seed and a fixed number of runs (about a minute each) from a
# fresh work folder, so that CI's verdict does not depend on luck.
# Findings are written to BUILD_DIR/fuzz-findings/.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
build=${2:-build-fuzz}
seeds=$build/fuzz-seeds
# (Re)built when missing or older than the seed script or the crafted messages.
if [ ! -d "$seeds/filter" ] || [ -n "$(find fuzz/seeds.sh fuzz/crafted -newer "$seeds/filter" 2>/dev/null | head -1)" ]; then
  rm -rf "$seeds"; bash fuzz/seeds.sh "$seeds"
fi
mkdir -p "$build/fuzz-findings" "$build/fuzz-work"
declare -A ci_runs=([fuzz_filter]=4000 [fuzz_html]=3000 [fuzz_html_tokenizer]=20000 [fuzz_cturi]=300000 [fuzz_rfc2017]=300000 [fuzz_body_hash]=20000 [fuzz_base64_copy]=20000 [fuzz_html_sanitize]=20000 [fuzz_remote_css]=6000)
run() { # name, seed folder, max_len
  local name=$1 work=$build/fuzz-work/$1 limit dict=fuzz/mime.dict
  [ -f "fuzz/${name#fuzz_}.dict" ] && dict=fuzz/${name#fuzz_}.dict # a harness's own dictionary
  if [ "$secs" = ci ]; then
    work=$build/fuzz-work/ci-$1; rm -rf "$work"
    limit="-seed=1 -runs=${ci_runs[$name]}"
  else
    limit="-max_total_time=$secs"
  fi
  mkdir -p "$work"
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    "$build/fuzz/$name" $limit -max_len="$3" -dict="$dict" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/fuzz-findings/$name-" -print_final_stats=1 "$work" "$2" > "$build/fuzz-work/$name.log" 2>&1
  local rc=$?
  local execs; execs=$(grep -m1 'stat::number_of_executed_units' "$build/fuzz-work/$name.log" | awk '{ print $2 }')
  if [ $rc -eq 0 ]; then echo "ok - $name: ${secs}$([ "$secs" = ci ] || echo s), ${execs:-?} runs, no finding"; else
    echo "FAIL - $name: see $build/fuzz-work/$name.log"
    grep -m1 -E 'invariant broken|the rewrite added|ERROR: (Address|Undefined|libFuzzer)' "$build/fuzz-work/$name.log" | sed 's/^/  /'
    grep -m1 'Test unit written to' "$build/fuzz-work/$name.log" | sed 's/^/  /'
  fi
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
# Two at a time, the longest first (their CI times here: html_sanitize 196 s, html_tokenizer 107,
# filter 48, rfc2017 45, cturi 39, body_hash 18, base64_copy 11, html 6, remote_css 11 s of CPU), each started as soon
# as a slot is free: about 4 minutes for the 8, where fixed pairs took 6.5.
# The body hash against its oracle and canonical base64 copied against decode+encode run on
# the filter seeds (messages; their first bytes read as the harness's mode, l= and piece
# sizes); the sanitiser against gumbo's reading of its output on the HTML seeds.
queue=("fuzz_html_sanitize html 65536" "fuzz_html_tokenizer html 65536" "fuzz_filter filter 65536"
  "fuzz_rfc2017 rfc2017 4096" "fuzz_cturi cturi 4096" "fuzz_body_hash filter 65536"
  "fuzz_base64_copy filter 65536" "fuzz_html html 65536" "fuzz_remote_css css 65536")
running=0
for job in "${queue[@]}"; do
  read -r name seed len <<<"$job"
  if [ $running -ge 2 ]; then wait -n || status=1; running=$((running - 1)); fi
  run "$name" "$seeds/$seed" "$len" &
  running=$((running + 1))
done
while [ $running -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
exit $status
