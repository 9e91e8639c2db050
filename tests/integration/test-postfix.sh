#!/usr/bin/env bash
# A throw-away Postfix instance (loopback only) with mimeuri as a pipe(8) content filter
# through the shipped wrapper (docs/integration/postfix-filter-wrapper.sh): mail submitted over
# SMTP is filtered, re-injected, and delivered to an mbox and a Maildir. When mimeuri fails,
# the wrapper answers 75: the message is deferred, stays queued, and does not bounce.
. "$(dirname "$0")/lib.sh"
need postfix python3 util-linux
workdir postfix
PORT=${BASEPORT:-10025}

pf_start() { # name, filter command for the wrapper
  local P=$T/$1
  mkdir -p "$P/etc" "$P/queue" "$P/data" "$P/out/carol" "$P/bin"
  chown postfix "$P/data"; chown -R nobody "$P/out"
  subst postfix-filter-wrapper.sh > "$P/bin/wrapper"
  printf '#!/bin/sh\n%s "$@"\n' "$2" > "$P/bin/mimeuri"
  chmod 755 "$P/bin/wrapper" "$P/bin/mimeuri"
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
maillog_file = $P/maillog
maillog_file_prefixes = $T
queue_run_delay = 300s
smtpd_error_sleep_time = 0
EOC
  printf 'bob: %s/out/bob.mbox\ncarol: %s/out/carol/Maildir/\npostmaster: %s/out/postmaster.mbox\n' "$P" "$P" "$P" > "$P/etc/aliases"
  cat > "$P/etc/master.cf" <<EOC
127.0.0.1:$PORT inet n - n - - smtpd -o content_filter=filter:dummy
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
$(sed -n '/^filter /,/argv=/p' "$ROOT/docs/integration/postfix.txt" | sed -e "s|user=filter|user=nobody|" \
    -e "s|/usr/local/libexec/mimeuri-postfix|env MIMEURI=$P/bin/mimeuri $P/bin/wrapper|" -e "s|^\(filter *unix *- *n *n *- *\)10|\14|")
EOC
  postalias -c "$P/etc" "$P/etc/aliases"
  # The pipe's sendmail runs as nobody: postdrop accepts a non-default config folder only
  # when /etc/postfix/main.cf lists it (undone at exit).
  [ -e /etc/postfix/main.cf ] || { echo "# mimeuri integration test" > /etc/postfix/main.cf; CREATED_MAIN_CF=1; }
  postconf -c /etc/postfix -e "alternate_config_directories = $P/etc"
  touch -d '1 minute ago' "$P/etc/main.cf"
  script -qec "postfix -c $P/etc check" /dev/null >/dev/null
  postfix -c "$P/etc" start >/dev/null 2>&1
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

pf_stop() { # name
  local pidfile=$T/$1/queue/pid/master.pid
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(tr -d ' ' < "$pidfile")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 50); do
    st=$(ps -o stat= -p "$pid" 2>/dev/null); [ -z "$st" ] || [ "${st#Z}" != "$st" ] && break; sleep 0.1
  done
}

cleanup() {
  for n in ok bad; do pf_stop "$n"; done
  postconf -c /etc/postfix -X alternate_config_directories 2>/dev/null
  [ -n "${CREATED_MAIN_CF:-}" ] && rm -f /etc/postfix/main.cf
  return 0
}

wait_for() { for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done; return 1; }

check "postfix started with the mimeuri filter" pf_start ok "$T/bin/mimeuri"
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test bob@localhost,carol@localhost "$SAMPLE"
check "delivered to the mbox" wait_for "test -s $T/ok/out/bob.mbox"
check "delivered to the Maildir" wait_for "ls $T/ok/out/carol/Maildir/new/* >/dev/null 2>&1"
maildir_file=$(ls "$T"/ok/out/carol/Maildir/new/* | head -1)
# Postfix adds its own headers in front (Return-Path, Received, ...); from the message's own
# first header on, the delivered file is the expected rewrite, byte for byte.
from_own=$(mktemp -p "$T"); sed -n '/^From: Garden Club/,$p' "$maildir_file" > "$from_own"
# The file ends with one more empty line than the message: Postfix's own doing (the same with
# a pass-through filter in place of mimeuri, checked).
check "Maildir: the message is the expected rewrite, byte for byte" cmp -s "$from_own" <(cat "$REPAIRED"; echo)
check "mbox: the body is the expected rewrite's body, byte for byte" \
  cmp -s <(sed -n '/^From: Garden Club/,$p' "$T/ok/out/bob.mbox" | head -c "$(stat -c %s "$REPAIRED")") "$REPAIRED"
check "filtered once: one Received from the filter's re-injection" test "$(grep -c '^Received:' "$maildir_file")" -eq 2
pf_stop ok

# mimeuri fails on every message: the wrapper answers 75, Postfix defers.
check "postfix started with a failing mimeuri" pf_start bad "MIMEURI_FAULT=pass $T/bin/mimeuri"
python3 "$HERE/smtp-submit.py" 127.0.0.1 "$PORT" alice@example.test bob@localhost "$SAMPLE"
check "failure: deferred, with the wrapper's 75" wait_for "grep -q 'status=deferred' $T/bad/maillog"
queue=$(postqueue -c "$T/bad/etc" -j 2>/dev/null)
check "failure: the message stays in the queue" grep -q '"recipients"' <<<"$queue"
check "failure: nothing delivered" test ! -e "$T/bad/out/bob.mbox"
check "failure: nothing bounced" bash -c "! grep -q 'status=bounced' $T/bad/maillog && test ! -e $T/bad/out/postmaster.mbox"
postsuper -c "$T/bad/etc" -d ALL >/dev/null 2>&1
finish
