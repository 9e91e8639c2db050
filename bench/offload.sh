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

# Side by side with MIMEDefang's action_replace_with_url (Debian's mimedefang, with
# libnet-dns-perl, which its mimedefang.pl needs and the package does not pull in), on the
# corpus's single-message files at least as large as the threshold (an mbox is one message
# per MIMEDefang run: left out; smaller files cannot hold a part that large): the bytes each
# leaves, whether the message can be given back (mimeuri: restored and cmp; MIMEDefang: its
# note replaces the part, its header is gone), the time (whole processes, sequentially) and
# the largest peak memory of one message.
if command -v mimedefang.pl >/dev/null; then
  echo "MIMEDefang $(dpkg-query -W -f '${Version}' mimedefang) action_replace_with_url, filter bench/offload_mimedefang.pl"
  printf '%-8s %-10s %6s %6s %12s %12s %10s %8s %9s\n' min tool files parts bytes-before bytes-after restorable time-s max-rss-KB
  for min in 1048576 102400; do
    mapfile -t set < <(awk -F'\t' -v m=$min 'NR > 1 && $8 == 0 && $2 >= m { print $1 }' ../shared/corpus/INDEX.tsv)
    rm -rf "$d/md" && mkdir -p "$d/md/store" "$d/mu/store"
    before=0; after_md=0; after_mu=0; parts_md=0; parts_mu=0; rss_md=0; rss_mu=0; back=0
    t0=$(date +%s.%N)
    for f in "${set[@]}"; do
      w="$d/md/w" && rm -rf "$w" && mkdir -p "$w"
      cp "../shared/corpus/$f" "$w/INPUTMSG"; printf 'Sa@example.org\nRb@example.org\nF\n' > "$w/COMMANDS"; : > "$w/HEADERS"
      n0=$(ls "$d/md/store" | wc -l)
      MD_MIN=$min MD_STORE="$PWD/$d/md/store" /usr/bin/time -f %M -o "$d/t" mimedefang.pl -f "$PWD/bench/offload_mimedefang.pl" "$PWD/$w" >/dev/null 2>&1 || true
      rss_md=$(( $(tail -1 "$d/t") > rss_md ? $(tail -1 "$d/t") : rss_md ))
      size=$(stat -c %s "$w/INPUTMSG"); before=$((before + size))
      if [ -f "$w/NEWBODY" ]; then # the header block as it came (its Content-Type changed in place) and the new body
        hdr=$(awk '/^\r?$/ { print NR; exit }' "$w/INPUTMSG"); after_md=$((after_md + $(head -n "$hdr" "$w/INPUTMSG" | wc -c) + $(stat -c %s "$w/NEWBODY")))
        parts_md=$((parts_md + $(grep -c 'was stored at' "$w/NEWBODY" || true)))
      else after_md=$((after_md + size)); fi
    done
    t1=$(date +%s.%N)
    for f in "${set[@]}"; do
      /usr/bin/time -f %M -o "$d/t" "$bin" --passes=offload --offload-min=$min --offload-dir="$d/mu/store" \
        --offload-url='https://files.example.org/{name}' --report="$d/r.json" -o "$d/mu/out" "../shared/corpus/$f" 2>/dev/null || true
      rss_mu=$(( $(tail -1 "$d/t") > rss_mu ? $(tail -1 "$d/t") : rss_mu ))
      after_mu=$((after_mu + $(stat -c %s "$d/mu/out")))
      parts_mu=$((parts_mu + $(grep -o '"action":"offloaded"' "$d/r.json" | wc -l || true)))
      "$bin" --passes=offload --offload-restore --offload-dir="$d/mu/store" -o "$d/mu/back" "$d/mu/out" 2>/dev/null || true
      cmp -s "$d/mu/back" "../shared/corpus/$f" && back=$((back + 1))
    done
    t2=$(date +%s.%N)
    printf '%-8s %-10s %6s %6s %12s %12s %10s %8.2f %9s\n' $min MIMEDefang ${#set[@]} $parts_md $before $after_md no \
      "$(echo "$t1 - $t0" | bc)" $rss_md
    printf '%-8s %-10s %6s %6s %12s %12s %10s %8.2f %9s\n' $min mimeuri ${#set[@]} $parts_mu $before $after_mu \
      "$back/${#set[@]}" "$(echo "$t2 - $t1" | bc)" $rss_mu
  done
  echo "(mimeuri's time includes the restore and cmp of every message)"
  echo "load after: $(uptime)"
fi
