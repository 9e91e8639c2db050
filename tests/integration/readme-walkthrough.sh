#!/usr/bin/env bash
# Follows the README as a new user would, on a clean machine: a fresh Debian 12 root made with
# debootstrap, a clone of this repository in it, then the README's set-up command, every
# command block of "Where to run it" exactly as written (procmail, Dovecot, Postfix, Exim),
# and last the Debian package block of "Installing".
# After each agent it checks that the sample was delivered and rewritten; for Postfix and
# Exim it also makes mimeuri fail and checks the mail is deferred (not bounced, not lost) and
# delivered once mimeuri works again. After the package block it checks that the package is
# installed, that `man mimeuri` and `man mimeuri.conf` open its pages, that its example
# configuration passes --print-config and that its /usr/bin/mimeuri repairs the sample. Then
# the installed package alone, as an admin configures it (issue 30): its user, unit and
# snippets name /usr/bin/mimeuri; with one setting in /etc/mimeuri.conf (the summary header),
# the packaged procmail recipe, Sieve filter program and Postfix pipe wrapper, and the
# service started as the packaged unit starts it under Postfix with the packaged milter part
# (opendkim signing after it, the signature verified with python3-dkim), each deliver the
# sample rewritten with that header; the service writes its report under /var/log/mimeuri.
#
# Not part of `meson test` (it downloads a Debian base system and takes minutes). Run as root:
#   bash tests/integration/readme-walkthrough.sh [ROOT_DIR]    (default /srv/mimeuri-walkthrough)
# The only things it adds to the README's commands: the users alice and bob, stopping
# Postfix before Exim replaces it (systemd would do that on a real machine), and
# DEB_BUILD_OPTIONS for the package build (see there).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
R=${1:-/srv/mimeuri-walkthrough}
mirror=${MIRROR:-http://deb.debian.org/debian}
log=$R.log

say() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
fail() { printf 'FAIL: %s (log: %s)\n' "$*" "$log"; exit 1; }
in_root() { chroot "$R" /bin/bash -c "cd /work/main && $1" </dev/null >>"$log" 2>&1; }
count() { chroot "$R" /bin/bash -c "if [ -f '$2' ]; then grep -c '$1' '$2'; else echo 0; fi" || true; }

cleanup() {
  if [ -d "$R/proc/self" ]; then
    chroot "$R" /bin/bash -c 'postfix stop; doveadm stop; pkill exim4; pkill -f "^/usr/bin/mimeuri --milter"; pkill opendkim' >/dev/null 2>&1 || true
    sleep 1
  fi
  for m in dev/pts dev sys proc; do mountpoint -q "$R/$m" && umount "$R/$m"; done
  return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM # through the EXIT trap: nothing left running or mounted

[ "$(id -u)" = 0 ] || { echo "run as root"; exit 77; }
[ -e "$R" ] && { echo "$R exists; remove it or name another directory"; exit 2; }
: > "$log"
command -v debootstrap >/dev/null || apt-get install -y debootstrap >>"$log" 2>&1
say "debootstrap bookworm into $R"
debootstrap --variant=minbase bookworm "$R" "$mirror" >>"$log" 2>&1
printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  "$mirror" > "$R/etc/apt/sources.list.d/debian.sources"
rm -f "$R/etc/apt/sources.list"
cp /etc/resolv.conf /etc/hosts "$R/etc/"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$R/$m"; done
mkdir -p "$R/work"
git clone -q "$here" "$R/work/main"

# The README's blocks: the set-up command, the install line, the agents' blocks (each starts
# with its apt-get install line) and the Debian package block.
python3 - "$R/work/main/README.md" "$R/root" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r'```sh\n(.*?)```', text, re.S)
want = {'setup': lambda b: b.startswith('apt-get update'),
        'install': lambda b: b.startswith('install -m 0755 build/mimeuri'),
        'procmail': lambda b: b.startswith('apt-get install -y procmail'),
        'dovecot': lambda b: b.startswith('apt-get install -y dovecot'),
        'postfix': lambda b: b.startswith('apt-get install -y postfix'),
        'exim': lambda b: b.startswith('apt-get install -y exim4'),
        'package': lambda b: b.startswith('apt-get build-dep')}
for name, match in want.items():
    found = [b for b in blocks if match(b)]
    if len(found) != 1:
        sys.exit(f'README: expected one {name} block, found {len(found)}')
    open(f'{sys.argv[2]}/readme-{name}.sh', 'w').write(found[0])
EOF

run_block() { say "README: $1"; in_root "${2:-} bash -ex /root/readme-$1.sh" || fail "the $1 block"; }

run_block setup
run_block install
in_root 'useradd -m alice && useradd -m bob'

# Each delivery adds one message (a From_ line) and the rewrite (the cid: the sample repairs).
expect() { # user, messages, repaired, what
  local from rep
  for _ in $(seq 1 60); do
    from=$(count '^From ' "/var/mail/$1"); rep=$(count 'cid:map@garden.example' "/var/mail/$1")
    [ "$from" = "$2" ] && [ "$rep" = "$3" ] && { say "ok: $4 ($1: $from messages, $rep rewritten)"; return 0; }
    sleep 0.5
  done
  fail "$4: /var/mail/$1 has $from messages, $rep rewritten; expected $2 and $3"
}
broken() { in_root 'mv /usr/local/bin/mimeuri /usr/local/bin/mimeuri.real && printf "#!/bin/sh\ncat >/dev/null\nexit 70\n" > /usr/local/bin/mimeuri && chmod 755 /usr/local/bin/mimeuri'; }
mended() { in_root 'mv /usr/local/bin/mimeuri.real /usr/local/bin/mimeuri'; }

run_block procmail
expect alice 1 1 "procmail delivered the rewritten message"

run_block dovecot
expect alice 2 2 "dovecot-lda ran the Sieve filter"
grep -q 'Error' <(chroot "$R" doveadm log errors 2>/dev/null) && fail "dovecot logged errors"

run_block postfix
# alice has a ~/.procmailrc, so Postfix's local delivery (procmail) filters her mail again:
# mimeuri is idempotent, the message comes out the same.
expect alice 3 3 "Postfix: SMTP -> filter -> re-injected -> delivered"
smtp_to_bob='python3 -c "import smtplib; smtplib.SMTP(\"127.0.0.1\").sendmail(\"me@example.org\", [\"bob@localhost\"], open(\"testdata/sample/newsletter.eml\", \"rb\").read())"'
broken
in_root "$smtp_to_bob"
sleep 3
[ "$(count '^From ' /var/mail/bob)" = 0 ] || fail "Postfix delivered while mimeuri was failing"
chroot "$R" mailq | grep -q 'temporary failure' || fail "Postfix did not defer the message"
say "ok: Postfix deferred the message while mimeuri failed"
mended
in_root 'postqueue -f'
expect bob 1 1 "Postfix delivered it on the retry"
in_root 'postfix stop'

run_block exim
# alice has a ~/.procmailrc (Exim hands her mail to procmail); bob goes through mail_spool.
expect bob 2 2 "Exim's transport_filter rewrote the message"
broken
in_root 'exim4 -odi bob@localhost < testdata/sample/newsletter.eml'
[ "$(count '^From ' /var/mail/bob)" = 2 ] || fail "Exim delivered while mimeuri was failing"
[ "$(chroot "$R" exim4 -bpc)" = 1 ] || fail "Exim did not keep the message queued"
say "ok: Exim deferred the message while mimeuri failed"
mended
in_root 'exim4 -qff'
expect bob 3 3 "Exim delivered it on the retry"
bounces=$(chroot "$R" /bin/bash -c "cat /var/mail/* | grep -c -i '^Subject:.*\(undeliver\|failure\|returned\)' || true")
[ "$bounces" = 0 ] || fail "$bounces bounce(s) in /var/mail"
say "ok: nothing bounced"

# The Debian package, last: the agents above were checked with the binary the install line put
# in /usr/local/bin (their snippets name that path), before any other mimeuri was on the
# machine; and man-db, a build dependency (debhelper's), does not re-index the manual at each
# agent's apt-get install. The checks below name /usr/bin/mimeuri: /usr/local/bin comes first
# in PATH. For CI's time, two additions to the block as written (which builds with the
# defaults): the environment DEB_BUILD_OPTIONS="nocheck noopt parallel=2", which skips building and
# running the unit and golden suites (CI ran them already, in its plain build) and compiles on
# both cores without optimisation (about 40% less CPU; the suites ran on the optimised build
# above), with DEB_BUILD_PROFILES=nocheck, so that apt-get build-dep leaves out what only
# those suites need (cmake); and nice, because CI runs this beside its sanitizer, valgrind and
# fuzzing stages: the package's compilation (about 200 s of CPU) takes the cycles they leave
# rather than slowing them.
run_block package "DEB_BUILD_OPTIONS='nocheck noopt parallel=2' DEB_BUILD_PROFILES=nocheck nice -n 19"
in_root 'dpkg-query -W -f "\${Status} \${Version}\n" mimeuri | grep -qx "install ok installed $(dpkg-parsechangelog -SVersion)" && [ "$(dpkg -S /usr/bin/mimeuri)" = "mimeuri: /usr/bin/mimeuri" ]' \
  || fail "the package is not installed, or /usr/bin/mimeuri is not its"
in_root '[ "$(man -w mimeuri)" = /usr/share/man/man1/mimeuri.1.gz ] && man -P cat mimeuri | grep -q "rewrite MIME references, external bodies"' \
  || fail "man mimeuri does not open the package's mimeuri(1)"
in_root '[ "$(man -w mimeuri.conf)" = /usr/share/man/man5/mimeuri.conf.5.gz ] && man -P cat mimeuri.conf | grep -q "settings for mimeuri"' \
  || fail "man mimeuri.conf does not open the package's mimeuri.conf(5)"
say "ok: man mimeuri and man mimeuri.conf open the package's pages"
in_root '/usr/bin/mimeuri --config /usr/share/doc/mimeuri/examples/mimeuri.conf --print-config > /tmp/print-config && grep -qx "\[mimeuri\]" /tmp/print-config' \
  || fail "the packaged example configuration does not pass --print-config"
say "ok: the packaged example configuration passes --print-config"
in_root '/usr/bin/mimeuri --report=/tmp/report.jsonl testdata/sample/newsletter.eml > /tmp/sample.eml && cmp /tmp/sample.eml testdata/sample/newsletter.repaired.eml && grep -q \"action.:.repaired\" /tmp/report.jsonl' \
  || fail "the package's /usr/bin/mimeuri did not repair the sample as expected"
say "ok: the package's /usr/bin/mimeuri repaired the sample (testdata/sample/newsletter.repaired.eml)"

# What ships is what runs (issue 30): the installed package alone, configured as an admin does.
# The binary the source install put in /usr/local/bin goes, so that a snippet naming it fails;
# the snippets are the package's, copied verbatim (only user names substituted); one setting in
# /etc/mimeuri.conf (the summary header) must show in what each entry point delivers.
say "the installed package: its user, unit and snippets; /etc/mimeuri.conf honoured by procmail and the service"
in_root 'rm -f /usr/local/bin/mimeuri && hash -r'
ex=/usr/share/doc/mimeuri/examples/integration
in_root "getent passwd mimeuri >/dev/null && getent group mimeuri >/dev/null" || fail "the package made no user mimeuri"
in_root "[ -f /lib/systemd/system/mimeuri-milter.service ] && grep -q '^ExecStart=/usr/bin/mimeuri ' /lib/systemd/system/mimeuri-milter.service" \
  || fail "the package's unit does not start /usr/bin/mimeuri"
in_root "! grep -rl /usr/local/bin/mimeuri $ex && grep -q '| /usr/bin/mimeuri' $ex/procmailrc" \
  || fail "a packaged snippet names another binary than /usr/bin/mimeuri"
in_root "[ -d /var/log/mimeuri ] && [ \"\$(stat -c %U /var/log/mimeuri)\" = mimeuri ] && [ -f /etc/logrotate.d/mimeuri ]" \
  || fail "no /var/log/mimeuri for the service's report, or no logrotate snippet"
in_root "[ \"\$(stat -c %U:%G /var/lib/mimeuri)\" = mimeuri:mimeuri ]" || fail "the package made no /var/lib/mimeuri for the counters"
say "ok: the package made its user and group, its unit and snippets name /usr/bin/mimeuri"
in_root 'printf "[references]\nsummary-header = yes\n" > /etc/mimeuri.conf && /usr/bin/mimeuri --milter=unix:/x --print-config | grep -qx "summary-header=true"' \
  || fail "--print-config does not show /etc/mimeuri.conf's setting"
in_root '/usr/bin/mimeuri < testdata/sample/newsletter.eml | grep -q "^Mimeuri-Refs: "' \
  || fail "the command line does not honour /etc/mimeuri.conf's summary header"
# procmail, the packaged recipe verbatim.
in_root "useradd -m carol && cp $ex/procmailrc ~carol/.procmailrc && chown carol: ~carol/.procmailrc && procmail -d carol < testdata/sample/newsletter.eml" \
  || fail "procmail with the packaged recipe"
[ "$(count '^Mimeuri-Refs: ' /var/mail/carol)" = 1 ] && [ "$(count 'cid:map@garden.example' /var/mail/carol)" = 1 ] \
  || fail "procmail with the packaged recipe: /etc/mimeuri.conf's summary header or the repair missing in /var/mail/carol"
say "ok: procmail ran the packaged recipe; /etc/mimeuri.conf honoured (Mimeuri-Refs added)"
# Dovecot Sieve: the packaged filter program, verbatim, where the README's block put the source
# build's (Dovecot is still running from that block).
in_root "install -m 0755 $ex/dovecot-filter-mimeuri /usr/local/lib/dovecot/sieve-filter/mimeuri && (doveadm reload || dovecot) && useradd -m dave && /usr/lib/dovecot/dovecot-lda -d dave < testdata/sample/newsletter.eml" \
  || fail "dovecot-lda with the packaged Sieve filter program"
[ "$(count '^Mimeuri-Refs: ' /var/mail/dave)" = 1 ] && [ "$(count 'cid:map@garden.example' /var/mail/dave)" = 1 ] \
  || fail "Sieve with the packaged filter program: /etc/mimeuri.conf's summary header or the repair missing in /var/mail/dave"
say "ok: Dovecot ran the packaged Sieve filter program; /etc/mimeuri.conf honoured"
# Postfix again (Exim replaced it; its configuration files stayed, with the README's pipe
# filter on smtp): the packaged pipe wrapper, verbatim, where the README's block put the
# source build's. Postfix logs to a file: this root has no syslog daemon.
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y postfix && postconf -e maillog_file=/var/log/postfix.log && install -m 0755 $ex/postfix-filter-wrapper.sh /usr/local/libexec/mimeuri-postfix && useradd -m erin && (postfix start || postfix reload)" \
  || fail "installing Postfix again with the packaged pipe wrapper"
smtp_to() { in_root "python3 -c 'import smtplib; smtplib.SMTP(\"127.0.0.1\").sendmail(\"me@example.org\", [\"$1@localhost\"], open(\"${2:-testdata/sample/newsletter.eml}\", \"rb\").read())'" || fail "SMTP to $1"; }
delivered() { # user, what: one message, rewritten, with /etc/mimeuri.conf's summary header
  local from=0
  for _ in $(seq 60); do from=$(count '^From ' "/var/mail/$1"); [ "$from" = 1 ] && break; sleep 0.5; done
  [ "$from" = 1 ] && [ "$(count '^Mimeuri-Refs: ' "/var/mail/$1")" = 1 ] && [ "$(count 'cid:map@garden.example' "/var/mail/$1")" = 1 ] && return 0
  { echo "--- mailq"; chroot "$R" mailq; echo "--- /var/log/postfix.log"; tail -n 30 "$R/var/log/postfix.log";
    echo "--- the service's log"; cat "$R/var/log/mimeuri-service.log"; } 2>&1 | sed 's/^/   /'
  fail "$2: /var/mail/$1 has $from messages; expected one, rewritten, with /etc/mimeuri.conf's summary header"
}
smtp_to erin
delivered erin "Postfix with the packaged pipe wrapper"
say "ok: Postfix ran the packaged pipe wrapper; /etc/mimeuri.conf honoured"
# The service as the packaged unit starts it (no systemd in this root: its ExecStartPre and
# ExecStart lines run as written, in the background), with the one step the README leaves to
# the admin (Postfix in the group mimeuri); Postfix with the packaged milter part verbatim,
# the pipe filter taken out again, and opendkim signing after mimeuri, as the part's comment
# says. python3-dkim then verifies the delivered message's signature against the key.
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y opendkim opendkim-tools python3-dkim" || fail "installing opendkim"
in_root "usermod -aG mimeuri postfix && pre=\$(sed -n 's/^ExecStartPre=+//p' /lib/systemd/system/mimeuri-milter.service) && \$pre &&
  start=\$(sed -n 's/^ExecStart=//p' /lib/systemd/system/mimeuri-milter.service) &&
  (setsid \$start --report=/var/log/mimeuri/report.jsonl > /var/log/mimeuri-service.log 2>&1 &) &&
  for i in \$(seq 50); do [ -S /var/spool/postfix/mimeuri/milter.sock ] && break; sleep 0.2; done &&
  [ -S /var/spool/postfix/mimeuri/milter.sock ]" || fail "the service did not start as the unit starts it"
in_root "mkdir -p /etc/dkimkeys /run/opendkim && opendkim-genkey -D /etc/dkimkeys -d garden.example -s mail && chown -R opendkim: /etc/dkimkeys /run/opendkim &&
  printf 'Syslog no\nMode s\nDomain garden.example\nSelector mail\nKeyFile /etc/dkimkeys/mail.private\nCanonicalization relaxed/simple\nSocket inet:8891@127.0.0.1\nUserID opendkim\nPidFile /run/opendkim/opendkim.pid\n' > /etc/opendkim-walkthrough.conf &&
  opendkim -x /etc/opendkim-walkthrough.conf" || fail "opendkim did not start"
in_root "postconf -P -X smtp/inet/content_filter && grep -v '^#' $ex/postfix-milter.cf | grep . | xargs -d '\n' -n1 postconf -e &&
  postconf -e 'smtpd_milters = unix:mimeuri/milter.sock, inet:127.0.0.1:8891' && postfix reload" \
  || fail "Postfix with the packaged milter part and opendkim after it"
in_root "useradd -m frank"
smtp_to frank
delivered frank "the service under Postfix, as the packaged unit starts it"
in_root "grep -q '\"queue_id\":' /var/log/mimeuri/report.jsonl && [ \"\$(stat -c %U /var/log/mimeuri/report.jsonl)\" = mimeuri ]" \
  || fail "the service's --report under /var/log/mimeuri"
say "ok: the service, started as the packaged unit says, honoured /etc/mimeuri.conf under Postfix (and wrote its report)"
in_root "python3 - /var/mail/frank /etc/dkimkeys/mail.txt <<'PY'
import dkim, mailbox, sys
key = open(sys.argv[2]).read()
txt = ''.join(key.split('(', 1)[1].split(')', 1)[0].split('\"')[1::2])
msg = mailbox.mbox(sys.argv[1]).get_bytes(0).replace(b'\r\n', b'\n').replace(b'\n', b'\r\n')
assert b'DKIM-Signature:' in msg, 'not signed'
ok = dkim.verify(msg, dnsfunc=lambda name, timeout=5: txt.encode())
sys.exit(0 if ok else 1)
PY" || fail "opendkim's signature on the message mimeuri rewrote does not verify"
say "ok: opendkim signed after mimeuri; python3-dkim verifies the delivered message"
# The README's "Operating the service" steps that need no restart (issue 42): a policy checked
# by --check-config (counted when good, one line and 78 when its range is none), the counters
# logged on SIGUSR1; /etc/mimeuri.conf put back as it was.
say "the service as the README operates it: a policy through --check-config, the counters on SIGUSR1"
chk='/usr/bin/mimeuri --milter=unix:/var/spool/postfix/mimeuri/milter.sock --user=mimeuri --check-config'
in_root "cp /etc/mimeuri.conf /tmp/mimeuri.conf.before &&
  printf '\n[policy:internal]\nclient = 10.0.0.0/8, 192.168.0.0/16, fd00::/8\npasses = none\n' >> /etc/mimeuri.conf &&
  $chk | grep -q 'would start on unix:/var/spool/postfix/mimeuri/milter.sock with 1 policy'" \
  || fail "--check-config does not count the README's policy"
in_root "printf '[policy:bad]\nclient = 10.0.0.0/33\n' >> /etc/mimeuri.conf; $chk 2> /tmp/check.err; [ \$? = 78 ] &&
  grep -q \"\[policy:bad\] client: '10.0.0.0/33' is not an address or a CIDR range\" /tmp/check.err" \
  || fail "--check-config does not refuse a policy whose range is none (exit 78, one line)"
in_root "cp /tmp/mimeuri.conf.before /etc/mimeuri.conf && pkill -USR1 -f '^/usr/bin/mimeuri --milter' -o && sleep 1 &&
  grep -q 'counters: messages [1-9]' /var/log/mimeuri-service.log" || fail "SIGUSR1 did not log the service's counters"
say "ok: --check-config counted and refused policies; SIGUSR1 logged the counters"
in_root 'postfix stop; pkill -TERM -f "^/usr/bin/mimeuri --milter"; pkill -TERM opendkim; true'
say "all README steps worked as written; nothing bounced (log: $log)"
