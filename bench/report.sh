#!/usr/bin/env bash
# What the report costs (issue 32 item 2): a message whose HTML part is 10 MB holding REFS
# cid: references (bench/make_html.py; 10,000 and 100,000 by default), run with --cid=check
# writing the message and no report (the baseline), and with --check writing only the report
# (one JSON line with an entry per reference), in interleaved rounds. Each command runs REPS
# times in a row per round (one run is a few tens of ms, below the timer's 10 ms steps). Gives
# the median, best and worst wall time, the median CPU, the peak RSS, and the report's cost as
# a ratio of the baseline's median wall and CPU time (the CPU ratio is the steadier on a
# loaded machine); with BEFORE=/path/to/mimeuri, that binary's --check in the
# same rounds.
# Usage: bash bench/report.sh [BUILD_DIR]   (RUNS=7 rounds, REPS=10, REFS="10000 100000")
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 7
reps=${REPS:-10}

opts="--cid=check --mid=off --external-body=off"
times() { echo "for i in \$(seq $reps); do $*; done"; }
printf '%-7s %-18s %8s %8s %8s %8s %9s %11s %11s\n' refs run median best worst cpu peak_RSS "wall ratio" "cpu ratio"
for n in ${REFS:-10000 100000}; do
  msg=$out/report-$n.eml
  [ -f "$msg" ] || python3 bench/make_html.py "$n" "$msg" 10
  args=(message "$(times "$bin $opts $msg")" report "$(times "$bin --check $opts $msg")")
  [ -n "${BEFORE:-}" ] && args+=(report-before "$(times "$BEFORE --check $opts $msg")")
  mapfile -t rows < <(rounds_median "$runs" "${args[@]}")
  read -r _ base _ _ basecpu _ <<< "${rows[0]}"
  for row in "${rows[@]}"; do
    read -r label med best worst cpu rss <<< "$row"
    printf '%-7s %-18s %8.3f %8.3f %8.3f %8.3f %5.1f MiB %10.2fx %10.2fx\n' "$n" "$label" "$med" "$best" "$worst" "$cpu" \
      "$(echo "$rss / 1024" | bc -l)" "$(echo "$med / $base" | bc -l)" "$(echo "$cpu / $basecpu" | bc -l)"
  done
done
echo "(times: $reps runs in a row; $runs interleaved rounds)"
