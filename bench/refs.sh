#!/usr/bin/env bash
# Reference resolution throughput: a message whose HTML part is 10 MB holding 1,000, 10,000
# or 100,000 cid: references (half resolved to a small image part, half dangling, one in
# ten malformed so that repair rewrites it). Prints MB/s and references/s for --cid=check
# and --cid=repair, with two baselines measured in the same run: cat, and mimeuri with
# every pass off (parse and copy). Usage: bash bench/refs.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/mimeuri
out=bench/out
mkdir -p "$out"

make_message() { python3 bench/make_html.py "$1" "$2"; } # refs -> file

. bench/lib.sh

printf '%-8s %-22s %9s %10s %14s %10s\n' refs run seconds MB/s refs/s "vs passes-off"
for n in 1000 10000 100000; do
  msg=$out/refs-$n.eml
  [ -f "$msg" ] || make_message "$n" "$msg"
  mb=$(awk -v b="$(stat -c %s "$msg")" 'BEGIN { print b / 1e6 }')
  t_cat=$(best_of_3 cat "$msg")
  t_off=$(best_of_3 "$bin" --passes=none "$msg")
  for mode in check repair; do
    t=$(best_of_3 "$bin" --cid=$mode --mid=off --external-body=off "$msg")
    printf '%-8s %-22s %9.3f %10.1f %14.0f %9.1fx\n' "$n" "--cid=$mode" "$t" \
      "$(echo "$mb / $t" | bc -l)" "$(echo "$n / $t" | bc -l)" "$(echo "$t / $t_off" | bc -l)"
  done
  printf '%-8s %-22s %9.3f %10.1f %14s %9.1fx\n' "$n" "passes off (baseline)" "$t_off" "$(echo "$mb / $t_off" | bc -l)" "-" 1
  printf '%-8s %-22s %9.3f %10.1f %14s %9.1fx\n' "$n" "cat (baseline)" "$t_cat" "$(echo "$mb / $t_cat" | bc -l)" "-" "$(echo "$t_cat / $t_off" | bc -l)"
done
# Linear time: seconds per MB should not grow with the reference count.
