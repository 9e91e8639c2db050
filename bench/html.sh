#!/usr/bin/env bash
# HTML scanning speed and memory. (1) In process (bench/html_scan.cc, built here against the
# build's core library): the streaming tokenizer and gumbo's tree over the same 10 MB of HTML
# holding 10,000 cid: references, interleaved, best of RUNS each. (2) Whole runs of mimeuri
# --cid=check on messages whose HTML part is 10, 30 and 100 MB (SIZES), against --passes=none (parse and
# copy) in the same rounds: the scan's MB/s is the part's size over the difference, and its
# memory the difference in peak RSS (the same for every size when it does not grow with the
# part: each holds the same 10,000 references). --html-max is raised to the part's size. Usage: bash bench/html.sh [BUILD_DIR]   (RUNS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/mimeuri
out=bench/out
runs=${RUNS:-5}
mkdir -p "$out"
. bench/lib.sh

g++ -O2 -std=c++20 -Isrc -o "$out/html_scan" bench/html_scan.cc "$build/src/libmimeuri_core.a" \
  $(pkg-config --cflags --libs gmime-3.0 gumbo json-glib-1.0) -llockfile
sizes=(${SIZES:-10 30 100})
for mb in "${sizes[@]}"; do
  msg=$out/html-$mb.eml
  [ -f "$msg" ] || python3 bench/make_html.py 10000 "$msg" "$mb"
  # The HTML part alone: between its header block and the next delimiter line.
  sed -n '/^Content-Type: text\/html/,/^--b$/p' "$msg" | sed '1,2d;$d' > "$out/html-$mb.html"
done
echo "(1) in process, $runs runs each:"
"$out/html_scan" "$out/html-10.html" "$runs"

echo
echo "(2) whole runs, $runs interleaved rounds:"
printf '%-8s %-14s %8s %8s %10s %10s\n' html run best worst peak_RSS scan_MB/s
declare -A extra bytes # seconds --cid=check takes beyond --passes=none, per size
sizes=(${SIZES:-10 30 100})
for mb in "${sizes[@]}"; do
  msg=$out/html-$mb.eml
  hbytes=$(stat -c %s "$out/html-$mb.html")
  mapfile -t rows < <(rounds "$runs" \
    check "$bin --cid=check --mid=off --external-body=off --html-max=$hbytes $msg" \
    none "$bin --passes=none $msg")
  read -r _ cb cw _ crss <<< "${rows[0]}"
  read -r _ nb nw _ nrss <<< "${rows[1]}"
  printf '%-8s %-14s %8.3f %8.3f %6.1f MiB %10s\n' "$mb MB" "--cid=check" "$cb" "$cw" "$(echo "$crss / 1024" | bc -l)" \
    "$(awk -v b="$hbytes" -v t="$(echo "$cb - $nb" | bc -l)" 'BEGIN { if (t > 0) printf "%.1f", b / 1e6 / t; else print "(timer)" }')"
  printf '%-8s %-14s %8.3f %8.3f %6.1f MiB %10s\n' "$mb MB" "--passes=none" "$nb" "$nw" "$(echo "$nrss / 1024" | bc -l)" -
  echo "         memory of the scan: $(echo "($crss - $nrss) / 1024" | bc -l | cut -c1-4) MiB beyond --passes=none, $(echo "($crss - $nrss) * 1024 / $hbytes" | bc -l | cut -c1-4) bytes per byte of HTML"
  extra[$mb]=$(echo "$cb - $nb" | bc -l); bytes[$mb]=$hbytes
done
# The same 10,000 references in each: the difference is what the more HTML costs.
lo=${sizes[0]} hi=${sizes[-1]}
echo "marginal, $lo -> $hi MB of HTML: $(awk -v b="$(( ${bytes[$hi]} - ${bytes[$lo]} ))" -v t="$(echo "${extra[$hi]} - ${extra[$lo]}" | bc -l)" \
  'BEGIN { if (t > 0) printf "%.1f MB/s", b / 1e6 / t; else print "below the timer (10 ms)" }')"
