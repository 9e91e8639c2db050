#!/usr/bin/env bash
# bench/milter_service.sh [BUILD_DIR]: the service alone, driven by bench/milter_client.py
# (the milter protocol as Postfix writes it: each command in two writes, Nagle on), 300
# messages on one connection a round, 5 interleaved rounds; the median time of a message in
# each round (from its first header to the service's answer), the median over the rounds,
# the spread and the ratios (issue 32):
#   unix      the service on a unix socket (the baseline)
#   tcp       the same service over loopback TCP (item 3: at most 2x the unix socket + 1 ms)
#   indexed   a service with --mid-index (an index of 2,000 messages made by `mimeuri index`),
#             on a unix socket (item 4: at most 1.2x)
# The message is the sample newsletter (a repaired cid: and a mid: link the index resolves).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/mimeuri
. "$ROOT/bench/lib.sh" # median, spread, listening
PORT=${BASEPORT:-10025}
T=$(mktemp -d /tmp/mimeuri-bench-service.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

python3 - "$T/archive.mbox" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(2000):
        mid = "announce-2026@garden.example" if i == 1000 else f"m{i}@archive.example"
        f.write(f"From a@garden.example Sat Nov 21 00:00:00 2026\nMessage-ID: <{mid}>\nSubject: {i}\n\nText {i}.\n\n")
PY
"$BIN" index -q -o "$T/index.sqlite" "$T/archive.mbox"
serve() { # socket, options...
  local sock=$1; shift
  MIMEURI_SYSLOG_SOCKET=$T/none "$BIN" --milter="$sock" --jobs=1 "$@" 2>/dev/null &
  PIDS+=($!)
  listening "$sock" || exit 1
}
declare -A SOCK=([unix]="unix:$T/plain.sock" [tcp]="inet:$PORT@127.0.0.1" [indexed]="unix:$T/indexed.sock")
serve "${SOCK[unix]}"
serve "${SOCK[tcp]}"
serve "${SOCK[indexed]}" --mid-index="$T/index.sqlite"
msg=$ROOT/testdata/sample/newsletter.eml
declare -A times
for mode in unix tcp indexed; do python3 "$ROOT/bench/milter_client.py" "${SOCK[$mode]}" "$msg" 20 >/dev/null; done # warm
for round in 1 2 3 4 5; do
  line="round $round:"
  for mode in unix tcp indexed; do
    read -r t _ < <(python3 "$ROOT/bench/milter_client.py" "${SOCK[$mode]}" "$msg" 300)
    times[$mode]+="$t "
    line+=" $mode $t us"
  done
  echo "$line"
done
u=$(median "${times[unix]}")
echo "| mode | a message (median of 5 rounds) | spread | ratio to unix |"
echo "|---|---|---|---|"
for mode in unix tcp indexed; do
  m=$(median "${times[$mode]}")
  echo "| $mode | $m us | $(spread "${times[$mode]}") us | $(echo "scale=2; $m / $u" | bc)x |"
done
echo "tcp: $(echo "scale=2; $(median "${times[tcp]}") / $u" | bc)x the unix socket; goal: at most 2x + 1 ms ($(( 2 * u + 1000 )) us)"
