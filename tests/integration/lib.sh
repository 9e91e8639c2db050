# Shared by the integration tests: counters, package installation, a work folder, and the
# shipped configuration snippets with the binary path substituted. Each test prints one
# "ok"/"FAIL" line per check and ends with "N passed, N failed"; exit 77 means skipped.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
: "${MIMEURI_BIN:?MIMEURI_BIN must name the mimeuri binary}"
SAMPLE=$ROOT/testdata/sample/newsletter.eml
REPAIRED=$ROOT/testdata/sample/newsletter.repaired.eml   # the expected rewrite, made by hand
passed=0
failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# Installs the Debian packages a test needs (root only: otherwise the test is skipped). It
# reconfigures the machine's mail system: only when asked (MIMEURI_INTEGRATION=1, as in CI).
need() {
  if [ "${MIMEURI_INTEGRATION:-}" != 1 ]; then
    echo "skipped: installing and configuring $* on this machine needs MIMEURI_INTEGRATION=1"
    exit 77
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "skipped: installing $* needs root and apt-get"
    exit 77
  fi
  local missing=() p
  # Installed, not only known: a package removed with its configuration kept (as Exim's
  # removes Postfix) is "deinstall ok config-files", which dpkg -s answers with 0.
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  export DEBIAN_FRONTEND=noninteractive
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    { echo "FAIL - apt-get install ${missing[*]}"; exit 1; }
}

# A 0755 work folder under /tmp (agents run filters as nobody), removed on exit, holding
# $T/bin/mimeuri.
workdir() {
  T=$(mktemp -d "/tmp/mimeuri-$1.XXXXXX")
  chmod 755 "$T"
  trap 'cleanup; [ "$failed" -eq 0 ] || show_logs; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
  mkdir -p "$T/bin"
  cp "$MIMEURI_BIN" "$T/bin/mimeuri"
  chmod 755 "$T/bin/mimeuri"
}
cleanup() { :; }
# After a failed check, the end of every log the test wrote (services' stderr, the syslog it
# listened to): CI keeps nothing of $T, and a failure seen once must say its cause there.
show_logs() {
  local f
  for f in "$T"/*.log "$T"/*.txt; do
    [ -f "$f" ] || continue
    echo "--- the last 25 lines of ${f#"$T"/}"
    tail -n 25 "$f" | cut -c1-300
  done
}

# A shipped snippet naming the copy under test: a template (NAME.in, made with the install
# prefix's paths at the build) with its @BINDIR@/mimeuri pointing there, else the file as is.
subst() {
  local f=$ROOT/docs/integration/$1
  [ -f "$f.in" ] && f=$f.in
  sed -e "s|@BINDIR@/mimeuri|$T/bin/mimeuri|g" -e "s|@SYSCONFDIR@|/etc|g" "$f"
}

# The body (everything after the first empty line) of a message file.
body_of() { awk 'b { print } /^\r?$/ && !b { b = 1 }' "$1"; }
