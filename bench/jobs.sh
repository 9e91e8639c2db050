#!/usr/bin/env bash
# --jobs scaling: an mbox of 20,000 messages built from ../shared/corpus (its single messages,
# repeated, with mboxo ">From " quoting), processed by the default job with --jobs=1 and
# --jobs=2 (best of RUNS interleaved rounds); the outputs and reports must be byte-identical. Beside them,
# the machine's ceiling: two independent --jobs=1 runs over the two halves, at once.
# Usage: bash bench/jobs.sh [BUILD_DIR] [MESSAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-20000}
bin=$build/mimeuri
corpus=${CORPUS:-../shared/corpus}
out=bench/out
mkdir -p "$out"
mbox=$out/corpus-$count.mbox
[ -f "$mbox" ] || python3 bench/make_mbox.py "$corpus" "$count" "$mbox"
size=$(stat -c %s "$mbox")
# The machine's own ceiling: the mbox cut in two at a "From " line near its middle, and two
# independent --jobs=1 runs, one per half, at once (no parent, no sharing): what two cores
# give this job here when both are busy (shared caches and clocks slow each).
half=$(python3 - "$mbox" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
print(d.index(b'\nFrom ', len(d) // 2) + 1)
PY
)
head -c "$half" "$mbox" > $out/half1.mbox
tail -c +"$((half + 1))" "$mbox" > $out/half2.mbox
# Interleaved rounds (RUNS, default 5): each round runs every command once, so that all see
# the same load on this noisy machine; the best wall time of each counts.
declare -A cmd best
cmd[j1]="'$bin' --jobs=1 --report=$out/r1.jsonl '$mbox' > $out/o1.mbox"
cmd[j2]="'$bin' --jobs=2 --report=$out/r2.jsonl '$mbox' > $out/o2.mbox"
cmd[halves]="'$bin' --jobs=1 --report=$out/rh1.jsonl $out/half1.mbox > $out/oh1.mbox & '$bin' --jobs=1 --report=$out/rh2.jsonl $out/half2.mbox > $out/oh2.mbox; wait"
cmd[cat]="cat '$mbox' > $out/oc.mbox"
for ((r = 0; r < ${RUNS:-5}; r++)); do
  for k in j1 j2 halves cat; do
    st=$(date +%s.%N); sh -c "${cmd[$k]}"; en=$(date +%s.%N)
    best[$k]=$(echo "$en - $st" | bc -l | awk -v a="${best[$k]:-}" '{ print (a == "" || $1 < a) ? $1 : a }')
  done
done
t1=${best[j1]} t2=${best[j2]} th=${best[halves]} tc=${best[cat]}
same=no; cmp -s $out/o1.mbox $out/o2.mbox && cmp -s $out/r1.jsonl $out/r2.jsonl && same=yes
changed=$(grep -c '"changed":true' $out/r1.jsonl || true)
echo "mbox: $count messages, $size bytes ($changed changed by the default job); $(nproc) cores"
printf '%-14s %8s %10s %12s\n' run seconds MB/s messages/s
for row in "jobs=1 $t1" "jobs=2 $t2" "cat $tc"; do
  set -- $row
  printf '%-14s %8.3f %10.1f %12.0f\n' "$1" "$2" "$(echo "$size / 1000000 / $2" | bc -l)" "$(echo "$count / $2" | bc -l)"
done
echo "speed-up jobs=2 over jobs=1: $(echo "$t1 / $t2" | bc -l | cut -c1-4)x; outputs and reports identical: $same"
echo "ceiling, two --jobs=1 runs on the halves at once: $th s, $(echo "$t1 / $th" | bc -l | cut -c1-4)x; jobs=2 reaches $(echo "100 * $th / $t2" | bc -l | cut -c1-4)% of it"
rm -f $out/o1.mbox $out/o2.mbox $out/oc.mbox $out/oh1.mbox $out/oh2.mbox $out/half1.mbox $out/half2.mbox $out/rh1.jsonl $out/rh2.jsonl
