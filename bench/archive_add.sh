#!/usr/bin/env bash
# `mimeuri archive` (issue 50): what adding costs. An archive of N distinct messages
# (bench/make_archive_mbox.py: corpus messages, each its own Message-ID and date, threads of
# five, spanning months) is built in one run; then one message (a reply to one of its threads)
# is added, ROUNDS times, each to a fresh copy of the archive; then 100 messages at once.
# Prints the full build's time, each add's wall and CPU time (median), and the files the add
# wrote (by mtime), so that the cost is seen to follow what was added, not the archive.
# Usage: bash bench/archive_add.sh [BUILD_DIR]   (N=10000, ROUNDS=5; SIZES="1000 10000" to compare)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}")/mimeuri
corpus=${CORPUS:-../shared/corpus}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "load: $(uptime | sed 's/.*load average: //')"
for n in ${SIZES:-${N:-10000}}; do
  python3 bench/make_archive_mbox.py "$corpus" "$n" "$work/all.mbox"
  python3 bench/make_archive_mbox.py "$corpus" 1 "$work/one.mbox" "$((n + 2))"   # a reply in a thread
  python3 bench/make_archive_mbox.py "$corpus" 100 "$work/hundred.mbox" "$((n + 5))"
  rm -rf "$work/a"
  s=$(date +%s.%N)
  /usr/bin/time -f "%U %S %M" -o "$work/t" "$bin" archive --quiet "$work/a" "$work/all.mbox"
  e=$(date +%s.%N)
  read -r u sy rss < "$work/t"
  printf 'N=%d: full build %.1f s wall, %.1f s CPU, %d MB peak RSS; %s on disk (%s of state)\n' "$n" \
    "$(echo "$e - $s" | bc)" "$(echo "$u + $sy" | bc)" $((rss / 1024)) "$(du -sh "$work/a" | cut -f1)" \
    "$(du -sh "$work/a/.mimeuri" | cut -f1)"
  for what in one hundred; do
    walls=() cpus=()
    for ((r = 0; r < rounds; r++)); do
      rm -rf "$work/b" && cp -a "$work/a" "$work/b" && sync   # (else the add's syncfs writes the copy out)
      touch "$work/mark"; sleep 0.01
      s=$(date +%s.%N)
      /usr/bin/time -f "%U %S %M" -o "$work/t" "$bin" archive --quiet "$work/b" "$work/$what.mbox"
      e=$(date +%s.%N)
      read -r u sy rss < "$work/t"
      walls+=("$(echo "$e - $s" | bc)") cpus+=("$(echo "$u + $sy" | bc)")
      written=$(find "$work/b" -path "$work/b/.mimeuri" -prune -o -type f -newer "$work/mark" -print | wc -l)
    done
    printf 'N=%d: add %s: median %.3f s wall, %.3f s CPU (%d rounds), %d MB peak RSS; %d files written\n' "$n" "$what" \
      "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" "$rounds" $((rss / 1024)) "$written"
  done
done
echo "load: $(uptime | sed 's/.*load average: //')"
