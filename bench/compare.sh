#!/usr/bin/env bash
# mimeuri's default job against baselines measured in the same run, on an mbox built from
# ../shared/corpus: (a) a GMime program that parses and writes each message back (built here
# from bench/gmime_roundtrip.c), (b) the same job written with Python's email package
# (bench/pyjob.py), (c) cat. Then message sizes from 1 KB to 1 GiB (file and pipe), start-up
# time for one small message, and callgrind instruction counts per message.
# Usage: bash bench/compare.sh [BUILD_DIR] [MESSAGES] [MAX_SIZE_MIB]   (RUNS=5: rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-5000}
max_mib=${3:-1024}
bin=$build/mimeuri
out=bench/out
mkdir -p "$out"
corpus=${CORPUS:-../shared/corpus}
mbox=$out/corpus-$count.mbox
[ -f "$mbox" ] || python3 bench/make_mbox.py "$corpus" "$count" "$mbox"
gcc -O2 -o "$out/gmime_roundtrip" bench/gmime_roundtrip.c $(pkg-config --cflags --libs gmime-3.0)
size=$(stat -c %s "$mbox")

. bench/lib.sh
runs=${RUNS:-5}
echo "corpus mbox: $count messages, $size bytes; $runs interleaved rounds (median wall, best and worst, median CPU)"
mapfile -t rows < <(rounds_median "$runs" \
  gmime-roundtrip "$out/gmime_roundtrip $mbox" \
  mimeuri-file "$bin $mbox" \
  mimeuri-pipe "cat $mbox | $bin" \
  mimeuri-jobs2 "$bin --jobs=2 $mbox" \
  python-email "python3 bench/pyjob.py $mbox" \
  cat "cat $mbox")
base=$(echo "${rows[0]}" | awk '{ print $2 }')
base_cpu=$(echo "${rows[0]}" | awk '{ print $5 }')
printf '%-16s %8s %8s %8s %8s %8s %11s %11s %9s %9s\n' run median best worst cpu MB/s messages/s peak_RSS "vs gmime" "cpu vs"
# (cat's time is below /usr/bin/time's 10 ms resolution: its rates print as 0)
for r in "${rows[@]}"; do
  set -- $r
  printf '%-16s %8.3f %8.3f %8.3f %8.3f %8.1f %11.0f %7.1f MiB %8.2fx %8.2fx\n' "$1" "$2" "$3" "$4" "$5" \
    "$(awk -v s="$size" -v t="$2" 'BEGIN { print (t > 0 ? s / 1e6 / t : 0) }')" \
    "$(awk -v n="$count" -v t="$2" 'BEGIN { print (t > 0 ? n / t : 0) }')" "$(echo "$6 / 1024" | bc -l)" \
    "$(echo "$2 / $base" | bc -l)" "$(echo "$5 / $base_cpu" | bc -l)"
done
py=$(echo "${rows[4]}" | awk '{ print $2 }'); mu=$(echo "${rows[1]}" | awk '{ print $2 }')
pyc=$(echo "${rows[4]}" | awk '{ print $5 }'); muc=$(echo "${rows[1]}" | awk '{ print $5 }')
echo "mimeuri default job vs Python email: $(echo "$py / $mu" | bc -l | cut -c1-5)x faster (medians; CPU $(echo "$pyc / $muc" | bc -l | cut -c1-5)x)"

echo
echo "message size (one base64 attachment + an HTML part with a cid: reference), file and pipe:"
printf '%-10s %-6s %9s %12s %10s\n' size input seconds peak_RSS "s/MiB"
for mib in 0 1 64 256 1024; do
  [ "$mib" -le "$max_mib" ] || continue
  msg=$out/size-$mib.eml
  if [ ! -f "$msg" ]; then
    bytes=$(( mib == 0 ? 700 : mib * 1024 * 1024 * 3 / 4 ))
    { printf 'From: b@example.org\nMessage-ID: <size@example.org>\nMIME-Version: 1.0\n'
      printf 'Content-Type: multipart/related; boundary="b"\n\n--b\nContent-Type: text/html\n\n'
      printf '<img src="cid:&lt;att@example.org&gt;">\n--b\nContent-Type: application/octet-stream\n'
      printf 'Content-Transfer-Encoding: base64\nContent-ID: <att@example.org>\n\n'
      head -c "$bytes" /dev/urandom | base64 -w 76
      printf -- '--b--\n'; } > "$msg"
  fi
  for input in file pipe; do
    if [ $input = file ]; then /usr/bin/time -f '%e %M' -o "$out/t" "$bin" "$msg" > /dev/null
    else /usr/bin/time -f '%e %M' -o "$out/t" sh -c "cat '$msg' | '$bin'" > /dev/null; fi
    read -r secs kib < "$out/t"
    secs=$(awk -v s="$secs" 'BEGIN { print (s < 0.005) ? 0.005 : s }')
    label=$([ "$mib" = 0 ] && echo "1 KB" || echo "$mib MiB")
    printf '%-10s %-6s %9.3f %8.1f MiB %10s\n' "$label" $input "$secs" "$(echo "$kib / 1024" | bc -l)" \
      "$([ "$mib" = 0 ] && echo - || echo "$secs / $mib" | bc -l | cut -c1-6)"
  done
done

echo
small=$out/size-0.eml
s=$(date +%s.%N); for _ in $(seq 100); do "$bin" < "$small" > /dev/null; done; e=$(date +%s.%N)
echo "start-up: one 1 KB message through a pipe: $(echo "($e - $s) * 10" | bc -l | cut -c1-5) ms per run (mean of 100)"

if command -v valgrind > /dev/null; then
  head -c 4000000 "$mbox" > "$out/cg.mbox"
  n=$(grep -c '^From bench@' "$out/cg.mbox")
  for prog in "$bin" "$out/gmime_roundtrip"; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$prog" "$out/cg.mbox" > /dev/null 2> "$out/cg.err"
    ir=$(grep -m1 '^summary:' "$out/cg.out" | awk '{ print $2 }')
    echo "callgrind: $(basename "$prog"): $((ir / n)) instructions per message ($n messages)"
  done
fi
