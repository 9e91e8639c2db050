#!/usr/bin/env bash
# --jobs scaling: an mbox of 20,000 messages built from ../shared/corpus (its single messages,
# repeated, with mboxo ">From " quoting), processed by the default job with --jobs=1 and
# --jobs=2 (medians of RUNS interleaved rounds, with their spread); the outputs and reports must be byte-identical. Beside them,
# the machine's ceiling: two independent --jobs=1 runs over the two halves, at once.
# Usage: [RUNS=N] [OTHER=BUILD_DIR] bash bench/jobs.sh [BUILD_DIR] [MESSAGES]
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
# the same load on this noisy machine (bench/lib.sh time_rounds); per command the median wall
# time and the spread (least-greatest), and the ratios of the medians. The load average is
# sampled every 2 s meanwhile: on a machine shared with other work, --jobs=2 can only use
# the core the others leave free, and the ceiling row says what that was.
. bench/lib.sh
times=$(mktemp)
( while :; do cut -d' ' -f1 /proc/loadavg; sleep 2; done ) > "$out/jobs-load" & sampler=$!
# Before each command (untimed): the outputs so far moved aside (FILE.prev; what they replace
# is unlinked there) and everything synced, so that no command pays for truncating a 140 MB
# file or for the kernel writing back the one before's output (which took the core --jobs=1
# leaves free, and one of the two --jobs=2 needs).
# OTHER=BUILD_DIR: that build's --jobs=1 and --jobs=2 too, in the same rounds (a change
# against the code before it, under the same load).
other=()
[ -z "${OTHER:-}" ] || other=(oj1 "'$OTHER/mimeuri' --jobs=1 --report=$out/or1.jsonl '$mbox' > $out/oo1.mbox"
                              oj2 "'$OTHER/mimeuri' --jobs=2 --report=$out/or2.jsonl '$mbox' > $out/oo2.mbox")
SETTLE="for f in $out/o1.mbox $out/o2.mbox $out/oc.mbox $out/oh1.mbox $out/oh2.mbox $out/oo1.mbox $out/oo2.mbox; do [ ! -f \$f ] || mv \$f \$f.prev; done; sync" \
time_rounds "$times" "${RUNS:-5}" \
  j1 "'$bin' --jobs=1 --report=$out/r1.jsonl '$mbox' > $out/o1.mbox" \
  j2 "'$bin' --jobs=2 --report=$out/r2.jsonl '$mbox' > $out/o2.mbox" \
  halves "'$bin' --jobs=1 --report=$out/rh1.jsonl $out/half1.mbox > $out/oh1.mbox & '$bin' --jobs=1 --report=$out/rh2.jsonl $out/half2.mbox > $out/oh2.mbox; wait" \
  cat "cat '$mbox' > $out/oc.mbox" "${other[@]}"
kill "$sampler"
walls() { awk -v l="$1" '$1 == l { print $2 }' "$times" | tr '\n' ' '; }
t1=$(median "$(walls j1)") t2=$(median "$(walls j2)") th=$(median "$(walls halves)") tc=$(median "$(walls cat)")
same=no; cmp -s $out/o1.mbox.prev $out/o2.mbox.prev && cmp -s $out/r1.jsonl $out/r2.jsonl && same=yes
changed=$(grep -c '"changed":true' $out/r1.jsonl || true)
echo "mbox: $count messages, $size bytes ($changed changed by the default job); $(nproc) cores; ${RUNS:-5} interleaved rounds"
printf '%-14s %8s %14s %10s %12s\n' run median spread MB/s messages/s
for row in "jobs=1 $t1 j1" "jobs=2 $t2 j2" "halves $th halves" "cat $tc cat"; do
  set -- $row
  printf '%-14s %8.3f %14s %10.1f %12.0f\n' "$1" "$2" "$(spread "$(walls "$3")")" "$(echo "$size / 1000000 / $2" | bc -l)" "$(echo "$count / $2" | bc -l)"
done
r1=$(walls j1) r2=$(walls j2)
echo "speed-up jobs=2 over jobs=1 (medians): $(echo "$t1 / $t2" | bc -l | cut -c1-4)x (worst jobs=1 / best jobs=2 to best / worst: $(echo "$(spread "$r1" | cut -d- -f1) / $(spread "$r2" | cut -d- -f2)" | bc -l | cut -c1-4)x-$(echo "$(spread "$r1" | cut -d- -f2) / $(spread "$r2" | cut -d- -f1)" | bc -l | cut -c1-4)x); outputs and reports identical: $same"
# The same ratio taken in each round (the two runs next to each other in time), its median:
# steadier than the ratio of the medians when the machine's speed drifts between rounds.
per_round() { paste -d' ' <(walls "$1" | tr ' ' '\n' | grep .) <(walls "$2" | tr ' ' '\n' | grep .) | awk '{ printf "%.3f ", $1 / $2 }'; }
pr=$(per_round j1 j2)
echo "speed-up jobs=2 over jobs=1 in each round: median $(median "$pr")x (spread $(spread "$pr")x)"
if [ -n "${OTHER:-}" ]; then
  opr=$(per_round oj1 oj2)
  echo "$OTHER, same rounds: jobs=1 $(median "$(walls oj1)") s, jobs=2 $(median "$(walls oj2)") s; speed-up in each round: median $(median "$opr")x (spread $(spread "$opr")x)"
fi
echo "ceiling, two --jobs=1 runs on the halves at once: $th s, $(echo "$t1 / $th" | bc -l | cut -c1-4)x; jobs=2 reaches $(echo "100 * $th / $t2" | bc -l | cut -c1-4)% of it"
echo "load average during the rounds: $(spread "$(cat "$out/jobs-load")") (median $(median "$(cat "$out/jobs-load")"))"
rm -f "$times" "$out/jobs-load"
rm -f $out/o1.mbox* $out/o2.mbox* $out/oc.mbox* $out/oh1.mbox* $out/oh2.mbox* $out/oo1.mbox* $out/oo2.mbox* $out/or?.jsonl $out/half1.mbox $out/half2.mbox $out/rh1.jsonl $out/rh2.jsonl
