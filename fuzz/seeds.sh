#!/usr/bin/env bash
# Builds seed folders for the fuzzers from ../shared/corpus and testdata/ into DIR.
# Usage: bash fuzz/seeds.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?seed folder}
corpus=${CORPUS:-../shared/corpus}
mkdir -p "$out"/{filter,cturi,rfc2017,html,css}
n=0
add_message() { # file: the filter harness reads a mode byte first
  local f=$1
  [ "$(stat -c %s "$f")" -le 65536 ] || return 0
  n=$((n + 1))
  { printf "\\x$(printf %02x $((n % 128)))"; cat "$f"; } > "$out/filter/$n"
  cp "$f" "$out/html/$n"
}
if [ -d "$corpus" ]; then
  while IFS= read -r rel; do add_message "$corpus/$rel"; done < <(awk -F'\t' 'NR > 1 { print $1 }' "$corpus/INDEX.tsv")
  grep -rhai '^content-type:' "$corpus" | sort -u | head -3000 | split -l 1 - "$out/cturi/ct-"
fi
for f in testdata/cases/*/input.eml testdata/sample/*.eml; do add_message "$f"; done
# Crafted near the defects the structure checks were written for (see fuzz/README.md):
# MODE-name.eml, MODE the decimal mode byte the message is meant for; each goes in with it and
# with two neighbours (labels on every part; the next cid mode).
for f in fuzz/crafted/*.eml; do
  name=$(basename "$f" .eml); mode=${name%%-*}
  for m in "$mode" $(((mode | 32) % 256)) $(((mode & ~3) | ((mode + 1) & 3))); do
    { printf "\\x$(printf %02x "$m")"; cat "$f"; } > "$out/filter/crafted-$name-$m"
  done
  cp "$f" "$out/html/crafted-$name"
done
printf '%s\n' 'text/plain; charset="us-ascii"; x-mac-type="54455854"' 'application/uri.http%3A%2F%2Fx.test; foo="123"' \
  'mailto:joe@blow.test?MIME-type="message%2Frfc822"#123' 'ContentType:text/plain?charset="US-ASCII"' \
  'application/x-stuff; title*0*=us-ascii'"''"'This%20is; title*1="x"' '/text/plain/charset:us-ascii' |
  split -l 1 - "$out/cturi/draft-"
printf '%s\n' 'http://www.foo.com/file' 'ftp://ftp.deepdirs.org/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/20/21/file.html' \
  'http://x/a b"c\d' 'http://example.org/caf%C3%A9/%20' | split -l 1 - "$out/rfc2017/url-"
# CSS for fuzz_remote_css: the HTML seeds that name a url( or @import (the tokenizer reads the
# markup around them as CSS too), and the bypasses tests/test_remote.cc holds.
grep -lai -e 'url(' -e '@import' -e 'image-set' "$out"/html/* > "$out/css-list" 2>/dev/null || true
head -400 "$out/css-list" | xargs -r cp -t "$out/css"; rm -f "$out/css-list"
printf '%s\n' 'a{background:url(http://x/a)}' "a{background:\\000075rl(http://x/d)}" 'a{background:u\rl(http://x/f)}' \
  "@\\69mport 'http://x/i.css';" "p{background:image-set('http://x/1.png' 1x, url(http://x/2.png) 2x)}" \
  'p{background:/**/url(/**/http://x/c)}' 'p{fill:url(http://x/u.svg#p' "p{b:url('http://x/s" 'p{b:url(http://x/a"b)}' |
  split -l 1 - "$out/css/crafted-"
echo "seeds: $(ls "$out/filter" | wc -l) messages, $(ls "$out/cturi" | wc -l) content types, $(ls "$out/rfc2017" | wc -l) URLs, $(ls "$out/css" | wc -l) CSS"
