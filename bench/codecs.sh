#!/usr/bin/env bash
# The transfer codecs in process, in MB/s (bench/codecs.cc, built here against the build's
# libraries): base64 decode and encode, quoted-printable encode and decode, the project's
# paths against GMime's and GLib's, with libb64 (Debian's libb64-dev), stringencoders'
# modp_b64 (libmodpbase64-dev), nettle and OpenSSL for
# reference where their headers are installed; and the copy of canonical base64 that replaces
# a decode then an encode. Bytes: the first BYTES_MB (16) MiB of bench/inline.sh's MHTML mbox
# (real pages and images, as base64 carries them); text: its mixed-HTML mbox (real mail, as
# quoted-printable carries it). Usage: bash bench/codecs.sh [BUILD_DIR]   (ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_init "${1:-}" 5
rounds=${ROUNDS:-5}
[ -f "$out/mhtml.mbox" ] && [ -f "$out/mixed-html.mbox" ] || inline_sets "${CORPUS:-../shared/corpus}"
head -c $(( ${BYTES_MB:-16} << 20 )) "$out/mhtml.mbox" > "$out/codecs-bytes"
cp "$out/mixed-html.mbox" "$out/codecs-text"
extra=()
[ -f /usr/include/b64/cencode.h ] && extra+=(-DWITH_LIBB64 -lb64)
[ -f /usr/include/modp_b64.h ] && extra+=(-DWITH_MODP -lmodpbase64)
pkg-config --exists nettle && extra+=(-DWITH_NETTLE $(pkg-config --cflags --libs nettle))
pkg-config --exists libcrypto && extra+=(-DWITH_OPENSSL $(pkg-config --cflags --libs libcrypto))
g++ -O2 -std=c++20 -Isrc/mime -Isrc/util -Isrc/input -o "$out/codecs" bench/codecs.cc \
  "$build/src/mime/libmimeuri_mime.a" "$build/src/input/libmimeuri_input.a" "$build/src/util/libmimeuri_util.a" \
  $(pkg-config --cflags --libs gmime-3.0) "${extra[@]}"
echo "load before: $(uptime)"
"$out/codecs" "$rounds" "$out/codecs-bytes" "$out/codecs-text"
echo "load after: $(uptime)"
