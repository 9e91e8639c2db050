#!/usr/bin/env bash
# mimeuri --milter in a throw-away Postfix (loopback only), as smtpd_milters and
# non_smtpd_milters with the shipped snippet (docs/integration/postfix-milter.cf, its unix
# socket under the queue folder; the service runs as postfix here, so that Postfix may
# connect without adding it to a group): mail
# submitted over SMTP and through sendmail is delivered rewritten, exactly once; with the
# service stopped, milter_default_action=tempfail defers it, nothing bounces, and a retry
# once the service is back delivers it rewritten.
. "$(dirname "$0")/lib.sh"
need postfix python3 util-linux
workdir milter
PORT=${BASEPORT:-10025}
P=$T/pf
SERVICE_PID=
python3 "$HERE/syslog-listen.py" "$T/log.sock" "$T/syslog.txt" & SYSLOG_PID=$!
for _ in $(seq 50); do [ -S "$T/log.sock" ] && break; sleep 0.1; done

SOCK=$P/queue/mimeuri/milter.sock
mkdir -p "$(dirname "$SOCK")"
start_service() { # extra options
  # The service runs as postfix and cannot remove its socket from this root-owned folder when
  # it stops: the file left would pass the check below before the new service listens, and
  # a retry sent then is refused.
  rm -f "$SOCK"
  MIMEURI_SYSLOG_SOCKET=$T/log.sock "$T/bin/mimeuri" --milter="unix:$SOCK" --user=postfix "$@" >>"$T/service.log" 2>&1 &
  SERVICE_PID=$!
  for _ in $(seq 50); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
  return 1
}
stop_service() {
  [ -n "$SERVICE_PID" ] || return 0
  kill -TERM "$SERVICE_PID" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done   # libmilter: up to 5 s
  kill -KILL "$SERVICE_PID" 2>/dev/null; wait "$SERVICE_PID" 2>/dev/null
  SERVICE_PID=
}

. "$HERE/lib-postfix.sh"
pf_start() {
  pf_setup "$P" "$PORT" "$(sed -e '/^#/d' -e '/^$/d' "$ROOT/docs/integration/postfix-milter.cf")" "" ""
}
cleanup() {
  stop_service
  kill "$SYSLOG_PID" 2>/dev/null
  pf_stop "$P"
  pf_restore
}
wait_for() { for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done; return 1; }
# From the message's own first header on (Postfix puts Return-Path, Received, ... above it).
own() { sed -n '/^From: Garden Club/,$p' "$1"; }

check "the milter service started" start_service
check "the service runs as postfix" bash -c "ps -o user= --ppid $SERVICE_PID | grep -qx postfix"
check "its socket belongs to postfix, mode 0660" test "$(stat -c '%U %a' "$SOCK")" = "postfix 660"
check "postfix started with smtpd_milters and non_smtpd_milters" pf_start

python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test carol@localhost "$SAMPLE"
check "SMTP: delivered" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* | head -1)
# Mail received over SMTP ends with one more empty line in the Maildir than was sent: Postfix's
# own doing, the same for a message the milter leaves alone (checked below).
check "SMTP: the delivered message is the expected rewrite, byte for byte" cmp -s <(own "$f") <(cat "$REPAIRED"; echo)
check "SMTP: one Received (no second trip through the queue)" test "$(grep -c '^Received:' "$f")" -eq 1
mv "$f" "$T/smtp-delivered.eml"   # kept for a look with KEEP=1
rm -f "$P"/out/carol/Maildir/new/*

# A message with nothing to change reaches the mailbox as it was sent.
printf 'From: Garden Club <news@garden.example>\nTo: carol@localhost\nSubject: plain\n\nNothing to change.\n' > "$T/plain.eml"
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test carol@localhost "$T/plain.eml"
check "SMTP, nothing to change: delivered" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* | head -1)
check "SMTP, nothing to change: the message as sent (and Postfix's empty line)" \
  cmp -s <(sed -n '/^From: Garden Club/,$p' "$f" | grep -v '^Date: \|^Message-Id: ') <(sed 1d "$T/plain.eml" | sed '1i From: Garden Club <news@garden.example>'; echo)
rm -f "$P"/out/carol/Maildir/new/*

sendmail -C "$P/etc" -f alice@example.test carol@localhost < "$SAMPLE"
check "sendmail: delivered" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* | head -1)
check "sendmail: the delivered message is the expected rewrite, byte for byte" cmp -s <(own "$f") <(cat "$REPAIRED")
check "the service logged the queue id and Message-ID" \
  grep -q "[0-9A-F]\{6,\}: message-id=<spring-2026@garden.example>: changed" "$T/syslog.txt"
rm -f "$P"/out/carol/Maildir/new/*

# A 3 MB message whose HTML needs a repair: the new body goes back to Postfix in chunks of
# 64 KiB; what is delivered is what the command line makes of the same message.
python3 - "$T/big.eml" <<'EOP'
import base64, random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write('From: Big Sender <big@example.test>\nTo: carol@localhost\nSubject: big\nMessage-ID: <big@example.test>\n'
            'Date: Sun, 22 Nov 2026 09:00:00 +0000\n'
            'MIME-Version: 1.0\nContent-Type: multipart/related; boundary="b"\n\n'
            '--b\nContent-Type: text/html\n\n<p><img src="CID:&lt;x@example.test&gt;"></p>\n'
            '--b\nContent-Type: image/png\nContent-ID: <x@example.test>\nContent-Transfer-Encoding: base64\n\n')
    f.write(base64.encodebytes(bytes(random.getrandbits(8) for _ in range(2300000))).decode())
    f.write('--b--\n')
EOP
"$T/bin/mimeuri" < "$T/big.eml" > "$T/big.expected"
check "3 MB: the command line repairs it" bash -c "! cmp -s $T/big.eml $T/big.expected"
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test carol@localhost "$T/big.eml"
check "3 MB: delivered" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* | head -1)
check "3 MB: delivered as the command line rewrites it, byte for byte" \
  cmp -s <(sed -n '/^From: Big Sender/,$p' "$f") <(cat "$T/big.expected"; echo)
cp "$f" "$T/big-delivered.eml"   # kept for a look with KEEP=1
rm -f "$P"/out/carol/Maildir/new/*
# A header field of 80 KiB (a References of 1,500 ids, folded), within Postfix's
# header_size_limit (100 KiB). Postfix 3.7 cuts such a field to about 60,000 bytes when a
# milter is on, whatever the milter (opendkim alike; without a milter it is delivered whole),
# so the service never sees more than that of it from Postfix (miltertest, which could send
# more, crashes on a field that long). The message is delivered as the command line rewrites it, apart from
# the part of References Postfix dropped: what is left of it is the field as sent, cut.
python3 - "$T/longhdr.eml" <<'EOP'
import sys
refs = "\n".join(" <ref-%05d-long-enough-message-id@thread.example.test>" % k for k in range(1500))
with open(sys.argv[1], "w") as f:
    f.write('From: Long Header <long@example.test>\nTo: carol@localhost\nSubject: long header\n'
            'Message-ID: <longhdr@example.test>\nDate: Sun, 22 Nov 2026 09:00:00 +0000\nReferences:' + refs + '\n'
            'MIME-Version: 1.0\nContent-Type: multipart/related; boundary="b"\n\n'
            '--b\nContent-Type: text/html\n\n<p><img src="CID:&lt;x@example.test&gt;"></p>\n'
            '--b\nContent-Type: image/png\nContent-ID: <x@example.test>\nContent-Transfer-Encoding: base64\n\n'
            'iVBORw0KGgo=\n--b--\n')
EOP
"$T/bin/mimeuri" < "$T/longhdr.eml" > "$T/longhdr.expected"
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test carol@localhost "$T/longhdr.eml"
check "80 KiB header field: delivered" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* 2>/dev/null | head -1)
refs_of() { sed -n '/^References:/,/^MIME-Version:/p' "$1" | sed '$d'; }
check "80 KiB header field: References delivered is the field as sent, cut by Postfix" \
  cmp -s <(refs_of "$f") <(refs_of "$T/longhdr.eml" | head -n "$(refs_of "$f" | wc -l)")
check "80 KiB header field: the rest as the command line rewrites it, byte for byte" \
  cmp -s <(sed -n '/^From: Long Header/,$p' "$f" | grep -v '^ <ref-') <({ cat "$T/longhdr.expected"; echo; } | grep -v '^ <ref-')
rm -f "$P"/out/carol/Maildir/new/*
check "each message logged once: filtered once" test "$(grep -c ': message-id=<spring-2026@garden.example>: ' "$T/syslog.txt")" -eq 2

# The service stopped: milter_default_action = tempfail defers; started again, a retry delivers.
stop_service
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test carol@localhost "$SAMPLE" 2>"$T/smtp.err"
check "service down: the SMTP client gets a 4xx" grep -q "451\|4\.[0-9]\.[0-9]" "$T/smtp.err"
sendmail -C "$P/etc" -f alice@example.test carol@localhost < "$SAMPLE"
sleep 1
check "service down: nothing delivered" bash -c "! ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
check "service down: nothing bounced" bash -c "! grep -q 'status=bounced' $P/maillog && test ! -e $P/out/postmaster.mbox"
check "the milter service started again" start_service
postkick -c "$P/etc" public pickup W   # pickup looks at the maildrop queue now, not in 60 s
check "retried: the sendmail submission is delivered, rewritten" wait_for "ls $P/out/carol/Maildir/new/* >/dev/null 2>&1"
f=$(ls "$P"/out/carol/Maildir/new/* 2>/dev/null | head -1)
[ -n "$f" ] && check "retried: the expected rewrite, byte for byte" cmp -s <(own "$f") <(cat "$REPAIRED")
finish
