#!/usr/bin/env bash
# procmail `:0 fw` with the shipped recipe (docs/integration/procmailrc): Maildir and mbox
# delivery of mimeuri's rewrite; on a mimeuri failure the original is delivered; with the
# defer recipe procmail exits 75 and delivers nothing.
. "$(dirname "$0")/lib.sh"
need procmail
workdir procmail

rc() { # rcfile name, delivery lines, extra lines before the recipe
  { echo "SHELL=/bin/sh"; echo "MAILDIR=$T"; echo "LOGFILE=$T/$1.log"; echo "${3:-}"; subst procmailrc; echo ":0${4:-}"; echo "$2"; } > "$T/$1"
}

rc maildir.rc "Maildir/"
procmail -f- -m "$T/maildir.rc" < "$SAMPLE"
check "Maildir: procmail exits 0" test $? -eq 0
delivered=$(ls "$T"/Maildir/new/* 2>/dev/null | head -1)
# procmail ends a Maildir file with an empty line of its own (checked with /bin/cat as the
# filter: same result), so the file is the rewrite plus "\n".
check "Maildir: the delivered message is the expected rewrite, byte for byte" cmp -s "$delivered" <(cat "$REPAIRED"; echo)

rc mbox.rc "$T/box.mbox" "" ":"
procmail -f- -m "$T/mbox.rc" < "$SAMPLE"
check "mbox: procmail exits 0" test $? -eq 0
check "mbox: the entry keeps its From_ line" grep -q "^From " <(head -1 "$T/box.mbox")
check "mbox: then the expected rewrite and the blank separator, byte for byte" \
  cmp -s <(tail -n +2 "$T/box.mbox") <(cat "$REPAIRED"; echo)

# A message mimeuri cannot process (fault injected): procmail rescues the original.
rc fail.rc "Failed/" "MIMEURI_FAULT=pass"
sed -i "s|^| |; s|^ ||; s#| $T/bin/mimeuri\$#| $T/bin/mimeuri --on-error=tempfail#" "$T/fail.rc"
procmail -f- -m "$T/fail.rc" < "$SAMPLE"
check "failure: procmail still exits 0" test $? -eq 0
check "failure: procmail logged the failed filter" grep -q "Rescue of unfiltered data succeeded" "$T/fail.rc.log"
# (A rescued original gets no extra empty line: procmail writes its saved copy as it was.)
check "failure: the original message was delivered, byte for byte" cmp -s "$(ls "$T"/Failed/new/* | head -1)" "$SAMPLE"

# The defer recipe: procmail exits 75 and delivers nothing, so the MTA retries.
rc defer.rc "Deferred/" "MIMEURI_FAULT=pass"
sed -i "s#| $T/bin/mimeuri\$#| $T/bin/mimeuri --on-error=tempfail#; s|^#:0 e|:0 e|; s|^#{ EXITCODE=75 HOST }|{ EXITCODE=75 HOST }|" "$T/defer.rc"
procmail -f- -m "$T/defer.rc" < "$SAMPLE"
check "defer: procmail exits 75" test $? -eq 75
check "defer: nothing delivered" test ! -e "$T/Deferred/new"

# Empty input is never an empty success: procmail rescues the (empty) original instead
# of storing mimeuri's output; mimeuri exits 65.
printf '' | "$T/bin/mimeuri" > "$T/empty.out"
check "empty input: mimeuri exits 65" test "${PIPESTATUS[1]}" -eq 65
finish
