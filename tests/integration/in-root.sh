#!/usr/bin/env bash
# After the README walk-through, in the root it made and left: the real-agent integration
# suite (it installs and reconfigures procmail, Dovecot, Postfix and Exim: there, never on
# the machine CI runs on) and the package's autopkgtest (debian/tests/control) on the .deb the
# walk-through's package block built and installed.
# It runs in a mount namespace and a PID namespace of its own (it starts itself again under
# unshare): the /proc, /sys and /dev it binds into the root exist only there and end with it,
# however it ends; and the processes its cleanup stops by name (pkill in the chroot, which
# does not hide the machine's processes) can only be its own. Without the PID namespace that
# cleanup once killed the milter services CI's sanitizer stage was testing in front, whose
# binary is also /tmp/mimeuri-*/bin/mimeuri.
# Usage (root): bash tests/integration/in-root.sh ROOT     (ROOT: the walk-through's)
set -euo pipefail
if [ -z "${MIMEURI_IN_NAMESPACE:-}" ]; then
  MIMEURI_IN_NAMESPACE=1 exec unshare --mount --propagation private --pid --fork --kill-child --mount-proc \
    bash "$0" "$@"
fi
R=${1:?usage: in-root.sh ROOT}
[ -x "$R/work/main/build/mimeuri" ] || { echo "FAIL: $R holds no walk-through build (/work/main/build/mimeuri)"; exit 1; }
say() { printf '== in the root [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
in_root() { chroot "$R" /bin/bash -c "cd /work/main && $1" </dev/null; }
cleanup() {
  chroot "$R" /bin/bash -c 'postfix stop; pkill exim4; pkill -f "^/tmp/mimeuri-.*/bin/mimeuri"; pkill -f "^/usr/bin/mimeuri"' >/dev/null 2>&1 || true
  for m in dev/pts dev sys proc; do mountpoint -q "$R/$m" && umount "$R/$m"; done
  mountpoint -q "$R" && umount "$R"
  return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# The root a mount point of its own: inside it, "/" is then one, and the tests' own
# `unshare -m` (test-exim.sh, test-miltertest.sh) can make their namespaces private.
mount --bind "$R" "$R"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$R/$m"; done

status=0
# The integration suite as meson runs it (tests/meson.build), one agent at a time: each
# installs what it needs with apt-get, in the root.
for agent in procmail dovecot exim postfix milter miltertest; do
  say "integration: $agent"
  if ! in_root "MIMEURI_INTEGRATION=1 MIMEURI_BIN=/work/main/build/mimeuri timeout 300 bash tests/integration/test-$agent.sh"; then
    echo "FAIL: the integration test $agent"; status=1
  fi
done

say "autopkgtest: debian/tests/control on the package the README built"
deb=$(cd "$R" && ls work/mimeuri_*_*.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] || { echo "FAIL: no package in $R/work (the README's package block builds it there)"; exit 1; }
in_root "apt-get install -y -qq --no-install-recommends autopkgtest >/dev/null" || { echo "FAIL: apt-get install autopkgtest"; exit 1; }
# The testbed as the package leaves a machine: the walk-through configured it as an admin
# does (/etc/mimeuri.conf, drop-ins: a summary header, policies), which the package's tests,
# written for a fresh install, would read. Moved aside, not deleted.
in_root "mkdir -p /root/walkthrough-config && for f in /etc/mimeuri.conf /etc/mimeuri.conf.d/*.conf; do [ -e \"\$f\" ] && mv \"\$f\" /root/walkthrough-config/; done; true"
# The null runner: the root is the testbed (it is a throw-away machine already). 0: every
# test passed (2 would mean one was skipped; 4 one failed).
set +e
in_root "autopkgtest --no-built-binaries /$deb /work/main -- null"
rc=$?
set -e
if [ $rc = 0 ]; then say "ok: autopkgtest passed"; else echo "FAIL: autopkgtest exited $rc"; status=1; fi
exit $status
