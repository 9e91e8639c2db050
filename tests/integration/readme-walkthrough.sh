#!/usr/bin/env bash
# Follows the documentation as a new user would, on a clean machine: a fresh Debian 12 root
# made with debootstrap, a clone of this repository in it, then the README's set-up command,
# every command block of docs/mta.md exactly as written (the source install; procmail,
# Dovecot, Postfix, Exim; the Debian package; the milter service under Postfix with its
# --check-config, a policy and the counters), and the service examples of the man pages
# (mimeuri.conf(5)'s EXAMPLE file, its checks and Postfix macros; mimeuri-milter(8)'s
# EXAMPLES and its runit script). tests/readme_commands.py --extract takes those blocks out
# of the files (its WALK names each); the golden suite checks offline that each is found.
# After each agent it checks that the sample was delivered and rewritten; for Postfix and
# Exim it also makes mimeuri fail and checks the mail is deferred (not bounced, not lost) and
# delivered once mimeuri works again. After the package block it checks that the package is
# installed, that `man mimeuri` and `man mimeuri.conf` open its pages, that its example
# configuration passes --print-config and that its /usr/bin/mimeuri repairs the sample. Then
# the installed package alone, as an admin configures it (issue 30): its user, unit and
# snippets name /usr/bin/mimeuri; with one setting (the summary header) in /etc/mimeuri.conf,
# later in a drop-in, the packaged procmail recipe, Sieve filter program and Postfix pipe
# wrapper, and the service started by docs/mta.md's steps under Postfix with the packaged
# milter part (opendkim signing after it, the signature verified with python3-dkim), each
# deliver the sample rewritten with that header; the service writes its report under
# /var/log/mimeuri and its counters under /var/lib/mimeuri, both made by the package.
#
# This root has no init: `systemctl` and `journalctl` are stand-ins (in /usr/local/sbin and
# /usr/local/bin) that run a unit's ExecStartPre and ExecStart lines as written, the service
# in the background, and show the lines it wrote to standard error (its own lines; its
# per-message syslog lines go nowhere here).
#
# Not part of `meson test` (it downloads a Debian base system and takes minutes). Run as root,
# in a mount namespace of its own (as CI does), so that nothing it mounts outlives it:
#   unshare --mount --propagation private bash tests/integration/readme-walkthrough.sh [ROOT_DIR]
# (default /srv/mimeuri-walkthrough). What it adds to the documents' commands: the users mail
# is sent to, stopping Postfix before Exim replaces it (systemd would do that on a real
# machine), DEB_BUILD_OPTIONS for the package build (see there), opendkim's configuration,
# the stand-ins above, and the checks.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
R=${1:-/srv/mimeuri-walkthrough}
mirror=${MIRROR:-http://deb.debian.org/debian}
log=$R.log

say() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
fail() { printf 'FAIL: %s (log: %s)\n' "$*" "$log"; exit 1; }
in_root() { chroot "$R" /bin/bash -c "cd /work/main && $1" </dev/null >>"$log" 2>&1; }
count() { chroot "$R" /bin/bash -c "if [ -f '$2' ]; then grep -c '$1' '$2'; else echo 0; fi" || true; }

# Stops what the root's programs started, each by its own pid file (the root shares the
# machine's processes: a name could match another program's process).
stop_all='for f in /run/*.walk-pid /run/opendkim/opendkim.pid /run/exim4/exim.pid; do [ -f "$f" ] && kill -TERM -- "$(cat "$f")"; done
  for f in /run/*.walk-pgid; do [ -f "$f" ] && kill -TERM -- "-$(cat "$f")"; done; postfix stop; doveadm stop'
# Then any process still in the root (its root directory is $R), TERM and then KILL.
in_this_root() { local p; for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] && echo "${p#/proc/}"; done; true; }
cleanup() {
  if [ -d "$R/proc/self" ]; then
    chroot "$R" /bin/bash -c "$stop_all" >/dev/null 2>&1 || true
    sleep 2
  fi
  local left sig
  for sig in TERM KILL; do
    left=$(in_this_root); [ -n "$left" ] || break
    kill -"$sig" $left 2>/dev/null; sleep 2
  done
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

# The documents' blocks (tests/readme_commands.py, WALK): /root/readme-NAME.sh each.
python3 "$R/work/main/tests/readme_commands.py" --extract "$R/work/main" "$R/root" || fail "a block the walk-through runs is not in the documents"

# The stand-ins for systemctl and journalctl (this root has no init; see the top).
cat > "$R/usr/local/sbin/systemctl" <<'EOF'
#!/bin/bash
# The walk-through's systemctl: a unit's ExecStartPre lines (a leading +, -, @ or ! taken
# off) and its ExecStart line run as written, the service in the background in a session of
# its own, its standard error in /var/log/UNIT.walk-log, its pid in /run/UNIT.walk-pid; each
# line run is logged in /run/walk-systemd.log.
set -eu
unit_file() {
  for d in /etc/systemd/system /lib/systemd/system; do [ -f "$d/$1.service" ] && { echo "$d/$1.service"; return; }; done
  echo "systemctl stand-in: no unit $1" >&2; exit 5
}
pidf() { echo "/run/$1.walk-pid"; }
running() { [ -f "$(pidf "$1")" ] && kill -0 "$(cat "$(pidf "$1")")" 2>/dev/null; }
start() {
  running "$1" && return 0
  local file pre cmd; file=$(unit_file "$1")
  while read -r pre; do
    pre=${pre#[-+@!]}; echo "$1: ExecStartPre $pre" >> /run/walk-systemd.log; $pre
  done < <(sed -n 's/^ExecStartPre=//p' "$file")
  cmd=$(sed -n 's/^ExecStart=//p' "$file")
  echo "$1: ExecStart $cmd" >> /run/walk-systemd.log
  setsid $cmd >> "/var/log/$1.walk-log" 2>&1 < /dev/null &
  local pid=$! x
  echo $pid > "$(pidf "$1")"
  # Returns once the service blocks or catches SIGUSR1 (bit 9 of SigBlk or SigCgt), up to 5 s:
  # the next step may signal it at once, where an admin's typing takes longer.
  for _ in $(seq 50); do
    for x in $(sed -n 's/^Sig\(Blk\|Cgt\):\t//p' "/proc/$pid/status" 2>/dev/null); do (( 0x$x & 0x200 )) && return 0; done
    sleep 0.1
  done
}
stop() {
  running "$1" || return 0
  local pid; pid=$(cat "$(pidf "$1")"); kill -TERM "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  rm -f "$(pidf "$1")"
}
unit=${!#}; unit=${unit%.service}
case "$1" in
  daemon-reload) ;;
  enable) [ "$2" = --now ] && start "$unit" ;;
  start) start "$unit" ;;
  stop) stop "$unit" ;;
  restart) stop "$unit"; start "$unit" ;;
  reload) kill -HUP "$(cat "$(pidf "$unit")")" ;;
  show) [ "$2 $3 $4" = "-p MainPID --value" ] && cat "$(pidf "$unit")" ;;
  *) echo "systemctl stand-in: $* is not known here" >&2; exit 1 ;;
esac
EOF
cat > "$R/usr/local/bin/journalctl" <<'EOF'
#!/bin/bash
# The walk-through's journalctl -t IDENT [-n N] [-o cat]: the last N lines starting "IDENT:"
# that the services the systemctl stand-in started wrote to standard error.
set -eu
n=10 ident=
while [ $# -gt 0 ]; do
  case "$1" in -t) ident=$2; shift 2 ;; -n) n=$2; shift 2 ;; -o) shift 2 ;; *) echo "journalctl stand-in: $1 is not known here" >&2; exit 1 ;; esac
done
cat /var/log/*.walk-log 2>/dev/null | grep -- "^$ident: " | tail -n "$n"
EOF
chmod 755 "$R/usr/local/sbin/systemctl" "$R/usr/local/bin/journalctl"

run_block() { say "docs: $1"; in_root "${2:-} bash -ex /root/readme-$1.sh" || fail "the $1 block"; }

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
say "the installed package: its user, unit, folders and snippets; /etc/mimeuri.conf honoured by procmail and the service"
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
# Postfix was installed before the package (its queue folder stayed when Exim replaced it), so
# the package made the socket's folder: nothing has run the unit's ExecStartPre yet.
in_root "[ \"\$(stat -c %U:%G /var/spool/postfix/mimeuri)\" = mimeuri:mimeuri ] && [ ! -e /run/walk-systemd.log ]" \
  || fail "the package did not make the socket's folder /var/spool/postfix/mimeuri"
say "ok: the package made its user and group, its folders, its unit and snippets name /usr/bin/mimeuri"
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
# Dovecot Sieve: the packaged filter program, verbatim, where the docs' block put the source
# build's (Dovecot is still running from that block).
in_root "install -m 0755 $ex/dovecot-filter-mimeuri /usr/local/lib/dovecot/sieve-filter/mimeuri && (doveadm reload || dovecot) && useradd -m dave && /usr/lib/dovecot/dovecot-lda -d dave < testdata/sample/newsletter.eml" \
  || fail "dovecot-lda with the packaged Sieve filter program"
[ "$(count '^Mimeuri-Refs: ' /var/mail/dave)" = 1 ] && [ "$(count 'cid:map@garden.example' /var/mail/dave)" = 1 ] \
  || fail "Sieve with the packaged filter program: /etc/mimeuri.conf's summary header or the repair missing in /var/mail/dave"
say "ok: Dovecot ran the packaged Sieve filter program; /etc/mimeuri.conf honoured"
# Postfix again (Exim replaced it; its configuration files stayed, with the docs' pipe filter
# on smtp): the packaged pipe wrapper, verbatim, where the docs' block put the source build's.
# Postfix logs to a file: this root has no syslog daemon.
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y postfix && postconf -e maillog_file=/var/log/postfix.log && install -m 0755 $ex/postfix-filter-wrapper.sh /usr/local/libexec/mimeuri-postfix && useradd -m erin && (postfix start || postfix reload)" \
  || fail "installing Postfix again with the packaged pipe wrapper"
smtp_to() { in_root "python3 -c 'import smtplib; smtplib.SMTP(\"127.0.0.1\").sendmail(\"me@example.org\", [\"$1@localhost\"], open(\"${2:-testdata/sample/newsletter.eml}\", \"rb\").read())'" || fail "SMTP to $1"; }
delivered() { # user, what: one message, rewritten, with the summary header the configuration asks for
  local from=0
  for _ in $(seq 60); do from=$(count '^From ' "/var/mail/$1"); [ "$from" = 1 ] && break; sleep 0.5; done
  [ "$from" = 1 ] && [ "$(count '^Mimeuri-Refs: ' "/var/mail/$1")" = 1 ] && [ "$(count 'cid:map@garden.example' "/var/mail/$1")" = 1 ] && return 0
  { echo "--- mailq"; chroot "$R" mailq; echo "--- /var/log/postfix.log"; tail -n 30 "$R/var/log/postfix.log";
    echo "--- the services' standard error"; tail -n 30 "$R"/var/log/*.walk-log; } 2>&1 | sed 's/^/   /'
  fail "$2: /var/mail/$1 has $from messages; expected one, rewritten, with the configuration's summary header"
}
smtp_to erin
delivered erin "Postfix with the packaged pipe wrapper"
say "ok: Postfix ran the packaged pipe wrapper; /etc/mimeuri.conf honoured"

# The milter service by docs/mta.md's steps, as pasted: Postfix in the group mimeuri, a
# configuration for the service ([milter]: its report and syslog), --check-config before
# anything ran the unit's ExecStartPre, the start, the packaged main.cf part. Before them, as
# an admin moving from the pipe filter: the pipe filter taken out, and the summary-header
# setting moved to a drop-in (so that the docs' step writes /etc/mimeuri.conf). After them,
# opendkim signing after mimeuri, as the part's comment says; python3-dkim then verifies the
# delivered message's signature against the key.
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y opendkim opendkim-tools python3-dkim" || fail "installing opendkim"
in_root "postconf -P -X smtp/inet/content_filter && postfix reload && mv /etc/mimeuri.conf /etc/mimeuri.conf.d/10-walkthrough.conf" \
  || fail "taking the pipe filter out"
run_block milter
in_root "grep -qx 'mimeuri-milter: ExecStartPre /usr/bin/install -d -o mimeuri -g mimeuri -m 0750 /var/spool/postfix/mimeuri' /run/walk-systemd.log &&
  grep -qx '\[milter\]' /etc/mimeuri.conf" || fail "the milter block did not start the unit, or wrote no [milter]"
# Whether the service accepts a connection on its socket (a socket file alone may be stale).
unix_sock="python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"/var/spool/postfix/mimeuri/milter.sock\")' 2>/dev/null"
sock() { in_root "for i in \$(seq 100); do $unix_sock && exit 0; sleep 0.2; done; exit 1" || fail "$1: not listening"; }
sock "the service started by systemctl enable --now"
say "ok: --check-config passed on the fresh install, then the unit started the service"
in_root "mkdir -p /etc/dkimkeys /run/opendkim && opendkim-genkey -D /etc/dkimkeys -d garden.example -s mail && chown -R opendkim: /etc/dkimkeys /run/opendkim &&
  printf 'Syslog no\nMode s\nDomain garden.example\nSelector mail\nKeyFile /etc/dkimkeys/mail.private\nCanonicalization relaxed/simple\nSocket inet:8891@127.0.0.1\nUserID opendkim\nPidFile /run/opendkim/opendkim.pid\n' > /etc/opendkim-walkthrough.conf &&
  opendkim -x /etc/opendkim-walkthrough.conf" || fail "opendkim did not start"
in_root "postconf -e 'smtpd_milters = unix:mimeuri/milter.sock, inet:127.0.0.1:8891' && postfix reload" \
  || fail "Postfix with opendkim after mimeuri"
in_root "useradd -m frank"
smtp_to frank
delivered frank "the service under Postfix, started by docs/mta.md's steps"
in_root "grep -q '\"queue_id\":' /var/log/mimeuri/report.jsonl && [ \"\$(stat -c %U /var/log/mimeuri/report.jsonl)\" = mimeuri ]" \
  || fail "the service's report= under /var/log/mimeuri"
say "ok: the service honoured /etc/mimeuri.conf and its drop-in under Postfix (and wrote its report)"
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

# docs/mta.md's second step, as pasted: the counters' file, a policy, --check-config and a
# restart, SIGUSR1 and the journal's last line, the .prom file read back. Then a message
# through the restarted service must be counted, and --check-config must count the policy and
# refuse a range that is none (one line, 78); /etc/mimeuri.conf put back as it was.
run_block counters
sock "the service restarted by systemctl restart"
in_root "useradd -m grace"
smtp_to grace
delivered grace "the restarted service, with the docs' policy (not for 127.0.0.1)"
in_root "kill -USR1 \$(cat /run/mimeuri-milter.walk-pid) && sleep 1 && grep -qx 'mimeuri_messages_total{outcome=\"changed\"} 1' /var/lib/mimeuri/mimeuri.prom" || fail "the counters did not count the message (SIGUSR1, /var/lib/mimeuri/mimeuri.prom)"
say "ok: the docs' counters step worked; the restarted service counted the next message"
chk='mimeuri --milter=unix:/var/spool/postfix/mimeuri/milter.sock --user=mimeuri --check-config'
in_root "cp /etc/mimeuri.conf /tmp/mimeuri.conf.docs && $chk | grep -q 'would start on unix:/var/spool/postfix/mimeuri/milter.sock with 1 policy'" \
  || fail "--check-config does not count the docs' policy"
in_root "printf '[policy:bad]\nclient = 10.0.0.0/33\n' >> /etc/mimeuri.conf; $chk 2> /tmp/check.err; [ \$? = 78 ] &&
  grep -q \"\[policy:bad\] client: '10.0.0.0/33' is not an address or a CIDR range\" /tmp/check.err" \
  || fail "--check-config does not refuse a policy whose range is none (exit 78, one line)"
in_root "cp /tmp/mimeuri.conf.docs /etc/mimeuri.conf"
say "ok: --check-config counted and refused policies"

# The man pages' service examples, as pasted. mimeuri.conf(5): Postfix's connection macros
# for the listener keys; its EXAMPLE file as mimeuri.conf.new, printed and checked as it says.
run_block man-macros
in_root "postfix reload" || fail "Postfix with mimeuri.conf(5)'s milter_connect_macros"
in_root "mkdir /root/man-conf && cp /root/readme-man-conf.sh /root/man-conf/mimeuri.conf.new" || fail "mimeuri.conf(5)'s EXAMPLE"
run_block man-conf-print "cd /root/man-conf &&"
run_block man-conf-check "cd /root/man-conf &&"
# mimeuri-milter(8): its EXAMPLES (the service on the unix socket, Postfix's main.cf lines;
# on TCP) and RUNNING WITHOUT SYSTEMD's runit script, each started in the background in place
# of the unit's service, a message sent through it (through Postfix, main.cf as the page has
# it; on TCP with smtpd_milters naming that port), then stopped.
in_root "systemctl stop mimeuri-milter && ! $unix_sock" || fail "systemctl stop"
in_root "grep . /root/readme-man-main-cf.sh | xargs -d '\n' -n1 postconf -e && postfix reload" || fail "mimeuri-milter(8)'s main.cf lines"
man_service() { # block, user, socket test, what
  say "docs: $1 (in the background)"
  in_root "setsid bash -ex /root/readme-$1.sh > /var/log/$1.walk-log 2>&1 < /dev/null & echo \$! > /run/$1.walk-pgid" || fail "starting $1"
  in_root "for i in \$(seq 100); do $3 && exit 0; sleep 0.2; done; exit 1" || fail "$4: not listening"
  in_root "useradd -m $2"
  smtp_to "$2"
  delivered "$2" "$4"
  in_root "kill -TERM -- -\$(cat /run/$1.walk-pgid); for i in \$(seq 100); do kill -0 -- -\$(cat /run/$1.walk-pgid) 2>/dev/null || exit 0; sleep 0.2; done; exit 1" \
    || fail "$4: did not stop on SIGTERM"
  in_root "rm /run/$1.walk-pgid"
  say "ok: $4"
}
man_service man-milter-unix heidi "$unix_sock" "mimeuri-milter(8)'s first example under Postfix with its main.cf lines"
man_service man-runit ivan "$unix_sock" "mimeuri-milter(8)'s runit script under Postfix"
in_root "postconf -e 'smtpd_milters = inet:127.0.0.1:8893' && postfix reload" || fail "Postfix on the TCP milter"
man_service man-milter-inet judy "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8893), 1)' 2>/dev/null" \
  "mimeuri-milter(8)'s TCP example under Postfix"
in_root "$stop_all" || true
say "all the documents' steps worked as written; nothing bounced (log: $log)"
