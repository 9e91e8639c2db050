#!/usr/bin/env bash
# --jobs scaling: an mbox of 20,000 messages built from ../shared/corpus (its single messages,
# repeated, with mboxo ">From " quoting), processed by the default job with --jobs=1 and
# --jobs=2 (best of three each); the outputs and reports must be byte-identical.
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
best() { # seconds, best of three
  local b=""
  for _ in 1 2 3; do
    local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N)
    b=$(echo "$e - $s" | bc -l | awk -v a="$b" '{ print (a == "" || $1 < a) ? $1 : a }')
  done
  echo "$b"
}
t1=$(best sh -c "'$bin' --jobs=1 --report=$out/r1.jsonl '$mbox' > $out/o1.mbox")
t2=$(best sh -c "'$bin' --jobs=2 --report=$out/r2.jsonl '$mbox' > $out/o2.mbox")
tc=$(best sh -c "cat '$mbox' > $out/oc.mbox")
same=no; cmp -s $out/o1.mbox $out/o2.mbox && cmp -s $out/r1.jsonl $out/r2.jsonl && same=yes
changed=$(grep -c '"changed":true' $out/r1.jsonl || true)
echo "mbox: $count messages, $size bytes ($changed changed by the default job); $(nproc) cores"
printf '%-14s %8s %10s %12s\n' run seconds MB/s messages/s
for row in "jobs=1 $t1" "jobs=2 $t2" "cat $tc"; do
  set -- $row
  printf '%-14s %8.3f %10.1f %12.0f\n' "$1" "$2" "$(echo "$size / 1000000 / $2" | bc -l)" "$(echo "$count / $2" | bc -l)"
done
echo "speed-up jobs=2 over jobs=1: $(echo "$t1 / $t2" | bc -l | cut -c1-4)x; outputs and reports identical: $same"
rm -f $out/o1.mbox $out/o2.mbox $out/oc.mbox
