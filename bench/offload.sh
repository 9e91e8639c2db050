#!/usr/bin/env bash
# --offload-min on the corpus (issue 51): the bytes the messages keep and the store holds at
# 1 MB and 100 KB (and 10 KB), the time and peak memory of the offload and of the restore,
# and that the restore gives every message back (cmp); then one 512 MiB attachment, for the
# memory bound (the offload streams the part; the restore holds it).
# Usage: bash bench/offload.sh [BUILD_DIR]   (BIG=0 skips the 512 MiB message)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 1
d=$out/offload
rm -rf "$d" && mkdir -p "$d"
echo "load before: $(uptime)"
printf '%-10s %8s %12s %12s %12s %9s %9s %9s %9s %s\n' min offloaded mail-before mail-after store \
  off-s off-rss-KB rest-s rest-rss-KB identical
for min in 1048576 102400 10240; do
  rm -rf "$d/c" "$d/s" && cp -r ../shared/corpus "$d/c" && rm -f "$d"/c/*.tsv "$d"/c/*.md && mkdir "$d/s"
  chmod -R u+w "$d/c"
  find "$d/c" -type f -size 0 -delete
  before=$(du -sb "$d/c" | cut -f1)
  mapfile -d '' files < <(find "$d/c" -type f -print0) # one run: one report
  /usr/bin/time -f "%e %M" -o "$d/t1" "$bin" --in-place --passes=offload --offload-min=$min --offload-dir="$d/s" \
    --offload-url='https://files.example.org/{name}' --report="$d/r1.json" "${files[@]}" 2>/dev/null || true
  after=$(du -sb "$d/c" | cut -f1)
  store=$(du -sb --exclude=.key "$d/s" | cut -f1)
  n=$(grep -o '"action":"offloaded"' "$d/r1.json" | wc -l || true)
  /usr/bin/time -f "%e %M" -o "$d/t2" "$bin" --in-place --passes=offload --offload-restore --offload-dir="$d/s" \
    "${files[@]}" 2>/dev/null || true
  same=yes
  while IFS= read -r -d '' f; do cmp -s "$f" "../shared/corpus/${f#$d/c/}" || same=no; done < <(find "$d/c" -type f -print0)
  read -r t1 m1 < <(tail -1 "$d/t1"); read -r t2 m2 < <(tail -1 "$d/t2")
  printf '%-10s %8s %12s %12s %12s %9s %9s %9s %9s %s\n' "$min" "$n" "$before" "$after" "$store" "$t1" "$m1" "$t2" "$m2" "$same"
done
if [ "${BIG:-1}" != 0 ]; then
  python3 - "$d/big.eml" <<'PY'
import base64, os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"From: a@example.org\nTo: b@example.org\nSubject: big\nMIME-Version: 1.0\n"
            b"Content-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nhi\n\n--B\n"
            b"Content-Type: application/octet-stream; name=\"big.bin\"\nContent-Disposition: attachment;"
            b" filename=\"big.bin\"\nContent-Transfer-Encoding: base64\n\n")
    chunk = os.urandom(57 * 1024 * 16)
    for _ in range((512 << 20) // len(chunk) + 1):
        f.write(base64.encodebytes(chunk))
    f.write(b"--B--\n")
PY
  rm -rf "$d/s" && mkdir "$d/s"
  /usr/bin/time -f "%e %M" -o "$d/t1" "$bin" --offload-min=1048576 --offload-dir="$d/s" \
    --offload-url='https://x/{name}' -o "$d/big.out" "$d/big.eml"
  /usr/bin/time -f "%e %M" -o "$d/t2" "$bin" --offload-restore --offload-dir="$d/s" -o "$d/big.back" "$d/big.out"
  read -r t1 m1 < <(tail -1 "$d/t1"); read -r t2 m2 < <(tail -1 "$d/t2")
  cmp -s "$d/big.eml" "$d/big.back" && same=yes || same=no
  echo "512 MiB attachment ($(stat -c %s "$d/big.eml") bytes of message): offload ${t1} s, ${m1} KB peak;" \
       "restore ${t2} s, ${m2} KB peak; identical: $same"
  rm -f "$d/big.eml" "$d/big.out" "$d/big.back"
fi
echo "load after: $(uptime)"
