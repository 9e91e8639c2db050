#!/usr/bin/env bash
# The README's set-up, on a fresh Debian 12 machine, as root, from the top of this
# repository (after apt-get update): installs what the build and the tests need
# (.ci/packages, and Debian's npm where no npm is on the PATH), builds the program (a release
# build) and runs it on a bundled sample. Each stage says its name as it starts, so that a
# failure says which one broke; the build shows its progress ([N/M] per step).
# Usage: bash setup.sh [BUILD_DIR] (default: build)
set -euo pipefail
cd "$(dirname "$0")"
build=${1:-build}
step=0
stage() { step=$((step + 1)); echo "== setup $step/4: $*"; }
failed() { echo "== setup: FAILED in stage $step (see above)" >&2; }
trap failed ERR

stage "installing the packages the build and the tests need (.ci/packages)"
xargs -a .ci/packages apt-get install -y
# The browser suite's puppeteer-core comes from npm: Debian's, where none is installed (a
# NodeSource nodejs carries its own, and apt refuses Debian's npm beside it).
command -v npm >/dev/null || apt-get install -y npm
stage "configuring the build in $build/ (meson setup)"
[ -f "$build/build.ninja" ] || meson setup "$build"
stage "building the program ($build/mimeuri)"
ninja -C "$build" mimeuri
stage "running it on a bundled sample (testdata/sample/newsletter.eml: the message on standard output, its report on standard error)"
"$build/mimeuri" --report=/dev/stderr testdata/sample/newsletter.eml
