#!/usr/bin/env bash
# The DKIM/ARC body hash in process, in MB/s (bench/body_hash.cc, built here against the build's
# core library and the test oracle): the hash reading runs, the byte-at-a-time oracle, GLib's
# SHA-256 alone over the same bytes (and src/util/sha256.hh's, nettle as mimeuri calls it, and nettle's direct), on (1) every DKIM- or
# ARC-signed message of ../shared/corpus and (2) the whole corpus, each message hashed on its
# own. Usage: bash bench/body_hash.sh [BUILD_DIR]   (ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=bench/out
rounds=${ROUNDS:-5}
corpus=${CORPUS:-../shared/corpus}
mkdir -p "$out"
nettle=(); pkg-config --exists nettle && nettle=(-DWITH_NETTLE $(pkg-config --cflags --libs nettle))
g++ -O2 -std=c++20 -Isrc/mime -Isrc/util -Itests -o "$out/body_hash" bench/body_hash.cc tests/dkim_oracle.cc \
  "$build/src/mime/libmimeuri_mime.a" "$build/src/util/libmimeuri_util.a" $(pkg-config --cflags --libs gmime-3.0 gumbo json-glib-1.0) "${nettle[@]}" -llockfile
mapfile -t signed < <(grep -rlai -E '^(DKIM-Signature|ARC-Message-Signature):' "$corpus" --include='*' | grep -v -E '/(INDEX|MANIFEST)\.tsv$|\.md$' | sort)
mapfile -t all < <(awk -F'\t' 'NR > 1 { print "'"$corpus"'/" $1 }' "$corpus/INDEX.tsv")
echo "load before: $(uptime)"
echo "(1) the corpus's signed messages:"
"$out/body_hash" "$rounds" "${signed[@]}"
echo "    the same, the body hash on GLib's SHA-256 (MIMEURI_SHA256_PLAIN=1):"
MIMEURI_SHA256_PLAIN=1 "$out/body_hash" "$rounds" "${signed[@]}" | grep -E '^(runs|oracle)'
echo
echo "(2) the whole corpus:"
"$out/body_hash" "$rounds" "${all[@]}"
echo "load after: $(uptime)"
