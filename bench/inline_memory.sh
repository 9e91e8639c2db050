#!/usr/bin/env bash
# --cid=inline's memory against the size of what it inlines (issue 32 item 1): messages made
# by bench/make_inline.py whose HTML part refers to large images, run with --cid=inline
# (--inline-max raised above the images) writing to a file, against --passes=none over the
# same message (reading and copying it: the floor), in interleaved rounds. Gives per message
# and run the median wall and CPU time and the peak RSS (the largest of the rounds), and the
# sizes of the input, the output and the largest image. BEFORE=/path/to/mimeuri adds that
# binary in the same rounds, and checks that its output is byte-identical (cmp).
# Messages (name: images x KiB each, HTML transfer encoding):
#   one-10M     1 x 10240, quoted-printable      one large part
#   ten-10M     10 x 10240, quoted-printable     a 136 MB output from ten 10 MB parts
#   ten-10M-b64 10 x 10240, base64, CRLF
#   400-40K     400 x 40, quoted-printable       many small parts (17 MB)
# Usage: bash bench/inline_memory.sh [BUILD_DIR]   (RUNS=3, SETS="one-10M ten-10M ten-10M-b64 400-40K")
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 3

make_set() { # name -> the message's path, made once
  local m=$out/inline-$1.eml
  if [ ! -f "$m" ]; then
    case $1 in
      one-10M) python3 bench/make_inline.py "$m" 1 10240 ;;
      ten-10M) python3 bench/make_inline.py "$m" 10 10240 ;;
      ten-10M-b64) python3 bench/make_inline.py "$m" 10 10240 base64 crlf ;;
      400-40K) python3 bench/make_inline.py "$m" 400 40 ;;
      *) echo "unknown set $1" >&2; exit 64 ;;
    esac
  fi
  echo "$m"
}

printf '%-12s %-14s %8s %8s %8s %8s %10s %10s\n' message run median best worst cpu peak_RSS output_MB
for set in ${SETS:-one-10M ten-10M ten-10M-b64 400-40K}; do
  msg=$(make_set "$set")
  opts="--cid=inline --inline-max=$((64 << 20))"
  args=(none "$bin --passes=none $msg -o $out/inline-none.out"
        inline "$bin $opts $msg -o $out/inline-new.out")
  [ -n "${BEFORE:-}" ] && args+=(inline-before "$BEFORE $opts $msg -o $out/inline-before.out")
  mapfile -t rows < <(rounds_median "$runs" "${args[@]}")
  for row in "${rows[@]}"; do
    read -r label med best worst cpu rss <<< "$row"
    o=$out/inline-${label#inline-}.out
    [ "$label" = inline ] && o=$out/inline-new.out
    printf '%-12s %-14s %8.3f %8.3f %8.3f %8.3f %6.1f MiB %10.1f\n' "$set" "$label" "$med" "$best" "$worst" "$cpu" \
      "$(echo "$rss / 1024" | bc -l)" "$(echo "$(stat -c %s "$o") / 1000000" | bc -l)"
  done
  if [ -n "${BEFORE:-}" ]; then
    cmp "$out/inline-new.out" "$out/inline-before.out" && echo "$set: output byte-identical to $BEFORE"
  fi
  echo "$set: input $(stat -c %s "$msg") bytes"
  rm -f "$out"/inline-*.out
done
echo "($runs interleaved rounds; peak RSS the largest of them)"
