#!/usr/bin/env bash
# `mimeuri archive` against MHonArc (Debian's mhonarc) on the same threaded mbox (issue 50;
# bench/mhonarc.sh did the same for --cid=extract): a full build, then one message added
# (`mhonarc -add`, `mimeuri archive DIR MSG`), each timed in interleaved rounds (median wall);
# then both archives, built and added to, crawled in headless Chromium from their top pages
# (bench/archive_browser.py: pages, links that work and that do not, images shown, mid: URLs
# left).
# Usage: bash bench/archive_mhonarc.sh [BUILD_DIR]   (RUNS=5, THREADS=20)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
corpus=${CORPUS:-../shared/corpus}
command -v mhonarc > /dev/null || apt-get install -y mhonarc > /dev/null
all=$out/archive-all.mbox base=$out/archive-base.mbox one=$out/archive-one.mbox
python3 bench/make_thread_mbox.py "$corpus" "$all" "${THREADS:-20}" > /dev/null
# The last message (a reply in a thread) is the one added.
python3 - "$all" "$base" "$one" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
msgs = [p for p in re.split(rb"(?:(?<=\n\n)|^)(?=From )", data) if p]
open(sys.argv[2], "wb").write(b"".join(msgs[:-1]))
open(sys.argv[3], "wb").write(msgs[-1])
PY
# Absolute: MHonArc -add requires OUTDIR/.mhonarc.db through perl, which searches @INC for a relative path.
a=$(realpath "$out")/am-mimeuri m=$(realpath "$out")/am-mhonarc
echo "$(mhonarc -v 2>/dev/null | head -1); $runs interleaved rounds; $(grep -c '^From ' "$all") messages, $(wc -c < "$all") bytes; load $(uptime | sed 's/.*load average: //')"
rm -rf "$a.base" "$m.base"
"$bin" archive --quiet "$a.base" "$base"
mkdir -p "$m.base" && mhonarc -quiet -outdir "$m.base" "$base"
tmp=$(mktemp)
time_rounds "$tmp" "$runs" \
  mimeuri-full "rm -rf $a && $bin archive --quiet $a $all" \
  mhonarc-full "rm -rf $m && mkdir $m && mhonarc -quiet -outdir $m $all" \
  mimeuri-add "rm -rf $a.add && cp -a $a.base $a.add && $bin archive --quiet $a.add $one" \
  mhonarc-add "rm -rf $m.add && cp -a $m.base $m.add && mhonarc -quiet -add -outdir $m.add $one"
for l in mimeuri-full mhonarc-full mimeuri-add mhonarc-add; do
  printf '%-13s median %6.3f s wall (spread %s s), %6.3f s CPU\n' "$l" \
    "$(median "$(awk -v l=$l '$1 == l { print $2 }' "$tmp")")" "$(spread "$(awk -v l=$l '$1 == l { print $2 }' "$tmp")")" \
    "$(median "$(awk -v l=$l '$1 == l { print $3 + $4 }' "$tmp")")"
done
rm -f "$tmp"
echo "(the add's rounds include copying the archive first: cp -a alone, mimeuri's $(du -sh "$a.base" | cut -f1), MHonArc's $(du -sh "$m.base" | cut -f1))"
mods=${MIMEURI_BROWSER_NPM_DIR:-$build/browser-npm}/node_modules
if ! command -v chromium > /dev/null || [ ! -d "$mods/puppeteer-core" ]; then
  echo "no chromium or no puppeteer-core in $mods: no browser counts" >&2
  exit 0
fi
printf '%-16s %6s %11s %12s %13s %9s\n' archive pages links_work links_broken images_shown mid_left
for x in "mimeuri-full $a index.html" "mhonarc-full $m maillist.html" "mimeuri-added $a.add index.html" \
         "mhonarc-added $m.add maillist.html"; do
  set -- $x
  read -r pages work broken shown images mids < <(python3 bench/archive_browser.py "$mods" "$2" "$3")
  printf '%-16s %6d %11d %12d %9d/%-4d %9d\n' "$1" "$pages" "$work" "$broken" "$shown" "$images" "$mids"
done
