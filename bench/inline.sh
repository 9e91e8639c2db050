#!/usr/bin/env bash
# --cid=inline against nodemailer's mailparser (npm) on the job people compare them on:
# references in the HTML turned into data: URIs. mailparser's simpleParser does it for cid:
# references in `html` (bench/mailparser_inline.js, one node process over all the files);
# mimeuri --cid=inline does it for cid: and Content-Location references and writes the whole
# message (one run over an mbox of the same files, bench/files_to_mbox.py). Two sets:
#  (a) MHTML-like: the corpus's saved pages (.mht/.mhtml, or a "Saved by" /
#      Snapshot-Content-Location header) and MHTML_COUNT pages made by bench/make_mhtml.py
#      (each image referred to once by cid:, so that both make the same data: URIs);
#  (b) mixed HTML mail: every single message of the corpus with an HTML part (INDEX.tsv);
#  (c) signed-list: real signed mail, list mail and newsletters (bench/pick_signed.py: the
#      corpus's single messages with a DKIM-Signature or ARC field, or List-Id or
#      List-Unsubscribe), SIGNED_REPEAT (3) times over; (d) signed-html: those of them with an
#      HTML part, as often; (e) gathered-list and (f) gathered-html: the same picks from signed
#      mail gathered outside the corpus (GATHERED, default ../shared/gathered/signed: 152
#      messages of 10 public repositories' test data, none of them in the corpus; bench/README.md
#      lists where each came from), GATHERED_REPEAT (8) times over. Left out when that folder is
#      not there.
# Interleaved rounds (bench/lib.sh rounds_median): median, best and worst wall time, median
# CPU, peak RSS, input MB/s, and mimeuri's throughput as a multiple of mailparser's (its
# median wall time over mimeuri's; and the same of the median CPU times, steadier on a
# loaded machine). BEFORE=/path/to/mimeuri adds that binary in the same rounds, and then
# the default job (no options) on the signed sets, this binary against BEFORE, in rounds of
# their own. SETS chooses the sets (default all six).
# mailparser is installed by this script into bench/.node (ignored by git), never into the
# repository's files.
# Usage: bash bench/inline.sh [BUILD_DIR]   (RUNS=5, MHTML_COUNT=40, MAILPARSER_VERSION)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
corpus=${CORPUS:-../shared/corpus}
version=${MAILPARSER_VERSION:-3.14.2}

if ! grep -qs "\"version\": \"$version\"" bench/.node/node_modules/mailparser/package.json; then
  mkdir -p bench/.node
  (cd bench/.node && npm install --no-audit --no-fund --silent "mailparser@$version" >/dev/null)
fi
echo "mailparser $version, node $(node --version); $runs interleaved rounds"

inline_sets "$corpus" # bench/lib.sh: the first two sets
repeat=${SIGNED_REPEAT:-3}
python3 bench/pick_signed.py "$corpus" "$out/signed-list.list" "$repeat"
python3 bench/pick_signed.py "$corpus" "$out/signed-html.list" "$repeat" html
signed_sets="signed-list signed-html"
gathered=${GATHERED:-../shared/gathered/signed}
if [ -d "$gathered" ]; then
  python3 bench/pick_signed.py "$gathered" "$out/gathered-list.list" "${GATHERED_REPEAT:-8}"
  python3 bench/pick_signed.py "$gathered" "$out/gathered-html.list" "${GATHERED_REPEAT:-8}" html
  signed_sets+=" gathered-list gathered-html"
fi
for set in $signed_sets; do python3 bench/files_to_mbox.py "$out/$set.list" "$out/$set.mbox"; done
echo "load: $(uptime)"

printf '%-13s %-15s %7s %7s %7s %7s %10s %7s %12s %11s\n' set run median best worst cpu peak_RSS MB/s "x mp (wall)" "x mp (cpu)"
for set in ${SETS:-mhtml mixed-html $signed_sets}; do
  list=$out/$set.list
  mbox=$out/$set.mbox
  bytes=$(xargs cat < "$list" | wc -c)
  n=$("$bin" --check --cid=inline "$mbox" | wc -l)
  [ "$n" = "$(wc -l < "$list")" ] || { echo "$mbox: mimeuri read $n messages, not $(wc -l < "$list")" >&2; exit 1; }
  args=(mimeuri "$bin --cid=inline $mbox" mailparser "node bench/mailparser_inline.js $(tr '\n' ' ' < "$list")")
  [ -n "${BEFORE:-}" ] && args+=(mimeuri-before "$BEFORE --cid=inline $mbox")
  mapfile -t rows < <(rounds_median "$runs" "${args[@]}")
  read -r _ mp _ _ mpcpu _ <<< "${rows[1]}"
  for row in "${rows[@]}"; do
    read -r label med best worst cpu rss <<< "$row"
    printf '%-13s %-15s %7.3f %7.3f %7.3f %7.3f %6.1f MiB %7.1f %11.2fx %10.2fx\n' "$set" "$label" "$med" "$best" "$worst" "$cpu" \
      "$(echo "$rss / 1024" | bc -l)" "$(echo "$bytes / 1000000 / $med" | bc -l)" "$(echo "$mp / $med" | bc -l)" "$(echo "$mpcpu / $cpu" | bc -l)"
  done
  echo "$set: $(wc -l < "$list") messages, $bytes bytes"
done
echo "load: $(uptime)"
[ -n "${BEFORE:-}" ] || exit 0
# The default job on the signed sets: unchanged or faster than BEFORE.
printf '%-13s %-15s %7s %7s %7s %7s %10s %14s\n' set run median best worst cpu peak_RSS "x before (cpu)"
for set in $signed_sets; do
  mapfile -t rows < <(rounds_median "$runs" mimeuri "$bin $out/$set.mbox" mimeuri-before "$BEFORE $out/$set.mbox")
  read -r _ _ _ _ bcpu _ <<< "${rows[1]}"
  for row in "${rows[@]}"; do
    read -r label med best worst cpu rss <<< "$row"
    printf '%-13s %-15s %7.3f %7.3f %7.3f %7.3f %6.1f MiB %13.2fx\n' "$set" "$label" "$med" "$best" "$worst" "$cpu" \
      "$(echo "$rss / 1024" | bc -l)" "$(echo "$bcpu / $cpu" | bc -l)"
  done
done
echo "load: $(uptime)"
