#!/usr/bin/env bash
# Replies whose images come back (issue 50): of a reply's cid: references that no part of its
# own message holds, the share found in the messages it answers ("matched":"thread"), over
# the corpus as one run (so that the run's index holds every message), and over replies made
# from it as the clients of the issue write them (the quoted HTML kept, the parts dropped).
# bench/reply_cids.py says how. Usage: bash bench/reply_cids.sh [BUILD_DIR] [CORPUS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
corpus=${2:-../shared/corpus}
[ -d "$corpus" ] || corpus=/work/shared/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/reply_cids.py "$(realpath "$build/mimeuri")" "$(realpath "$corpus")" "$work"
