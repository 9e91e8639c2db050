#!/usr/bin/env bash
# The archive's thread index (issue 48, item 4): time against size. One thread of N and of 10N
# messages (bench/make_thread_refs.py), each message naming its parent and 20 of its own
# deepest replies, extracted with --cid=extract (threading runs at the run's end); beside each,
# the same bytes naming 20 ids no message has ("unknown"): what the threading itself costs is
# the difference. Interleaved rounds; the figures are ratios: 10N against N should cost about
# 10 times, not 100 (before issue 48 a walk up the thread per id named made it quadratic).
# Usage: bash bench/thread_index.sh [N] [BUILD_DIR]   (N 4000; RUNS=3 rounds;
#        BEFORE=BIN adds the same runs with another mimeuri binary, e.g. one built at 9163b6a)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-4000}
. bench/lib.sh
bench_init "${2:-build}" 3
bin=$(realpath "$bin")
work=$out/thread_index
mkdir -p "$work"
for m in "$n" "$((10 * n))"; do
  for kind in known unknown; do
    [ -f "$work/$kind-$m.mbox" ] || python3 bench/make_thread_refs.py "$m" "$work/$kind-$m.mbox" "$kind"
  done
done
echo "bench/thread_index.sh: N=$n, $runs interleaved rounds, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # BIN KIND M
  echo "$1 --cid=extract --extract-dir=$work/out $work/$2-$3.mbox > /dev/null"
}
export SETTLE="rm -rf $work/out" # untimed: the last run's 10N folders are not the next run's cost
args=()
for b in now ${BEFORE:+before}; do
  exe=$bin; [ "$b" = now ] || exe=$BEFORE
  for m in "$n" "$((10 * n))"; do
    for kind in known unknown; do args+=("$b-$kind-$m" "$(run "$exe" "$kind" "$m")"); done
  done
done
raw=$(mktemp)
time_rounds "$raw" "$runs" "${args[@]}"
echo "each run: label wall user system rss"
cat "$raw"
# Best of the rounds: wall, user CPU (the threading is user time; creating 10N folders is
# system time, which the machine's other work inflates), user + system.
best() { # LABEL COLUMN(2 wall, 3 user, 0 user+system)
  awk -v l="$1" -v c="$2" '$1 == l { v = c ? $c : $3 + $4; if (b == "" || v < b) b = v } END { print b }' "$raw"
}
for col in 2 3 0; do
  for b in now ${BEFORE:+before}; do
    k1=$(best "$b-known-$n" $col); k10=$(best "$b-known-$((10 * n))" $col)
    u1=$(best "$b-unknown-$n" $col); u10=$(best "$b-unknown-$((10 * n))" $col)
    awk -v w="$(case $col in 2) echo wall;; 3) echo user;; *) echo cpu;; esac)" -v b="$b" -v k1="$k1" -v k10="$k10" -v u1="$u1" -v u10="$u10" 'BEGIN {
      printf "%s %s: known %.2f s at N, %.2f s at 10N (x%.1f); unknown %.2f, %.2f (x%.1f)\n", w, b, k1, k10, k10 / k1, u1, u10, u10 / u1 }'
  done
done
rm -f "$raw"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work/out"
