#!/usr/bin/env bash
# bench/milter.sh [BUILD_DIR]: mimeuri in a real Postfix (a throw-away instance on loopback,
# as tests/integration does), three ways: no filter (the baseline), the pipe content filter
# (docs/integration/postfix.txt, the wrapper re-injecting with sendmail), and the milter
# (--milter, docs/integration/postfix-milter.cf: a unix socket; and over TCP, milter-inet).
# For the sample newsletter and a 2 MB
# message: the SMTP transaction's median time, the median time to delivery (one message at
# a time), and messages per second (4 connections at once). Needs root and postfix.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
. "$ROOT/tests/integration/lib-postfix.sh"
[ "$(id -u)" = 0 ] || { echo "bench/milter.sh needs root (it runs Postfix)"; exit 1; }
PORT=${BASEPORT:-10025}
MPORT=$((PORT + 22))
T=$(mktemp -d /tmp/mimeuri-bench-milter.XXXXXX); chmod 755 "$T"
mkdir -p "$T/bin"; cp "$BUILD/mimeuri" "$T/bin/mimeuri"
SERVICE=
cleanup() {
  [ -n "$SERVICE" ] && kill -TERM "$SERVICE" 2>/dev/null
  for m in none pipe milter milter-inet; do pf_stop "$T/$m" 2>/dev/null; done
  pf_restore
  [ -n "$SERVICE" ] && wait "$SERVICE" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

python3 - "$T/2mb.eml" <<'EOP'
import base64, random, sys
random.seed(2)
with open(sys.argv[1], "w") as f:
    f.write('From: a@example.test\nTo: carol@localhost\nSubject: 2 MB\nDate: Sun, 22 Nov 2026 09:00:00 +0000\n'
            'Message-ID: <2mb@example.test>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary="b"\n\n'
            '--b\nContent-Type: text/html\n\n<p><img src="CID:&lt;x@example.test&gt;"></p>\n'
            '--b\nContent-Type: image/png\nContent-ID: <x@example.test>\nContent-Transfer-Encoding: base64\n\n')
    f.write(base64.encodebytes(bytes(random.getrandbits(8) for _ in range(1500000))).decode())
    f.write('--b--\n')
EOP
cp "$ROOT/testdata/sample/newsletter.eml" "$T/newsletter.eml"

start() { # mode
  local P=$T/$1
  case $1 in
    none) pf_setup "$P" "$PORT" "" "" "" ;;
    pipe)
      mkdir -p "$P/bin"
      sed "s|@BINDIR@/mimeuri|$T/bin/mimeuri|g" "$ROOT/docs/integration/postfix-filter-wrapper.sh.in" > "$P/bin/wrapper"
      chmod 755 "$P/bin/wrapper"
      pf_setup "$P" "$PORT" "" "-o content_filter=filter:dummy" \
        "$(sed -n '/^filter /,/argv=/p' "$ROOT/docs/integration/postfix.txt" | sed -e "s|user=filter|user=nobody|" \
          -e "s|/usr/local/libexec/mimeuri-postfix|env MIMEURI=$T/bin/mimeuri $P/bin/wrapper|")" ;;
    milter|milter-inet)
      local conn="unix:$P/queue/mimeuri/milter.sock" pf="unix:mimeuri/milter.sock"
      [ $1 = milter-inet ] && conn="inet:$MPORT@127.0.0.1" pf="inet:127.0.0.1:$MPORT"
      mkdir -p "$P/queue/mimeuri"
      MIMEURI_SYSLOG_SOCKET=$T/none "$T/bin/mimeuri" --milter="$conn" --user=postfix 2>/dev/null &
      SERVICE=$!
      sleep 0.3
      pf_setup "$P" "$PORT" "$(sed -e '/^#/d' -e '/^$/d' -e "s|unix:mimeuri/milter.sock|$pf|" \
        "$ROOT/docs/integration/postfix-milter.cf")" "" "" ;;
  esac
}
stop() {
  pf_stop "$T/$1"
  if [ -n "$SERVICE" ]; then kill -TERM "$SERVICE"; wait "$SERVICE" 2>/dev/null || true; SERVICE=; fi
}

echo "| message | mode | SMTP transaction (median) | to delivery (median) | messages/s (4 connections) |"
echo "|---|---|---|---|---|"
for msg in newsletter 2mb; do
  if [ $msg = newsletter ]; then seq=40 par=400; else seq=12 par=60; fi
  for mode in ${MODES:-none pipe milter milter-inet}; do
    start $mode
    read -r smtp deliv rate < <(python3 "$ROOT/bench/milter_drive.py" "$PORT" "$T/$mode/out/carol/Maildir" "$T/$msg.eml" $seq $par)
    stop $mode
    rm -rf "$T/$mode"
    echo "| $msg | $mode | $smtp ms | $deliv ms | $rate |"
    v=${mode/-/_}; eval "smtp_${msg}_$v=$smtp deliv_${msg}_$v=$deliv rate_${msg}_$v=$rate"
  done
  eval "echo \"$msg: milter throughput / pipe throughput = \$(echo \"scale=2; \$rate_${msg}_milter / \$rate_${msg}_pipe\" | bc)x;" \
       "added SMTP latency of the milter = \$(echo \"scale=2; \$smtp_${msg}_milter - \$smtp_${msg}_none\" | bc) ms\""
done
