#!/usr/bin/env bash
# bench/milter_signed.sh [BUILD_DIR]: the milter service's default job on real signed mail,
# this build against BEFORE (another mimeuri binary, required), in interleaved rounds (issue
# 44: "the default job and the milter on signed mail unchanged or faster"). Each service runs
# on a unix socket with --jobs=1, driven by bench/milter_client.py (the milter protocol as
# Postfix writes it) over every message of a set, one after another on one connection:
#   signed-list     the corpus's signed mail, list mail and newsletters (bench/pick_signed.py)
#   gathered-list   the same picks from mail gathered outside the corpus (GATHERED, default
#                   ../shared/gathered/signed; left out when that folder is not there)
# ROUNDS (default 5) rounds; in each, the set's mean time a message for each binary, from its
# first header to the service's answer. Prints each round, then the median over the rounds,
# the spread and the ratio before / this; the machine's load before and after. With perf,
# then the instructions the whole service (front and worker) spends on PASSES (default 3)
# passes over each set, which the machine's load does not move: a service of each binary
# started under `perf stat` for each set, stopped after its passes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
: "${BEFORE:?BEFORE=/path/to/an/older/mimeuri is required}"
. "$ROOT/bench/lib.sh" # median, spread, listening
T=$(mktemp -d /tmp/mimeuri-bench-msigned.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
corpus=${CORPUS:-$ROOT/../shared/corpus}
sets=signed-list
python3 "$ROOT/bench/pick_signed.py" "$corpus" "$T/signed-list.list"
gathered=${GATHERED:-$ROOT/../shared/gathered/signed}
if [ -d "$gathered" ]; then
  python3 "$ROOT/bench/pick_signed.py" "$gathered" "$T/gathered-list.list"
  sets+=" gathered-list"
fi
serve() { # name binary
  MIMEURI_SYSLOG_SOCKET=$T/none "$2" --milter="unix:$T/$1.sock" --jobs=1 2>/dev/null &
  PIDS+=($!)
  listening "unix:$T/$1.sock" || exit 1
}
serve this "$BUILD/mimeuri"
serve before "$BEFORE"
echo "load: $(uptime)"
declare -A times
for set in $sets; do
  for b in this before; do python3 "$ROOT/bench/milter_client.py" "unix:$T/$b.sock" "@$T/$set.list" 1 >/dev/null; done # warm
done
for round in $(seq "${ROUNDS:-5}"); do
  line="round $round:"
  for set in $sets; do
    for b in this before; do
      read -r _ t < <(python3 "$ROOT/bench/milter_client.py" "unix:$T/$b.sock" "@$T/$set.list" 1)
      times[$set-$b]+="$t "
      line+=" $set/$b $t us"
    done
  done
  echo "$line"
done
echo "load: $(uptime)"
echo "| set | messages | this (mean a message, median of rounds) | spread | before | spread | before / this |"
echo "|---|---|---|---|---|---|---|"
for set in $sets; do
  t=$(median "${times[$set-this]}"); b=$(median "${times[$set-before]}")
  echo "| $set | $(wc -l < "$T/$set.list") | $t us | $(spread "${times[$set-this]}") us | $b us | $(spread "${times[$set-before]}") us | $(echo "scale=2; $b / $t" | bc)x |"
done
command -v perf >/dev/null || exit 0
instructions() { # binary set
  local sock=$T/perf-$2.sock pid
  MIMEURI_SYSLOG_SOCKET=$T/none perf stat -x, -e instructions:u -o "$T/perf.out" "$1" --milter="unix:$sock" --jobs=1 2>/dev/null &
  pid=$!
  listening "unix:$sock" || exit 1
  python3 "$ROOT/bench/milter_client.py" "unix:$sock" "@$T/$2.list" "${PASSES:-3}" >/dev/null
  pkill -TERM -P "$pid"
  wait "$pid"
  grep instructions "$T/perf.out" | cut -d, -f1
}
echo "| set | passes | this: instructions | before | this / before |"
echo "|---|---|---|---|---|"
for set in $sets; do
  t=$(instructions "$BUILD/mimeuri" "$set"); b=$(instructions "$BEFORE" "$set")
  echo "| $set | ${PASSES:-3} | $t | $b | $(echo "scale=4; $t / $b" | bc) |"
done
