#!/bin/sh
# Postfix pipe(8) content filter around mimeuri (FILTER_README, "simple content filter").
# Any failure becomes 75 (EX_TEMPFAIL): Postfix defers and retries; it never bounces.
# An empty result is a failure too. The filtered message is re-injected with sendmail.
# Install as /usr/local/libexec/mimeuri-postfix (mode 0755, runnable by the pipe user).
MIMEURI=${MIMEURI:-/usr/local/bin/mimeuri}
SENDMAIL=${SENDMAIL:-/usr/sbin/sendmail}
dir=$(mktemp -d "${TMPDIR:-/tmp}/mimeuri-pf.XXXXXX") || exit 75
trap 'rm -rf "$dir"' EXIT
cat > "$dir/in" || exit 75
"$MIMEURI" --on-error=tempfail "$dir/in" > "$dir/out" || exit 75
[ -s "$dir/out" ] || exit 75
"$SENDMAIL" -G -i "$@" < "$dir/out" || exit 75
exit 0
