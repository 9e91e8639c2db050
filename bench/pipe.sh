#!/usr/bin/env bash
# A piped mbox filtered as it arrives (issue 14, the pipe): the default job over the corpus
# mbox from a file, from `cat` and from `gzip -dc` (a sender slower than mimeuri, as an
# archive is usually read), against the GMime parse+write program over the file, in
# interleaved rounds. BEFORE=path/to/an/older/mimeuri adds its pipe rows, so that a change is
# measured against what it changed in the same rounds.
# Usage: bash bench/pipe.sh [BUILD_DIR] [MESSAGES]   (RUNS=5 rounds; MESSAGES 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-20000}
bin=$build/mimeuri
out=bench/out
mkdir -p "$out"
mbox=$out/corpus-$count.mbox
[ -f "$mbox" ] || python3 bench/make_mbox.py "${CORPUS:-../shared/corpus}" "$count" "$mbox"
[ -f "$mbox.gz" ] || gzip -1 -c "$mbox" > "$mbox.gz"
gcc -O2 -o "$out/gmime_roundtrip" bench/gmime_roundtrip.c $(pkg-config --cflags --libs gmime-3.0)
. bench/lib.sh
runs=${RUNS:-5}
args=(gmime-roundtrip "$out/gmime_roundtrip $mbox"
      mimeuri-file "$bin $mbox"
      mimeuri-cat "cat $mbox | $bin"
      gzip-alone "gzip -dc $mbox.gz"
      mimeuri-gzip "gzip -dc $mbox.gz | $bin")
if [ -n "${BEFORE:-}" ]; then
  args+=(before-cat "cat $mbox | $BEFORE" before-gzip "gzip -dc $mbox.gz | $BEFORE")
fi
echo "bench/pipe.sh: $mbox ($(stat -c %s "$mbox") bytes, $count messages), $runs interleaved rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
mapfile -t rows < <(rounds "$runs" "${args[@]}")
base=$(echo "${rows[0]}" | awk '{ print $2 }')
printf '%-16s %8s %8s %8s %10s %9s\n' run best worst cpu peak_RSS "vs gmime"
for r in "${rows[@]}"; do
  set -- $r
  printf '%-16s %8.3f %8.3f %8.3f %6.1f MiB %8.2fx\n' "$1" "$2" "$3" "$4" "$(echo "$5 / 1024" | bc -l)" "$(echo "$2 / $base" | bc -l)"
done
