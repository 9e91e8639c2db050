#!/usr/bin/env bash
# bench/milter_idle.sh [BUILD_DIR]: the service's connection limits (issue 43 item 11). Each
# service is started with the soft descriptor limit at 1,024 (what systemd gives), on
# loopback TCP; 2,000 connections that never send a byte are held against it while 100
# messages go through, one connection each as Postfix's smtpd processes connect
# (bench/milter_idle.py). Two rounds, interleaved:
#   quiet     no idle connections (the baseline)
#   bounded   2,000 idle ones, the default --milter-client-connections=256: the service
#             closes the oldest silent ones of that client to make room
#   unbounded 2,000 idle ones, --milter-client-connections=0: every one held (the soft limit
#             raised to the hard one is what lets the real mail in)
# Every message must be answered. Connections only to 127.0.0.1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/mimeuri
. "$ROOT/bench/lib.sh" # listening
PORT=${BASEPORT:-10035}
T=$(mktemp -d /tmp/mimeuri-bench-idle.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
msg=$ROOT/testdata/sample/newsletter.eml
serve() { # port, options...
  local port=$1; shift
  (ulimit -Sn 1024; MIMEURI_SYSLOG_SOCKET=$T/none exec "$BIN" --milter="inet:$port@127.0.0.1" --jobs=2 "$@" 2>"$T/$port.log") &
  PIDS+=($!)
  listening "inet:$port@127.0.0.1" || exit 1
}
echo "load: $(uptime)"
for round in 1 2; do
  for mode in quiet bounded unbounded; do
    p=$((PORT + round * 3 + ${#mode} % 3))
    case $mode in
      quiet) serve $p; idle=0 ;;
      bounded) serve $p; idle=2000 ;;
      unbounded) serve $p --milter-client-connections=0; idle=2000 ;;
    esac
    echo "round $round $mode: $(python3 "$ROOT/bench/milter_idle.py" "inet:$p@127.0.0.1" "$msg" $idle 30)"
    kill -KILL "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  done
done
echo "load: $(uptime)"
