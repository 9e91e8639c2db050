#!/usr/bin/env bash
# mimeuri --milter in a throw-away Postfix (loopback only), as smtpd_milters and
# non_smtpd_milters with the shipped snippet (docs/integration/postfix-milter.cf): mail
# submitted over SMTP and through sendmail is delivered rewritten, exactly once; with the
# service stopped, milter_default_action=tempfail defers it, nothing bounces, and a retry
# once the service is back delivers it rewritten.
. "$(dirname "$0")/lib.sh"
need postfix python3 util-linux
workdir milter
PORT=${BASEPORT:-10025}
MPORT=$((PORT + 21))
P=$T/pf
SERVICE_PID=
python3 "$HERE/syslog-listen.py" "$T/log.sock" "$T/syslog.txt" & SYSLOG_PID=$!
for _ in $(seq 50); do [ -S "$T/log.sock" ] && break; sleep 0.1; done

start_service() { # extra options
  MIMEURI_SYSLOG_SOCKET=$T/log.sock "$T/bin/mimeuri" --milter="inet:$MPORT@127.0.0.1" --user=nobody "$@" >>"$T/service.log" 2>&1 &
  SERVICE_PID=$!
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$MPORT) 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
stop_service() {
  [ -n "$SERVICE_PID" ] || return 0
  kill -TERM "$SERVICE_PID" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SERVICE_PID" 2>/dev/null; wait "$SERVICE_PID" 2>/dev/null
  SERVICE_PID=
}

pf_start() {
  mkdir -p "$P/etc" "$P/queue" "$P/data" "$P/out/carol"
  chown postfix "$P/data"; chown -R nobody "$P/out"
  cat > "$P/etc/main.cf" <<EOC
compatibility_level = 3.6
queue_directory = $P/queue
data_directory = $P/data
mail_owner = postfix
setgid_group = postdrop
myhostname = localhost.localdomain
mydomain = localdomain
myorigin = \$myhostname
mydestination = localhost, localhost.localdomain
inet_interfaces = loopback-only
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
relayhost =
default_transport = error:external delivery disabled in test
relay_transport = error:external delivery disabled in test
alias_maps = hash:$P/etc/aliases
alias_database = hash:$P/etc/aliases
local_recipient_maps = \$alias_maps
biff = no
mailbox_size_limit = 0
message_size_limit = 0
maillog_file = $P/maillog
maillog_file_prefixes = $T
queue_run_delay = 300s
smtpd_error_sleep_time = 0
$(sed -e '/^#/d' -e "s|inet:127.0.0.1:8893|inet:127.0.0.1:$MPORT|" "$ROOT/docs/integration/postfix-milter.cf" | grep -v '^$')
EOC
  printf 'bob: %s/out/bob.mbox\ncarol: %s/out/carol/Maildir/\npostmaster: %s/out/postmaster.mbox\n' "$P" "$P" "$P" > "$P/etc/aliases"
  cat > "$P/etc/master.cf" <<EOC
127.0.0.1:$PORT inet n - n - - smtpd
pickup    unix  n - n 60 1 pickup
cleanup   unix  n - n -  0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n -  - trivial-rewrite
bounce    unix  - - n -  0 bounce
defer     unix  - - n -  0 bounce
trace     unix  - - n -  0 bounce
verify    unix  - - n -  1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n -  - proxymap
showq     unix  n - n -  - showq
error     unix  - - n -  - error
retry     unix  - - n -  - error
discard   unix  - - n -  - discard
local     unix  - n n -  - local
anvil     unix  - - n -  1 anvil
scache    unix  - - n -  1 scache
postlog   unix-dgram n - n - 1 postlogd
EOC
  postalias -c "$P/etc" "$P/etc/aliases"
  # sendmail run by root with a non-default configuration folder: postdrop takes it only
  # when /etc/postfix/main.cf lists it (undone at exit).
  [ -e /etc/postfix/main.cf ] || { echo "# mimeuri integration test" > /etc/postfix/main.cf; CREATED_MAIN_CF=1; }
  postconf -c /etc/postfix -e "alternate_config_directories = $P/etc"
  touch -d '1 minute ago' "$P/etc/main.cf"
  script -qec "postfix -c $P/etc check" /dev/null >/dev/null
  postfix -c "$P/etc" start >/dev/null 2>&1
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
pf_stop() {
  local pidfile=$P/queue/pid/master.pid
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(tr -d ' ' < "$pidfile")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 50); do
    st=$(ps -o stat= -p "$pid" 2>/dev/null); [ -z "$st" ] || [ "${st#Z}" != "$st" ] && break; sleep 0.1
  done
}
cleanup() {
  stop_service
  kill "$SYSLOG_PID" 2>/dev/null
  pf_stop
  postconf -c /etc/postfix -X alternate_config_directories 2>/dev/null
  [ -n "${CREATED_MAIN_CF:-}" ] && rm -f /etc/postfix/main.cf
  return 0
}
wait_for() { for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done; return 1; }
# From the message's own first header on (Postfix puts Return-Path, Received, ... above it).
own() { sed -n '/^From: Garden Club/,$p' "$1"; }

check "the milter service started (inet, as nobody)" start_service
check "the service runs as nobody" bash -c "ps -o user= --ppid $SERVICE_PID | grep -qx nobody"
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
