#!/usr/bin/env bash
# bench/milter_remote.sh [BUILD_DIR]: the milter's added latency with --remote=block (issue
# 52). Two services (--jobs=1, unix sockets): without the pass (the baseline) and with
# --remote=block, driven by bench/milter_client.py as bench/milter_service.sh drives them (the
# milter protocol as Postfix writes it), 300 messages on one connection a round, 5 interleaved
# rounds; the median time of a message (first header to the final answer) in each round, the
# median over the rounds, the spread, and the difference. Two messages: the sample newsletter
# (testdata/sample/newsletter.eml: no remote content, what most mail is) and a newsletter with
# 200 remote fetches of five kinds (bench/make_remote.py, 200; the pass rewrites its HTML).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/mimeuri
. "$ROOT/bench/lib.sh" # median, spread, listening
T=$(mktemp -d /tmp/mimeuri-bench-remote.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
serve() { # socket, options...
  local sock=$1; shift
  MIMEURI_SYSLOG_SOCKET=$T/none "$BIN" --milter="$sock" --jobs=1 "$@" 2>/dev/null &
  PIDS+=($!)
  listening "$sock" || exit 1
}
declare -A SOCK=([off]="unix:$T/off.sock" [block]="unix:$T/block.sock")
serve "${SOCK[off]}"
serve "${SOCK[block]}" --remote=block
python3 "$ROOT/bench/make_remote.py" "$T/remote.eml" 200
echo "load before: $(uptime)"
for msg in "$ROOT/testdata/sample/newsletter.eml" "$T/remote.eml"; do
  declare -A times=()
  for mode in off block; do python3 "$ROOT/bench/milter_client.py" "${SOCK[$mode]}" "$msg" 20 > /dev/null; done # warm
  for round in 1 2 3 4 5; do
    for mode in off block; do
      read -r t _ < <(python3 "$ROOT/bench/milter_client.py" "${SOCK[$mode]}" "$msg" 300)
      times[$mode]+="$t "
    done
  done
  o=$(median "${times[off]}") b=$(median "${times[block]}")
  echo "$(basename "$msg") ($(stat -c %s "$msg") bytes): without $o us ($(spread "${times[off]}")), --remote=block $b us ($(spread "${times[block]}")): +$((b - o)) us, $(echo "scale=2; $b / $o" | bc)x"
done
echo "load after: $(uptime)"
