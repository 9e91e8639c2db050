#!/usr/bin/env bash
# Exim transport_filter with the shipped transport (docs/integration/exim-transport.conf),
# `exim -odi`, no daemon. The delivered mbox entry is Exim's headers followed by the expected
# rewrite, byte for byte. When mimeuri fails with --on-error=tempfail, Exim defers: nothing
# is delivered, the message stays in the spool, nothing bounces.
. "$(dirname "$0")/lib.sh"
need libidn12
workdir exim

# exim4 conflicts with postfix as a package: unpack it here instead (nothing installed).
(cd "$T" && apt-get download -qq exim4-daemon-light >/dev/null 2>&1) || { apt-get update -qq >/dev/null 2>&1; (cd "$T" && apt-get download -qq exim4-daemon-light >/dev/null); }
dpkg -x "$T"/exim4-daemon-light_*.deb "$T/pkg"
EXIM=$T/pkg/usr/sbin/exim4
check "exim unpacked" test -x "$EXIM"

# Exim looks up its compiled-in user before reading -C: give it one in a private mount.
cp /etc/passwd "$T/passwd"; cp /etc/group "$T/group"
grep -q '^Debian-exim:' "$T/passwd" || echo 'Debian-exim:x:990:990::/nonexistent:/usr/sbin/nologin' >> "$T/passwd"
grep -q '^Debian-exim:' "$T/group" || echo 'Debian-exim:x:990:' >> "$T/group"

config() { # name, transport_filter command
  local E=$T/$1
  mkdir -p "$E/spool" "$E/log" "$E/out"
  chown nobody:nogroup "$E/spool" "$E/log" "$E/out"
  cat > "$E/exim.conf" <<EOC
exim_path = $EXIM
exim_user = nobody
exim_group = nogroup
primary_hostname = localhost.localdomain
qualify_domain = localhost
spool_directory = $E/spool
log_file_path = $E/log/%slog
domainlist local_domains = localhost : localhost.localdomain
trusted_users = root
tls_advertise_hosts =
keep_environment =

begin routers
to_mbox:
  driver = accept
  domains = +local_domains
  local_parts = bob
  transport = local_delivery

begin transports
$(subst exim-transport.conf | grep -v '^#' | sed -e "s|file = /var/mail/\${local_part_data}|file = $E/out/\${local_part_data}.mbox|" \
  -e "s|transport_filter = .*|transport_filter = $2|")

begin retry
*  *  F,1h,15m
EOC
}

deliver() { # name
  unshare -m sh -c "mount --bind $T/passwd /etc/passwd && mount --bind $T/group /etc/group && \
    exec $EXIM -C $T/$1/exim.conf -odi -f alice@example.test bob@localhost" < "$SAMPLE" 2>"$T/$1/stderr"
}

config ok "$T/bin/mimeuri --on-error=tempfail"
deliver ok
check "delivery: exim exits 0" test $? -eq 0
box=$T/ok/out/bob.mbox
check "delivery: an mbox entry with its From_ line" grep -q '^From alice@example.test ' <(head -1 "$box" 2>/dev/null)
# The entry: From_ line, Exim's headers, the message as mimeuri wrote it, an empty line.
entry=$(mktemp -p "$T"); head -c -1 "$box" > "$entry"
check "delivery: the message ends with the expected rewrite, byte for byte" \
  cmp -s <(tail -c "$(stat -c %s "$REPAIRED")" "$entry") "$REPAIRED"
check "delivery: Exim's own headers come first" grep -q '^Envelope-to: bob@localhost' "$entry"

cat > "$T/bin/broken" <<EOS
#!/bin/sh
MIMEURI_FAULT=pass exec $T/bin/mimeuri --on-error=tempfail
EOS
chmod 755 "$T/bin/broken"
config bad "$T/bin/broken"
deliver bad
check "failure: exim -odi still exits 0" test $? -eq 0
check "failure: nothing delivered" test ! -s "$T/bad/out/bob.mbox"
check "failure: the delivery was deferred, the filter's 75 named" grep -q 'transport filter process failed (75)' "$T/bad/stderr" "$T/bad/log/mainlog"
check "failure: the message stays in the spool for a retry" test -n "$(ls "$T"/bad/spool/input/*-D 2>/dev/null)"
check "failure: nothing bounced (the spool holds the one original message)" \
  test "$(ls "$T"/bad/spool/input/*-D 2>/dev/null | wc -l)" -eq 1
finish
