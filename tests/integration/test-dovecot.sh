#!/usr/bin/env bash
# Dovecot Pigeonhole vnd.dovecot.filter with the shipped script and settings
# (docs/integration/mimeuri.sieve, dovecot-mimeuri.conf, dovecot-filter-mimeuri), through
# sieve-test -e and through dovecot-lda, no Dovecot server. Dovecot feeds filters CRLF:
# mimeuri must answer in CRLF, and the stored message must be the expected rewrite. When
# mimeuri fails, the original is stored.
. "$(dirname "$0")/lib.sh"
need dovecot-core dovecot-sieve
workdir dovecot

setup() { # name, filter program body
  local d=$T/$1
  mkdir -p "$d/filters" "$d/global" "$d/st" "$d/cap" "$d/run"
  subst dovecot-filter-mimeuri > "$d/real-filter"
  # The filter Dovecot runs: the shipped one, with its input and output kept for the checks.
  cat > "$d/filters/mimeuri" <<EOS
#!/bin/sh
/bin/cat > $d/cap/in
$2 "\$@" < $d/cap/in > $d/cap/out
rc=\$?
/bin/cat $d/cap/out
exit \$rc
EOS
  chmod 755 "$d/real-filter" "$d/filters/mimeuri"
  cp "$ROOT/docs/integration/mimeuri.sieve" "$d/global/mimeuri.sieve"
  cp "$ROOT/docs/integration/mimeuri.sieve" "$d/st/mimeuri.sieve"   # sieve-test compiles next to its script
  { echo "base_dir = $d/run"
    echo "log_path = $d/dovecot.log"
    echo "mail_uid = nobody"
    echo "mail_gid = nogroup"
    echo "mail_location = maildir:$d/Maildir"
    sed -e "s|/usr/local/lib/dovecot/sieve-filter|$d/filters|" -e "s|/etc/dovecot/sieve/mimeuri.sieve|$d/global/mimeuri.sieve|" \
      "$ROOT/docs/integration/dovecot-mimeuri.conf"
  } > "$d/dovecot.conf"
  cp "$SAMPLE" "$d/message.eml"
  chown -R nobody:nogroup "$d"
}

lda() { # name
  setpriv --reuid=nobody --regid=nogroup --clear-groups env -i HOME="$T/$1" USER=nobody \
    /usr/lib/dovecot/dovecot-lda -c "$T/$1/dovecot.conf" -f alice@example.test -a bob@localhost < "$SAMPLE"
}

crlf_only() { grep -q $'\r$' "$1" && ! grep -q $'[^\r]$' "$1"; }

setup ok "$T/ok/real-filter"
sieve-test -c "$T/ok/dovecot.conf" -e -l "maildir:$T/ok/Maildir" "$T/ok/st/mimeuri.sieve" "$T/ok/message.eml" >/dev/null
check "sieve-test: exits 0" test $? -eq 0
check "sieve-test: the filter received CRLF" crlf_only "$T/ok/cap/in"
check "sieve-test: mimeuri answered in CRLF" crlf_only "$T/ok/cap/out"
check "sieve-test: mimeuri's answer is the expected rewrite (in CRLF)" cmp -s "$T/ok/cap/out" <(sed 's/$/\r/' "$REPAIRED")
stored=$(ls "$T"/ok/Maildir/new/* "$T"/ok/Maildir/cur/* 2>/dev/null | head -1)
check "sieve-test: the stored message parses and is the expected rewrite, byte for byte" cmp -s "$stored" "$REPAIRED"
rm -rf "$T/ok/Maildir"

lda ok
check "dovecot-lda: exits 0" test $? -eq 0
stored=$(ls "$T"/ok/Maildir/new/* "$T"/ok/Maildir/cur/* 2>/dev/null | head -1)
check "dovecot-lda: the filter received CRLF and answered in CRLF" crlf_only "$T/ok/cap/out"
check "dovecot-lda: the stored message is the expected rewrite, byte for byte" cmp -s "$stored" "$REPAIRED"
check "dovecot-lda: the stored message parses (mimeuri reads it, nothing left to repair)" \
  cmp -s <("$T/bin/mimeuri" "$stored") "$stored"

# mimeuri fails (fault injected, --on-error=tempfail): the filter test is false and the
# original message is kept.
setup bad "MIMEURI_FAULT=pass $T/bad/real-filter --on-error=tempfail"
lda bad
check "failure: dovecot-lda still exits 0" test $? -eq 0
stored=$(ls "$T"/bad/Maildir/new/* "$T"/bad/Maildir/cur/* 2>/dev/null | head -1)
check "failure: the original message is stored, byte for byte" cmp -s "$stored" "$SAMPLE"
check "failure: Dovecot logged the failed filter" grep -q "exit code 75" "$T/bad/dovecot.log"
finish
