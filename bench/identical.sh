#!/usr/bin/env bash
# Output byte-identical to another binary's (a change that must not change any output): the
# corpus mbox (COUNT messages, bench/make_mbox.py), bench/inline.sh's two sets as mboxes (the
# corpus's saved pages with the generated MHTML pages, and the corpus's single messages with
# an HTML part), and bench/make_inline.py's large-part messages (quoted-printable, base64,
# 7bit; LF and CRLF), each run by both binaries with each of ARGS_LIST's option sets
# (';'-separated), from the file and from a pipe; then cmp. Prints one line per comparison and
# exits 1 if any differs.
# Usage: BEFORE=/path/to/mimeuri bash bench/identical.sh [BUILD_DIR] [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 1
count=${2:-20000}
corpus=${CORPUS:-../shared/corpus}
: "${BEFORE:?BEFORE=/path/to/the/other/mimeuri}"
IFS=';' read -r -a arg_sets <<< "${ARGS_LIST:---cid=inline;--cid=inline --jobs=2;--cid=inline --inline-max=67108864;--check --cid=inline;--cid=repair}"

inputs=()
mbox=$out/corpus-$count.mbox
[ -f "$mbox" ] || python3 bench/make_mbox.py "$corpus" "$count" "$mbox"
inputs+=("$mbox")
inline_sets "$corpus" # bench/lib.sh: $out/mhtml.mbox, $out/mixed-html.mbox
inputs+=("$out/mhtml.mbox" "$out/mixed-html.mbox")
for spec in "3 1500 quoted-printable lf" "3 1500 quoted-printable crlf" "4 700 base64 lf" "4 700 base64 crlf" \
            "3 1200 7bit lf" "5 300 7bit crlf" "60 20 quoted-printable lf"; do
  read -r n kb cte eol <<< "$spec"
  m=$out/identical-$n-$kb-$cte-$eol.eml
  [ -f "$m" ] || python3 bench/make_inline.py "$m" "$n" "$kb" "$cte" "$eol" 2
  inputs+=("$m")
done

fail=0
for in in "${inputs[@]}"; do
  for args in "${arg_sets[@]}"; do
    for how in file pipe; do
      if [ $how = file ]; then
        $bin $args "$in" > "$out/identical-new" 2>/dev/null || true
        $BEFORE $args "$in" > "$out/identical-before" 2>/dev/null || true
      else
        $bin $args < "$in" > "$out/identical-new" 2>/dev/null || true
        $BEFORE $args < "$in" > "$out/identical-before" 2>/dev/null || true
      fi
      if cmp -s "$out/identical-new" "$out/identical-before"; then
        echo "same      $(basename "$in") $args ($how, $(stat -c %s "$out/identical-new") bytes)"
      else
        echo "DIFFERENT $(basename "$in") $args ($how)"; fail=1
      fi
    done
  done
done
rm -f "$out/identical-new" "$out/identical-before"
exit $fail
