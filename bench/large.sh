#!/usr/bin/env bash
# Peak memory and time for one large message (a single base64 attachment), from a file and
# from a pipe, against `cat` measured in the same run. Checks the output is byte-identical.
# Usage: bash bench/large.sh [SIZE_MIB] [BUILD_DIR]     (default 512 MiB, build/)
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-512}
build=${2:-build}
bin=$build/mimeuri
out=bench/out
mkdir -p "$out"
msg=$out/large-$mib.eml
if [ ! -f "$msg" ]; then
  {
    printf 'From: bench@example.org\nSubject: large attachment\nMessage-ID: <large@example.org>\n'
    printf 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\n'
    printf 'Content-Type: text/html; charset=utf-8\n\n<p><img src="cid:att@example.org"></p>\n--b\n'
    printf 'Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n'
    printf 'Content-ID: <att@example.org>\n\n'
    head -c $((mib * 1024 * 1024 * 3 / 4)) /dev/urandom | base64 -w 76
    printf -- '--b--\n'
  } > "$msg"
fi
size=$(stat -c %s "$msg")

measure() { # label, command...
  local label=$1; shift
  local t; t=$(mktemp)
  /usr/bin/time -f '%M %e' -o "$t" "$@"
  read -r rss secs < "$t"; rm -f "$t"
  printf '%-28s %10s KiB %8s s %8.1f MB/s\n' "$label" "$rss" "$secs" \
    "$(awk -v b="$size" -v s="$secs" 'BEGIN { print (s > 0 ? b / 1e6 / s : 0) }')"
  echo "$rss $secs" > "$out/last"
}

echo "input: $msg ($size bytes)"
printf '%-28s %14s %10s %13s\n' run peak_rss wall throughput
measure "cat (baseline, file)" sh -c "cat '$msg' > '$out/o.eml'"
read -r cat_rss cat_s < "$out/last"
measure "mimeuri, file" sh -c "'$bin' '$msg' > '$out/o.eml'"
read -r file_rss file_s < "$out/last"
cmp -s "$msg" "$out/o.eml" && file_same=yes || file_same=NO
measure "mimeuri, pipe" sh -c "cat '$msg' | '$bin' > '$out/o.eml'"
read -r pipe_rss pipe_s < "$out/last"
cmp -s "$msg" "$out/o.eml" && pipe_same=yes || pipe_same=NO
rm -f "$out/o.eml" "$out/last"
echo
echo "byte-identical: file $file_same, pipe $pipe_same"
awk -v f="$file_s" -v p="$pipe_s" -v c="$cat_s" 'BEGIN {
  if (c > 0) printf "wall time vs cat: file %.2fx, pipe %.2fx\n", f / c, p / c }'
echo "peak RSS limit 65536 KiB: file $([ "$file_rss" -lt 65536 ] && echo ok || echo OVER), pipe $([ "$pipe_rss" -lt 65536 ] && echo ok || echo OVER)"
