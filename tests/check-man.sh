#!/usr/bin/env bash
# The man pages format without a warning: groff -man -ww -z prints nothing for each.
# Skipped (77) where groff is not installed (Debian's groff-base).
set -u
command -v groff >/dev/null || { echo "skipped: no groff"; [ "${MIMEURI_STRICT_TESTS:-}" = 1 ] && exit 1; exit 77; }
status=0
for page in "$@"; do
  out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
  if [ -n "$out" ] || ! LC_ALL=C.UTF-8 groff -man -ww -z "$page" >/dev/null 2>&1; then
    echo "FAIL - $page:"; echo "$out"; status=1
  else
    echo "ok - $page"
  fi
done
exit $status
