#!/usr/bin/env bash
# mimeuri --cid=extract against MHonArc (Debian's mhonarc) on one threaded mbox (issue 34):
# both turn it into an archive of HTML pages. The mbox (bench/make_thread_mbox.py): every
# corpus message with cid: images in a multipart/related (real mail, threaded by its
# headers in fours) and THREADS synthetic threads of five whose HTML links the message
# replied to and the thread's first image by mid: URLs (RFC 2392).
#  - time: interleaved rounds (bench/lib.sh time_rounds), each archive made afresh; the
#    median wall time of each, and as a ratio to a baseline measured in the same rounds
#    (mimeuri --passes=none over the mbox: reading, splitting and writing it back), so that
#    a loaded machine's figures compare;
#  - what a reader gets: each archive crawled in headless Chromium from its top page
#    (index.html; MHonArc's maillist.html) by bench/archive_browser.py (the browser suite's
#    check_pages.mjs, network off): pages, links followed that work and that do not,
#    images shown of those on the pages, mid: URLs left in the pages.
# Usage: bash bench/mhonarc.sh [BUILD_DIR]   (RUNS=5, THREADS=20; the browser counts need
# chromium and the suite's puppeteer-core: meson test -C BUILD --suite browser installs it)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
corpus=${CORPUS:-../shared/corpus}
command -v mhonarc > /dev/null || { echo "mhonarc is not installed (apt-get install mhonarc)" >&2; exit 1; }
mbox=$out/thread.mbox
python3 bench/make_thread_mbox.py "$corpus" "$mbox" "${THREADS:-20}"
x=$out/mhonarc-x mh=$out/mhonarc-mh
echo "$(mhonarc -v 2>/dev/null | head -1); $runs interleaved rounds; $(grep -c '^From ' "$mbox") messages, $(wc -c < "$mbox") bytes"

tmp=$(mktemp)
time_rounds "$tmp" "$runs" \
  baseline "$bin --passes=none $mbox" \
  mimeuri "rm -rf $x && $bin --cid=extract --extract-dir=$x --report=$out/mhonarc.jsonl $mbox" \
  mhonarc "rm -rf $mh && mkdir $mh && mhonarc -quiet -outdir $mh $mbox"
declare -A med
for l in baseline mimeuri mhonarc; do
  med[$l]=$(median "$(awk -v l=$l '$1 == l { print $2 }' "$tmp")")
  printf '%-9s median %6.2f s (spread %s s), %.1fx the baseline\n' "$l" "${med[$l]}" \
    "$(spread "$(awk -v l=$l '$1 == l { print $2 }' "$tmp")")" "$(echo "${med[$l]} / ${med[baseline]}" | bc -l)"
done
rm -f "$tmp"

mods=${MIMEURI_BROWSER_NPM_DIR:-$build/browser-npm}/node_modules
if ! command -v chromium > /dev/null || [ ! -d "$mods/puppeteer-core" ]; then
  echo "no chromium or no puppeteer-core in $mods: no browser counts" >&2
  exit 0
fi
rewritten=$(python3 -c 'import json,sys
print(sum(r["kind"] == "mid" and r["action"] == "extracted" for l in open(sys.argv[1]) for r in json.loads(l)["refs"]))' "$out/mhonarc.jsonl")
printf '%-9s %6s %11s %12s %13s %9s\n' archive pages links_work links_broken images_shown mid_left
for a in "mimeuri $x index.html" "mhonarc $mh maillist.html"; do
  set -- $a
  read -r pages work broken shown images mids < <(python3 bench/archive_browser.py "$mods" "$2" "$3")
  printf '%-9s %6d %11d %12d %9d/%-4d %9d\n' "$1" "$pages" "$work" "$broken" "$shown" "$images" "$mids"
done
echo "mimeuri: $rewritten mid: references rewritten to pages or files (the report's mid: 'extracted')"
