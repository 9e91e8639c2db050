#!/usr/bin/env bash
# A throw-away Postfix instance (loopback only) with mimeuri as a pipe(8) content filter
# through the shipped wrapper (docs/integration/postfix-filter-wrapper.sh): mail submitted over
# SMTP is filtered, re-injected, and delivered to an mbox and a Maildir. When mimeuri fails,
# the wrapper answers 75: the message is deferred, stays queued, and does not bounce.
. "$(dirname "$0")/lib.sh"
need postfix python3 util-linux
workdir postfix
PORT=${BASEPORT:-10025}

. "$HERE/lib-postfix.sh"

pf_start() { # name, filter command for the wrapper
  local P=$T/$1
  mkdir -p "$P/bin"
  subst postfix-filter-wrapper.sh > "$P/bin/wrapper"
  printf '#!/bin/sh\n%s "$@"\n' "$2" > "$P/bin/mimeuri"
  chmod 755 "$P/bin/wrapper" "$P/bin/mimeuri"
  pf_setup "$P" "$PORT" "" "-o content_filter=filter:dummy" \
    "$(sed -n '/^filter /,/argv=/p' "$ROOT/docs/integration/postfix.txt" | sed -e "s|user=filter|user=nobody|" \
      -e "s|/usr/local/libexec/mimeuri-postfix|env MIMEURI=$P/bin/mimeuri $P/bin/wrapper|" -e "s|^\(filter *unix *- *n *n *- *\)10|\14|")"
}

cleanup() {
  for n in ok bad; do pf_stop "$T/$n"; done
  pf_restore
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
pf_stop "$T/ok"

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
