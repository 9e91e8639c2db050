#!/usr/bin/env bash
# bench/milter.sh [BUILD_DIR]: mimeuri in a real Postfix (a throw-away instance on loopback,
# as tests/integration does), three ways: no filter (the baseline), the pipe content filter
# (docs/integration/postfix.txt, the wrapper re-injecting with sendmail), and the milter
# (--milter, docs/integration/postfix-milter.cf: a unix socket; and over TCP, milter-inet),
# and beside them the milter admins compare it with, opendkim signing every message (on a
# unix socket, and over TCP: opendkim-inet; left out when opendkim is not installed).
# For the sample newsletter and a 5 MB message: the SMTP transaction's median time, the
# median time to delivery (one message at a time), and messages per second (4 connections
# at once). Needs root and postfix (and opendkim, opendkim-tools for the peer).
# MODES="milter milter-inet" runs some of the modes only; ROUNDS (default 3) rounds of every
# mode, each figure the median over the rounds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
. "$ROOT/tests/integration/lib-postfix.sh"
. "$ROOT/bench/lib.sh" # median, spread, listening
[ "$(id -u)" = 0 ] || { echo "bench/milter.sh needs root (it runs Postfix)"; exit 1; }
PORT=${BASEPORT:-10025}
MPORT=$((PORT + 22))
T=$(mktemp -d /tmp/mimeuri-bench-milter.XXXXXX); chmod 755 "$T"
mkdir -p "$T/bin"; cp "$BUILD/mimeuri" "$T/bin/mimeuri"
SERVICE=
DKIM=/run/mimeuri-bench-dkim.$$
cleanup() {
  [ -n "$SERVICE" ] && kill -TERM "$SERVICE" 2>/dev/null
  for m in none pipe milter milter-inet opendkim opendkim-inet; do pf_stop "$T/$m" 2>/dev/null; done
  pf_restore
  [ -n "$SERVICE" ] && wait "$SERVICE" 2>/dev/null
  rm -rf "$T" "$DKIM"
}
trap cleanup EXIT

python3 - "$T/5mb.eml" <<'EOP'
import base64, random, sys
random.seed(2)
with open(sys.argv[1], "w") as f:
    f.write('From: a@example.test\nTo: carol@localhost\nSubject: 5 MB\nDate: Sun, 22 Nov 2026 09:00:00 +0000\n'
            'Message-ID: <5mb@example.test>\nMIME-Version: 1.0\nContent-Type: multipart/related; boundary="b"\n\n'
            '--b\nContent-Type: text/html\n\n<p><img src="CID:&lt;x@example.test&gt;"></p>\n'
            '--b\nContent-Type: image/png\nContent-ID: <x@example.test>\nContent-Transfer-Encoding: base64\n\n')
    f.write(base64.encodebytes(bytes(random.getrandbits(8) for _ in range(3700000))).decode())
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
      listening "$conn"
      pf_setup "$P" "$PORT" "$(sed -e '/^#/d' -e '/^$/d' -e "s|unix:mimeuri/milter.sock|$pf|" \
        "$ROOT/docs/integration/postfix-milter.cf")" "" "" ;;
    opendkim|opendkim-inet)
      # Signing mode for both messages' domains, with a key of its own; Postfix's part as
      # for mimeuri, the socket swapped. opendkim refuses a configuration file under a folder
      # others may write (/tmp): its files go in $DKIM.
      local conn="local:$P/queue/opendkim/dkim.sock" pf="unix:opendkim/dkim.sock"
      [ $1 = opendkim-inet ] && conn="inet:$MPORT@127.0.0.1" pf="inet:127.0.0.1:$MPORT"
      mkdir -p "$P/queue/opendkim" "$DKIM"; chown postfix "$P/queue/opendkim" "$DKIM"
      [ -f "$DKIM/b.private" ] || opendkim-genkey -D "$DKIM" -d example.test -s b
      chown postfix "$DKIM/b.private"
      printf 'Syslog no\nMode s\nDomain example.test,garden.example\nSelector b\nKeyFile %s\nSocket %s\nUserID postfix\nUMask 007\nCanonicalization relaxed/simple\n' \
        "$DKIM/b.private" "$conn" > "$DKIM/opendkim.conf"
      opendkim -f -x "$DKIM/opendkim.conf" &
      SERVICE=$!
      listening "$conn"
      pf_setup "$P" "$PORT" "$(sed -e '/^#/d' -e '/^$/d' -e "s|unix:mimeuri/milter.sock|$pf|" \
        "$ROOT/docs/integration/postfix-milter.cf")" "" "" ;;
  esac
}
stop() {
  pf_stop "$T/$1"
  if [ -n "$SERVICE" ]; then kill -TERM "$SERVICE"; wait "$SERVICE" 2>/dev/null || true; SERVICE=; fi
}

modes=${MODES:-none pipe milter milter-inet opendkim opendkim-inet}
command -v opendkim >/dev/null || { modes=${modes//opendkim-inet/}; modes=${modes//opendkim/}; echo "(opendkim is not installed: left out)"; }
ROUNDS=${ROUNDS:-3}
# Rounds: every mode once a round, so that what else the machine does falls on all of them;
# each figure is the median over the rounds, with the spread.
declare -A SMTP DELIV RATE
for round in $(seq "$ROUNDS"); do
  for msg in newsletter 5mb; do
    if [ $msg = newsletter ]; then seq=20 par=200; else seq=6 par=20; fi
    for mode in $modes; do
      start $mode
      if ! out=$(python3 "$ROOT/bench/milter_drive.py" "$PORT" "$T/$mode/out/carol/Maildir" "$T/$msg.eml" $seq $par); then
        echo "$mode: the drive failed; Postfix's log:"; grep -i -m5 "milter\|warning" "$T/$mode/maillog"; exit 1
      fi
      read -r smtp deliv rate <<<"$out"
      stop $mode
      rm -rf "$T/$mode"
      SMTP[$msg/$mode]+="$smtp " DELIV[$msg/$mode]+="$deliv " RATE[$msg/$mode]+="$rate "
    done
  done
  echo "round $round of $ROUNDS done" >&2
done
echo "| message | mode | SMTP transaction (median, spread) | to delivery (median) | messages/s (4 connections) |"
echo "|---|---|---|---|---|"
for msg in newsletter 5mb; do
  for mode in $modes; do
    k=$msg/$mode
    echo "| $msg | $mode | $(median "${SMTP[$k]}") ms ($(spread "${SMTP[$k]}")) | $(median "${DELIV[$k]}") ms | $(median "${RATE[$k]}") |"
  done
done
for msg in newsletter 5mb; do
  # The comparisons, where both modes ran: what each filter adds to the SMTP transaction,
  # TCP against the unix socket, and the milter's throughput against the pipe filter's.
  v() { local k=$msg/$2 x; eval "x=\${${1^^}[\$k]:-}"; [ -n "$x" ] && median "$x"; }
  added() { [ -n "$(v smtp "$1")" ] && [ -n "$(v smtp none)" ] && echo "$msg: $1 adds $(echo "scale=2; $(v smtp "$1") - $(v smtp none)" | bc) ms to the SMTP transaction"; return 0; }
  for m in pipe milter milter-inet opendkim opendkim-inet; do added $m; done
  for p in milter opendkim; do
    [ -n "$(v smtp $p)" ] && [ -n "$(v smtp $p-inet)" ] &&
      echo "$msg: $p over TCP = $(echo "scale=2; $(v smtp $p-inet) / $(v smtp $p)" | bc)x the unix socket's SMTP transaction ($(echo "scale=2; $(v smtp $p-inet) - $(v smtp $p)" | bc) ms more)"
  done
  [ -n "$(v rate milter)" ] && [ -n "$(v rate pipe)" ] &&
    echo "$msg: milter throughput / pipe throughput = $(echo "scale=2; $(v rate milter) / $(v rate pipe)" | bc)x"
  true
done
