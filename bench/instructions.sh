#!/usr/bin/env bash
# Instructions a byte of the default job (issue 53): callgrind's Ir (which load does not move)
# over the corpus mbox, every single corpus message under 1 MB once (bench/make_mbox.py COUNT
# 0), for a binary and for the baseline (9163b6a's, or BEFORE=), then the ratio. The outputs of
# the two are compared with cmp, from one job and from --jobs=2: the ratio counts only where
# they are the same bytes. Prints the machine load (uptime) beside.
# Usage: BEFORE=/path/to/9163b6a/mimeuri bash bench/instructions.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/mimeuri
before=${BEFORE:-../base/build/mimeuri}
corpus=${CORPUS:-../shared/corpus}
command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mbox=$work/corpus.mbox
python3 bench/make_mbox.py "$corpus" 0 "$mbox"
bytes=$(stat -c %s "$mbox")
"$before" "$mbox" > "$work/before.out"
for jobs in 1 2; do
  "$bin" --jobs=$jobs "$mbox" > "$work/new.out"
  cmp "$work/new.out" "$work/before.out" || { echo "output differs from $before's (--jobs=$jobs)" >&2; exit 1; }
done
ir() { # binary -> Ir of the default job over the mbox
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$1" "$mbox" 2>&1 > /dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
new=$(ir "$bin")
old=$(ir "$before")
echo "corpus mbox: $(grep -c '^From bench@example.org' "$mbox") messages, $bytes bytes; load: $(uptime | sed 's/.*load average: //')"
awk -v n="$new" -v o="$old" -v b="$bytes" 'BEGIN {
  printf "%-10s %14s %10s\n", "binary", "Ir", "Ir/byte"
  printf "%-10s %14d %10.2f\n", "this", n, n / b
  printf "%-10s %14d %10.2f\n", "before", o, o / b
  printf "ratio %.3f (goal: at most 0.333)\n", n / o }'
