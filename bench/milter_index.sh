#!/usr/bin/env bash
# bench/milter_index.sh [BUILD_DIR]: what --mid-index costs the service a message (issue 32,
# item 4). Two services side by side, one plain and one with --mid-index (an index of 2,000
# messages made by `mimeuri index`), each sent the sample newsletter (a repaired cid: and a
# mid: link the index resolves) 300 times on one connection by bench/milter_client.py, in 5
# interleaved rounds; the median time of a message in each round (from its first header to
# the service's answer), the median over the rounds, and the ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/mimeuri
T=$(mktemp -d /tmp/mimeuri-bench-index.XXXXXX)
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
serve() { # name, options...
  local name=$1; shift
  MIMEURI_SYSLOG_SOCKET=$T/none "$BIN" --milter="unix:$T/$name.sock" --jobs=1 "$@" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 100); do [ -S "$T/$name.sock" ] && return 0; sleep 0.1; done
  echo "the $name service did not start"; exit 1
}
serve plain
serve indexed --mid-index="$T/index.sqlite"
msg=$ROOT/testdata/sample/newsletter.eml
python3 "$ROOT/bench/milter_client.py" "unix:$T/indexed.sock" "$msg" 20 >/dev/null   # warm
python3 "$ROOT/bench/milter_client.py" "unix:$T/plain.sock" "$msg" 20 >/dev/null
plain=() indexed=()
for round in 1 2 3 4 5; do
  read -r p _ < <(python3 "$ROOT/bench/milter_client.py" "unix:$T/plain.sock" "$msg" 300)
  read -r i _ < <(python3 "$ROOT/bench/milter_client.py" "unix:$T/indexed.sock" "$msg" 300)
  plain+=("$p") indexed+=("$i")
  echo "round $round: plain $p us, --mid-index $i us a message"
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
p=$(median "${plain[@]}") i=$(median "${indexed[@]}")
echo "median: plain $p us, --mid-index $i us a message: $(echo "scale=2; $i / $p" | bc)x (spread: plain $(printf '%s\n' "${plain[@]}" | sort -n | sed -n '1p;$p' | paste -sd-) us, indexed $(printf '%s\n' "${indexed[@]}" | sort -n | sed -n '1p;$p' | paste -sd-) us)"
