#!/usr/bin/env bash
# Roundcube's rcube_washtml (remote blocked) and mimeuri --remote=block side by side on the
# corpus's HTML messages with remote content and the browser suite's 29 vectors: requests
# left in Chromium, text and layout kept, time (bench/remote_peers.py says how each is counted).
# Installs the peer where it is missing: Debian's roundcube-core (1.6.5 on Debian 12; only its
# PHP classes are used), a bench tool, not a CI dependency.
# Usage: bash bench/remote_peers.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$build/bench-out/remote-peers
if [ ! -f /usr/share/roundcube/program/lib/Roundcube/rcube_washtml.php ] || ! command -v php > /dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y roundcube-core php-cli
fi
echo "roundcube-core $(dpkg-query -W -f='${Version}' roundcube-core), load before: $(uptime)"
rm -rf "$out"
mkdir -p "$out"
python3 bench/remote_peers.py "$build/mimeuri" "$out" "${CORPUS:-../shared/corpus}"
echo "load after: $(uptime)"
