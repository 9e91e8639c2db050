#!/usr/bin/env bash
# What sanitising the pages costs, and what an archive does to its reader, against MHonArc
# (issue 41).
#  - time: interleaved rounds (bench/lib.sh rounds_median) over one threaded mbox of real
#    HTML mail (bench/make_thread_mbox.py, as bench/mhonarc.sh makes it): mimeuri
#    --cid=extract as this tree builds it (every page sanitised, with its header and CSP,
#    every message a page, the threaded index) against BASE, the same command of a build of
#    the tree before issue 41 (no sanitiser), and MHonArc; the ratio sanitised / BASE is the
#    cost, measured in the same rounds;
#  - the hostile mbox of tests/browser/hostile_suite.py extracted by both, every page each
#    wrote opened in headless Chromium (tests/browser/hostile_pages.mjs): pages where a script
#    ran, requests that would have left;
#  - the threaded mbox crawled from each archive's top page (bench/archive_browser.py):
#    pages reached, images shown.
# Usage: BASE=/path/to/old/mimeuri bash bench/sanitize.sh [BUILD_DIR]   (RUNS=5, THREADS=20)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
corpus=${CORPUS:-../shared/corpus}
base=${BASE:?BASE=the mimeuri binary before issue 41}
command -v mhonarc > /dev/null || { echo "mhonarc is not installed (apt-get install mhonarc)" >&2; exit 1; }
mbox=$out/thread.mbox
python3 bench/make_thread_mbox.py "$corpus" "$mbox" "${THREADS:-20}"
x=$out/sanitize-x b=$out/sanitize-base mh=$out/sanitize-mh
echo "$(grep -c '^From ' "$mbox") messages, $(wc -c < "$mbox") bytes; $runs interleaved rounds; load: $(uptime)"
rounds_median "$runs" \
  unsanitised "rm -rf $b && $base --cid=extract --extract-dir=$b $mbox" \
  sanitised "rm -rf $x && $bin --cid=extract --extract-dir=$x $mbox" \
  mhonarc "rm -rf $mh && mkdir $mh && mhonarc -quiet -outdir $mh $mbox" | tee "$out/sanitize-times"
awk '$1 == "unsanitised" { u = $2 } $1 == "sanitised" { s = $2 } $1 == "mhonarc" { m = $2 }
     END { printf "sanitised / unsanitised: %.2fx; MHonArc / unsanitised: %.2fx\n", s / u, m / u }' "$out/sanitize-times"
echo "load after: $(uptime)"

# User and system CPU apart, interleaved: the system share is mostly the file system creating
# the extract folder's files and folders (on ext4 it grows with what was deleted there
# before: find_get_block in recently_deleted, under ext4_create), not mimeuri's code.
rm -f "$out/sanitize-cpu"
for _ in $(seq "$runs"); do
  for v in "unsanitised $base" "sanitised $bin"; do
    set -- $v
    rm -rf "$out/cpu-$1"
    /usr/bin/time -a -o "$out/sanitize-cpu" -f "$1 %U %S" "$2" --cid=extract --extract-dir="$out/cpu-$1" "$mbox" > /dev/null
  done
done
awk 'function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                     return a[int((n + 1) / 2)] }
     { u[$1] = u[$1] " " $2; k[$1] = k[$1] " " $3 }
     END { for (l in u) printf "%s: user %.3f s, system %.3f s (medians)\n", l, med(u[l]), med(k[l])
           printf "user CPU sanitised / unsanitised: %.2fx\n", med(u["sanitised"]) / med(u["unsanitised"]) }' "$out/sanitize-cpu"
echo "files written: unsanitised $(find "$out/cpu-unsanitised" -type f | wc -l), sanitised $(find "$out/cpu-sanitised" -type f | wc -l)"

# Like with like (the same pages written, the sanitiser on or off): the sanitiser's share of
# the sanitised run's CPU samples (perf), so on / off = 1 / (1 - share). Counted as the
# sanitiser: its own functions, and every sample of the helpers it shares with the references
# scan (url_scheme, plain_decoded, decode_attribute, append_escaped...): an upper bound.
if command -v perf > /dev/null; then
  rm -rf "$out/perf-x"
  perf record -q -F 4999 -o "$out/sanitize.perf" -- "$bin" --cid=extract --extract-dir="$out/perf-x" "$mbox" > /dev/null 2>&1
  perf report -i "$out/sanitize.perf" --no-children --sort dso,symbol --stdio -g none 2> /dev/null |
    awk '/^ +[0-9.]+%/ { p = $1; sub("%", "", p); all += p; if ($2 != "[kernel.kallsyms]") user += p
           if ($0 ~ /html::sanitize|Sanitizer::|append_css|srcset_remote|url_scheme|is_script_url|is_remote_url|plain_decoded|decode_attribute|decode_pieces|append_escaped/) s += p }
         END { printf "sanitiser: %.2f%% of all samples (%.2f%% of user-space ones): sanitiser on / off, same pages: at most %.3fx (all CPU), %.3fx (user CPU)\n",
                      s, 100 * s / user, 100 / (100 - s), user / (user - s) }'
fi

mods=${MIMEURI_BROWSER_NPM_DIR:-$build/browser-npm}/node_modules
if ! command -v chromium > /dev/null || [ ! -d "$mods/puppeteer-core" ]; then
  echo "no chromium or no puppeteer-core in $mods: no browser counts" >&2
  exit 0
fi
# The hostile mbox, through both.
python3 - "$out/hostile.mbox" << 'EOF'
import sys
sys.path.insert(0, "tests/browser")
from hostile_suite import vectors, message, related_message
vs = vectors()
with open(sys.argv[1], "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
    for n, (name, html) in enumerate(vs.items()):
        f.write(message(n, name, html))
    f.write(related_message(len(vs)))
EOF
hx=$out/hostile-x hmh=$out/hostile-mh
rm -rf "$hx" "$hmh" && mkdir "$hmh"
$bin --cid=extract --extract-dir="$hx" "$out/hostile.mbox" > /dev/null
mhonarc -quiet -outdir "$hmh" "$out/hostile.mbox"
printf '%-8s %6s %12s %15s\n' archive pages scripts_ran requests_made
for a in "mimeuri $hx" "mhonarc $hmh"; do
  set -- $a
  python3 - "$mods" "$2" "$1" << 'EOF'
import json, os, shutil, subprocess, sys, tempfile
mods, root, label = sys.argv[1:4]
pages = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith((".html", ".htm")))
with tempfile.TemporaryDirectory() as w:
    m, r = os.path.join(w, "m.json"), os.path.join(w, "r.json")
    json.dump({"chromium": shutil.which("chromium"), "pages": pages}, open(m, "w"))
    subprocess.run(["node", "tests/browser/hostile_pages.mjs", m, r], check=True,
                   env=dict(os.environ, MIMEURI_BROWSER_NODE_MODULES=os.path.abspath(mods)))
    res = json.load(open(r))
ran = sum(1 for o in res if o["dom"] and (o["dom"]["xss"] or o["dialogs"]))
print(f"{label:8s} {len(pages):6d} {ran:12d} {sum(len(o['requests']) for o in res):15d}")
EOF
done
printf '%-9s %6s %11s %12s %13s %9s\n' archive pages links_work links_broken images_shown mid_left
for a in "mimeuri $x index.html" "mhonarc $mh maillist.html"; do
  set -- $a
  read -r pages work broken shown images mids < <(python3 bench/archive_browser.py "$mods" "$2" "$3")
  printf '%-9s %6d %11d %12d %9d/%-4d %9d\n' "$1" "$pages" "$work" "$broken" "$shown" "$images" "$mids"
done
